/**
 * What an AI agent does and how its owner steers it: `/api/agents/:agentId/*` (goal, stop, resume,
 * messages, quick actions).
 *
 * Who may do what, beyond "own account only":
 * - the agent's own token may read, set its goal (not while paused: 409 GOALS_PAUSED) and stop;
 * - resuming is the owner's decision: an agent token gets 403;
 * - `message` answers 409 CONFLICT when the agent is not in the world (nothing is queued).
 */
import { z } from "zod";
import type { AgentService } from "../../services/agents.js";
import { GoalRequestSchema } from "../../services/goals.js";
import type { RouteModule } from "../app.js";
import { forbidden } from "../errors.js";
import { agentAccessCheck, AgentParams } from "./agents.js";
import { AvailableGoalSchema, defineRoute, GoalSchema, PositionSchema, r, who } from "./context.js";

const GoalStateSchema = z.object({ success: z.boolean(), goal: GoalSchema.nullable(), goalsPaused: z.boolean(), online: z.boolean() }).openapi("GoalState");
const GoalControlSchema = z
  .object({ success: z.boolean(), goal: GoalSchema.nullable(), goalsPaused: z.boolean(), availableGoals: z.array(AvailableGoalSchema) })
  .openapi("GoalControl");
const GoalBody = GoalRequestSchema.openapi("GoalRequest");
const Near = z.object({ id: z.string(), x: z.number(), z: z.number(), distance: z.number() }).passthrough();
const QuickActionsSchema = z
  .object({
    agentId: z.string(),
    characterId: z.string(),
    online: z.boolean(),
    source: z.enum(["live", "content"]),
    position: PositionSchema,
    nearby: z.object({ stations: z.array(Near), resources: z.array(Near), npcs: z.array(Near), groundItems: z.array(Near) }),
    goal: GoalSchema.nullable(),
    goalsPaused: z.boolean(),
    availableGoals: z.array(AvailableGoalSchema),
    inventory: z.array(z.object({ slot: z.int(), itemId: z.string(), quantity: z.int() })),
    freeSlots: z.int(),
    coins: z.int(),
  })
  .openapi("QuickActions");

/** Routes of `/api/agents/:agentId/*` besides the mapping. */
export function agentGoalRoutes(agents: AgentService): RouteModule {
  const agentAccess = agentAccessCheck(agents);

  return (api, router) => {
    // ---- goals, messages, quick actions -------------------------------------------------------
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/agents/:agentId/goal",
        summary: "The agent's current goal (with progress) and pause flag",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        responses: { 200: { description: "Goal", schema: GoalStateSchema }, 403: r.forbidden, 404: r.notFound("Agent") },
      },
      async ({ principal, params }) => {
        const { characterId } = await agentAccess(who(principal), params.agentId);
        return { success: true, ...(await agents.goalState(characterId)) };
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/agents/:agentId/goal",
        summary:
          "Set the agent's goal: a goalId from availableGoals, or a type and description. " +
          "The agent's own token is refused while goals are paused (409 GOALS_PAUSED); the owner's clears the pause.",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        body: GoalBody,
        responses: {
          200: { description: "Goal set", schema: GoalStateSchema },
          403: r.forbidden,
          404: r.notFound("Agent"),
          409: r.conflict("GOALS_PAUSED: the agent's goals are paused by its owner"),
        },
      },
      async ({ principal, params, body }) => {
        const { characterId, actor } = await agentAccess(who(principal), params.agentId);
        return { success: true, ...(await agents.setGoal(characterId, body, actor)) };
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/agents/:agentId/goal/stop",
        summary: "Stop: clear the goal, cancel the movement path and pause autonomous goal setting (chat still reaches the agent)",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        responses: { 200: { description: "Stopped", schema: GoalControlSchema }, 403: r.forbidden, 404: r.notFound("Agent") },
      },
      async ({ principal, params }) => {
        const { characterId } = await agentAccess(who(principal), params.agentId);
        return agents.stop(characterId);
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/agents/:agentId/goal/resume",
        summary: "Resume autonomous behaviour (owner's token only)",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        responses: {
          200: { description: "Resumed", schema: GoalControlSchema },
          403: { description: "Another account's agent, or the agent's own token" },
          404: r.notFound("Agent"),
        },
      },
      async ({ principal, params }) => {
        const { characterId, actor } = await agentAccess(who(principal), params.agentId);
        if (actor === "agent") throw forbidden("only the owner can resume a paused agent");
        return agents.resume(characterId);
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/agents/:agentId/message",
        summary: "Send the agent a private chat message (chat:message type private); 409 when the agent is not online",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        body: z.object({ text: z.string().trim().min(1).max(200) }).strict(),
        responses: {
          200: { description: "Delivered", schema: z.object({ delivered: z.literal(true) }) },
          403: r.forbidden,
          404: r.notFound("Agent"),
          409: r.conflict("The agent is not online"),
        },
      },
      async ({ principal, params, body }) => {
        const p = who(principal);
        const { characterId, actor } = await agentAccess(p, params.agentId);
        const from = actor === "agent" ? { id: characterId, name: p.name ?? "Agent" } : { name: p.name ?? "Owner" };
        await agents.deliverMessage(characterId, from, body.text);
        return { delivered: true as const };
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/agents/:agentId/quick-actions",
        summary:
          "Quick-action menu data: nearby stations, resources, NPCs and ground items (live when online, else from the content " +
          "around the stored position), the goals available, and the agent's inventory",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        responses: { 200: { description: "Quick actions", schema: QuickActionsSchema }, 403: r.forbidden, 404: r.notFound("Agent") },
      },
      async ({ principal, params }) => {
        const { characterId } = await agentAccess(who(principal), params.agentId);
        return agents.quickActions(params.agentId, characterId);
      },
    );
  };
}
