/**
 * AI agents, who they are: `/api/agent/*` (the owner registers, lists and revokes agents) and
 * `/api/agents/mapping/:agentId`. What they do is in `agent-goals.ts`.
 *
 * Who may do what, beyond "own account only":
 * - registering and revoking need the owning account's token (an agent cannot mint or kill tokens);
 * - the agent's own token may read its own agent.
 */
import { z } from "zod";
import type { AgentMapping } from "../../../entities/agent.js";
import type { Principal } from "../../auth/service.js";
import type { AgentService } from "../../services/agents.js";
import type { RouteModule } from "../app.js";
import { forbidden, notFound } from "../errors.js";
import { Access, defineRoute, Id, r, requireAccountToken, who, type ApiDeps } from "./context.js";

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
export const AgentParams = z.object({ agentId: Id });

/** Who is acting on an agent: the agent itself (its bound token) or its owner. */
export interface AgentActor {
  mapping: AgentMapping;
  characterId: string;
  actor: "agent" | "owner";
}

/** The access check of every agent route: 404 for an unknown agent, 403 for another account's or
 * another character's token. */
export function agentAccessCheck(agents: AgentService): (principal: Principal, agentId: string) => Promise<AgentActor> {
  return async (principal, agentId) => {
    const mapping = await agents.find(agentId);
    if (!mapping) throw notFound("agent");
    const characterId = mapping.characterId as unknown as string;
    if ((mapping.accountId as unknown as string) !== principal.accountId) throw forbidden("this agent belongs to another account");
    if (principal.characterId && principal.characterId !== characterId) throw forbidden("this token is bound to another character");
    return { mapping, characterId, actor: principal.characterId ? "agent" : "owner" };
  };
}

/** Routes of `/api/agent/*` and `/api/agents/mapping/*`. */
export function agentRoutes(deps: ApiDeps, agents: AgentService): RouteModule {
  const access = new Access(deps);
  const agentAccess = agentAccessCheck(agents);

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

    // ---- /api/agents: mapping ---------------------------------------------------------------
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
  };
}
