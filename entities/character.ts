/**
 * Storage: characters and their item containers (inventory, equipment, bank).
 * Defaults are those of docs/rest.md#rules-that-hold-everywhere; every skill has a level and an XP column.
 */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { StoredGoal } from "../src/domain/goal-progress.js";
import { AccountEntity } from "./account.js";

export type { StoredGoal };

const xp = (def = 0) => p.integer().default(def);

export const CharacterEntity = defineEntity({
  name: "Character",
  tableName: "characters",
  properties: {
    id: p.string().primary(),
    accountId: () => p.manyToOne(AccountEntity).mapToPk().joinColumn("account_id").deleteRule("cascade").index(),
    name: p.string().length(12),
    combatLevel: p.integer().default(3),
    attackLevel: p.integer().default(1),
    attackXp: xp(),
    strengthLevel: p.integer().default(1),
    strengthXp: xp(),
    defenseLevel: p.integer().default(1),
    defenseXp: xp(),
    constitutionLevel: p.integer().default(10),
    constitutionXp: xp(1154),
    rangedLevel: p.integer().default(1),
    rangedXp: xp(),
    prayerLevel: p.integer().default(1),
    prayerXp: xp(),
    woodcuttingLevel: p.integer().default(1),
    woodcuttingXp: xp(),
    fishingLevel: p.integer().default(1),
    fishingXp: xp(),
    miningLevel: p.integer().default(1),
    miningXp: xp(),
    firemakingLevel: p.integer().default(1),
    firemakingXp: xp(),
    cookingLevel: p.integer().default(1),
    cookingXp: xp(),
    smithingLevel: p.integer().default(1),
    smithingXp: xp(),
    health: p.integer().default(100),
    coins: p.integer().default(0),
    positionX: p.double().$type<number>().default(0),
    positionY: p.double().$type<number>().default(10),
    positionZ: p.double().$type<number>().default(0),
    isAgent: p.boolean().default(false),
    goal: p.json<StoredGoal>().nullable(),
    goalsPaused: p.boolean().default(false),
    /** Prayer points left (fractional while draining) and active prayer ids, comma-separated. */
    prayerPoints: p.double().$type<number>().default(1),
    activePrayers: p.string().default(""),
    createdAt: p.datetime().onCreate(() => new Date()),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
    lastSeenAt: p.datetime().nullable(),
  },
  uniques: [{ name: "characters_name_lower_unique", expression: "create unique index characters_name_lower_unique on characters (lower(name))" }],
  checks: [
    { name: "characters_coins_check", expression: "coins >= 0" },
    { name: "characters_health_check", expression: "health >= 0" },
  ],
});
export type Character = InferEntity<typeof CharacterEntity>;

export const InventoryItemEntity = defineEntity({
  name: "InventoryItem",
  tableName: "inventory_items",
  properties: {
    id: p.integer().primary().autoincrement(),
    characterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_id").deleteRule("cascade"),
    slot: p.integer(),
    itemId: p.string(),
    quantity: p.integer(),
  },
  uniques: [{ name: "inventory_items_character_slot_unique", properties: ["characterId", "slot"] }],
  checks: [
    { name: "inventory_items_slot_check", expression: "slot >= 0 and slot <= 27" },
    { name: "inventory_items_quantity_check", expression: "quantity >= 1" },
  ],
});
export type InventoryItem = InferEntity<typeof InventoryItemEntity>;

export const EquipmentItemEntity = defineEntity({
  name: "EquipmentItem",
  tableName: "equipment_items",
  properties: {
    id: p.integer().primary().autoincrement(),
    characterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_id").deleteRule("cascade"),
    slotType: p.string(),
    itemId: p.string(),
    quantity: p.integer().default(1),
  },
  uniques: [{ name: "equipment_items_character_slot_unique", properties: ["characterId", "slotType"] }],
  checks: [{ name: "equipment_items_quantity_check", expression: "quantity >= 1" }],
});
export type EquipmentItem = InferEntity<typeof EquipmentItemEntity>;

export const BankItemEntity = defineEntity({
  name: "BankItem",
  tableName: "bank_items",
  properties: {
    id: p.integer().primary().autoincrement(),
    characterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_id").deleteRule("cascade"),
    itemId: p.string(),
    quantity: p.integer(),
  },
  uniques: [{ name: "bank_items_character_item_unique", properties: ["characterId", "itemId"] }],
  checks: [{ name: "bank_items_quantity_check", expression: "quantity >= 1" }],
});
export type BankItem = InferEntity<typeof BankItemEntity>;
