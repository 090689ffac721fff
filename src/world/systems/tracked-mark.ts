/**
 * What a `Tracker` keeps between and within selections (src/world/systems/tracker.ts): a viewer's
 * tracked entities by reference (`TrackedMark`), and one selection's choice (`Chosen`).
 */
import type { SpatialGrid } from "../grid.js";

/** An entity a tracker selects: its id and its tile. */
export interface Placed {
  readonly id: string;
  readonly x: number;
  readonly z: number;
  /**
   * The tracker's scratch, on entities of a collection whose tracker marks them (players): the ring
   * walk that found it among what its viewer tracks. A crowd's walk meets mostly what the viewer
   * tracks already; telling them by this field, not by the viewer's set of ids, was a third of the
   * walk's time (`loadtest/bench-interest.ts --scenario wander`).
   */
  walkMark?: number;
}

/**
 * What a viewer tracks of one collection whose grid tells jumps (players; `Tracker`'s `apartPerTick`),
 * by reference, each with the last tick it cannot have passed the leave radius by (from its distance
 * when last measured, and how fast two players draw apart): off the viewer's turn only those whose
 * tick has come are measured again (`Tracker.prune`), and a selection offers what the viewer tracks
 * without looking it up by id. In a crowd on the move the farthest of a hundred tracked players is
 * always near the edge: measuring all of them by id every tick was a third of the selections' cost
 * (`loadtest/bench-interest.ts --scenario wander`). Made by each selection; good while the grid's
 * `jumps` is the one it was made at (then every entity it holds is still in the grid) and the
 * tracked set has the `size` it had (a set is only ever shrunk outside the tracker).
 */
export class TrackedMark {
  /** The earliest tick of `due`: until then, nothing to measure. */
  until = -1;
  jumps = -1;
  size = -1;
  count = 0;
  readonly refs: Placed[] = [];
  due = new Int32Array(128);

  /** Not good any more: the next leave check measures all the viewer tracks, by id. */
  invalidate(): void {
    this.jumps = -1;
    this.until = -1;
    this.count = 0;
  }

  /** Whether it holds what `tracked` holds, each entity still in `grid` (see the class comment). */
  holds(tracked: ReadonlySet<string>, grid: SpatialGrid<Placed>): boolean {
    return this.jumps === grid.jumps && this.size === tracked.size;
  }

  add(e: Placed, due: number): void {
    if (this.count === this.due.length) {
      const grown = new Int32Array(2 * this.count);
      grown.set(this.due);
      this.due = grown;
    }
    this.refs[this.count] = e;
    this.due[this.count++] = due;
    if (due < this.until) this.until = due;
  }

  /** Start again, for what `tracked` holds now. */
  begin(grid: SpatialGrid<Placed>): void {
    this.count = 0;
    this.until = Infinity;
    this.jumps = grid.jumps;
  }
}

/**
 * What one selection chose, to bring the viewer's set to it in place: a set emptied and filled
 * again for every selection gave its table back and grew it anew each time (a crowd's views hold a
 * hundred), where in place only what changed is deleted or added.
 */
export class Chosen {
  /** Per id, the last selection that chose it (cleared now and then, so ids gone from the world do not pile up). */
  private readonly stamp = new Map<string, number>();
  private epoch = 0;
  private readonly ids: string[] = [];
  /** Per chosen id, its index among the candidates. */
  indexes = new Int32Array(256);
  count = 0;

  begin(limit: number): void {
    this.epoch++;
    this.count = 0;
    if (this.stamp.size > limit) this.stamp.clear();
  }

  add(id: string, index: number): void {
    this.stamp.set(id, this.epoch);
    if (this.count === this.indexes.length) {
      const grown = new Int32Array(2 * this.count);
      grown.set(this.indexes);
      this.indexes = grown;
    }
    this.indexes[this.count] = index;
    this.ids[this.count++] = id;
  }

  /** Make `out` hold exactly what was chosen, and `keep`. */
  into(out: Set<string>, keep: string | undefined): void {
    for (const id of out) if (id !== keep && this.stamp.get(id) !== this.epoch) out.delete(id);
    for (let i = 0; i < this.count; i++) out.add(this.ids[i]!);
    if (keep !== undefined) out.add(keep);
  }
}
