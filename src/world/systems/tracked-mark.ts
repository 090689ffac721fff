/**
 * What a `Tracker` keeps between and within selections (src/world/systems/tracker.ts): a viewer's
 * tracked entities by reference (`TrackedMark`), and one selection's choice (`Chosen`).
 */
import { PRIORITY, TRACKED, type CandidateKind } from "../../domain/interest.js";
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

/** What a selection brought in place changed in the set (`Tracker.select`'s `changes`): the ids that came in and those that left. */
export interface SelectionChanges {
  readonly added: string[];
  readonly dropped: string[];
}

/**
 * What one selection chose, to bring the viewer's set to it in place: a set emptied and filled
 * again for every selection gave its table back and grew it anew each time (a crowd's views hold a
 * hundred), where in place only what changed is deleted or added. Brought to the choice from the
 * selection's own `previous` (`update`), the set is not walked at all unless something left: the
 * selection tells which of what it chose `previous` holds (most of a crowd's choice), so only the
 * rest is added, and when those it holds are as many as the set, nothing else is in it.
 */
export class Chosen {
  /** Per id, the last selection that chose it, stamped only when a set is walked (cleared now and then, so ids gone from the world do not pile up). */
  private readonly stamp = new Map<string, number>();
  private epoch = 0;
  private stamped = false;
  private readonly ids: string[] = [];
  /** Per chosen id, 1 when the selection's `previous` holds it. */
  private held = new Uint8Array(256);
  /** How many of the chosen ids `previous` holds. */
  private heldCount = 0;
  private previous: ReadonlySet<string> | undefined;
  /** What a walk of a set (`dropUnchosen`) reads and lists: a Set's `forEach` with this as `this`, no closure, no iterator. */
  private readonly sweep: Sweep = { stamp: this.stamp, epoch: 0, keep: undefined, dropped: [] };
  /** `into`'s list of what it deletes (emptied by popping, which keeps its room). */
  private readonly scratch: string[] = [];
  /** Per chosen id, its index among the candidates. */
  indexes = new Int32Array(256);
  count = 0;

  /** A new selection, whose rule's `previous` is `previous`. */
  begin(limit: number, previous: ReadonlySet<string> | undefined): void {
    this.epoch++;
    this.count = 0;
    this.heldCount = 0;
    this.stamped = false;
    this.previous = previous;
    if (this.stamp.size > limit) this.stamp.clear();
  }

  add(id: string, index: number, kind: CandidateKind): void {
    if (this.count === this.indexes.length) {
      const grown = new Int32Array(2 * this.count);
      grown.set(this.indexes);
      this.indexes = grown;
      const held = new Uint8Array(2 * this.count);
      held.set(this.held);
      this.held = held;
    }
    const held = kind === TRACKED || (kind === PRIORITY && this.previous !== undefined && this.previous.has(id));
    this.held[this.count] = held ? 1 : 0;
    if (held) this.heldCount++;
    this.indexes[this.count] = index;
    this.ids[this.count++] = id;
  }

  /** Make `out` (not the selection's `previous`) hold exactly what was chosen, and `keep`. */
  into(out: Set<string>, keep: string | undefined): void {
    if (out.size > 0) {
      this.dropUnchosen(out, keep, this.scratch);
      while (this.scratch.length > 0) this.scratch.pop();
    }
    for (let i = 0; i < this.count; i++) out.add(this.ids[i]!);
    if (keep !== undefined) out.add(keep);
  }

  /**
   * Bring the selection's own `previous` to what was chosen, and `keep`, listing in `changes` what
   * came in and what left (appended).
   */
  update(set: Set<string>, keep: string | undefined, changes: SelectionChanges): void {
    const others = set.size - (keep !== undefined && set.has(keep) ? 1 : 0);
    // Every id in the set but `keep` is one the selection chose (the choice holds no id twice): none left.
    if (this.heldCount < others) this.dropUnchosen(set, keep, changes.dropped);
    const { ids, held } = this;
    for (let i = 0; i < this.count; i++)
      if (held[i] === 0) {
        set.add(ids[i]!);
        changes.added.push(ids[i]!);
      }
    if (keep !== undefined && !set.has(keep)) {
      set.add(keep);
      changes.added.push(keep);
    }
  }

  /** Delete from `set` what was not chosen (nor `keep`), listing it at the end of `dropped`. */
  private dropUnchosen(set: Set<string>, keep: string | undefined, dropped: string[]): void {
    if (!this.stamped) {
      for (let i = 0; i < this.count; i++) this.stamp.set(this.ids[i]!, this.epoch);
      this.stamped = true;
    }
    const from = dropped.length;
    const sweep = this.sweep;
    sweep.epoch = this.epoch;
    sweep.keep = keep;
    sweep.dropped = dropped;
    set.forEach(listUnchosen, sweep);
    for (let i = from; i < dropped.length; i++) set.delete(dropped[i]!);
  }
}

interface Sweep {
  readonly stamp: ReadonlyMap<string, number>;
  epoch: number;
  keep: string | undefined;
  dropped: string[];
}

/** One id of the walked set: listed when the selection did not choose it (nor is it `keep`). */
function listUnchosen(this: Sweep, id: string): void {
  if (id !== this.keep && this.stamp.get(id) !== this.epoch) this.dropped.push(id);
}
