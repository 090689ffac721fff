/**
 * Gathering (woodcutting, fishing, mining): the chance of a success per attempt from the player's
 * level, the required level and the tool tier, the roll itself, and resource depletion/respawn.
 *
 * The world rolls with `nodeCurve(node.successBase)`: the content gives each node its chance at the
 * required level; the rest of the curve (+0.01 a level, +0.05 a tool tier, at most 0.95) is
 * DEFAULT_GATHER_CURVE's, whose own `baseChance` (0.25) only serves callers without content. Times
 * are in whatever unit the caller counts (the world: ticks).
 */
import { err, ok, type Result } from "./errors.js";

export const GATHER_ERROR = {
  LEVEL_TOO_LOW: "LEVEL_TOO_LOW",
  DEPLETED: "DEPLETED",
} as const;
export type GatherErrorCode = (typeof GATHER_ERROR)[keyof typeof GATHER_ERROR];

/** Tuning of the success curve. Content may override per resource. */
export interface GatherCurve {
  /** Chance at exactly the required level with the lowest tool. */
  readonly baseChance: number;
  /** Added per level above the requirement. */
  readonly perLevel: number;
  /** Added per tool tier above 0 (bronze 0, iron 1, steel 2 ...). */
  readonly perToolTier: number;
  /** Upper limit of the chance. */
  readonly maxChance: number;
}

export const DEFAULT_GATHER_CURVE: GatherCurve = Object.freeze({
  baseChance: 0.25,
  perLevel: 0.01,
  perToolTier: 0.05,
  maxChance: 0.95,
});

/**
 * Chance (0..1) that one gathering attempt succeeds: 0 below the required level, otherwise
 * baseChance + perLevel × (level − required) + perToolTier × toolTier, capped at maxChance.
 */
export function gatherSuccessChance(level: number, requiredLevel: number, toolTier = 0, curve: GatherCurve = DEFAULT_GATHER_CURVE): number {
  if (level < requiredLevel) return 0;
  const chance = curve.baseChance + curve.perLevel * (level - requiredLevel) + curve.perToolTier * Math.max(0, toolTier);
  return Math.min(curve.maxChance, Math.max(0, chance));
}

/** The curve of a node whose success chance at its required level (tier-0 tool) is `successBase`. */
export function nodeCurve(successBase: number): GatherCurve {
  return { ...DEFAULT_GATHER_CURVE, baseChance: successBase };
}

/** One gathering attempt. */
export interface GatherAttempt {
  readonly level: number;
  readonly requiredLevel: number;
  readonly toolTier?: number;
  readonly curve?: GatherCurve;
}

/**
 * Rolls one attempt with `rng()` (uniform in [0, 1), drawn once). LEVEL_TOO_LOW when the player
 * lacks the required level; otherwise whether the attempt yields the resource.
 */
export function rollGather(attempt: GatherAttempt, rng: () => number): Result<{ success: boolean; chance: number }, GatherErrorCode> {
  if (attempt.level < attempt.requiredLevel) {
    return err(GATHER_ERROR.LEVEL_TOO_LOW, `You need level ${attempt.requiredLevel} to do that.`);
  }
  const chance = gatherSuccessChance(attempt.level, attempt.requiredLevel, attempt.toolTier ?? 0, attempt.curve);
  return ok({ success: rng() < chance, chance });
}

/** Whether a resource node is available; `depletedUntil` is the respawn time in ms, or null. */
export interface ResourceNodeState {
  readonly depletedUntil: number | null;
}

/** A node that is available now. */
export function freshNode(): ResourceNodeState {
  return { depletedUntil: null };
}

/** Whether the node is depleted at `now` (it respawns by itself once `now` reaches depletedUntil). */
export function isDepleted(node: ResourceNodeState, now: number): boolean {
  return node.depletedUntil !== null && now < node.depletedUntil;
}

/** The node after it runs out at `now`, respawning `respawnMs` later. */
export function depleteNode(node: ResourceNodeState, now: number, respawnMs: number): ResourceNodeState {
  return { ...node, depletedUntil: now + Math.max(0, respawnMs) };
}

/** The node with an elapsed depletion cleared (for ticks that sync respawns to clients). */
export function respawnIfDue(node: ResourceNodeState, now: number): ResourceNodeState {
  return node.depletedUntil !== null && now >= node.depletedUntil ? { ...node, depletedUntil: null } : node;
}

/**
 * After a successful gather: whether the node runs out, with probability `depleteChance`
 * (1 = always, like a tree that falls; 0 = never). Draws `rng()` once.
 */
export function rollDepletion(depleteChance: number, rng: () => number): boolean {
  return rng() < depleteChance;
}

/**
 * One complete gathering tick on a node: refuses DEPLETED or LEVEL_TOO_LOW, rolls success, and on a
 * success rolls depletion. Draws rng once for success and once more for depletion on a success.
 */
export function gatherFromNode(
  node: ResourceNodeState,
  attempt: GatherAttempt & { readonly depleteChance: number; readonly respawnMs: number },
  now: number,
  rng: () => number,
): Result<{ success: boolean; node: ResourceNodeState; depleted: boolean }, GatherErrorCode> {
  if (isDepleted(node, now)) return err(GATHER_ERROR.DEPLETED, "There is nothing left to gather here.");
  const roll = rollGather(attempt, rng);
  if (!roll.ok) return roll;
  if (!roll.value.success) return ok({ success: false, node, depleted: false });
  const depleted = rollDepletion(attempt.depleteChance, rng);
  return ok({ success: true, node: depleted ? depleteNode(node, now, attempt.respawnMs) : respawnIfDue(node, now), depleted });
}

/** How a node runs out: after a fixed number of successes (rocks) or by a chance per success (trees, spots). */
export interface NodeDepletion {
  readonly resourcesPerNode?: number;
  readonly depleteChance?: number;
}

/**
 * After a success on a node with `remaining` successes left (counted nodes; undefined otherwise):
 * the successes left and whether the node is now depleted. A counted node draws nothing; a chance
 * node draws `rng()` once.
 */
export function depleteAfterSuccess(
  node: NodeDepletion,
  remaining: number | undefined,
  rng: () => number,
): { depleted: boolean; remaining: number | undefined } {
  if (node.resourcesPerNode !== undefined) {
    const left = (remaining ?? 1) - 1;
    return { depleted: left <= 0, remaining: left };
  }
  return { depleted: rollDepletion(node.depleteChance ?? 0, rng), remaining };
}
