/**
 * What a viewer tracks of one collection (players, NPCs, resources or ground items): the candidates
 * within the view radius gathered from the spatial grid, and the domain's selection rule applied
 * (src/domain/interest.ts). Gathering costs about the bound, not the crowd: while the grid cells
 * around the viewer hold at most SCAN_FACTOR × the bound, or are too thin for a walk to pay, they
 * are scanned; beyond, what the viewer tracked is offered whole and the tiles are walked ring by
 * ring outward only until the bound is passed (a per-tile index of the grid), falling back to the
 * scan once the walk has cost what the scan would (`ringWalkBudget`). What a player tracks of the
 * players is kept by reference between selections (`TrackedMark`): off its turn only what could have
 * walked out of view since it was last measured is measured again.
 */
import { chebyshev } from "../../domain/movement.js";
import { selectInterest, type InterestCandidates, type InterestRule } from "../../domain/interest.js";
import type { SpatialGrid } from "../grid.js";
import type { Player } from "../player.js";
import { Chosen, type Placed, type SelectionChanges, type TrackedMark } from "./tracked-mark.js";

/** Scan the cells around a viewer while they hold at most this many times the bound; beyond, walk rings when cheaper. */
export const SCAN_FACTOR = 2;
/** What looking at one tile of a ring walk costs, in entities scanned in a cell: an estimate (a tile is a map lookup and the ring's bookkeeping, an entity a distance check). */
const TILE_COST = 4;
/** The last ring walk's number (`Placed.walkMark`): one counter for every tracker, so no two walks share one. */
let walks = 0;

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

export class Tracker<T extends Placed> {
  /** The candidates of the current viewer (buffers reused from one viewer to the next). */
  private readonly c: { ids: string[]; refs: T[]; distances: Int32Array; count: number; knownFrom: number; trackedUntil: number } = {
    ids: [],
    refs: [],
    distances: new Int32Array(256),
    count: 0,
    knownFrom: 0,
    trackedUntil: 0,
  };
  /** The cells around the current viewer (reused from one viewer to the next). */
  private readonly cells: ReadonlyMap<string, T>[] = [];
  /** The occupied tiles of the ring being walked (`SpatialGrid.ring`). */
  private readonly ring: (readonly T[])[] = [];
  /** What the viewer tracked, counted by the rank it competes at (ring walks). */
  private readonly trackedRanks: Uint32Array;
  private readonly chosen = new Chosen();
  /** `pruneDue`'s scratch: the mark's indexes of what left. */
  private readonly gone: number[] = [];
  /** The rule of the selections (one object, its sets given for each viewer). */
  private readonly rule: { -readonly [K in keyof InterestRule]: InterestRule[K] };
  /** Whether the last `select` left `out` alone, the choice being `previous` (its `mayStay`). */
  stayed = false;

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
     * jump (`SpatialGrid.jumps`) and whether a viewer accepts one of them changes only with the
     * distance (players): then what a viewer tracks need not be checked again until it could have
     * passed the leave radius (`TrackedMark`). Undefined: checked every time.
     */
    private readonly apartPerTick?: number,
    /** Whether the entities carry `walkMark` (set on each at its creation, so their shape stays one). */
    private readonly walkMarks = false,
  ) {
    this.trackedRanks = new Uint32Array(leaveRadius + 1);
    this.rule = { bound, priority: new Set(), previous: undefined, margin, maxAdds, maxSwaps };
  }

  /**
   * Make `out` hold what `viewer` tracks of this collection (and `keep`, the viewer itself in its own
   * collection): `priority` first, then by the rule, `previous` its history. `out` may hold anything
   * before (it is brought to the choice in place). With a `mark` (the viewer's), what it tracked is
   * offered from the mark when the mark holds it, and the mark is made anew for the choice at `tick`.
   * Returns how pressed the view is (`Pressure`). With `mayStay`, a calm choice that is `previous` exactly
   * (most of a calm view's) leaves `out` and the mark as they are and sets `stayed`: the caller keeps `previous`.
   * With `changes`, `out` is `previous` itself, brought to the choice in place: what came in and what
   * left are appended to `changes` (a crowd's choice is mostly what it tracked: only the rest is touched).
   */
  select(
    viewer: Player,
    priority: ReadonlySet<string>,
    previous: ReadonlySet<string> | undefined,
    out: Set<string>,
    keep?: string,
    mark?: TrackedMark,
    tick = 0,
    mayStay = false,
    changes?: SelectionChanges,
  ): Pressure {
    const { grid, radius } = this;
    this.c.count = 0;
    this.stayed = false;
    const marked = mark !== undefined && previous !== undefined && this.marks(mark, previous) ? mark : undefined;
    for (const id of priority) {
      const e = this.all.get(id);
      if (e) this.consider(e, viewer, previous?.has(id) ? this.leaveRadius : radius);
    }
    const near = grid.cellsNear(viewer.x, viewer.z, radius, this.cells);
    const afterPriority = this.c.count;
    const budget = ringWalkBudget(near, this.cells.length * grid.cellSize * grid.cellSize, this.bound);
    if (budget === 0 || !this.walkRings(viewer, priority, previous, marked, afterPriority, budget)) {
      this.c.count = afterPriority;
      // What it tracked within the view radius, the scan finds (tracked or not: looked up by the
      // rule); only the rest is offered from the mark or by id, known to be tracked.
      this.scan(viewer, priority);
      this.c.knownFrom = this.c.count;
      this.considerTracked(viewer, priority, previous, marked, radius);
      this.c.trackedUntil = this.c.count;
    }
    if (mayStay && previous !== undefined && this.isTracked(previous, keep)) {
      this.stayed = true;
      return "calm";
    }
    const rule = this.rule;
    rule.priority = priority;
    rule.previous = previous;
    this.chosen.begin(4 * (this.all.size + 1024), previous);
    const chosen = selectInterest(this.c as InterestCandidates, rule, this.chosen);
    if (changes === undefined) this.chosen.into(out, keep);
    else if (out === previous) this.chosen.update(out, keep, changes);
    else throw new Error("a selection lists its changes only when it brings `previous` itself to the choice");
    if (mark) this.remark(mark, out, tick);
    if (this.c.count <= this.bound) return "calm";
    return chosen >= this.bound ? "crowded" : "filling";
  }

  /** Whether the candidates all fit and are exactly what `tracked` holds (less `keep`): every one is chosen, `tracked` again. */
  private isTracked(tracked: ReadonlySet<string>, keep: string | undefined): boolean {
    const { c } = this;
    // None a newcomer a ring walk offered (past `trackedUntil`); the scan's and the priorities are looked up.
    const size = tracked.size - (keep !== undefined && tracked.has(keep) ? 1 : 0);
    if (c.count > this.bound || c.trackedUntil < c.count || c.count !== size) return false;
    for (let i = 0; i < c.knownFrom; i++) if (!tracked.has(c.ids[i]!)) return false;
    return true;
  }

  /**
   * Off the viewer's turn: drop from `tracked`, in place, what is gone, past the leave radius or no
   * longer acceptable, listing it in `dropped`. False, with nothing dropped, when a priority it does
   * not track is within view, or when more than `vacancies` places of the bound would stand free
   * after (MAX_CROWD_VACANCIES): the caller selects now. With the viewer's `mark`, when it holds what
   * is tracked, only what could have passed the leave radius since it was last measured is measured.
   */
  prune(
    viewer: Player,
    priority: ReadonlySet<string>,
    tracked: Set<string>,
    dropped: string[],
    tick: number,
    mark?: TrackedMark,
    vacancies = Infinity,
  ): boolean {
    if (this.newPriorityInView(viewer, priority, tracked)) return false;
    if (mark !== undefined && this.marks(mark, tracked)) {
      if (tick <= mark.until) return true;
      return this.pruneDue(viewer, tracked, dropped, tick, mark, vacancies);
    }
    // Measured by id, and the mark made anew from what stays.
    const marking = mark !== undefined && this.apartPerTick !== undefined;
    if (marking) mark.begin(this.grid as unknown as SpatialGrid<Placed>);
    for (const id of tracked) {
      if (id === viewer.id) continue;
      const e = this.all.get(id);
      const d = e === undefined ? -1 : chebyshev(e, viewer);
      if (e === undefined || d > this.leaveRadius || !this.accept(e, viewer)) dropped.push(id);
      else if (marking) mark.add(e, this.dueAt(tick, d));
    }
    if (!this.commit(viewer, tracked, dropped, vacancies)) {
      mark?.invalidate();
      return false;
    }
    if (marking) mark.size = tracked.size;
    return true;
  }

  /** Whether `mark` holds what `tracked` holds (only for a grid that tells jumps). */
  private marks(mark: TrackedMark, tracked: ReadonlySet<string>): boolean {
    return this.apartPerTick !== undefined && mark.holds(tracked, this.grid as unknown as SpatialGrid<Placed>);
  }

  /** `prune` with a mark that holds what is tracked: what is due measured, the rest kept. */
  private pruneDue(viewer: Player, tracked: Set<string>, dropped: string[], tick: number, mark: TrackedMark, vacancies: number): boolean {
    const { refs, due } = mark;
    const gone = this.gone;
    // Emptied by popping, which keeps its room (`length = 0` gives it back, for the next push to make anew).
    while (gone.length > 0) gone.pop();
    let until = Infinity;
    for (let i = 0; i < mark.count; i++) {
      let at = due[i]!;
      if (at < tick) {
        const e = refs[i] as T;
        const d = chebyshev(e, viewer);
        if (d > this.leaveRadius || !this.accept(e, viewer)) {
          gone.push(i);
          dropped.push(e.id);
          continue;
        }
        due[i] = at = this.dueAt(tick, d);
      }
      if (at < until) until = at;
    }
    if (!this.commit(viewer, tracked, dropped, vacancies)) {
      mark.invalidate();
      return false;
    }
    // Taken out from the last: each index still points where it did when listed.
    for (let j = gone.length - 1; j >= 0; j--) {
      const i = gone[j]!;
      const last = --mark.count;
      refs[i] = refs[last]!;
      due[i] = due[last]!;
    }
    mark.until = until;
    mark.size = tracked.size;
    return true;
  }

  /** Drop `dropped` from `tracked`, unless more than `vacancies` places of the bound would stand free (then false, `dropped` emptied). */
  private commit(viewer: Player, tracked: Set<string>, dropped: string[], vacancies: number): boolean {
    if (dropped.length > 0 && tracked.size - dropped.length - (tracked.has(viewer.id) ? 1 : 0) < this.bound - vacancies) {
      while (dropped.length > 0) dropped.pop();
      return false;
    }
    for (const id of dropped) tracked.delete(id);
    return true;
  }

  /** The last tick something `d` tiles from the viewer at `tick` cannot have passed the leave radius by. */
  private dueAt(tick: number, d: number): number {
    return tick + Math.floor((this.leaveRadius - d) / this.apartPerTick!);
  }

  /** Make `mark` anew, at `tick`, for what the selection just made chose (`out`: that, and the viewer itself). */
  private remark(mark: TrackedMark, out: ReadonlySet<string>, tick: number): void {
    if (this.apartPerTick === undefined) return;
    mark.begin(this.grid as unknown as SpatialGrid<Placed>);
    const { c, chosen } = this;
    for (let k = 0; k < chosen.count; k++) {
      const i = chosen.indexes[k]!;
      mark.add(c.refs[i]!, this.dueAt(tick, c.distances[i]!));
    }
    mark.size = out.size;
  }

  /** Whether a priority the viewer does not track is within view (and acceptable). */
  newPriorityInView(viewer: Player, priority: ReadonlySet<string>, tracked: ReadonlySet<string>): boolean {
    for (const id of priority) {
      if (tracked.has(id)) continue;
      const e = this.all.get(id);
      if (e && chebyshev(e, viewer) <= this.radius && this.accept(e, viewer)) return true;
    }
    return false;
  }

  /**
   * What the viewer tracked (priorities aside, offered already) as candidates, farther than `beyond`
   * and up to the leave radius: from its mark when the mark holds it, else looked up by id.
   */
  private considerTracked(
    viewer: Player,
    priority: ReadonlySet<string>,
    previous: ReadonlySet<string> | undefined,
    marked: TrackedMark | undefined,
    beyond: number,
  ): void {
    if (!previous) return;
    const anyPriority = priority.size > 0;
    if (marked) {
      for (let i = 0; i < marked.count; i++) {
        const e = marked.refs[i] as T;
        if (!(anyPriority && priority.has(e.id))) this.consider(e, viewer, this.leaveRadius, beyond);
      }
      return;
    }
    for (const id of previous) {
      const e = anyPriority && priority.has(id) ? undefined : this.all.get(id);
      if (e !== undefined) this.consider(e, viewer, this.leaveRadius, beyond);
    }
  }

  /** A candidate if farther than `beyond`, within `radius` and acceptable (the distance first: cheaper than `accept`). */
  private consider(e: T, viewer: Player, radius: number, beyond = -1): void {
    const d = chebyshev(e, viewer);
    if (d > beyond && d <= radius && this.accept(e, viewer)) this.push(e, d);
  }

  private push(e: T, distance: number): void {
    const c = this.c;
    if (c.count === c.distances.length) {
      const grown = new Int32Array(c.distances.length * 2);
      grown.set(c.distances);
      c.distances = grown;
    }
    c.ids[c.count] = e.id;
    c.refs[c.count] = e;
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
    for (const cell of this.cells) for (const e of cell.values()) if (!(anyPriority && priority.has(e.id))) this.consider(e, viewer, radius);
  }

  /**
   * A crowd: what the viewer tracked offered whole (from its mark, or looked up by id), then the others ring by ring
   * outward, nearest first, only as many as can still get in: the selection ranks what it tracked
   * `margin` tiles nearer and first at a tie, so once those of rank up to r and the others within r
   * pass the bound, nothing farther could be chosen. The candidates from `from` on are the walk's.
   * False when the bound is not passed within `budget` tiles: the caller takes those back and scans.
   */
  private walkRings(
    viewer: Player,
    priority: ReadonlySet<string>,
    previous: ReadonlySet<string> | undefined,
    marked: TrackedMark | undefined,
    from: number,
    budget: number,
  ): boolean {
    const { radius, margin } = this;
    const room = this.bound - from;
    // Known to the rule: what it tracked (offered whole), then the walk's newcomers.
    this.c.knownFrom = from;
    this.considerTracked(viewer, priority, previous, marked, -1);
    const tracked = (this.c.trackedUntil = this.c.count);
    // What it tracked within the leave radius, marked (with walkMarks): the walk meets nothing it tracked
    // farther, and what it tracked but does not accept it turns down either way.
    const walk = ++walks;
    const marks = this.walkMarks;
    if (marks) for (let i = from; i < tracked; i++) this.c.refs[i]!.walkMark = walk;
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
      const ringSize = this.grid.ring(viewer.x, viewer.z, r, this.ring);
      for (let i = 0; i < ringSize && need > 0; i++) {
        const tile = this.ring[i]!;
        for (let j = 0; j < tile.length && need > 0; j++) {
          const e = tile[j]!;
          if ((anyPriority && priority.has(e.id)) || (marks ? e.walkMark === walk : previous?.has(e.id)) || !this.accept(e, viewer)) continue;
          this.push(e, r);
          filled++;
          need--;
        }
      }
    }
    return true;
  }
}
