/**
 * Zod schemas for the manifest files under `<WORLD>/manifests/` that describe items, NPCs and skills,
 * one per file, with the inferred types, and the building blocks every schema uses; the manifests
 * that lay out the world (areas, stations, buildings, stores...) are in `world-schemas.ts`. Shapes
 * only: cross references between files (item ids in drop tables, biome ids in areas, ...) are
 * checked by `check.ts`, which knows every file at once.
 *
 * Conventions used by all manifests:
 * - ids are lower snake case (`bronze_sword`); model ids may contain `/` (`stations/furnace`).
 * - positions are integer tiles `{ x, z }` on the ground plane; a tile is 1 x 1 metre and tile
 *   `(x, z)` is centred on that coordinate. Rectangles (`bounds`) are inclusive on both ends.
 * - durations are game ticks (600 ms each); chances are probabilities in [0, 1].
 * - health is measured in life points: a constitution level is worth 10 life points (a new
 *   character has constitution 10 and 100 health), and every `maxHit` or `heals` uses that unit.
 */
import { z } from "zod";
import { EQUIP_SLOTS, SKILLS } from "../domain/types.js";

/** Lower snake case id. */
export const IdSchema = z.string().regex(/^[a-z][a-z0-9_]*$/, "must be lower snake case (a-z, 0-9, _)");
/** Model id: a path below `world/models/` without the `.glb` extension. */
export const ModelIdSchema = z.string().regex(/^[a-z0-9_]+(\/[a-z0-9_]+)*$/, "must be a model path like stations/furnace");

const SkillSchema = z.enum(SKILLS);
const Level = z.int().min(1).max(99);
const NonNegInt = z.int().min(0);
// Building blocks shared with `world-schemas.ts`.
export const PosInt = z.int().min(1);
/** A probability in [0, 1]. */
export const Chance = z.number().min(0).max(1);
/** Free text shown to players (descriptions, examine texts). */
export const Text = z.string().min(1).max(500);

/** Integer tile on the ground plane. */
export const TileSchema = z.strictObject({ x: z.int(), z: z.int() });
/** Inclusive tile rectangle. */
export const BoundsSchema = z
  .strictObject({ minX: z.int(), maxX: z.int(), minZ: z.int(), maxZ: z.int() })
  .refine((b) => b.minX <= b.maxX && b.minZ <= b.maxZ, { message: "min must not exceed max" });

/** An item id with a quantity (starter kit, templates, recipe inputs). For an item that does not
 * stack, the quantity is the number of slots it fills. */
export const ItemQuantitySchema = z.strictObject({ itemId: IdSchema, quantity: PosInt });

// ---------------------------------------------------------------------------------------------
// Items: items/{food,weapons,tools,resources,misc}.json, or items.json

export const ITEM_CATEGORIES = ["food", "weapons", "tools", "resources", "misc"] as const;
export type ItemCategory = (typeof ITEM_CATEGORIES)[number];

export const BonusesSchema = z.strictObject({
  attack: z.int(),
  strength: z.int(),
  defense: z.int(),
  ranged: z.int(),
});

/**
 * One item. Assignable to `ItemDef` of `src/domain/types.ts`; the extra fields are content only.
 * Coins are not an item (they live on the character), so the id `coins` is refused.
 */
export const ItemSchema = z
  .strictObject({
    id: IdSchema.refine((id) => id !== "coins", { message: '"coins" is reserved: coins live on the character' }),
    name: z.string().min(1).max(60),
    examine: Text,
    /** Base value in coins; store prices and trade values derive from it. */
    value: NonNegInt,
    stackable: z.boolean(),
    tradeable: z.boolean(),
    /** Filled by the loader from the file the item came from when absent. */
    category: z.enum(ITEM_CATEGORIES).optional(),
    equipSlot: z.enum(EQUIP_SLOTS).optional(),
    bonuses: BonusesSchema.optional(),
    /** Life points restored when eaten. */
    heals: PosInt.optional(),
    /** Skill levels needed to equip (or, for tools, to use). */
    requirements: z.partialRecord(SkillSchema, Level).optional(),
    /** Prayer XP when buried. */
    buryXp: z.number().positive().optional(),
    /** Ticks between attacks, for weapons. */
    attackSpeed: z.int().min(1).max(10).optional(),
    /** Attack range in tiles (1 for melee). */
    attackRange: z.int().min(1).max(10).optional(),
    /** Logs that can be lit with a tinderbox. */
    firemaking: z.strictObject({ level: Level, xp: z.number().positive(), burnTicks: PosInt }).optional(),
    /** How players get the item when no drop table, store, recipe, gathering node, starter kit or
     * template produces it (for example "granted by the world when ..."). `itemSources` counts it
     * as a source; without it every item needs one of those. */
    obtainedBy: Text.optional(),
  })
  .superRefine((item, ctx) => {
    if (item.equipSlot && !item.bonuses) ctx.addIssue({ code: "custom", path: ["bonuses"], message: "equippable items need bonuses" });
    if (item.equipSlot === "weapon" && item.attackSpeed === undefined)
      ctx.addIssue({ code: "custom", path: ["attackSpeed"], message: "weapons need attackSpeed" });
    if (item.attackSpeed !== undefined && item.equipSlot !== "weapon")
      ctx.addIssue({ code: "custom", path: ["attackSpeed"], message: "only weapons have attackSpeed" });
    if (item.stackable && item.equipSlot && item.equipSlot !== "ammo")
      ctx.addIssue({ code: "custom", path: ["stackable"], message: "only ammunition may be stackable and equippable" });
  });
export type ItemManifestEntry = z.infer<typeof ItemSchema>;
export const ItemListSchema = z.array(ItemSchema);

/** `items.json`: either the full item list, or an index naming the files under `items/`. */
export const ItemsIndexSchema = z.strictObject({
  files: z.array(z.string().regex(/^items\/[a-z_]+\.json$/, "must be items/<name>.json")).min(1),
});
export const ItemsRootSchema = z.union([ItemListSchema, ItemsIndexSchema]);

// ---------------------------------------------------------------------------------------------
// ammunition.json, tools.json

export const AmmunitionSchema = z.strictObject({
  itemId: IdSchema,
  rangedStrength: NonNegInt,
  levelRequired: Level,
  /** Weapon item ids that can fire it. */
  launchers: z.array(IdSchema).min(1),
});
export type Ammunition = z.infer<typeof AmmunitionSchema>;
export const AmmunitionListSchema = z.array(AmmunitionSchema);

/** Properties of an item when used as a tool. */
export const ToolSchema = z.strictObject({
  itemId: IdSchema,
  skill: SkillSchema,
  levelRequired: Level,
  /** Tool tier for the gathering curve of `src/domain/gathering.ts` (bronze 0, iron 1, steel 2). */
  tier: z.int().min(0).max(10),
});
export type ToolDef = z.infer<typeof ToolSchema>;
export const ToolListSchema = z.array(ToolSchema);

// ---------------------------------------------------------------------------------------------
// npcs.json

export const DropSchema = z
  .strictObject({
    /** An item id, or `coins` (added to the killer's character coins, not a ground item). */
    itemId: IdSchema,
    min: PosInt,
    max: PosInt,
    weight: PosInt,
  })
  .refine((d) => d.min <= d.max, { message: "min must not exceed max", path: ["max"] });
export const DropTableSchema = z.strictObject({
  /** Always dropped. `coins` allowed. */
  always: z.array(ItemQuantitySchema),
  /** Number of rolls on `table` per kill. */
  rolls: z.int().min(0).max(5),
  /** Weight of rolling nothing. */
  nothingWeight: NonNegInt,
  table: z.array(DropSchema),
});

export const NpcSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1).max(60),
  examine: Text,
  combatLevel: PosInt,
  attackable: z.boolean(),
  /** Levels; maximum health is `constitution * 10` life points. */
  stats: z.strictObject({ attack: Level, strength: Level, defense: Level, constitution: Level }),
  /** Largest hit in life points. */
  maxHit: NonNegInt,
  attackSpeed: z.int().min(1).max(10),
  /** How it attacks (docs/combat.md#ranged): melee from the next tile (the default), or ranged from
   * up to `attackRange` tiles with a line of sight. */
  attackStyle: z.enum(["melee", "ranged"]).optional(),
  /** Tiles (Chebyshev) a ranged attacker shoots from; 7 when absent. */
  attackRange: z.int().min(1).max(10).optional(),
  aggressive: z.boolean(),
  /** Tiles (Chebyshev) within which an aggressive NPC notices a player. */
  aggroRadius: z.int().min(0).max(16),
  respawnTicks: PosInt,
  /** Tiles (Chebyshev) an NPC may roam from its spawn point. */
  wanderRadius: z.int().min(0).max(16),
  drops: DropTableSchema,
  spawns: z.array(TileSchema).min(1),
});
export type NpcDef = z.infer<typeof NpcSchema>;
export const NpcListSchema = z.array(NpcSchema);

// ---------------------------------------------------------------------------------------------
// gathering/*.json (the kinds of resource node; `world-schemas.ts` places them)

export const GATHERING_SKILLS = ["fishing", "mining", "woodcutting"] as const;

/** A kind of resource node (a tree, a rock, a fishing spot). */
export const GatheringNodeSchema = z
  .strictObject({
    id: IdSchema,
    name: z.string().min(1),
    skill: z.enum(GATHERING_SKILLS),
    levelRequired: Level,
    xp: z.number().positive(),
    /** Item ids of the tools that work on it (any one is enough). */
    tools: z.array(IdSchema).min(1),
    /** Consumed per success, e.g. bait. */
    consumes: ItemQuantitySchema.optional(),
    /** Item id given per success. */
    yields: IdSchema,
    /** Chance the node depletes after each success (trees). */
    depleteChance: Chance.optional(),
    /** Fixed number of successes before it depletes (rocks). */
    resourcesPerNode: PosInt.optional(),
    respawnTicks: PosInt,
    /** Success chance per attempt at exactly `levelRequired` with a tier-0 tool (the gathering
     * curve's `baseChance`); the domain adds per level above it and per tool tier. */
    successBase: Chance,
    modelId: ModelIdSchema,
  })
  .refine((n) => (n.depleteChance === undefined) !== (n.resourcesPerNode === undefined), {
    message: "give exactly one of depleteChance or resourcesPerNode",
  });
export type GatheringNode = z.infer<typeof GatheringNodeSchema>;
export const GatheringListSchema = z.array(GatheringNodeSchema);

// ---------------------------------------------------------------------------------------------
// recipes/cooking.json, recipes/smithing.json

export const CookingRecipeSchema = z
  .strictObject({
    id: IdSchema,
    input: IdSchema,
    output: IdSchema,
    burnt: IdSchema,
    level: Level,
    xp: z.number().positive(),
    /** From this cooking level on, the food never burns. */
    stopBurnLevel: Level,
    /** Where it can be cooked: `fire` (lit logs) or a `range` station. */
    stations: z.array(z.enum(["fire", "range"])).min(1),
  })
  .refine((r) => r.stopBurnLevel >= r.level, { message: "stopBurnLevel must be at least level", path: ["stopBurnLevel"] });
export type CookingRecipe = z.infer<typeof CookingRecipeSchema>;
export const CookingListSchema = z.array(CookingRecipeSchema);

export const SmithingRecipeSchema = z.strictObject({
  id: IdSchema,
  /** `furnace` smelts ores into bars; `anvil` hammers bars into items. */
  station: z.enum(["furnace", "anvil"]),
  inputs: z.array(ItemQuantitySchema).min(1),
  output: ItemQuantitySchema,
  /** Tool item ids that must be in the inventory (not consumed). */
  tools: z.array(IdSchema),
  level: Level,
  xp: z.number().positive(),
  /** Chance the smelt succeeds; on failure the inputs are lost. */
  successChance: Chance,
});
export type SmithingRecipe = z.infer<typeof SmithingRecipeSchema>;
export const SmithingListSchema = z.array(SmithingRecipeSchema);

// ---------------------------------------------------------------------------------------------
// prayers.json

export const PrayerSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1),
  level: Level,
  description: Text,
  /** Prayer points drained per minute while active. */
  drainPerMinute: z.number().positive(),
  /** Percentage boosts while active. */
  boosts: z.strictObject({
    attack: NonNegInt.optional(),
    strength: NonNegInt.optional(),
    defense: NonNegInt.optional(),
    ranged: NonNegInt.optional(),
  }),
  protectFrom: z.enum(["melee", "ranged"]).optional(),
});
export type Prayer = z.infer<typeof PrayerSchema>;
export const PrayerListSchema = z.array(PrayerSchema);

// ---------------------------------------------------------------------------------------------
// skill-unlocks.json, starter-kit.json, templates.json

export const UNLOCK_TYPES = ["item", "ability", "area", "quest", "activity"] as const;
export const SkillUnlockSchema = z.strictObject({
  level: Level,
  description: Text,
  type: z.enum(UNLOCK_TYPES),
});
export type SkillUnlock = z.infer<typeof SkillUnlockSchema>;
/** Keyed by every lowercase skill name; each skill needs at least one entry. */
export const SkillUnlocksSchema = z.record(SkillSchema, z.array(SkillUnlockSchema).min(1));
export type SkillUnlocks = z.infer<typeof SkillUnlocksSchema>;

/** What every new character receives, however it was created. */
export const StarterKitSchema = z.strictObject({
  coins: NonNegInt,
  items: z.array(ItemQuantitySchema).min(1),
});
export type StarterKit = z.infer<typeof StarterKitSchema>;

/** Character templates for agents and players: level overrides and items on top of the kit. */
export const TemplateSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1).max(60),
  description: Text,
  /** Starting levels that differ from the defaults (constitution 10, others 1). */
  skills: z.partialRecord(SkillSchema, Level),
  /** Items given in addition to the starter kit. */
  items: z.array(ItemQuantitySchema),
  /** Coins given in addition to the starter kit's. */
  coins: NonNegInt,
});
export type CharacterTemplate = z.infer<typeof TemplateSchema>;
export const TemplateListSchema = z.array(TemplateSchema);
