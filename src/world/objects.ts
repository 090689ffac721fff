/**
 * The world's in-memory objects other than players: NPCs, resource nodes (and fires), ground items,
 * and their public views. Piles, depleted nodes and fires are stored through `WorldState`
 * (src/world/systems/world-state.ts) through the `WorldStateStore` port (src/world/ports/world-state-store.ts).
 */
import type { GatheringNode, NpcDef } from "../content/schemas.js";
import type { Tile } from "../domain/types.js";
import type { PublicViewOf, ViewKind } from "../protocol/player.js";

export interface Npc {
  readonly id: string;
  readonly def: NpcDef;
  readonly spawn: Tile;
  x: number;
  z: number;
  health: number;
  readonly maxHealth: number;
  /** Player being fought. */
  targetId: string | undefined;
  nextAttackTick: number;
  /** Set while dead: the tick it respawns. */
  respawnTick: number | undefined;
  nextWanderTick: number;
}

export interface ResourceInstance {
  readonly id: string;
  readonly type: string;
  readonly skill: string;
  readonly x: number;
  readonly z: number;
  /** Gathering node type; undefined for fires. */
  readonly node: GatheringNode | undefined;
  /** Set while depleted: the tick it respawns. */
  respawnTick: number | undefined;
  /** Successes left for nodes with `resourcesPerNode`. */
  remaining: number | undefined;
  /** Fires burn out at this tick. */
  expiresTick: number | undefined;
}

export interface GroundItem {
  readonly id: string;
  readonly itemId: string;
  readonly quantity: number;
  readonly x: number;
  readonly z: number;
  /** Only this player sees and may take it before `publicTick`. */
  readonly ownerId: string | undefined;
  publicTick: number;
  expiresTick: number;
  /**
   * The tick its times count from. A pile waits off the ground while its transaction commits; its
   * times then count from when it is stored and placed (`Ground.place` shifts them).
   */
  sinceTick: number;
  /** Its row is in storage: the pickup's transaction deletes it (docs/persistence.md "Ground piles"). */
  stored: boolean;
  /** Its row is being inserted (an NPC's loot): a pickup waits for it. */
  storing: boolean;
  /** A pickup of it is committing: nobody else may take it meanwhile. */
  taking: boolean;
}

/** An entity as clients see it (schema fields / world:update), by collection (src/protocol/player.ts). */
export type PublicView<K extends ViewKind = ViewKind> = PublicViewOf<K>;

/** A public view kept across ticks and refreshed in place (`write*View`): field → value. */
export type ViewFields = Record<string, string | number | boolean>;

/** Set `v[k]` to `value`; 1 when it changed, else 0 (summed with `|` so every field is written). */
export function put(v: ViewFields, k: string, value: string | number | boolean): number {
  if (v[k] === value) return 0;
  v[k] = value;
  return 1;
}

/** Write an NPC's public fields into `v` (see `NpcPublic`); true when any changed. */
export function writeNpcView(n: Npc, v: ViewFields): boolean {
  return (
    (put(v, "id", n.id) |
      put(v, "npcId", n.def.id) |
      put(v, "name", n.def.name) |
      put(v, "x", n.x) |
      put(v, "z", n.z) |
      put(v, "health", n.health) |
      put(v, "maxHealth", n.maxHealth) |
      put(v, "combatLevel", n.def.combatLevel) |
      put(v, "targetId", n.targetId ?? "")) !==
    0
  );
}

/** Write a resource node's or fire's public fields into `v` (see `ResourcePublic`); true when any changed. */
export function writeResourceView(r: ResourceInstance, tick: number, v: ViewFields): boolean {
  const depleted = r.respawnTick !== undefined && r.respawnTick > tick;
  return (put(v, "id", r.id) | put(v, "type", r.type) | put(v, "skill", r.skill) | put(v, "x", r.x) | put(v, "z", r.z) | put(v, "depleted", depleted)) !== 0;
}

/** Write a ground item's public fields into `v` (see `GroundItemPublic`); true when any changed. */
export function writeGroundItemView(g: GroundItem, v: ViewFields): boolean {
  return (put(v, "id", g.id) | put(v, "itemId", g.itemId) | put(v, "quantity", g.quantity) | put(v, "x", g.x) | put(v, "z", g.z)) !== 0;
}
