/**
 * How game events count toward an agent's goal (docs/rest.md#agents). Pure: the world reports
 * what happened, this says what the goal becomes.
 *
 * A goal counts events of its own type; with a `target`, only events about that target (the ids
 * `availableGoals` uses: gathering node, NPC, recipe, logs item or area id; the produced item id
 * is accepted too, so a free-form "woodcutting, target logs" works). Each event adds 1. When
 * `targetCount` is reached the goal gets `completedAt` and stops counting; it stays the current
 * goal until a new one is set or it is stopped. A goal without `targetCount` counts forever.
 * Types the world does not observe (`banking`, `trading`, `custom`) never change.
 */

/** One thing that happened to a player that a goal may count. */
export type GoalEvent =
  /** One item gathered from a node. */
  | { type: "woodcutting" | "fishing" | "mining"; nodeId: string; itemId: string }
  /** An NPC killed (the killing blow). */
  | { type: "combat"; npcId: string }
  /** One item cooked (burnt food does not count). */
  | { type: "cooking"; recipeId: string; itemId: string }
  /** One set of logs lit. */
  | { type: "firemaking"; itemId: string }
  /** One successful smelt or smith. */
  | { type: "smithing"; recipeId: string; itemId: string }
  /** The player walked into an area. */
  | { type: "explore"; areaId: string };

/** An agent goal as stored on the character (docs/rest.md#agents). */
export interface StoredGoal {
  id: string;
  type: string;
  description: string;
  target?: string;
  progress: number;
  targetCount?: number;
  startedAt: string;
  setBy?: "agent" | "owner";
  /** When `progress` reached `targetCount` (the goal then stops counting). */
  completedAt?: string;
}

/** The fields of a goal that progress reads and writes. */
export interface ProgressingGoal {
  type: string;
  target?: string;
  progress: number;
  targetCount?: number;
  completedAt?: string;
}

/** Ids an event is about, for matching a goal's `target`. */
function subjects(e: GoalEvent): string[] {
  switch (e.type) {
    case "woodcutting":
    case "fishing":
    case "mining":
      return [e.nodeId, e.itemId];
    case "combat":
      return [e.npcId];
    case "cooking":
    case "smithing":
      return [e.recipeId, e.itemId];
    case "firemaking":
      return [e.itemId];
    case "explore":
      return [e.areaId];
  }
}

/**
 * The goal after `event`, or undefined when the event does not count (another type or target, or
 * the goal is already complete). `now` stamps `completedAt`.
 */
export function advanceGoal<G extends ProgressingGoal>(goal: G, event: GoalEvent, now: string): G | undefined {
  if (goal.completedAt !== undefined || goal.type !== event.type) return undefined;
  if (goal.target !== undefined && !subjects(event).includes(goal.target)) return undefined;
  const progress = goal.progress + 1;
  const done = goal.targetCount !== undefined && progress >= goal.targetCount;
  return { ...goal, progress, ...(done ? { completedAt: now } : {}) };
}
