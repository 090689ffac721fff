/**
 * What path-finding may cost. Three rules keep a client from holding the event loop with moves
 * (docs/protocol.md "Movement"):
 *
 * - `Regions`: the connected regions of the static walkable grid, computed once from the map, so a
 *   target no path can reach (a free tile inside a walled area) is refused in O(1), before any search.
 * - `pathNodeLimit`: an A* search expands at most a number of tiles proportional to the distance.
 * - `MoveQueue`: `player:move` only records the latest target of the player; the tick searches the
 *   recorded targets in arrival order, one search per player per tick, while the tick's node budget
 *   lasts. The rest wait for the next tick.
 *
 * Pure: no clock, no I/O. The world wires it (src/world/systems/movement.ts).
 */
import type { BlockedFn, WorldBounds } from "./movement.js";
import { chebyshev, DEFAULT_MAX_PATH_NODES } from "./movement.js";
import type { Tile } from "./types.js";

/** Tiles a search may expand whatever the distance (a detour round a building). */
export const PATH_NODES_BASE = 1_000;
/** Tiles a search may expand per tile of distance to its target. */
export const PATH_NODES_PER_TILE = 50;
/** Tiles all the `player:move` searches of one tick may expand together. */
export const PATH_NODES_PER_TICK = 40_000;

/**
 * The node budget of one search for a target `distance` tiles away (Chebyshev): PATH_NODES_BASE +
 * PATH_NODES_PER_TILE × distance, never more than DEFAULT_MAX_PATH_NODES.
 */
export function pathNodeLimit(distance: number): number {
  return Math.min(DEFAULT_MAX_PATH_NODES, PATH_NODES_BASE + PATH_NODES_PER_TILE * Math.max(0, distance));
}

/**
 * The connected regions of the walkable tiles inside `bounds`. Two free tiles are in the same region
 * when a mover can walk from one to the other. Diagonal steps never cut a corner (both tiles beside
 * them must be free, see `canStep`), so a diagonal step can always be replaced by two straight ones:
 * the regions are the 4-connected components of the free tiles. Built once (the map is static):
 * one flood fill, one 32-bit label per tile.
 */
export class Regions {
  private constructor(
    private readonly bounds: WorldBounds,
    private readonly width: number,
    private readonly labels: Int32Array,
    /** Number of regions (labels run from 1 to count; 0 marks a blocked tile). */
    readonly count: number,
  ) {}

  static build(bounds: WorldBounds, isBlocked: BlockedFn): Regions {
    const width = bounds.maxX - bounds.minX + 1;
    const depth = bounds.maxZ - bounds.minZ + 1;
    const labels = new Int32Array(width * depth);
    const BLOCKED = -1;
    for (let i = 0; i < labels.length; i++) {
      if (isBlocked((i % width) + bounds.minX, Math.floor(i / width) + bounds.minZ)) labels[i] = BLOCKED;
    }
    const queue = new Int32Array(labels.length);
    let count = 0;
    for (let seed = 0; seed < labels.length; seed++) {
      if (labels[seed] !== 0) continue;
      const label = ++count;
      let head = 0;
      let tail = 0;
      labels[seed] = label;
      queue[tail++] = seed;
      while (head < tail) {
        const i = queue[head++]!;
        const x = i % width;
        const visit = (j: number) => {
          if (labels[j] === 0) {
            labels[j] = label;
            queue[tail++] = j;
          }
        };
        if (x > 0) visit(i - 1);
        if (x < width - 1) visit(i + 1);
        if (i >= width) visit(i - width);
        if (i + width < labels.length) visit(i + width);
      }
    }
    for (let i = 0; i < labels.length; i++) if (labels[i] === BLOCKED) labels[i] = 0;
    return new Regions(bounds, width, labels, count);
  }

  /** The region of a tile: 0 for a blocked tile or one outside the bounds. */
  regionOf(x: number, z: number): number {
    const b = this.bounds;
    if (x < b.minX || x > b.maxX || z < b.minZ || z > b.maxZ) return 0;
    return this.labels[(z - b.minZ) * this.width + (x - b.minX)]!;
  }

  /**
   * Can a mover on `from` get to `to`? A blocked target (a tree, a station) counts as reached from
   * any tile next to it, as `findPath` ends there; with `adjacent`, so does a free one (attacking,
   * picking up). O(1): at most nine lookups. A mover standing on a blocked tile gets true.
   */
  reachable(from: Tile, to: Tile, adjacent = false): boolean {
    const home = this.regionOf(from.x, from.z);
    // A mover on a blocked tile (put there by an admin teleport) has no region: let the bounded
    // search decide rather than leave it stuck.
    if (home === 0) return true;
    const target = this.regionOf(to.x, to.z);
    if (target === home) return true;
    if (target !== 0 && !adjacent) return false;
    for (let dx = -1; dx <= 1; dx++) for (let dz = -1; dz <= 1; dz++) if ((dx !== 0 || dz !== 0) && this.regionOf(to.x + dx, to.z + dz) === home) return true;
    return false;
  }
}

/** A recorded `player:move`: the latest target wins. */
export interface MoveRequest {
  readonly x: number;
  readonly z: number;
  readonly run: boolean;
}

/** What one tick of `MoveQueue.runTick` did. */
export interface MoveTickReport {
  /** Searches run, in order. */
  readonly served: readonly string[];
  /** Tiles expanded by them together. */
  readonly expanded: number;
  /** Requests left for the next tick (the budget ran out). */
  readonly deferred: number;
}

/** A mover's place in the line: its latest target while it waits (none: not waiting). */
interface Waiting {
  readonly id: string;
  req: MoveRequest | undefined;
}

/**
 * The `player:move` requests waiting for a search, at most one per mover (a newer target replaces
 * the older one and keeps its place in the line), served first come first served by `runTick`.
 *
 * A mover keeps its entry once served, and the line is a ring of entries that only grows, so a
 * crowd asking for a path every second churns no map or array (docs/protocol.md "Movement"): a
 * served mover's next request goes back to the end of the line in the same entry. `cancel` drops
 * the entry (a slot it left in the line is passed over).
 */
export class MoveQueue {
  private readonly entries = new Map<string, Waiting>();
  /** The line, oldest first: `count` slots from `head` (mod the ring's length, a power of two). */
  private ring: (Waiting | undefined)[] = new Array<Waiting | undefined>(64).fill(undefined);
  private head = 0;
  private count = 0;
  /** Movers waiting (slots of cancelled entries aside). */
  private waiting = 0;
  /** `runTick`'s scratch: the ids served, its first entries (the rest are from earlier ticks). */
  private readonly served: string[] = [];

  /**
   * @param perTick tiles all searches of one tick may expand together.
   * @param perSearch most tiles one search may expand (its limit is capped to this); at most
   *   `perTick`, so any single search fits in a tick.
   */
  constructor(
    readonly perTick: number = PATH_NODES_PER_TICK,
    readonly perSearch: number = DEFAULT_MAX_PATH_NODES,
  ) {
    if (!Number.isInteger(perSearch) || perSearch < 1) throw new RangeError(`perSearch must be a positive integer, got ${perSearch}`);
    if (!Number.isInteger(perTick) || perTick < perSearch)
      throw new RangeError(`perTick must be an integer of at least perSearch (${perSearch}), got ${perTick}`);
  }

  /** Record the latest target of `id`. */
  request(id: string, req: MoveRequest): void {
    let e = this.entries.get(id);
    if (!e) this.entries.set(id, (e = { id, req: undefined }));
    if (e.req === undefined) {
      this.waiting++;
      this.push(e);
    }
    e.req = req;
  }

  /** Forget the recorded target of `id` (it teleported, died, left, started something else). */
  cancel(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    if (e.req !== undefined) this.waiting--;
    e.req = undefined;
    this.entries.delete(id);
  }

  /** The target `id` waits for, if any. */
  get(id: string): MoveRequest | undefined {
    return this.entries.get(id)?.req;
  }

  get size(): number {
    return this.waiting;
  }

  /**
   * One tick: in arrival order, run each waiting search whose node limit still fits in what is left
   * of the tick's budget, and charge the tiles it really expanded. The first one that does not fit
   * stops the tick (no overtaking, so nobody waits forever); it and the ones behind it stay.
   * @param limitOf the node limit of `id`'s search, or undefined to drop the request (the mover is gone).
   * @param search runs the search with that limit and returns the tiles it expanded.
   */
  runTick(limitOf: (id: string, req: MoveRequest) => number | undefined, search: (id: string, req: MoveRequest, maxNodes: number) => number): MoveTickReport {
    let left = this.perTick;
    let expanded = 0;
    // The tick's served ids gather in an array kept between ticks; the report gets a copy of its size.
    const served = this.served;
    let n = 0;
    // Requests made meanwhile (by a search) join the end of the line and are reached in turn.
    while (this.count > 0) {
      const e = this.ring[this.head]!;
      const req = e.req;
      if (req === undefined || this.entries.get(e.id) !== e) {
        this.shift(); // a cancelled entry's slot
        continue;
      }
      const limit = limitOf(e.id, req);
      if (limit === undefined) {
        this.shift();
        this.cancel(e.id);
        continue;
      }
      const capped = Math.min(limit, this.perSearch);
      if (capped > left) break;
      this.shift();
      e.req = undefined;
      this.waiting--;
      const used = Math.min(capped, Math.max(0, search(e.id, req, capped)));
      left -= used;
      expanded += used;
      served[n++] = e.id;
    }
    return { served: served.slice(0, n), expanded, deferred: this.waiting };
  }

  private push(e: Waiting): void {
    if (this.count === this.ring.length) {
      // Full: twice the room, the line laid out from 0.
      const ring = new Array<Waiting | undefined>(this.ring.length * 2).fill(undefined);
      for (let i = 0; i < this.count; i++) ring[i] = this.ring[(this.head + i) & (this.ring.length - 1)];
      this.ring = ring;
      this.head = 0;
    }
    this.ring[(this.head + this.count) & (this.ring.length - 1)] = e;
    this.count++;
  }

  private shift(): void {
    this.ring[this.head] = undefined;
    this.head = (this.head + 1) & (this.ring.length - 1);
    this.count--;
  }
}

/** The node limit of a search from `from` to `to` (see `pathNodeLimit`). */
export function searchLimit(from: Tile, to: Tile): number {
  return pathNodeLimit(chebyshev(from, to));
}
