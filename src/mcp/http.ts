/**
 * The MCP endpoint: Streamable HTTP at `/mcp` on the game's port (docs/agents.md#connecting).
 * A session is opened by an `initialize` POST with `Authorization: Bearer <token>` (any REST token;
 * an agent token plays its character) and optional `?world=N&characterId=…` (chosen as a `/ws` join
 * chooses); it joins the world through the `/ws` adapter in process and plays that one character
 * until the client ends it (DELETE), it is idle for `idleMs`, or the server shuts down. Every later
 * request must carry the session id and a token of the same account.
 */
import { randomUUID } from "node:crypto";
import express, { type Request, type Response, type Router } from "express";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { AuthService, Principal } from "../auth/service.js";
import { bearerToken, TokenError } from "../auth/tokens.js";
import type { GameContent } from "../content/load.js";
import type { CorsPolicy } from "../http/cors.js";
import { errorBody } from "../http/errors.js";
import type { Limits } from "../http/limits.js";
import type { Logger } from "../logger.js";
import { JoinRefused, type Adapter } from "../net/adapter.js";
import type { AgentService } from "../services/agents.js";
import type { SocialService } from "../services/social.js";
import { sessionServer } from "./mcp-server.js";
import { Jobs } from "./outcome.js";
import { GameSession } from "./session.js";

/** A session with no request for this long (ms) is closed and its player leaves (combat logout applies). */
export const MCP_IDLE_MS = 10 * 60_000;

export interface McpDeps {
  auth: Pick<AuthService, "authenticate">;
  limits: Pick<Limits, "countAuthFailure">;
  cors: Pick<CorsPolicy, "allows">;
  adapter: Pick<Adapter, "connect">;
  content: GameContent;
  tickMs: number;
  agents: AgentService;
  social: SocialService;
  socialChanged: (ids: string[]) => void;
  logger: Logger;
  idleMs?: number;
}

interface Open {
  transport: StreamableHTTPServerTransport;
  session: GameSession;
  accountId: string;
  lastUsed: number;
}

export interface McpEndpoint {
  router: Router;
  /** Sessions open now. */
  sessions(): number;
  /** End every session (shutdown). */
  close(): Promise<void>;
}

/** The `/mcp` router and its sessions. */
export function mcpEndpoint(deps: McpDeps): McpEndpoint {
  const open = new Map<string, Open>();
  const idleMs = deps.idleMs ?? MCP_IDLE_MS;
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const o of open.values()) if (now - o.lastUsed > idleMs) void o.transport.close();
    },
    Math.min(idleMs, 30_000),
  );
  sweep.unref();

  const fail = (res: Response, status: number, code: string, message: string) => res.status(status).json(errorBody(code, message));

  /** The token's principal; a bad token counts as an authentication attempt (docs/http.md "Authentication"). */
  const authenticate = async (req: Request): Promise<Principal | undefined> => {
    const token = bearerToken(req.headers.authorization);
    if (!token) return undefined;
    try {
      return await deps.auth.authenticate(token);
    } catch (e) {
      if (!(e instanceof TokenError)) throw e;
      await deps.limits.countAuthFailure(req);
      return undefined;
    }
  };

  /** Join the world for a new session and build its server. */
  const start = async (req: Request, res: Response, principal: Principal) => {
    const session = new GameSession(Date.now, req.ip);
    const q = req.query as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === "string" ? v : undefined);
    let link;
    try {
      link = await deps.adapter.connect(principal, { world: str(q.world), characterId: str(q.characterId), transport: "mcp" }, session.socket());
    } catch (e) {
      if (e instanceof JoinRefused) return fail(res, e.status >= 400 && e.status < 600 ? e.status : 503, "JOIN_REFUSED", e.reason);
      throw e;
    }
    await session.attach(link);
    if (session.closed || !session.me) {
      session.detach();
      return fail(res, 503, "JOIN_REFUSED", "the world closed the connection while joining");
    }
    const ctx = {
      session,
      jobs: new Jobs(session),
      content: deps.content,
      tickMs: deps.tickMs,
      accountId: principal.accountId,
      boundCharacterId: principal.characterId,
      agents: deps.agents,
      social: deps.social,
      socialChanged: deps.socialChanged,
      memo: { observedSeq: 0 },
    };
    const server = sessionServer(ctx, deps.logger);
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: true,
      onsessioninitialized: (id) => {
        open.set(id, { transport, session, accountId: principal.accountId, lastUsed: Date.now() });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) open.delete(transport.sessionId);
      session.detach();
      void server.close().catch(() => undefined);
    };
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (e) {
      session.detach(); // the player must not stay in the world without a session
      throw e;
    }
    deps.logger.debug({ accountId: principal.accountId, characterId: session.me.id }, "mcp: session opened");
  };

  const router = express.Router();
  router.all("/", async (req, res, next) => {
    try {
      // A browser page of another origin may not drive a player (DNS rebinding, cross-site requests).
      const origin = req.headers.origin;
      if (origin !== undefined && !deps.cors.allows(origin)) return fail(res, 403, "FORBIDDEN", "origin not allowed");
      const principal = await authenticate(req);
      if (!principal) return fail(res, 401, "UNAUTHORIZED", "a valid Bearer token is required");
      const id = req.headers["mcp-session-id"];
      if (typeof id === "string") {
        const o = open.get(id);
        if (!o) return fail(res, 404, "NOT_FOUND", "no such MCP session (it ended): initialize a new one");
        if (o.accountId !== principal.accountId) return fail(res, 403, "FORBIDDEN", "this session belongs to another account");
        o.lastUsed = Date.now();
        return await o.transport.handleRequest(req, res, req.body);
      }
      if (req.method !== "POST" || !isInitializeRequest(req.body))
        return fail(res, 400, "INVALID_REQUEST", "start with an initialize request (no Mcp-Session-Id)");
      return await start(req, res, principal);
    } catch (e) {
      next(e);
    }
  });

  return {
    router,
    sessions: () => open.size,
    async close() {
      clearInterval(sweep);
      await Promise.all([...open.values()].map((o) => o.transport.close().catch(() => undefined)));
    },
  };
}
