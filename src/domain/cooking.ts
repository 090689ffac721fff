/**
 * Cooking: the burn chance falls linearly from `maxBurnChance` at the required level to 0 at the
 * stop-burn level, and a roll decides each attempt.
 */
import { err, ok, type Result } from "./errors.js";

export const COOKING_ERROR = {
  LEVEL_TOO_LOW: "LEVEL_TOO_LOW",
} as const;
export type CookingErrorCode = (typeof COOKING_ERROR)[keyof typeof COOKING_ERROR];

/** Burn chance at exactly the required level, unless a recipe says otherwise. */
export const DEFAULT_MAX_BURN_CHANCE = 0.6;

/** What a recipe says about burning. */
export interface BurnCurve {
  readonly requiredLevel: number;
  /** From this level on the food never burns. */
  readonly stopBurnLevel: number;
  readonly maxBurnChance?: number;
}

/**
 * Chance (0..1) of burning at `level`: 1 below the required level (cannot cook), 0 at or above
 * stopBurnLevel, otherwise linear from maxBurnChance down to 0 between the two levels.
 */
export function burnChance(level: number, curve: BurnCurve): number {
  if (level < curve.requiredLevel) return 1;
  if (level >= curve.stopBurnLevel) return 0;
  const max = curve.maxBurnChance ?? DEFAULT_MAX_BURN_CHANCE;
  const span = curve.stopBurnLevel - curve.requiredLevel;
  return max * (1 - (level - curve.requiredLevel) / span);
}

/**
 * One cooking attempt, drawing `rng()` once. LEVEL_TOO_LOW below the required level; otherwise
 * `cooked` or `burnt`.
 */
export function rollCook(level: number, curve: BurnCurve, rng: () => number): Result<"cooked" | "burnt", CookingErrorCode> {
  if (level < curve.requiredLevel) {
    return err(COOKING_ERROR.LEVEL_TOO_LOW, `You need cooking level ${curve.requiredLevel} to cook that.`);
  }
  return ok(rng() < burnChance(level, curve) ? "burnt" : "cooked");
}
