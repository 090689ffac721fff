/**
 * The world's in-memory objects other than players: NPCs, resource nodes (and fires), ground items,
 * and their public views. Not stored (storage entities live in `entities/`).
 */
import type { GatheringNode, NpcDef } from "../content/schemas.js";
import type { Tile } from "../domain/types.js";
import type { GroundItemPublic, NpcPublic, PublicViewOf, ResourcePublic, ViewKind } from "../protocol/player.js";

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
  readonly publicTick: number;
  readonly expiresTick: number;
}

/** An entity as clients see it (schema fields / world:update), by collection (src/protocol/player.ts). */
export type PublicView<K extends ViewKind = ViewKind> = PublicViewOf<K>;

export function npcView(n: Npc): NpcPublic {
  return {
    id: n.id,
    npcId: n.def.id,
    name: n.def.name,
    x: n.x,
    z: n.z,
    health: n.health,
    maxHealth: n.maxHealth,
    combatLevel: n.def.combatLevel,
    targetId: n.targetId ?? "",
  };
}

export function resourceView(r: ResourceInstance, tick: number): ResourcePublic {
  return { id: r.id, type: r.type, skill: r.skill, x: r.x, z: r.z, depleted: r.respawnTick !== undefined && r.respawnTick > tick };
}

export function groundItemView(g: GroundItem): GroundItemPublic {
  return { id: g.id, itemId: g.itemId, quantity: g.quantity, x: g.x, z: g.z };
}
