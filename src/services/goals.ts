/**
 * Agent goals (docs/rest.md#agents): the catalogue of goals a character can take up given its
 * skill levels and the game content, building a stored goal, and the pause rule. Pure: no I/O,
 * the clock and ids are passed in.
 */
import type { StoredGoal } from "../../entities/character.js";
import type { GameContent } from "../content/load.js";
import type { SkillName } from "../domain/types.js";
import { z } from "zod";
import { ServiceError, SERVICE_ERROR, invalid } from "./errors.js";

/** Goal types an agent or its owner may set. */
export const GOAL_TYPES = [
  "woodcutting",
  "fishing",
  "mining",
  "cooking",
  "firemaking",
  "smithing",
  "combat",
  "explore",
  "banking",
  "trading",
  "custom",
] as const;
export type GoalType = (typeof GOAL_TYPES)[number];

/** One entry of `availableGoals`: `id` is `<type>:<target>` and can be sent back as `goalId`. */
export interface AvailableGoal {
  id: string;
  type: GoalType;
  description: string;
  /** What the goal is about: a node type, recipe, NPC, item or area id. */
  target: string;
}

/** NPCs up to this many levels above the character are suggested for combat training. */
const COMBAT_MARGIN = 5;
/** Anvil recipes suggested: the highest-level ones the character can make. */
const ANVIL_SUGGESTIONS = 3;

/** "goblin" → "goblins", "wolf" → "wolves", "crab" → "crabs". */
export function plural(noun: string): string {
  if (/[^aeiou]y$/.test(noun)) return `${noun.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/.test(noun)) return `${noun}es`;
  if (/[^f]f$/.test(noun)) return `${noun.slice(0, -1)}ves`;
  return `${noun}s`;
}

/**
 * The goals open to a character: gathering nodes, recipes and logs its levels allow, NPCs near
 * its combat level, and the world's areas. Sorted by type, then by required level.
 */
export function availableGoals(levels: Readonly<Record<SkillName, number>>, combatLevel: number, content: GameContent): AvailableGoal[] {
  const out: (AvailableGoal & { level: number })[] = [];
  const itemName = (id: string) => (content.items.get(id)?.name ?? id.replace(/_/g, " ")).toLowerCase();

  for (const node of content.gatheringNodes.values()) {
    if (levels[node.skill] < node.levelRequired) continue;
    const description =
      node.skill === "woodcutting"
        ? `Chop ${plural(node.name.toLowerCase())}`
        : node.skill === "mining"
          ? `Mine ${itemName(node.yields)}`
          : `Fish for ${itemName(node.yields)}`;
    out.push({ id: `${node.skill}:${node.id}`, type: node.skill, description, target: node.id, level: node.levelRequired });
  }
  for (const r of content.recipes.cooking) {
    if (levels.cooking < r.level) continue;
    out.push({ id: `cooking:${r.id}`, type: "cooking", description: `Cook ${itemName(r.output)}`, target: r.id, level: r.level });
  }
  for (const item of content.items.values()) {
    const fm = item.firemaking;
    if (!fm || levels.firemaking < fm.level) continue;
    out.push({ id: `firemaking:${item.id}`, type: "firemaking", description: `Burn ${itemName(item.id)}`, target: item.id, level: fm.level });
  }
  const smithing = content.recipes.smithing.filter((r) => levels.smithing >= r.level);
  const anvil = smithing
    .filter((r) => r.station === "anvil")
    .sort((a, b) => b.level - a.level)
    .slice(0, ANVIL_SUGGESTIONS);
  for (const r of [...smithing.filter((s) => s.station === "furnace"), ...anvil]) {
    const verb = r.station === "furnace" ? "Smelt" : "Smith";
    out.push({ id: `smithing:${r.id}`, type: "smithing", description: `${verb} ${plural(itemName(r.output.itemId))}`, target: r.id, level: r.level });
  }
  for (const npc of content.npcs.values()) {
    if (!npc.attackable || npc.combatLevel > combatLevel + COMBAT_MARGIN) continue;
    out.push({
      id: `combat:${npc.id}`,
      type: "combat",
      description: `Train combat on ${plural(npc.name.toLowerCase())}`,
      target: npc.id,
      level: npc.combatLevel,
    });
  }
  for (const area of content.areas) {
    out.push({ id: `explore:${area.id}`, type: "explore", description: `Explore ${area.name}`, target: area.id, level: area.difficulty });
  }
  const order = new Map(GOAL_TYPES.map((t, i) => [t, i]));
  out.sort((a, b) => order.get(a.type)! - order.get(b.type)! || a.level - b.level || a.id.localeCompare(b.id));
  return out.map(({ id, type, description, target }) => ({ id, type, description, target }));
}

/** What a caller asks for: a catalogue goal by id, or a free-form goal. */
export interface GoalRequest {
  goalId?: string;
  type?: GoalType;
  description?: string;
  target?: string;
  targetCount?: number;
}

/** A goal request's schema (`POST /api/agents/:agentId/goal` and the MCP tool `goal_set`). */
export const GoalRequestSchema = z
  .object({
    goalId: z.string().min(1).max(100).optional().describe("An id from availableGoals, e.g. woodcutting:oak_tree"),
    type: z.enum(GOAL_TYPES).optional(),
    description: z.string().trim().min(1).max(200).optional(),
    target: z.string().trim().min(1).max(100).optional(),
    targetCount: z.int().min(1).max(1_000_000).optional(),
  })
  .strict()
  .refine((b) => b.goalId !== undefined || (b.type !== undefined && b.description !== undefined), {
    message: "give a goalId, or a type and a description",
  });

/**
 * Build the stored goal for a request.
 * @throws ServiceError INVALID when `goalId` is not open to the character or a free-form goal
 * lacks its type or description.
 */
export function buildGoal(request: GoalRequest, available: readonly AvailableGoal[], setBy: "agent" | "owner", now: Date, id: string): StoredGoal {
  let base: { type: string; description: string; target?: string };
  if (request.goalId !== undefined) {
    const found = available.find((g) => g.id === request.goalId);
    if (!found) throw invalid(`the goal "${request.goalId}" is not available to this character`, "goalId");
    base = { type: found.type, description: request.description ?? found.description, target: found.target };
  } else {
    if (!request.type) throw invalid("give a goalId, or a type and a description", "type");
    if (!request.description) throw invalid("give a goalId, or a type and a description", "description");
    base = { type: request.type, description: request.description, target: request.target };
  }
  // Exploring an area is done once you are there; other goals count until told otherwise.
  const targetCount = request.targetCount ?? (base.type === "explore" ? 1 : undefined);
  return {
    id,
    ...base,
    progress: 0,
    ...(targetCount !== undefined ? { targetCount } : {}),
    startedAt: now.toISOString(),
    setBy,
  };
}

/**
 * The pause rule (docs/rest.md#agents) for setting a goal: the agent's own goals are refused
 * while paused; the owner's are accepted and clear the pause.
 * @returns the pause flag after the goal is set.
 * @throws ServiceError GOALS_PAUSED.
 */
export function pauseAfterGoal(setBy: "agent" | "owner", goalsPaused: boolean): boolean {
  if (setBy === "agent" && goalsPaused) {
    throw new ServiceError(SERVICE_ERROR.GOALS_PAUSED, "goals are paused by the owner; only the owner can set a goal or resume");
  }
  return false;
}
