/**
 * Synchronised world state (Colyseus schema). Drawing data only: no rules, never the source of
 * truth for items or coins. Every collection is filtered per client by a StateView holding what the
 * client tracks (within its view radius, bounded in a crowd: docs/protocol.md#interest-management).
 */
import { schema, t, type SchemaType } from "@colyseus/schema";

export const PlayerState = schema(
  {
    id: t.string(),
    name: t.string(),
    x: t.int32(),
    z: t.int32(),
    health: t.uint16(),
    maxHealth: t.uint16(),
    combatLevel: t.uint8(),
    moving: t.boolean(),
    running: t.boolean(),
    isAgent: t.boolean(),
    /** What the player is doing: idle, walking, fighting, gathering, dead, trading. */
    activity: t.string(),
    /** Id of the entity the player is interacting with. */
    targetId: t.string(),
    weapon: t.string(),
    /** The style an active protection prayer guards against: "", "melee" or "ranged". */
    protection: t.string(),
  },
  "PlayerState",
);
export type PlayerState = SchemaType<typeof PlayerState>;

export const NpcState = schema(
  {
    id: t.string(),
    npcId: t.string(),
    name: t.string(),
    x: t.int32(),
    z: t.int32(),
    health: t.uint16(),
    maxHealth: t.uint16(),
    combatLevel: t.uint8(),
    targetId: t.string(),
  },
  "NpcState",
);
export type NpcState = SchemaType<typeof NpcState>;

export const ResourceState = schema(
  {
    id: t.string(),
    type: t.string(),
    skill: t.string(),
    x: t.int32(),
    z: t.int32(),
    depleted: t.boolean(),
  },
  "ResourceState",
);
export type ResourceState = SchemaType<typeof ResourceState>;

export const GroundItemState = schema(
  {
    id: t.string(),
    itemId: t.string(),
    quantity: t.uint32(),
    x: t.int32(),
    z: t.int32(),
  },
  "GroundItemState",
);
export type GroundItemState = SchemaType<typeof GroundItemState>;

export const WorldState = schema(
  {
    tick: t.uint32(),
    players: t.map(PlayerState).view(),
    npcs: t.map(NpcState).view(),
    resources: t.map(ResourceState).view(),
    groundItems: t.map(GroundItemState).view(),
  },
  "WorldState",
);
export type WorldState = SchemaType<typeof WorldState>;
