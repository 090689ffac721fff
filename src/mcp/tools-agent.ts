/**
 * Friends and goals as tools (docs/agents.md#tools): the same services and rules as REST's
 * `/api/player/:characterId/friends…` and `/api/agents/:agentId/goal` (an agent token's own goal is
 * refused while paused with GOALS_PAUSED; the owner's clears the pause).
 */
import { z } from "zod";
import { GoalRequestSchema } from "../services/goals.js";
import { ServiceError } from "../services/errors.js";
import type { Outcome } from "./outcome.js";
import { refused, tool, type ToolContext, type ToolDef } from "./tools.js";

/** Run a service call; its typed refusal becomes `refused` with the service's code. */
async function service(work: () => Promise<Record<string, unknown>>): Promise<Outcome> {
  try {
    return { outcome: "completed", ...(await work()) };
  } catch (e) {
    if (e instanceof ServiceError) return refused(e.code, e.message);
    throw e;
  }
}

const me = (ctx: ToolContext) => ctx.session.me!.id;
const ref = z.object({
  characterId: z.string().min(1).max(128).optional().describe("their player id"),
  name: z.string().min(1).max(12).optional().describe("or their character name"),
});

const friends = tool({
  name: "friends",
  title: "Friends",
  description: "Your friends (with online status) and pending friend requests (incoming and outgoing, with ids).",
  input: z.object({}),
  acts: false,
  run: (ctx) =>
    service(async () => {
      const list = await ctx.social!.listFriends(me(ctx));
      const requests = await ctx.social!.listFriendRequests(me(ctx));
      return { friends: list.map((f) => ({ id: f.id, name: f.name })), requests };
    }),
});

const friendAdd = tool({
  name: "friend_add",
  title: "Add a friend",
  description: "Send a friend request (by player id or name); if they already asked you, you become friends at once. Private chat needs friends.",
  input: ref,
  acts: false,
  run: async (ctx, a) => {
    if (!a.characterId && !a.name) return refused("INVALID", "give characterId or name");
    return service(async () => {
      const r = await ctx.social!.sendFriendRequest(me(ctx), a.characterId ? { id: a.characterId } : { name: a.name! });
      ctx.socialChanged?.(r.changed);
      return { status: r.status, character: r.character };
    });
  },
});

const friendAnswer = tool({
  name: "friend_answer",
  title: "Answer a friend request",
  description: "Accept or decline a friend request addressed to you (requestId from friends).",
  input: z.object({ requestId: z.int().min(1).max(2_147_483_647), accept: z.boolean() }),
  acts: false,
  run: (ctx, a) =>
    service(async () => {
      if (a.accept) {
        const r = await ctx.social!.acceptFriendRequest(me(ctx), a.requestId);
        ctx.socialChanged?.(r.changed);
        return { friend: r.friend };
      }
      const r = await ctx.social!.declineFriendRequest(me(ctx), a.requestId);
      ctx.socialChanged?.(r.changed);
      return { detail: "declined" };
    }),
});

const friendRemove = tool({
  name: "friend_remove",
  title: "Remove a friend",
  description: "Remove a friend (for both sides).",
  input: z.object({ friendId: z.string().min(1).max(128) }),
  acts: false,
  run: (ctx, a) =>
    service(async () => {
      const r = await ctx.social!.removeFriend(me(ctx), a.friendId);
      ctx.socialChanged?.(r.changed);
      return { detail: "removed" };
    }),
});

/** Who sets a goal: the agent itself (a token bound to the character) or its owner. */
const actor = (ctx: ToolContext) => (ctx.boundCharacterId ? "agent" : "owner");

/** Goals are an agent's: a character never registered as one has none. */
async function agentOf(ctx: ToolContext): Promise<Outcome | undefined> {
  const mapping = await ctx.agents!.findByCharacter(me(ctx));
  if (!mapping || mapping.revokedAt) return refused("NOT_AN_AGENT", "this character is not a registered agent (POST /api/agent/register)");
  return undefined;
}

const goalGet = tool({
  name: "goal_get",
  title: "Read the goal",
  description: "Your goal with its progress, whether the owner paused you, and the goals open to you now (ids for goal_set).",
  input: z.object({}),
  acts: false,
  run: async (ctx) =>
    (await agentOf(ctx)) ??
    service(async () => {
      const state = await ctx.agents!.goalState(me(ctx));
      const available = await ctx.agents!.availableGoals(me(ctx));
      return { goal: state.goal, goalsPaused: state.goalsPaused, availableGoals: available.slice(0, 40) };
    }),
});

const goalSet = tool({
  name: "goal_set",
  title: "Set the goal",
  description: "Set your goal: a goalId from goal_get's availableGoals (e.g. woodcutting:tree), or a type and description; targetCount ends it.",
  input: GoalRequestSchema,
  acts: true,
  run: async (ctx, a) =>
    (await agentOf(ctx)) ??
    service(async () => {
      const state = await ctx.agents!.setGoal(me(ctx), a, actor(ctx));
      return { goal: state.goal, goalsPaused: state.goalsPaused };
    }),
});

export const AGENT_TOOLS: ToolDef[] = [friends, friendAdd, friendAnswer, friendRemove, goalGet, goalSet];
