/**
 * A* path-finding on the 8-connected tile grid (`findPath`, and `searchPath` for the world's own
 * moves), on search buffers every search reuses and tiles shared per tile of the world's bounds, so
 * a search allocates nothing but its path's array (a wandering crowd plans a path per player each
 * second). Moves, bounds and stepping are src/domain/movement.ts.
 */
import { err, ok, type Result } from "./errors.js";
import {
  canStep,
  chebyshev,
  DEFAULT_MAX_PATH_NODES,
  inBounds,
  MAX_MOVE_DISTANCE,
  MOVE_ERROR,
  NEIGHBOURS,
  type BlockedFn,
  type MoveErrorCode,
  type WorldBounds,
} from "./movement.js";
import type { Tile } from "./types.js";

/** A path found by `findPath`. */
export interface PathResult {
  /** Tiles to walk in order, excluding the start; the last one is the destination. */
  readonly tiles: readonly Tile[];
  /** False when the target could not be reached and `tiles` leads to the closest reachable tile. */
  readonly complete: boolean;
}

/** Binary min-heap of node indices ordered by a numeric priority, on reusable typed arrays. */
class OpenHeap {
  private nodes = new Int32Array(1024);
  private prio = new Float64Array(1024);
  size = 0;

  clear(): void {
    this.size = 0;
  }

  push(node: number, priority: number): void {
    if (this.size === this.nodes.length) {
      const nodes = new Int32Array(this.size * 2);
      const prio = new Float64Array(this.size * 2);
      nodes.set(this.nodes);
      prio.set(this.prio);
      this.nodes = nodes;
      this.prio = prio;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (this.prio[parent]! <= priority) break;
      this.nodes[i] = this.nodes[parent]!;
      this.prio[i] = this.prio[parent]!;
      i = parent;
    }
    this.nodes[i] = node;
    this.prio[i] = priority;
  }

  pop(): number {
    const top = this.nodes[0]!;
    const n = --this.size;
    if (n > 0) {
      const lastNode = this.nodes[n]!;
      const lastPrio = this.prio[n]!;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const child = r < n && this.prio[r]! < this.prio[l]! ? r : l;
        if (this.prio[child]! >= lastPrio) break;
        this.nodes[i] = this.nodes[child]!;
        this.prio[i] = this.prio[child]!;
        i = child;
      }
      this.nodes[i] = lastNode;
      this.prio[i] = lastPrio;
    }
    return top;
  }
}

/** NEIGHBOURS as two flat arrays, for the search's inner loop (reading a pair allocates nothing). */
const NEIGHBOUR_DX = Int8Array.from(NEIGHBOURS, ([dx]) => dx);
const NEIGHBOUR_DZ = Int8Array.from(NEIGHBOURS, ([, dz]) => dz);

/**
 * How far beyond the start–target distance a detour may reach. The search window is a square of
 * radius (distance + margin) around the start; with the scratch below its size costs nothing (only
 * visited cells are touched), so the margin is about which detours are allowed: 64 tiles walks
 * round any building in the content, and the node budget bounds the work.
 */
export const PATH_SEARCH_MARGIN = 64;
/** Cell flags in the search window. */
const KNOWN = 1;
const BLOCKED = 2;
const CLOSED = 4;

/**
 * Per-cell search state shared by every `findPath` call: searches run one at a time (a search
 * never yields), so one set of arrays serves them all. A cell's entries are valid only when its
 * `stamp` equals the current generation; a new search bumps the generation instead of clearing or
 * allocating, so its cost is proportional to the cells it visits, not to the window. The arrays
 * grow to the largest window asked for (at most (2·(200 + margin) + 1)² cells, 13 bytes each).
 */
const scratch = {
  stamp: new Uint32Array(0),
  flags: new Uint8Array(0),
  gPlusOne: new Int32Array(0),
  parent: new Int32Array(0),
  generation: 0,
  open: new OpenHeap(),
};

/** The blocked test between searches (none is held). */
const NEVER_BLOCKED: BlockedFn = () => false;
/**
 * The current search's window (local cell index = (x - x0) * depth + (z - z0)), target and blocked
 * test, for the cell functions below: module functions, where closures made per search were most of
 * what a search allocated (a wandering crowd plans a path per player each second).
 */
const search: {
  x0: number;
  x1: number;
  z0: number;
  z1: number;
  depth: number;
  toX: number;
  toZ: number;
  isBlocked: BlockedFn;
  /** The shared tiles of the search's bounds (`tilesOf`), undefined past `SHARED_TILES_MAX`. */
  tiles: SharedTiles | undefined;
} = {
  x0: 0,
  x1: 0,
  z0: 0,
  z1: 0,
  depth: 0,
  toX: 0,
  toZ: 0,
  isBlocked: NEVER_BLOCKED,
  tiles: undefined,
};

/**
 * The tiles paths are made of, one frozen object per tile of a world's bounds, made when a path
 * first goes through it: a path's tiles are shared, not made per search (a wandering crowd plans a
 * path per player each second; new tiles were most of what a search allocated). Frozen, so nobody
 * can move a tile that other paths hold (paths are read-only anyway). Bounds of more than
 * `SHARED_TILES_MAX` tiles get new tiles per path instead (the table would be too large to keep).
 */
interface SharedTiles {
  readonly bounds: WorldBounds;
  readonly depth: number;
  readonly tiles: (Tile | undefined)[];
}
export const SHARED_TILES_MAX = 1 << 20;
const sharedTiles = new WeakMap<WorldBounds, SharedTiles>();

function tilesOf(bounds: WorldBounds): SharedTiles | undefined {
  let shared = sharedTiles.get(bounds);
  if (shared) return shared;
  const depth = bounds.maxZ - bounds.minZ + 1;
  const cells = (bounds.maxX - bounds.minX + 1) * depth;
  if (cells > SHARED_TILES_MAX) return undefined;
  shared = { bounds, depth, tiles: new Array<Tile | undefined>(cells).fill(undefined) };
  sharedTiles.set(bounds, shared);
  return shared;
}

/** The tile (x, z) of a path: the shared one when the bounds have a table. */
function pathTile(x: number, z: number): Tile {
  const shared = search.tiles;
  if (!shared) return Object.freeze({ x, z });
  const i = (x - shared.bounds.minX) * shared.depth + (z - shared.bounds.minZ);
  return (shared.tiles[i] ??= Object.freeze({ x, z }));
}

/** First touch of a cell in this search: reset what an earlier search left there. */
function touch(i: number): void {
  if (scratch.stamp[i] !== scratch.generation) {
    scratch.stamp[i] = scratch.generation;
    scratch.flags[i] = 0;
    scratch.gPlusOne[i] = 0; // 0 = not reached yet
  }
}

/** Whether the tile is inside the window and not blocked (asked of `isBlocked` once per search). */
function free(x: number, z: number): boolean {
  const { x0, x1, z0, z1 } = search;
  if (x < x0 || x > x1 || z < z0 || z > z1) return false;
  const i = (x - x0) * search.depth + (z - z0);
  touch(i);
  const flags = scratch.flags;
  let f = flags[i]!;
  if ((f & KNOWN) === 0) {
    f |= KNOWN | (search.isBlocked(x, z) ? BLOCKED : 0);
    flags[i] = f;
  }
  return (f & BLOCKED) === 0;
}

const heuristic = (x: number, z: number): number => Math.max(Math.abs(x - search.toX), Math.abs(z - search.toZ));
// Order by f, then by h (prefer nodes nearer the target); h < 2^12 inside any window.
const priority = (g: number, h: number): number => (g + h) * 4096 + h;

/** Make room for `cells` cells and start a new generation. */
function beginSearch(cells: number): void {
  if (scratch.stamp.length < cells) {
    scratch.stamp = new Uint32Array(cells);
    scratch.flags = new Uint8Array(cells);
    scratch.gPlusOne = new Int32Array(cells);
    scratch.parent = new Int32Array(cells);
    scratch.generation = 0;
  }
  if (++scratch.generation === 0xffffffff) {
    scratch.stamp.fill(0);
    scratch.generation = 1;
  }
  scratch.open.clear();
}

/** Bytes held by the shared search scratch (for tests and diagnostics). */
export function pathScratchBytes(): number {
  return scratch.stamp.byteLength + scratch.flags.byteLength + scratch.gPlusOne.byteLength + scratch.parent.byteLength;
}

/**
 * A* from `from` to `to` on the 8-connected grid; every step costs 1. A diagonal step is allowed
 * only when both tiles it passes beside are free (no corner cutting).
 *
 * Cost is bounded two ways: at most `maxNodes` tiles are expanded, and the search stays inside a
 * square around the start of radius (distance to target + PATH_SEARCH_MARGIN), clipped to
 * `bounds`. When the target is blocked, unreachable or beyond that budget, the path leads to the
 * reachable tile closest to the target (Chebyshev, then fewest steps) and `complete` is false; when
 * no tile is closer than the start, the answer is NO_PATH. A blocked target (a tree, a rock) ends
 * the search at the first reachable tile next to it. Starting on the target gives an empty path.
 * OUT_OF_BOUNDS when either end lies outside `bounds`; TOO_FAR beyond MAX_MOVE_DISTANCE.
 * `stats.expanded`, when given, receives the number of tiles expanded (what the path-finding
 * budget counts, src/domain/pathing.ts). See `searchPath` for what it allocates.
 */
export function findPath(
  from: Tile,
  to: Tile,
  isBlocked: BlockedFn,
  bounds: WorldBounds,
  maxNodes: number = DEFAULT_MAX_PATH_NODES,
  stats?: { expanded: number },
): Result<PathResult, MoveErrorCode> {
  const tiles = searchPath(from, to, isBlocked, bounds, maxNodes, stats);
  if (typeof tiles === "string") return err(tiles, PATH_ERRORS[tiles]);
  const end = tiles[tiles.length - 1];
  return ok({ tiles, complete: end === undefined || (end.x === to.x && end.z === to.z) });
}

/** What `findPath` says for each of `searchPath`'s refusals. */
const PATH_ERRORS = {
  [MOVE_ERROR.OUT_OF_BOUNDS]: "That tile is outside the world.",
  [MOVE_ERROR.TOO_FAR]: `Paths reach at most ${MAX_MOVE_DISTANCE} tiles.`,
  [MOVE_ERROR.NO_PATH]: "You can't reach that.",
} as const;

/**
 * `findPath`'s search, for the world's own moves (`Movement.pathTo`): the path's tiles, or the code
 * of its refusal, with no result object around them. Reads `from` and `to` only before it returns.
 * Allocates nothing but the returned array, of the path's length: the search's state lives in
 * buffers every search reuses (`scratch`), and its tiles are the shared ones of `bounds`
 * (`SharedTiles`).
 */
export function searchPath(
  from: Tile,
  to: Tile,
  isBlocked: BlockedFn,
  bounds: WorldBounds,
  maxNodes: number = DEFAULT_MAX_PATH_NODES,
  stats?: { expanded: number },
): readonly Tile[] | typeof MOVE_ERROR.OUT_OF_BOUNDS | typeof MOVE_ERROR.TOO_FAR | typeof MOVE_ERROR.NO_PATH {
  if (stats) stats.expanded = 0;
  if (!inBounds(bounds, from.x, from.z) || !inBounds(bounds, to.x, to.z)) return MOVE_ERROR.OUT_OF_BOUNDS;
  if (from.x === to.x && from.z === to.z) return [];
  if (chebyshev(from, to) > MAX_MOVE_DISTANCE) return MOVE_ERROR.TOO_FAR;

  // The search window: local cell index = (x - x0) * depth + (z - z0).
  const radius = chebyshev(from, to) + PATH_SEARCH_MARGIN;
  const x0 = Math.max(bounds.minX, from.x - radius);
  const x1 = Math.min(bounds.maxX, from.x + radius);
  const z0 = Math.max(bounds.minZ, from.z - radius);
  const z1 = Math.min(bounds.maxZ, from.z + radius);
  const depth = z1 - z0 + 1;
  beginSearch((x1 - x0 + 1) * depth);
  search.x0 = x0;
  search.x1 = x1;
  search.z0 = z0;
  search.z1 = z1;
  search.depth = depth;
  search.toX = to.x;
  search.toZ = to.z;
  search.isBlocked = isBlocked;
  search.tiles = tilesOf(bounds);
  try {
    return searchWindow(from.x, from.z, maxNodes, stats);
  } finally {
    search.isBlocked = NEVER_BLOCKED;
    search.tiles = undefined;
  }
}

/** `searchPath`'s A* from (fromX, fromZ) in the window `beginSearch` and `search` were set for. */
function searchWindow(fromX: number, fromZ: number, maxNodes: number, stats: { expanded: number } | undefined): readonly Tile[] | typeof MOVE_ERROR.NO_PATH {
  const { x0, z0, depth, toX, toZ } = search;
  const { flags, gPlusOne, parent, open } = scratch;

  const startIdx = (fromX - x0) * depth + (fromZ - z0);
  touch(startIdx);
  gPlusOne[startIdx] = 1;
  open.push(startIdx, priority(0, heuristic(fromX, fromZ)));

  let bestIdx = startIdx;
  let bestH = heuristic(fromX, fromZ);
  let bestG = 0;
  let expanded = 0;
  // A blocked target can never be entered: a tile next to it is as close as a path gets.
  const goalH = free(toX, toZ) ? 0 : 1;

  while (open.size > 0 && expanded < maxNodes) {
    const idx = open.pop();
    if (flags[idx]! & CLOSED) continue; // stale heap entry
    flags[idx] = flags[idx]! | CLOSED;
    expanded++;
    const x = Math.floor(idx / depth) + x0;
    const z = (idx % depth) + z0;
    const g = gPlusOne[idx]! - 1;
    const h = heuristic(x, z);
    if (h < bestH || (h === bestH && g < bestG)) {
      bestIdx = idx;
      bestH = h;
      bestG = g;
    }
    if (h <= goalH) break;

    for (let d = 0; d < 8; d++) {
      const dx = NEIGHBOUR_DX[d]!;
      const dz = NEIGHBOUR_DZ[d]!;
      if (!canStep(x, z, dx, dz, free)) continue;
      const nx = x + dx;
      const nz = z + dz;
      const nIdx = (nx - x0) * depth + (nz - z0);
      if (flags[nIdx]! & CLOSED) continue;
      const known = gPlusOne[nIdx]!;
      if (known !== 0 && known <= g + 2) continue;
      gPlusOne[nIdx] = g + 2;
      parent[nIdx] = idx;
      open.push(nIdx, priority(g + 1, heuristic(nx, nz)));
    }
  }

  if (stats) stats.expanded = expanded;
  if (bestIdx === startIdx) return MOVE_ERROR.NO_PATH;
  // Its length first, then filled from its end: an array of that size, no growing, no reversing.
  let steps = 0;
  for (let idx = bestIdx; idx !== startIdx; idx = parent[idx]!) steps++;
  const tiles = new Array<Tile>(steps);
  for (let idx = bestIdx, i = steps - 1; idx !== startIdx; idx = parent[idx]!, i--) tiles[i] = pathTile(Math.floor(idx / depth) + x0, (idx % depth) + z0);
  return tiles;
}
