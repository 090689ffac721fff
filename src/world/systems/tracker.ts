/**
 * What a viewer tracks of one collection (players, NPCs, resources or ground items): the candidates
 * within the view radius gathered from the spatial grid, and the domain's selection rule applied
 * (src/domain/interest.ts). Gathering costs about the bound, not the crowd: while the grid cells
 * around the viewer hold at most SCAN_FACTOR × the bound, or are too thin for a walk to pay, they
 * are scanned; beyond, what the viewer tracked is looked up by id and the tiles are walked ring by
 * ring outward only until the bound is passed (a per-tile index of the grid), falling back to the
 * scan once the walk has cost what the scan would (`ringWalkBudget`).
 */
import { chebyshev } from "../../domain/movement.js";
import { selectInterest, type InterestCandidates } from "../../domain/interest.js";
import type { SpatialGrid } from "../grid.js";
import type { Player } from "../player.js";

/** Scan the cells around a viewer while they hold at most this many times the bound; beyond, walk rings when cheaper. */
export const SCAN_FACTOR = 2;
/** What looking at one tile of a ring walk costs, in entities scanned in a cell: an estimate (a tile is a map lookup and the ring's bookkeeping, an entity a distance check). */
const TILE_COST = 4;

interface Placed {
  readonly id: string;
  readonly x: number;
  readonly z: number;
}

/**
 * How pressed a selection was: `calm`, every candidate chosen (no more than the bound in view);
 * `crowded`, more than the bound in view and the view full; `filling`, more than the bound in view
 * and room left (newcomers come in `maxAdds` at a time).
 */
export type Pressure = "calm" | "filling" | "crowded";

/**
 * How many tiles a ring walk may look at before it costs what scanning the `near` entities of the
 * cells around a viewer (`area` tiles) would; past that it falls back to the scan. None (scan at
 * once) up to SCAN_FACTOR × the bound, where the scan is cheap anyway, and where the walk would not
 * pass the bound within that many tiles at the cells' mean density: a view through a thin crowd
 * holds its bound out to the view's edge, and a walk there would look at most of the view's tiles
 * first. Where the crowd is uneven (a thin cell beside a dense one) the estimate errs either way: a
 * walk that should not have been tried gives up at the budget, so a view costs at most twice its scan.
 */
export function ringWalkBudget(near: number, area: number, bound: number): number {
  if (near <= SCAN_FACTOR * bound) return 0;
  const budget = Math.floor(near / TILE_COST);
  const tiles = ((bound + 1) * area) / near;
  return tiles <= budget ? budget : 0;
}

/**
 * A viewer's mark for one collection, from the last time all it tracked was checked against the leave
 * radius: until which tick none of it can have passed that radius (see `Tracker.prune`), and
 * the grid's `jumps` then. `until` below the current tick: check again.
 */
export interface StillMark {
  until: number;
  jumps: number;
}

/**
 * What one selection chose, to bring the viewer's set to it in place: a set emptied and filled
 * again for every selection gave its table back and grew it anew each time (a crowd's views hold a
 * hundred), where in place only what changed is deleted or added.
 */
class Chosen {
  /** Per id, the last selection that chose it (cleared now and then, so ids gone from the world do not pile up). */
  private readonly stamp = new Map<string, number>();
  private epoch = 0;
  private readonly ids: string[] = [];
  private count = 0;

  begin(limit: number): void {
    this.epoch++;
    this.count = 0;
    if (this.stamp.size > limit) this.stamp.clear();
  }

  add(id: string): void {
    this.stamp.set(id, this.epoch);
    this.ids[this.count++] = id;
  }

  /** Make `out` hold exactly what was chosen, and `keep`. */
  into(out: Set<string>, keep: string | undefined): void {
    for (const id of out) if (id !== keep && this.stamp.get(id) !== this.epoch) out.delete(id);
    for (let i = 0; i < this.count; i++) out.add(this.ids[i]!);
    if (keep !== undefined) out.add(keep);
  }
}

export class Tracker<T extends Placed> {
  /** The candidates of the current viewer (buffers reused from one viewer to the next). */
  private readonly c: { ids: string[]; distances: Int32Array; count: number } = { ids: [], distances: new Int32Array(256), count: 0 };
  /** The cells around the current viewer (reused from one viewer to the next). */
  private readonly cells: ReadonlyMap<string, T>[] = [];
  /** The occupied tiles of the ring being walked. */
  private readonly ring: (readonly T[])[] = [];
  private ringSize = 0;
  /** What the viewer tracked, counted by the rank it competes at (ring walks). */
  private readonly trackedRanks: Uint32Array;
  private readonly chosen = new Chosen();

  constructor(
    private readonly grid: SpatialGrid<T>,
    private readonly all: ReadonlyMap<string, T>,
    readonly bound: number,
    readonly radius: number,
    /** What the viewer tracks stays a candidate up to this distance (the view's hysteresis: `radius` + VIEW_LEAVE_MARGIN). */
    readonly leaveRadius: number,
    /** Tiles of advantage of what the viewer already tracks (`InterestRule.margin`). */
    readonly margin: number,
    /** Whether the viewer may see the entity at all (not itself, not a dead NPC, not someone else's drop). */
    private readonly accept: (e: T, viewer: Player) => boolean,
    /** At most this many it did not track come in per selection (`InterestRule.maxAdds`). */
    readonly maxAdds: number,
    /** At most this many it tracked make way for nearer ones per selection (`InterestRule.maxSwaps`). */
    readonly maxSwaps: number,
    /**
     * Tiles a viewer and one of these entities can draw apart in one tick, when the grid tells each
     * jump (`SpatialGrid.jumps`): then what a viewer tracks need not be checked again until it could
     * have passed the leave radius. Undefined: checked every time.
     */
    private readonly apartPerTick?: number,
  ) {
    this.trackedRanks = new Uint32Array(leaveRadius + 1);
  }

  /**
   * Make `out` hold what `viewer` tracks of this collection (and `keep`, the viewer itself in its own
   * collection): `priority` first, then by the rule, `previous` its history. `out` may hold anything
   * before (it is brought to the choice in place). Returns how pressed the view is (`Pressure`).
   */
  select(viewer: Player, priority: ReadonlySet<string>, previous: ReadonlySet<string> | undefined, out: Set<string>, keep?: string): Pressure {
    const { grid, radius } = this;
    this.c.count = 0;
    for (const id of priority) {
      const e = this.all.get(id);
      if (e) this.consider(e, viewer, previous?.has(id) ? this.leaveRadius : radius);
    }
    const near = grid.cellsNear(viewer.x, viewer.z, radius, this.cells);
    const afterPriority = this.c.count;
    const budget = ringWalkBudget(near, this.cells.length * grid.cellSize * grid.cellSize, this.bound);
    if (budget === 0 || !this.walkRings(viewer, priority, previous, afterPriority, budget)) {
      this.c.count = afterPriority;
      // What it tracked within the view radius, the scan finds; only the rest is looked up by id.
      this.considerTracked(viewer, priority, previous, radius);
      this.scan(viewer, priority);
    }
    const rule = { bound: this.bound, priority, previous, margin: this.margin, maxAdds: this.maxAdds, maxSwaps: this.maxSwaps };
    this.chosen.begin(4 * (this.all.size + 1024));
    const chosen = selectInterest(this.c as InterestCandidates, rule, this.chosen);
    this.chosen.into(out, keep);
    if (this.c.count <= this.bound) return "calm";
    return chosen >= this.bound ? "crowded" : "filling";
  }

  /**
   * Off the viewer's turn: drop from `tracked`, in place, what is gone, past the leave radius or no
   * longer acceptable, listing it in `dropped`. False, with nothing dropped, when a priority it does
   * not track is within view, or when more than `vacancies` places of the bound would stand free
   * after (MAX_CROWD_VACANCIES): the caller selects now.
   */
  prune(viewer: Player, priority: ReadonlySet<string>, tracked: Set<string>, dropped: string[], tick: number, still?: StillMark, vacancies = Infinity): boolean {
    if (this.newPriorityInView(viewer, priority, tracked)) return false;
    if (this.isStill(tick, still)) return true;
    let farthest = 0;
    for (const id of tracked) {
      const d = this.stays(id, viewer);
      if (d < 0) dropped.push(id);
      else if (d > farthest) farthest = d;
    }
    if (dropped.length > 0 && tracked.size - dropped.length - (tracked.has(viewer.id) ? 1 : 0) < this.bound - vacancies) {
      dropped.length = 0;
      return false;
    }
    for (const id of dropped) tracked.delete(id);
    this.markStill(tick, farthest, still);
    return true;
  }

  /**
   * Whether nothing the viewer tracks can have passed the leave radius since its mark: no entity of
   * the grid jumped or left since (the viewer neither: players are in the grid they track), and too
   * few ticks went by for any of them to walk that far. What left the state was taken out of the
   * viewer's set already, which selects it again (`SchemaMirror.remove`).
   */
  private isStill(tick: number, still: StillMark | undefined): boolean {
    return still !== undefined && this.apartPerTick !== undefined && tick <= still.until && still.jumps === this.grid.jumps;
  }

  /** All the viewer tracks checked at `tick`, the farthest `farthest` tiles away: until when it must stay within the leave radius. */
  private markStill(tick: number, farthest: number, still: StillMark | undefined): void {
    if (still === undefined || this.apartPerTick === undefined) return;
    still.until = tick + Math.floor((this.leaveRadius - farthest) / this.apartPerTick);
    still.jumps = this.grid.jumps;
  }

  /** Whether a priority the viewer does not track is within view (and acceptable). */
  newPriorityInView(viewer: Player, priority: ReadonlySet<string>, tracked: ReadonlySet<string>): boolean {
    for (const id of priority) {
      if (tracked.has(id)) continue;
      const e = this.all.get(id);
      if (e && this.within(e, viewer, this.radius) && this.accept(e, viewer)) return true;
    }
    return false;
  }

  /** How far something the viewer tracks is, when it may stay tracked (the viewer itself, or still there, within the leave radius and acceptable); else -1. */
  private stays(id: string, viewer: Player): number {
    if (id === viewer.id) return 0;
    const e = this.all.get(id);
    if (e === undefined) return -1;
    const d = chebyshev(e, viewer);
    return d <= this.leaveRadius && this.accept(e, viewer) ? d : -1;
  }

  private within(e: T, viewer: Player, radius: number): boolean {
    return chebyshev(e, viewer) <= radius;
  }

  /** What the viewer tracked (priorities aside, offered already) as candidates, farther than `beyond` and up to the leave radius. */
  private considerTracked(viewer: Player, priority: ReadonlySet<string>, previous: ReadonlySet<string> | undefined, beyond: number): void {
    if (!previous) return;
    const anyPriority = priority.size > 0;
    for (const id of previous) {
      const e = anyPriority && priority.has(id) ? undefined : this.all.get(id);
      if (e !== undefined) this.consider(e, viewer, this.leaveRadius, beyond);
    }
  }

  /** A candidate if farther than `beyond`, within `radius` and acceptable (the distance first: cheaper than `accept`). */
  private consider(e: T, viewer: Player, radius: number, beyond = -1): void {
    const d = chebyshev(e, viewer);
    if (d > beyond && d <= radius && this.accept(e, viewer)) this.push(e.id, d);
  }

  private push(id: string, distance: number): void {
    const c = this.c;
    if (c.count === c.distances.length) {
      const grown = new Int32Array(c.distances.length * 2);
      grown.set(c.distances);
      c.distances = grown;
    }
    c.ids[c.count] = id;
    c.distances[c.count++] = distance;
  }

  /**
   * Everything within the view radius in the cells around the viewer (`cellsNear` gathered them),
   * priorities aside (offered already). Nothing is looked up by id unless the viewer has priorities:
   * about half of what the cells hold is out of view, and `consider`'s distance check drops it.
   */
  private scan(viewer: Player, priority: ReadonlySet<string>): void {
    const { radius } = this;
    const anyPriority = priority.size > 0;
    for (const cell of this.cells)
      for (const e of cell.values()) if (!(anyPriority && priority.has(e.id))) this.consider(e, viewer, radius);
  }

  /**
   * A crowd: what the viewer tracked offered whole (looked up by id), then the others ring by ring
   * outward, nearest first, only as many as can still get in: the selection ranks what it tracked
   * `margin` tiles nearer and first at a tie, so once those of rank up to r and the others within r
   * pass the bound, nothing farther could be chosen. The candidates from `from` on are the walk's.
   * False when the bound is not passed within `budget` tiles: the caller takes those back and scans.
   */
  private walkRings(viewer: Player, priority: ReadonlySet<string>, previous: ReadonlySet<string> | undefined, from: number, budget: number): boolean {
    const { radius, margin } = this;
    const room = this.bound - from;
    this.considerTracked(viewer, priority, previous, -1);
    const tracked = this.c.count;
    const ranks = this.trackedRanks.fill(0);
    // Ranks up to the leave radius (what it tracks stays a candidate that far): one past the view's
    // radius counts against no ring, so the walk still takes the others of the last rings.
    for (let i = from; i < tracked; i++) ranks[Math.max(0, this.c.distances[i]! - margin)]!++;
    // One more than fits, when there is one: the selection then knows that not all fit.
    const anyPriority = priority.size > 0;
    let filled = 0;
    let tiles = 0;
    for (let r = 0; r <= radius; r++) {
      filled += ranks[r]!;
      let need = room + 1 - filled;
      if (need <= 0) return true;
      tiles += r === 0 ? 1 : 8 * r;
      if (tiles > budget) return false;
      this.collectRing(viewer.x, viewer.z, r);
      for (let i = 0; i < this.ringSize && need > 0; i++) {
        const tile = this.ring[i]!;
        for (let j = 0; j < tile.length && need > 0; j++) {
          const e = tile[j]!;
          if ((anyPriority && priority.has(e.id)) || previous?.has(e.id) || !this.accept(e, viewer)) continue;
          this.push(e.id, r);
          filled++;
          need--;
        }
      }
    }
    return true;
  }

  /** Gather the occupied tiles at Chebyshev distance `r` from (x, z) into `ring`. */
  private collectRing(x: number, z: number, r: number): void {
    this.ringSize = 0;
    if (r === 0) return this.tile(x, z);
    for (let dx = -r; dx <= r; dx++) {
      this.tile(x + dx, z - r);
      this.tile(x + dx, z + r);
    }
    for (let dz = -r + 1; dz < r; dz++) {
      this.tile(x - r, z + dz);
      this.tile(x + r, z + dz);
    }
  }

  private tile(x: number, z: number): void {
    const bucket = this.grid.at(x, z);
    if (bucket) this.ring[this.ringSize++] = bucket;
  }
}
