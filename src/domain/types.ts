/**
 * Core vocabulary shared by every layer: skills, equipment slots, item shape and hard limits.
 * Pure data, no I/O.
 */

/** Every skill the game has, in display order. Storage has a level and an XP column for each. */
export const SKILLS = [
  "attack",
  "strength",
  "defense",
  "constitution",
  "ranged",
  "prayer",
  "woodcutting",
  "fishing",
  "mining",
  "firemaking",
  "cooking",
  "smithing",
] as const;
export type SkillName = (typeof SKILLS)[number];

/** Skills that start above level 1 (constitution starts at 10, docs/rest.md#rules-that-hold-everywhere). */
export const STARTING_LEVELS: Readonly<Partial<Record<SkillName, number>>> = Object.freeze({
  constitution: 10,
});

/** Equipment slot types. */
export const EQUIP_SLOTS = ["head", "cape", "neck", "weapon", "body", "shield", "legs", "hands", "feet", "ring", "ammo"] as const;
export type EquipSlot = (typeof EQUIP_SLOTS)[number];

/** Inventory size in slots (docs/persistence.md#what-is-stored). */
export const INVENTORY_SIZE = 28;
/** Largest stack or coin amount (signed 32-bit integer maximum). */
export const MAX_STACK = 2_147_483_647;
/** Item id used for coins in trade results (coins themselves live on the character, not in slots). */
export const COINS_ITEM_ID = "coins";

/** Combat and skill bonuses an equippable item gives. */
export interface ItemBonuses {
  attack: number;
  strength: number;
  defense: number;
  ranged: number;
}

/** The fields of an item definition the rules need. The content manifest carries more. */
export interface ItemDef {
  id: string;
  name: string;
  value: number;
  stackable: boolean;
  tradeable: boolean;
  equipSlot?: EquipSlot;
  bonuses?: ItemBonuses;
  /** Health restored when eaten. */
  heals?: number;
  /** Level requirements to equip or use. */
  requirements?: Partial<Record<SkillName, number>>;
  /** Prayer XP when buried (bones). */
  buryXp?: number;
  /** Attack interval in ticks for weapons. */
  attackSpeed?: number;
}

/** One occupied inventory slot. */
export interface InventorySlot {
  slot: number;
  itemId: string;
  quantity: number;
}

/** A tile position on the ground plane. y is height and is not used by the rules. */
export interface Tile {
  x: number;
  z: number;
}
