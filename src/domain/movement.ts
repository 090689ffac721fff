/**
 * Movement on the tile grid: target validation, A* pathing on 8-connected tiles, and stepping
 * along a path one tick at a time (1 tile walking, 2 running).
 */
import { err, ok, type Result } from "./errors.js";
import type { Tile } from "./types.js";

/** Farthest a single `player:move` may target, in tiles (Chebyshev). */
export const MAX_MOVE_DISTANCE = 200;
/** Default cap on A* node expansions: enough for a 200-tile detour, cheap enough for one tick. */
export const DEFAULT_MAX_PATH_NODES = 40_000;
export const WALK_TILES_PER_TICK = 1;
export const RUN_TILES_PER_TICK = 2;

export const MOVE_ERROR = {
  INVALID_TARGET: "INVALID_TARGET",
  OUT_OF_BOUNDS: "OUT_OF_BOUNDS",
  TOO_FAR: "TOO_FAR",
  BLOCKED: "BLOCKED",
  NO_PATH: "NO_PATH",
} as const;
export type MoveErrorCode = (typeof MOVE_ERROR)[keyof typeof MOVE_ERROR];

/** Inclusive world limits in tile coordinates. */
export interface WorldBounds {
  readonly minX: number;
  readonly maxX: number;
  readonly minZ: number;
  readonly maxZ: number;
}

/** Whether a tile cannot be entered (walls, water, resources...). */
export type BlockedFn = (x: number, z: number) => boolean;

/** Distance in tiles when diagonal steps cost the same as straight ones. */
export function chebyshev(a: Tile, b: Tile): number {
  return Math.max(Math.abs(a.x - b.x), Math.abs(a.z - b.z));
}

/** Whether a tile lies inside the bounds. */
export function inBounds(bounds: WorldBounds, x: number, z: number): boolean {
  return x >= bounds.minX && x <= bounds.maxX && z >= bounds.minZ && z <= bounds.maxZ;
}

/**
 * Checks a requested move target. Refused with INVALID_TARGET for non-integer coordinates,
 * OUT_OF_BOUNDS outside the world, TOO_FAR beyond MAX_MOVE_DISTANCE (200 is allowed, 201 is not),
 * BLOCKED for a tile nobody can stand on. Returns the target as a clean tile.
 */
export function validateMoveTarget(
  from: Tile,
  to: { x: unknown; z: unknown },
  bounds: WorldBounds,
  isBlocked: BlockedFn,
): Result<Tile, MoveErrorCode> {
  if (!Number.isSafeInteger(to.x) || !Number.isSafeInteger(to.z)) {
    return err(MOVE_ERROR.INVALID_TARGET, "Movement targets are whole tile coordinates.");
  }
  const target: Tile = { x: to.x as number, z: to.z as number };
  if (!inBounds(bounds, target.x, target.z)) return err(MOVE_ERROR.OUT_OF_BOUNDS, "That tile is outside the world.");
  if (chebyshev(from, target) > MAX_MOVE_DISTANCE) {
    return err(MOVE_ERROR.TOO_FAR, `You can move at most ${MAX_MOVE_DISTANCE} tiles at a time.`);
  }
  if (isBlocked(target.x, target.z)) return err(MOVE_ERROR.BLOCKED, "You can't stand there.");
  return ok(target);
}

/** A path found by `findPath`. */
export interface PathResult {
  /** Tiles to walk in order, excluding the start; the last one is the destination. */
  readonly tiles: readonly Tile[];
  /** False when the target could not be reached and `tiles` leads to the closest reachable tile. */
  readonly complete: boolean;
}

/** Binary min-heap of node keys ordered by (f, h). */
class OpenHeap {
  private readonly keys: number[] = [];
  private readonly f: number[] = [];
  private readonly h: number[] = [];

  get size(): number {
    return this.keys.length;
  }

  push(key: number, f: number, h: number): void {
    this.keys.push(key);
    this.f.push(f);
    this.h.push(h);
    let i = this.keys.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(i, parent)) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  pop(): number {
    const top = this.keys[0]!;
    const lastKey = this.keys.pop()!;
    const lastF = this.f.pop()!;
    const lastH = this.h.pop()!;
    if (this.keys.length > 0) {
      this.keys[0] = lastKey;
      this.f[0] = lastF;
      this.h[0] = lastH;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let best = i;
        if (l < this.keys.length && this.less(l, best)) best = l;
        if (r < this.keys.length && this.less(r, best)) best = r;
        if (best === i) break;
        this.swap(i, best);
        i = best;
      }
    }
    return top;
  }

  private less(i: number, j: number): boolean {
    return this.f[i]! < this.f[j]! || (this.f[i] === this.f[j] && this.h[i]! < this.h[j]!);
  }

  private swap(i: number, j: number): void {
    [this.keys[i], this.keys[j]] = [this.keys[j]!, this.keys[i]!];
    [this.f[i], this.f[j]] = [this.f[j]!, this.f[i]!];
    [this.h[i], this.h[j]] = [this.h[j]!, this.h[i]!];
  }
}

/** Straight neighbours first so that ties prefer straight steps. */
const DIRECTIONS: readonly (readonly [number, number])[] = [
  [1, 0], [-1, 0], [0, 1], [0, -1],
  [1, 1], [1, -1], [-1, 1], [-1, -1],
];

/**
 * A* from `from` to `to` on the 8-connected grid; every step costs 1. A diagonal step is allowed
 * only when both tiles it passes beside are free (no corner cutting).
 *
 * At most `maxNodes` tiles are expanded, so a search stays cheap however the walls lie. When the
 * target is blocked, unreachable or beyond that budget, the path leads to the reachable tile
 * closest to the target (Chebyshev, then fewest steps) and `complete` is false; when no tile is
 * closer than the start, the answer is NO_PATH. Starting on the target gives an empty path.
 * OUT_OF_BOUNDS when either end lies outside `bounds`.
 */
export function findPath(
  from: Tile,
  to: Tile,
  isBlocked: BlockedFn,
  bounds: WorldBounds,
  maxNodes: number = DEFAULT_MAX_PATH_NODES,
): Result<PathResult, MoveErrorCode> {
  if (!inBounds(bounds, from.x, from.z) || !inBounds(bounds, to.x, to.z)) {
    return err(MOVE_ERROR.OUT_OF_BOUNDS, "That tile is outside the world.");
  }
  if (from.x === to.x && from.z === to.z) return ok({ tiles: [], complete: true });
  const width = bounds.maxZ - bounds.minZ + 1;
  const keyOf = (x: number, z: number): number => (x - bounds.minX) * width + (z - bounds.minZ);
  const xOf = (key: number): number => Math.floor(key / width) + bounds.minX;
  const zOf = (key: number): number => (key % width) + bounds.minZ;
  const free = (x: number, z: number): boolean => inBounds(bounds, x, z) && !isBlocked(x, z);
  const heuristic = (x: number, z: number): number => Math.max(Math.abs(x - to.x), Math.abs(z - to.z));

  const startKey = keyOf(from.x, from.z);
  const targetKey = keyOf(to.x, to.z);
  const g = new Map<number, number>([[startKey, 0]]);
  const parent = new Map<number, number>();
  const closed = new Set<number>();
  const open = new OpenHeap();
  open.push(startKey, heuristic(from.x, from.z), heuristic(from.x, from.z));

  let bestKey = startKey;
  let bestH = heuristic(from.x, from.z);
  let bestG = 0;
  let expanded = 0;

  while (open.size > 0 && expanded < maxNodes) {
    const key = open.pop();
    if (closed.has(key)) continue; // stale heap entry
    closed.add(key);
    expanded++;
    const x = xOf(key);
    const z = zOf(key);
    const gHere = g.get(key)!;
    const hHere = heuristic(x, z);
    if (hHere < bestH || (hHere === bestH && gHere < bestG)) {
      bestKey = key;
      bestH = hHere;
      bestG = gHere;
    }
    if (key === targetKey) break;

    for (const [dx, dz] of DIRECTIONS) {
      const nx = x + dx;
      const nz = z + dz;
      if (!free(nx, nz)) continue;
      if (dx !== 0 && dz !== 0 && (!free(x + dx, z) || !free(x, z + dz))) continue;
      const nKey = keyOf(nx, nz);
      if (closed.has(nKey)) continue;
      const gNext = gHere + 1;
      const known = g.get(nKey);
      if (known !== undefined && known <= gNext) continue;
      g.set(nKey, gNext);
      parent.set(nKey, key);
      const h = heuristic(nx, nz);
      open.push(nKey, gNext + h, h);
    }
  }

  if (bestKey === startKey) return err(MOVE_ERROR.NO_PATH, "You can't reach that.");
  const tiles: Tile[] = [];
  for (let key = bestKey; key !== startKey; key = parent.get(key)!) {
    tiles.push({ x: xOf(key), z: zOf(key) });
  }
  tiles.reverse();
  return ok({ tiles, complete: bestKey === targetKey });
}

/** Where a mover is after one tick. */
export interface StepResult {
  /** The tile reached this tick, or null when the path was already empty. */
  readonly position: Tile | null;
  /** Tiles entered this tick, in order (for animation or per-tile checks). */
  readonly steps: readonly Tile[];
  /** What is left of the path. */
  readonly remaining: readonly Tile[];
}

/**
 * Advances along a path by `tilesPerTick` tiles (WALK_TILES_PER_TICK or RUN_TILES_PER_TICK).
 * Throws a RangeError for a non-positive or non-integer speed (a programming error).
 */
export function stepAlong(path: readonly Tile[], tilesPerTick: number): StepResult {
  if (!Number.isInteger(tilesPerTick) || tilesPerTick < 1) {
    throw new RangeError(`tilesPerTick must be a positive integer, got ${tilesPerTick}`);
  }
  const steps = path.slice(0, tilesPerTick);
  return { position: steps.length > 0 ? steps[steps.length - 1]! : null, steps, remaining: path.slice(steps.length) };
}
