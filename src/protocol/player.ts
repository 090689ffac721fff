/**
 * What a client is told about players and the world around it: the private `player:sync` state
 * (docs/protocol.md#private-state), the public view of each entity, and the `world:update` delta of
 * those views (docs/protocol.md#view-updates). The world builds these types; REST's player view is
 * the stored part of `player:sync` (`StoredPlayerSync`); the schema classes (`schema/world.ts`) carry
 * the same public fields to SDK clients.
 */
import { z } from "zod";
import { EQUIP_SLOTS, SKILLS } from "../domain/types.js";

const int = z.int();

/** A tile position with its height. */
export const PositionSchema = z.object({ x: z.number(), y: z.number(), z: z.number() });
/** An item and how many of it. */
export const ItemStackSchema = z.object({ itemId: z.string(), quantity: int });
/** Level and XP of every skill. */
export const SkillsSchema = z.object(
  Object.fromEntries(SKILLS.map((s) => [s, z.object({ level: int, xp: int })])) as {
    [S in (typeof SKILLS)[number]]: z.ZodObject<{ level: z.ZodInt; xp: z.ZodInt }>;
  },
);
/** An agent's goal (docs/rest.md "Agents"). */
export const GoalSchema = z.object({
  id: z.string(),
  type: z.string(),
  description: z.string(),
  target: z.string().optional(),
  progress: z.number(),
  targetCount: int.optional(),
  startedAt: z.string(),
  setBy: z.enum(["agent", "owner"]).optional(),
  completedAt: z.string().optional().describe("Set when progress reached targetCount; the goal then stops counting"),
});

/** `player:sync`: a player's whole private state, every field always present. */
export const PlayerSyncSchema = z.object({
  id: z.string().describe("character id, the player id used in every event"),
  accountId: z.string(),
  name: z.string(),
  isAgent: z.boolean(),
  position: PositionSchema,
  health: int,
  maxHealth: int,
  coins: int.min(0),
  combatLevel: int,
  skills: SkillsSchema,
  inventory: z.array(z.object({ slot: int.min(0).max(27), itemId: z.string(), quantity: int })).describe("occupied slots only, in slot order"),
  equipment: z.partialRecord(z.enum(EQUIP_SLOTS), ItemStackSchema).describe("worn items by equipment slot; empty slots absent"),
  bank: z.array(ItemStackSchema),
  goal: GoalSchema.nullable(),
  goalsPaused: z.boolean(),
  inTrade: z.boolean(),
  admin: z.boolean().describe("/admin succeeded in this play session"),
  style: z.enum(["attack", "strength", "defense"]).describe("combat stance: which skill melee XP trains"),
  prayer: z
    .object({
      points: int.min(0).describe("prayer points left, rounded up"),
      maxPoints: int.min(0).describe("a full recharge at an altar: the prayer level"),
      active: z.array(z.string()).describe("ids of the prayers switched on (prayers.json)"),
    })
    .describe("docs/combat.md#prayers"),
});
export type PlayerSync = z.output<typeof PlayerSyncSchema>;

/** Fields of `player:sync` that only a live player has (not stored, not in REST's view). */
export const LIVE_ONLY_SYNC_FIELDS = { inTrade: true, admin: true, style: true, prayer: true } as const;
/** The stored part of `player:sync`: what REST shows of a character, live or not. */
export const StoredPlayerSyncSchema = PlayerSyncSchema.omit(LIVE_ONLY_SYNC_FIELDS);
export type StoredPlayerSync = z.output<typeof StoredPlayerSyncSchema>;

/** The stored part of a live `player:sync` (what REST lays over the stored record). */
export function storedPart(sync: PlayerSync): StoredPlayerSync {
  const { inTrade: _t, admin: _a, style: _s, prayer: _p, ...stored } = sync;
  return stored;
}

/** What a player is doing, as others see it. */
export const ACTIVITIES = ["idle", "walking", "attack", "gather", "pickup", "trading", "dead"] as const;

/** Public view of a player. */
export const PlayerPublicSchema = z.object({
  id: z.string(),
  name: z.string(),
  x: int,
  z: int,
  health: int,
  maxHealth: int,
  combatLevel: int,
  moving: z.boolean().describe("has a path left to walk"),
  running: z.boolean().describe("the last player:move asked to run"),
  isAgent: z.boolean(),
  activity: z.enum(ACTIVITIES),
  targetId: z.string().describe('the NPC or player attacked, or the node gathered; "" when none'),
  weapon: z.string().describe('item id of the wielded weapon; "" when none'),
  protection: z.enum(["", "melee", "ranged"]).describe('the attack style an active protection prayer guards against; "" when none'),
});
/** Public view of an NPC. */
export const NpcPublicSchema = z.object({
  id: z.string(),
  npcId: z.string().describe("NPC definition id (npcs.json)"),
  name: z.string(),
  x: int,
  z: int,
  health: int,
  maxHealth: int,
  combatLevel: int,
  targetId: z.string().describe('the player it fights; "" when none'),
});
/** Public view of a resource node or a fire. */
export const ResourcePublicSchema = z.object({
  id: z.string().describe("node id, or fire:<n>"),
  type: z.string(),
  skill: z.string(),
  x: int,
  z: int,
  depleted: z.boolean(),
});
/** Public view of a ground item. */
export const GroundItemPublicSchema = z.object({
  id: z.string().describe("the targetId of pickup"),
  itemId: z.string(),
  quantity: int,
  x: int,
  z: int,
});

/** The public view schema of each collection a client sees. */
export const PUBLIC_VIEWS = {
  players: PlayerPublicSchema,
  npcs: NpcPublicSchema,
  resources: ResourcePublicSchema,
  groundItems: GroundItemPublicSchema,
} as const;
export type ViewKind = keyof typeof PUBLIC_VIEWS;
export type PublicViewOf<K extends ViewKind> = z.output<(typeof PUBLIC_VIEWS)[K]>;
export type PlayerPublic = PublicViewOf<"players">;
export type NpcPublic = PublicViewOf<"npcs">;
export type ResourcePublic = PublicViewOf<"resources">;
export type GroundItemPublic = PublicViewOf<"groundItems">;

/** Changes of one collection: id → the whole view (came into view), its changed fields, or null (gone). */
const delta = <S extends z.ZodObject>(view: S) => z.record(z.string(), z.union([view, view.partial(), z.null()]));

/** `world:update` (`/ws` clients only): the changes in what the player sees since the last one. */
export const WorldUpdateSchema = z.object({
  tick: int.min(0),
  players: delta(PlayerPublicSchema),
  npcs: delta(NpcPublicSchema),
  resources: delta(ResourcePublicSchema),
  groundItems: delta(GroundItemPublicSchema),
});
export type WorldUpdate = z.output<typeof WorldUpdateSchema>;
