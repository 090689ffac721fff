/**
 * Interest management: what each player sees (docs/interest.md "In a crowd"): the things within VIEW_RADIUS,
 * bounded per collection, nearest first with priorities (src/domain/interest.ts), gathered from the
 * spatial grids at a cost that grows with the bound, not with the crowd; the public view of each
 * thing, who sees a tile, and what lies around a player for agents.
 */
import { COMBAT_LOGOUT_SECONDS } from "../../domain/combat.js";
import type { GameContent } from "../../content/load.js";
import {
  MAX_CROWD_VACANCIES,
  MAX_NEW_PER_TICK,
  MAX_SWAPS_PER_SELECTION,
  MAX_TRACKED_GROUND_ITEMS,
  MAX_TRACKED_NPCS,
  MAX_TRACKED_PLAYERS,
  MAX_TRACKED_RESOURCES,
  TRACKING_MARGIN,
} from "../../domain/interest.js";
import { chebyshev } from "../../domain/movement.js";
import type { Tile } from "../../domain/types.js";
import type { CombatHit } from "../../events.js";
import type { WorldClock } from "../clock.js";
import type { SpatialGrid } from "../grid.js";
import {
  put,
  writeGroundItemView,
  writeNpcView,
  writeResourceView,
  type GroundItem,
  type Npc,
  type PublicView,
  type ResourceInstance,
  type ViewFields,
} from "../objects.js";
import type { Player } from "../player.js";
import type { Surroundings } from "../access.js";
import { canSeeGroundItem } from "./ground.js";
import { RUN_TILES_PER_TICK } from "../../domain/movement.js";
import { due, type SelectionCadence } from "./cadence.js";
import { Tracker } from "./tracker.js";

/** Tiles (Chebyshev) a player sees around itself. See docs/protocol.md#interest-management. */
export const VIEW_RADIUS = 24;
/**
 * What a client tracks leaves its view only past VIEW_RADIUS + this many tiles: something that comes
 * within VIEW_RADIUS comes into view, and stays until it is farther than that, so a player milling
 * around the edge of a view is not sent away and back whole tick after tick. Eight tiles are four
 * ticks of running: a player pacing up and down at the edge, or wandering about a spot there, stays
 * in view. A spread-out world of 2,000 players on the move (`loadtest/bench-interest.ts --scenario
 * spread`, each walking about its home): 3.0 entities sent whole per client per tick without the
 * margin, 1.15 with 4 tiles, 0.54 with 8, and fewer patch bytes (1,253 → 1,202 per client per tick:
 * a whole entity costs several moves). docs/interest.md "In a crowd".
 */
export const VIEW_LEAVE_MARGIN = 8;
const LEAVE_RADIUS = VIEW_RADIUS + VIEW_LEAVE_MARGIN;
/** Seconds a player or NPC that hit a player stays in that player's view first: its combat logout window. */
export const RECENT_ATTACKER_SECONDS = COMBAT_LOGOUT_SECONDS;
/** Seconds a friend it exchanged private messages with stays in a player's view first. */
export const RECENT_CHAT_SECONDS = 60;

/** Visible entity ids per collection. */
export interface VisibleSet {
  players: Set<string>;
  npcs: Set<string>;
  resources: Set<string>;
  groundItems: Set<string>;
}

const emptyVisibleSet = (): VisibleSet => ({ players: new Set(), npcs: new Set(), resources: new Set(), groundItems: new Set() });
/** The priorities of a player that has none (never written). */
const NO_PRIORITIES: VisibleSet = emptyVisibleSet();

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
  private readonly trackers: { players: Tracker<Player>; npcs: Tracker<Npc>; resources: Tracker<ResourceInstance>; groundItems: Tracker<GroundItem> };
  /** Ids a viewer keeps in view first, per collection (refilled for each viewer). */
  private readonly priority = emptyVisibleSet();
  /** The players of each trade (built once per tick, for trade partners). */
  private trades = new Map<string, Player[]>();
  private tradesTick = -1;

  constructor(private readonly d: VisibilityDeps) {
    const tick = () => d.clock.tick;
    this.trackers = {
      // Two players draw apart by at most two runs a tick, unless one jumps (the grid counts jumps).
      players: new Tracker<Player>(
        d.playerGrid,
        d.players,
        MAX_TRACKED_PLAYERS,
        VIEW_RADIUS,
        LEAVE_RADIUS,
        TRACKING_MARGIN,
        (o, p) => o !== p,
        MAX_NEW_PER_TICK,
        MAX_SWAPS_PER_SELECTION,
        2 * RUN_TILES_PER_TICK,
        true,
      ),
      npcs: new Tracker<Npc>(
        d.npcGrid,
        d.npcs,
        MAX_TRACKED_NPCS,
        VIEW_RADIUS,
        LEAVE_RADIUS,
        TRACKING_MARGIN,
        (n) => n.respawnTick === undefined,
        MAX_NEW_PER_TICK,
        MAX_SWAPS_PER_SELECTION,
      ),
      resources: new Tracker<ResourceInstance>(
        d.resourceGrid,
        d.resources,
        MAX_TRACKED_RESOURCES,
        VIEW_RADIUS,
        LEAVE_RADIUS,
        TRACKING_MARGIN,
        () => true,
        MAX_NEW_PER_TICK,
        MAX_SWAPS_PER_SELECTION,
      ),
      groundItems: new Tracker<GroundItem>(
        d.itemGrid,
        d.groundItems,
        MAX_TRACKED_GROUND_ITEMS,
        VIEW_RADIUS,
        LEAVE_RADIUS,
        TRACKING_MARGIN,
        (g, p) => canSeeGroundItem(p, g, tick()),
        MAX_NEW_PER_TICK,
        MAX_SWAPS_PER_SELECTION,
      ),
    };
  }

  /**
   * What the player tracks: itself, and per collection at most its bound of what lies within
   * VIEW_RADIUS, priorities first, then nearest first; `previous` (what it tracked until now) wins
   * ties at the cut-off. Pass `out` to refill existing sets instead of allocating new ones. With a
   * `cadence` (the room's own selection) and `previous`, `previous`'s sets are brought up to date in
   * place and handed to the result (`cadence.inPlace`, what changed in `cadence.changes`): this runs
   * for every client every tick, and a crowd's choice mostly stays. With a cadence, a collection
   * crowded or calm at the last selection is kept off the viewer's turn for it (`cadence.kept`), less
   * what left its view: calm, whatever left; crowded, while at most MAX_CROWD_VACANCIES places stand
   * free; either, unless a new priority is in view.
   */
  visibleFor(p: Player, out?: VisibleSet, previous?: VisibleSet, cadence?: SelectionCadence): VisibleSet {
    const v = out ?? emptyVisibleSet();
    const priority = this.priorities(p);
    const tick = this.d.clock.tick;
    // With a cadence and what it tracked, each collection's set is brought up to date in place.
    const inPlace = cadence !== undefined && previous !== undefined;
    for (const kind of KINDS) {
      const tracker = this.trackers[kind];
      const changes = cadence?.changes[kind];
      if (cadence) {
        cadence.kept[kind] = cadence.inPlace[kind] = false;
        // Popped: `length = 0` gives their room back.
        while (changes!.dropped.length > 0) changes!.dropped.pop();
        while (changes!.added.length > 0) changes!.added.pop();
      }
      // Off its turn: a collection loses what left (a newcomer waits for the turn), and stays unless
      // a new priority is in view or, crowded, too many places would stand free.
      const pruned =
        inPlace &&
        !due(cadence, kind, tick) &&
        tracker.prune(p, priority[kind], previous[kind], changes!.dropped, tick, cadence.marks[kind], cadence.calm[kind] ? Infinity : MAX_CROWD_VACANCIES);
      if (!pruned) {
        // In place, or into `v`'s set (which holds an older choice, or nothing); with a cadence, a
        // calm choice that is exactly what it tracked leaves the set alone (`Tracker.select`'s `mayStay`).
        const self = kind === "players" ? p.id : undefined;
        const pressure = tracker.select(
          p,
          priority[kind],
          previous?.[kind],
          inPlace ? previous[kind] : v[kind],
          self,
          cadence?.marks[kind],
          tick,
          cadence !== undefined,
          changes && inPlace ? changes : undefined,
        );
        if (cadence) {
          cadence.crowded[kind] = pressure === "crowded";
          cadence.calm[kind] = pressure === "calm";
          cadence.kept[kind] = tracker.stayed;
        }
        if (!inPlace) continue;
      } else cadence.kept[kind] = true;
      // Up to date in place: the Set objects trade places, nothing is copied (the stale one is
      // brought to a later selection without a cadence, or dropped).
      const current = previous[kind];
      previous[kind] = v[kind];
      v[kind] = current;
      cadence.inPlace[kind] = true;
    }
    // A client's own selection (the room's, with a cadence): what its messages follow.
    if (cadence) p.tracking = v;
    return v;
  }

  /**
   * Whether `p`'s client, selected before, has a priority within view that it does not track yet (a
   * new attacker, attack target, trade partner, chat friend, gather or pickup target): the room then
   * selects it before the tick's patch, so the priority reaches the client with the patch of the tick
   * that made it one, not one tick after (docs/interest.md "In a crowd"). Most players have no priority at all:
   * that costs a few field reads.
   */
  priorityWaiting(p: Player): boolean {
    const tracking = p.tracking;
    if (!tracking) return false;
    if (!this.mayHavePriorities(p)) return false;
    const priority = this.priorities(p);
    for (const kind of KINDS) if (priority[kind].size > 0 && this.trackers[kind].newPriorityInView(p, priority[kind], tracking[kind])) return true;
    return false;
  }

  /** Whether `viewer`'s client tracks the entity; before its first selection, whatever is in view. */
  tracks(viewer: Player, kind: keyof VisibleSet, id: string): boolean {
    return viewer.tracking === undefined || viewer.tracking[kind].has(id);
  }

  /** Whether `p` has any of what `priorities` reads: most players have none. */
  private mayHavePriorities(p: Player): boolean {
    return !!p.tradeId || !!p.action || p.attackedBy.size > 0 || p.chattedWith.size > 0;
  }

  /** Ids `p` keeps in view before any other: its trade partner, what it fights, who hit it, its recent chats. */
  private priorities(p: Player): VisibleSet {
    // Most players have none: the empty sets, not cleared again for each of them.
    if (!this.mayHavePriorities(p)) return NO_PRIORITIES;
    const pr = this.priority;
    for (const kind of KINDS) pr[kind].clear();
    const now = this.d.clock.now();
    if (p.tradeId) for (const o of this.tradesNow().get(p.tradeId) ?? []) if (o !== p) pr.players.add(o.id);
    const a = p.action;
    if (a?.kind === "attack") (this.d.npcs.has(a.targetId) ? pr.npcs : pr.players).add(a.targetId);
    else if (a?.kind === "gather") pr.resources.add(a.nodeId);
    else if (a?.kind === "pickup") pr.groundItems.add(a.groundItemId);
    for (const [id, at] of p.attackedBy) {
      if (now - at >= RECENT_ATTACKER_SECONDS * 1000) p.attackedBy.delete(id);
      else (this.d.npcs.has(id) ? pr.npcs : pr.players).add(id);
    }
    for (const [id, at] of p.chattedWith) {
      if (now - at >= RECENT_CHAT_SECONDS * 1000) p.chattedWith.delete(id);
      else pr.players.add(id);
    }
    pr.players.delete(p.id);
    return pr;
  }

  /** Trades in progress: trade id → its players present in the world. */
  private tradesNow(): Map<string, Player[]> {
    if (this.tradesTick === this.d.clock.tick) return this.trades;
    this.tradesTick = this.d.clock.tick;
    this.trades = new Map();
    for (const p of this.d.players.values()) {
      if (!p.tradeId) continue;
      const list = this.trades.get(p.tradeId);
      if (list) list.push(p);
      else this.trades.set(p.tradeId, [p]);
    }
    return this.trades;
  }

  /** Public view of an entity by collection and id. */
  publicView(kind: keyof VisibleSet, id: string): PublicView | undefined {
    const v: ViewFields = {};
    return this.writeView(kind, id, v) === undefined ? undefined : (v as PublicView);
  }

  /**
   * Write an entity's public fields into `v`, a view the caller keeps across ticks (no allocation):
   * true when a field changed, undefined when the entity is gone.
   */
  writeView(kind: keyof VisibleSet, id: string, v: ViewFields): boolean | undefined {
    const d = this.d;
    if (kind === "players") {
      const p = d.players.get(id);
      return p ? writePlayerView(p, v) : undefined;
    }
    if (kind === "npcs") {
      const n = d.npcs.get(id);
      return n ? writeNpcView(n, v) : undefined;
    }
    if (kind === "resources") {
      const r = d.resources.get(id);
      return r ? writeResourceView(r, d.clock.tick, v) : undefined;
    }
    const g = d.groundItems.get(id);
    return g ? writeGroundItemView(g, v) : undefined;
  }

  /** Players who can see the tile. */
  *viewersOf(x: number, z: number): Generator<Player> {
    for (const p of this.d.playerGrid.near(x, z, VIEW_RADIUS)) if (chebyshev(p, { x, z }) <= VIEW_RADIUS) yield p;
  }

  /**
   * Show a hit (`combat:hit`) to the combatants and to every client within view of where it landed
   * that tracks the attacker or the target (docs/interest.md "In a crowd").
   */
  emitHit(hit: CombatHit, at: Tile): void {
    const kindOf = (id: string) => (this.d.npcs.has(id) ? "npcs" : "players");
    const attacker = kindOf(hit.attackerId);
    const target = kindOf(hit.targetId);
    for (const viewer of this.viewersOf(at.x, at.z)) {
      const involved = viewer.id === hit.attackerId || viewer.id === hit.targetId;
      if (involved || this.tracks(viewer, attacker, hit.attackerId) || this.tracks(viewer, target, hit.targetId)) viewer.send("combat:hit", hit);
    }
  }

  /** What is around a player within `radius` tiles (stations, resources, live NPCs, items it may see). */
  surroundings(p: Player, radius: number): Surroundings {
    const d = this.d;
    const dist = (e: Tile) => chebyshev(p, e);
    const tick = d.clock.tick;
    return {
      stations: d.content.stations.filter((s) => dist(s) <= radius).map((s) => ({ id: s.id, type: s.type, name: s.name, x: s.x, z: s.z, distance: dist(s) })),
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

const KINDS = ["players", "npcs", "resources", "groundItems"] as const;

/** Public fields of a player, as the schema and `world:update` carry them. */
export function playerView(p: Player): PublicView {
  const v: ViewFields = {};
  writePlayerView(p, v);
  return v as PublicView;
}

/** Write a player's public fields into `v` (see `PlayerPublic`); true when any changed. */
export function writePlayerView(p: Player, v: ViewFields): boolean {
  const a = p.action;
  const walking = p.pathLength > 0;
  return (
    (put(v, "id", p.id) |
      put(v, "name", p.name) |
      put(v, "x", p.x) |
      put(v, "z", p.z) |
      put(v, "health", p.health) |
      put(v, "maxHealth", p.maxHealth) |
      put(v, "combatLevel", p.combatLevel) |
      put(v, "moving", walking) |
      put(v, "running", p.running) |
      put(v, "isAgent", p.isAgent) |
      put(v, "activity", p.dead ? "dead" : p.tradeId ? "trading" : (a?.kind ?? (walking ? "walking" : "idle"))) |
      put(v, "targetId", a?.kind === "attack" ? a.targetId : a?.kind === "gather" ? a.nodeId : "") |
      put(v, "weapon", p.equipment.weapon?.itemId ?? "") |
      put(v, "protection", p.protection)) !==
    0
  );
}
