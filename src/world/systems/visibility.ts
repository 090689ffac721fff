/**
 * Interest management: what each player sees (within VIEW_RADIUS, through the spatial grids), the
 * public view of each thing, who sees a tile, and what lies around a player for agents.
 */
import type { GameContent } from "../../content/load.js";
import { chebyshev } from "../../domain/movement.js";
import type { Tile } from "../../domain/types.js";
import type { CombatHit } from "../../events.js";
import type { WorldClock } from "../clock.js";
import { groundItemView, npcView, resourceView, type GroundItem, type Npc, type PublicView, type ResourceInstance } from "../objects.js";
import type { SpatialGrid } from "../grid.js";
import type { Player } from "../player.js";
import type { Surroundings } from "../port.js";
import { canSeeGroundItem } from "./ground.js";

/** Tiles (Chebyshev) a player sees around itself. See docs/protocol.md#interest-management. */
export const VIEW_RADIUS = 24;

/** Visible entity ids per collection. */
export interface VisibleSet {
  players: Set<string>;
  npcs: Set<string>;
  resources: Set<string>;
  groundItems: Set<string>;
}

export interface VisibilityDeps {
  players: ReadonlyMap<string, Player>;
  npcs: ReadonlyMap<string, Npc>;
  resources: ReadonlyMap<string, ResourceInstance>;
  groundItems: ReadonlyMap<string, GroundItem>;
  playerGrid: SpatialGrid<Player>;
  npcGrid: SpatialGrid<Npc>;
  resourceGrid: SpatialGrid<ResourceInstance>;
  itemGrid: SpatialGrid<GroundItem>;
  content: GameContent;
  clock: WorldClock;
}

export class Visibility {
  constructor(private readonly d: VisibilityDeps) {}

  /**
   * Everything within VIEW_RADIUS of the player. Pass `out` to refill existing sets instead of
   * allocating new ones (the room double-buffers them: this runs for every client every tick).
   */
  visibleFor(p: Player, out?: VisibleSet): VisibleSet {
    const d = this.d;
    const v: VisibleSet = out ?? { players: new Set(), npcs: new Set(), resources: new Set(), groundItems: new Set() };
    v.players.clear();
    v.npcs.clear();
    v.resources.clear();
    v.groundItems.clear();
    const near = (e: { x: number; z: number }) => Math.max(Math.abs(e.x - p.x), Math.abs(e.z - p.z)) <= VIEW_RADIUS;
    for (const o of d.playerGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(o)) v.players.add(o.id);
    v.players.add(p.id);
    for (const n of d.npcGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(n) && n.respawnTick === undefined) v.npcs.add(n.id);
    for (const r of d.resourceGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(r)) v.resources.add(r.id);
    const tick = d.clock.tick;
    for (const g of d.itemGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(g) && canSeeGroundItem(p, g, tick)) v.groundItems.add(g.id);
    return v;
  }

  /** Public view of an entity by collection and id. */
  publicView(kind: keyof VisibleSet, id: string): PublicView | undefined {
    const d = this.d;
    if (kind === "players") {
      const p = d.players.get(id);
      return p ? playerView(p) : undefined;
    }
    if (kind === "npcs") {
      const n = d.npcs.get(id);
      return n ? npcView(n) : undefined;
    }
    if (kind === "resources") {
      const r = d.resources.get(id);
      return r ? resourceView(r, d.clock.tick) : undefined;
    }
    const g = d.groundItems.get(id);
    return g ? groundItemView(g) : undefined;
  }

  /** Players who can see the tile. */
  *viewersOf(x: number, z: number): Generator<Player> {
    for (const p of this.d.playerGrid.near(x, z, VIEW_RADIUS)) if (chebyshev(p, { x, z }) <= VIEW_RADIUS) yield p;
  }

  /** Show a hit to everyone who sees where it landed (`combat:hit`). */
  emitHit(hit: CombatHit, at: Tile): void {
    for (const viewer of this.viewersOf(at.x, at.z)) viewer.send("combat:hit", hit);
  }

  /** What is around a player within `radius` tiles (stations, resources, live NPCs, items it may see). */
  surroundings(p: Player, radius: number): Surroundings {
    const d = this.d;
    const dist = (e: Tile) => chebyshev(p, e);
    const tick = d.clock.tick;
    return {
      stations: d.content.stations
        .filter((s) => dist(s) <= radius)
        .map((s) => ({ id: s.id, type: s.type, name: s.name, x: s.x, z: s.z, distance: dist(s) })),
      resources: [...d.resourceGrid.near(p.x, p.z, radius)]
        .filter((r) => dist(r) <= radius)
        .map((r) => ({ id: r.id, type: r.type, skill: r.skill, x: r.x, z: r.z, depleted: r.respawnTick !== undefined, distance: dist(r) })),
      npcs: [...d.npcGrid.near(p.x, p.z, radius)]
        .filter((n) => dist(n) <= radius && n.respawnTick === undefined)
        .map((n) => ({ id: n.id, npcId: n.def.id, name: n.def.name, x: n.x, z: n.z, combatLevel: n.def.combatLevel, health: n.health, distance: dist(n) })),
      groundItems: [...d.itemGrid.near(p.x, p.z, radius)]
        .filter((g) => dist(g) <= radius && canSeeGroundItem(p, g, tick))
        .map((g) => ({ id: g.id, itemId: g.itemId, quantity: g.quantity, x: g.x, z: g.z, distance: dist(g) })),
    };
  }
}

/** Public fields of a player, as the schema and `world:update` carry them. */
export function playerView(p: Player): PublicView {
  return {
    id: p.id,
    name: p.name,
    x: p.x,
    z: p.z,
    health: p.health,
    maxHealth: p.maxHealth,
    combatLevel: p.combatLevel,
    moving: p.path.length > 0,
    running: p.running,
    isAgent: p.isAgent,
    activity: p.dead ? "dead" : p.tradeId ? "trading" : (p.action?.kind ?? (p.path.length > 0 ? "walking" : "idle")),
    targetId: p.action?.kind === "attack" ? p.action.targetId : p.action?.kind === "gather" ? p.action.nodeId : "",
    weapon: p.equipment.weapon?.itemId ?? "",
  };
}
