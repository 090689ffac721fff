/**
 * AI agents: `/api/agent/*` (the owner registers, lists and revokes agents), `/api/agents/*`
 * (goal, pause, messages, quick actions, mapping) and `/api/characters/:characterId/*` (skills,
 * position).
 *
 * Who may do what, beyond "own account only":
 * - registering and revoking need the owning account's token (an agent cannot mint or kill tokens);
 * - the agent's own token may read, set its goal (not while paused: 409 GOALS_PAUSED) and stop;
 * - resuming is the owner's decision: an agent token gets 403;
 * - `message` answers 409 CONFLICT when the agent is not in the world (nothing is queued).
 */
import { z } from "zod";
import type { Principal } from "../../auth/service.js";
import type { AgentMapping } from "../../../entities/agent.js";
import type { AgentService } from "../../services/agents.js";
import { GOAL_TYPES } from "../../services/goals.js";
import type { RouteModule } from "../app.js";
import { forbidden, notFound } from "../errors.js";
import {
  Access,
  AvailableGoalSchema,
  CharacterIdParams,
  defineRoute,
  GoalSchema,
  Id,
  PositionSchema,
  r,
  requireAccountToken,
  SkillsSchema,
  who,
  type ApiDeps,
} from "./context.js";

const AgentSummarySchema = z
  .object({
    agentId: z.string(),
    characterId: z.string(),
    accountId: z.string(),
    name: z.string(),
    active: z.boolean().describe("false once the token is revoked"),
    online: z.boolean(),
    createdAt: z.string(),
    revokedAt: z.string().nullable(),
  })
  .openapi("Agent");
const CredentialsSchema = z
  .object({
    agentId: z.string(),
    characterId: z.string(),
    name: z.string(),
    token: z.string().describe("Server token bound to the character; valid 30 days or until revoked"),
    expiresAt: z.string(),
    wsUrl: z.string().describe("Plain WebSocket endpoint: connect with ?token="),
    sdkEndpoint: z.string().describe("Colyseus SDK endpoint"),
  })
  .openapi("AgentCredentials");
const GoalStateSchema = z
  .object({ success: z.boolean(), goal: GoalSchema.nullable(), goalsPaused: z.boolean(), online: z.boolean() })
  .openapi("GoalState");
const GoalControlSchema = z
  .object({ success: z.boolean(), goal: GoalSchema.nullable(), goalsPaused: z.boolean(), availableGoals: z.array(AvailableGoalSchema) })
  .openapi("GoalControl");
const GoalBody = z
  .object({
    goalId: z.string().min(1).max(100).optional().openapi({ description: "An id from availableGoals, e.g. woodcutting:oak_tree" }),
    type: z.enum(GOAL_TYPES).optional(),
    description: z.string().trim().min(1).max(200).optional(),
    target: z.string().trim().min(1).max(100).optional(),
    targetCount: z.int().min(1).max(1_000_000).optional(),
  })
  .strict()
  .refine((b) => b.goalId !== undefined || (b.type !== undefined && b.description !== undefined), {
    message: "give a goalId, or a type and a description",
  })
  .openapi("GoalRequest");
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
const AgentParams = z.object({ agentId: Id });

/** Who is acting on an agent: the agent itself (its bound token) or its owner. */
interface AgentActor {
  mapping: AgentMapping;
  characterId: string;
  actor: "agent" | "owner";
}

/** Routes of `/api/agent/*`, `/api/agents/*` and `/api/characters/*`. */
export function agentRoutes(deps: ApiDeps, agents: AgentService): RouteModule {
  const access = new Access(deps);
  const { world, characters, content } = deps;

  /** 404 for an unknown agent, 403 for another account's or another character's token. */
  async function agentAccess(principal: Principal, agentId: string): Promise<AgentActor> {
    const mapping = await agents.find(agentId);
    if (!mapping) throw notFound("agent");
    const characterId = mapping.characterId as unknown as string;
    if ((mapping.accountId as unknown as string) !== principal.accountId) throw forbidden("this agent belongs to another account");
    if (principal.characterId && principal.characterId !== characterId) throw forbidden("this token is bound to another character");
    return { mapping, characterId, actor: principal.characterId ? "agent" : "owner" };
  }

  return (api, router) => {
    // ---- /api/agent: credentials ------------------------------------------------------------
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/agent/register",
        summary:
          "Register one of the account's characters as an AI agent and issue its credentials. " +
          "Registering again re-keys it: the previous token stops working and its connection is closed.",
        tags: ["agent"],
        auth: "required",
        body: z.object({ characterId: Id }).strict(),
        responses: {
          201: { description: "Credentials", schema: CredentialsSchema },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, body }) => {
        const p = who(principal);
        requireAccountToken(p);
        const c = await access.character(p, body.characterId);
        return agents.register(p.accountId, c.id);
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/agent",
        summary: "The account's agents (an agent token sees only itself)",
        tags: ["agent"],
        auth: "required",
        responses: { 200: { description: "Agents", schema: z.array(AgentSummarySchema) } },
      },
      async ({ principal }) => {
        const p = who(principal);
        const list = await agents.list(p.accountId);
        return list.filter((a) => !p.characterId || a.characterId === p.characterId);
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/agent/:agentId",
        summary: "One agent",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        responses: { 200: { description: "Agent", schema: AgentSummarySchema }, 403: r.forbidden, 404: r.notFound("Agent") },
      },
      async ({ principal, params }) => {
        await agentAccess(who(principal), params.agentId);
        return agents.summary(params.agentId);
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "delete",
        path: "/api/agent/:agentId",
        summary: "Revoke an agent's token: refused from the next request on, and its live connection is closed (code 4003)",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        responses: {
          200: { description: "Revoked", schema: AgentSummarySchema },
          403: r.forbidden,
          404: r.notFound("Agent"),
          409: r.conflict("Already revoked"),
        },
      },
      async ({ principal, params }) => {
        const p = who(principal);
        requireAccountToken(p);
        await agentAccess(p, params.agentId);
        return agents.revoke(params.agentId);
      },
    );

    // ---- /api/agents: mapping, goals, messages, quick actions ---------------------------------
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/agents/mapping/:agentId",
        summary: "Agent-to-character mapping",
        tags: ["agent"],
        auth: "required",
        params: AgentParams,
        responses: {
          200: {
            description: "Mapping",
            schema: z.object({
              agentId: z.string(),
              characterId: z.string(),
              accountId: z.string(),
              characterName: z.string(),
              active: z.boolean(),
              createdAt: z.string(),
              revokedAt: z.string().nullable(),
            }),
          },
          403: r.forbidden,
          404: r.notFound("Agent"),
        },
      },
      async ({ principal, params }) => {
        await agentAccess(who(principal), params.agentId);
        const s = await agents.summary(params.agentId);
        return {
          agentId: s.agentId,
          characterId: s.characterId,
          accountId: s.accountId,
          characterName: s.name,
          active: s.active,
          createdAt: s.createdAt,
          revokedAt: s.revokedAt,
        };
      },
    );
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
        agents.deliverMessage(characterId, from, body.text);
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

    // ---- /api/characters: skills and position -------------------------------------------------
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/characters/:characterId/skills",
        summary: "Skill levels and XP (live when online)",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        responses: {
          200: {
            description: "Skills",
            schema: z.object({
              characterId: z.string(),
              online: z.boolean(),
              combatLevel: z.int(),
              totalLevel: z.int(),
              skills: SkillsSchema,
            }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const view = await characters.currentView(c.id, world);
        if (!view) throw notFound("character");
        return {
          characterId: c.id,
          online: view.online,
          combatLevel: view.combatLevel,
          totalLevel: Object.values(view.skills).reduce((n, s) => n + s.level, 0),
          skills: view.skills,
        };
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/characters/:characterId/position",
        summary: "Position, area and online status (live when online)",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        responses: {
          200: {
            description: "Position",
            schema: z.object({
              characterId: z.string(),
              online: z.boolean(),
              position: PositionSchema,
              area: z.object({ id: z.string(), name: z.string(), safeZone: z.boolean(), pvp: z.boolean() }).nullable(),
            }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const live = world.isOnline(c.id) ? world.livePlayer(c.id) : undefined;
        const position = live?.position ?? { x: c.positionX, y: c.positionY, z: c.positionZ };
        const area = content.areaAt(position.x, position.z);
        return {
          characterId: c.id,
          online: live !== undefined,
          position,
          area: area ? { id: area.id, name: area.name, safeZone: area.safeZone, pvp: area.pvp } : null,
        };
      },
    );
  };
}
