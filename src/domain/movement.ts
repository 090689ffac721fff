/**
 * Movement on the tile grid: target validation, the steps a mover may take, and stepping along a
 * path one tick at a time (1 tile walking, 2 running). The A* search is src/domain/path-search.ts.
 */
import { err, ok, type Err, type Result } from "./errors.js";
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

/** Whether a tile cannot be entered (buildings, station footprints, fences: `GameContent.isBlocked`). */
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
export function validateMoveTarget(from: Tile, to: { x: unknown; z: unknown }, bounds: WorldBounds, isBlocked: BlockedFn): Result<Tile, MoveErrorCode> {
  return moveTargetRefusal(from, to, bounds, isBlocked) ?? ok({ x: to.x as number, z: to.z as number });
}

/**
 * `validateMoveTarget`'s refusal, or undefined when `to` is a good target (whole coordinates, then):
 * the check alone, for the world's `player:move`, which makes nothing for a target it accepts but
 * its request. Reads `from` and `to` only before it returns.
 */
export function moveTargetRefusal(from: Tile, to: { x: unknown; z: unknown }, bounds: WorldBounds, isBlocked: BlockedFn): Err<MoveErrorCode> | undefined {
  const { x, z } = to;
  if (!Number.isSafeInteger(x) || !Number.isSafeInteger(z)) {
    return err(MOVE_ERROR.INVALID_TARGET, "Movement targets are whole tile coordinates.");
  }
  const tx = x as number;
  const tz = z as number;
  if (!inBounds(bounds, tx, tz)) return err(MOVE_ERROR.OUT_OF_BOUNDS, "That tile is outside the world.");
  if (Math.max(Math.abs(from.x - tx), Math.abs(from.z - tz)) > MAX_MOVE_DISTANCE) {
    return err(MOVE_ERROR.TOO_FAR, `You can move at most ${MAX_MOVE_DISTANCE} tiles at a time.`);
  }
  if (isBlocked(tx, tz)) return err(MOVE_ERROR.BLOCKED, "You can't stand there.");
  return undefined;
}

/** The eight neighbouring tile offsets `[dx, dz]`, straight ones first so that ties prefer straight steps. */
export const NEIGHBOURS: readonly (readonly [dx: number, dz: number])[] = [
  [1, 0],
  [-1, 0],
  [0, 1],
  [0, -1],
  [1, 1],
  [1, -1],
  [-1, 1],
  [-1, -1],
];

/**
 * May a mover on (x, z) step by (dx, dz) to a neighbouring tile? The tile must be free, and a
 * diagonal step also needs both tiles it passes beside free (no corner cutting).
 */
export function canStep(x: number, z: number, dx: number, dz: number, free: (x: number, z: number) => boolean): boolean {
  if (!free(x + dx, z + dz)) return false;
  return dx === 0 || dz === 0 || (free(x + dx, z) && free(x, z + dz));
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
