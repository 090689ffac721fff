/**
 * The Express application factory. It takes its dependencies and does not listen, so tests drive it
 * directly and the entry file mounts it on the shared HTTP server beside Colyseus.
 *
 * Order: access log → CORS → /status and /health (never limited) → block guard → matchmaking (/ws, its body
 * checked first) → limits → JSON body → routes → 404 → error body.
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import express, { type RequestHandler, type Router } from "express";
import cors from "cors";
import { z } from "zod";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { AuthService, Principal } from "../auth/service.js";
import { bearerToken, TokenError } from "../auth/tokens.js";
import { ApiBuilder, type Authenticator } from "./api.js";
import { CorsPolicy, CORS_ALLOW_HEADERS, CORS_ALLOW_METHODS } from "./cors.js";
import { ApiError, errorBody, errorHandler, notFoundHandler, unauthorized } from "./errors.js";
import type { Limits } from "./limits.js";
import { guardedMatchmaking, type MatchmakingPolicy } from "./matchmaking.js";
import type { Admission } from "../net/admission.js";
import { accessLog } from "./access-log.js";
import { asyncApiDocument } from "./asyncapi.js";

/**
 * The package's version, read once from the nearest `package.json` above this module, so it is
 * found both from the sources (`src/http/`) and from the compiled output (`dist/src/http/`).
 */
export const VERSION: string = (() => {
  for (let dir = new URL(".", import.meta.url); ; dir = new URL("..", dir)) {
    const file = new URL("package.json", dir);
    if (existsSync(file)) return (JSON.parse(readFileSync(file, "utf8")) as { version: string }).version;
    if (dir.pathname === "/") throw new Error("package.json not found above " + import.meta.url);
  }
})();

/** Mounts a group of routes. Feature modules export one of these. */
export type RouteModule = (api: ApiBuilder, router: Router) => void;

export interface AppDeps {
  config: Config;
  logger: Logger;
  auth: AuthService;
  limits: Limits;
  cors: CorsPolicy;
  /** Liveness of storage for /status; must not throw. */
  storagePing: () => Promise<boolean>;
  /** Number of players online, for /status. */
  playersOnline: () => number;
  /** Colyseus matchmaking, mounted at /ws behind its own body check (src/http/matchmaking.ts). */
  matchmaking?: RequestHandler;
  /** Which rooms a client may join by id (src/http/matchmaking.ts). */
  matchmakingPolicy?: MatchmakingPolicy;
  /** Told the status of every refused matchmaking request (metrics). */
  onMatchmakeRefused?: (status: number) => void;
  /** Admission control of world joins at matchmaking (src/net/admission.ts). */
  admission?: Admission;
  /** Extra routers mounted as they are (manifests, game data). */
  routers?: { path: string; router: Router }[];
  /** Feature route modules. */
  modules?: RouteModule[];
}

declare module "express-serve-static-core" {
  interface Request {
    principal?: Principal;
  }
}

/** Build the Express app. */
export function createApp(deps: AppDeps): { app: express.Express; api: ApiBuilder } {
  const { config, logger, auth, limits } = deps;
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", config.trustProxy ? 1 : false);
  app.set("etag", false);
  app.use(accessLog(logger));

  // CORS for every response. Disallowed origins get no CORS headers; their preflights get 403.
  app.use(
    cors({
      origin: (origin, cb) => cb(null, deps.cors.allows(origin) ? origin : false),
      credentials: true,
      methods: CORS_ALLOW_METHODS,
      allowedHeaders: CORS_ALLOW_HEADERS,
      maxAge: 600,
      preflightContinue: false,
    }),
  );
  app.use((req, res, next) => {
    res.vary("Origin");
    if (req.method === "OPTIONS" && req.headers.origin && !deps.cors.allows(req.headers.origin)) {
      res.status(403).json(errorBody("FORBIDDEN", "origin not allowed"));
      return;
    }
    next();
  });

  const startedAt = Date.now();
  // Health checks: never rate limited, never blocked.
  app.get("/status", async (_req, res) => {
    const storageOk = await deps.storagePing();
    res.set("Cache-Control", "no-store").json({
      status: storageOk ? "ok" : "degraded",
      uptime: Math.round((Date.now() - startedAt) / 1000),
      version: VERSION,
      playersOnline: deps.playersOnline(),
      storage: storageOk ? "ok" : "down",
    });
  });
  app.get("/health", (_req, res) => {
    res.set("Cache-Control", "no-store").json({ status: "ok", timestamp: new Date().toISOString(), version: VERSION });
  });

  app.use(limits.blockGuard);
  if (deps.matchmaking)
    app.use("/ws", ...guardedMatchmaking(deps.matchmaking, undefined, deps.matchmakingPolicy, deps.onMatchmakeRefused, deps.admission, limits.matchmake));
  app.use("/api", limits.rest);
  app.use("/api/auth", limits.auth);
  app.use(express.json({ limit: "64kb", strict: true, type: ["application/json", "application/*+json"] }));

  const authenticate: Authenticator = async (req, mode) => {
    if (mode === "none") return undefined;
    const token = bearerToken(req.headers.authorization);
    if (!token) {
      if (mode === "required") throw unauthorized();
      return undefined;
    }
    try {
      req.principal = await auth.authenticate(token);
      return req.principal;
    } catch (e) {
      if (!(e instanceof TokenError)) throw e;
      await limits.countAuthFailure(req);
      throw unauthorized();
    }
  };
  const api = new ApiBuilder(authenticate);
  const router = express.Router();

  api.document({
    method: "get",
    path: "/status",
    summary: "Health check for the hosting platform (answers within 3 s even when storage is down)",
    tags: ["health"],
    responses: {
      200: {
        description: "Status",
        schema: z.object({
          status: z.enum(["ok", "degraded"]),
          uptime: z.number(),
          version: z.string(),
          playersOnline: z.number(),
          storage: z.enum(["ok", "down"]),
        }),
      },
    },
  });
  api.document({
    method: "get",
    path: "/health",
    summary: "Legacy health check",
    tags: ["health"],
    responses: { 200: { description: "Health report", schema: z.object({ status: z.literal("ok"), timestamp: z.string(), version: z.string() }) } },
  });
  api.document({
    method: "get",
    path: "/env.js",
    summary: "Public client settings as a script (window.__ENV__)",
    tags: ["client"],
    responses: { 200: { description: "JavaScript", schema: z.string(), contentType: "application/javascript" } },
  });

  // Public client settings; only PUBLIC_* values and the voice URL, never a secret.
  const publicEnv = {
    PUBLIC_IDP_APP_ID: config.idp?.appId ?? null,
    PUBLIC_API_URL: config.publicApiUrl,
    PUBLIC_WS_URL: config.publicWsUrl,
    PUBLIC_CDN_URL: config.cdnUrl ?? null,
    PUBLIC_APP_URL: config.publicAppUrl ?? null,
    PUBLIC_VOICE_URL: config.voice?.url ?? null,
    ANONYMOUS_MODE: !config.idp,
  };
  const envScript = `window.__ENV__ = Object.freeze(${JSON.stringify(publicEnv)});\n`;
  app.get("/env.js", (_req, res) => {
    res.type("application/javascript").set("Cache-Control", "no-cache").send(envScript);
  });

  registerAuthRoutes(api, router, auth);
  for (const m of deps.modules ?? []) m(api, router);
  for (const r of deps.routers ?? []) app.use(r.path, r.router);
  app.use(router);

  api.document({
    method: "get",
    path: "/api/openapi.json",
    summary: "This OpenAPI 3.1 document",
    tags: ["meta"],
    responses: { 200: { description: "OpenAPI document" } },
  });
  let openApiCache: unknown;
  app.get("/api/openapi.json", (_req, res) => {
    openApiCache ??= api.openApiDocument(VERSION);
    res.json(openApiCache);
  });
  api.document({
    method: "get",
    path: "/api/asyncapi.json",
    summary: "The WebSocket protocol (both transports, every event and payload) as an AsyncAPI 3.0 document",
    tags: ["meta"],
    responses: { 200: { description: "AsyncAPI document" } },
  });
  let asyncApiCache: unknown;
  app.get("/api/asyncapi.json", (_req, res) => {
    asyncApiCache ??= asyncApiDocument(VERSION);
    res.json(asyncApiCache);
  });

  // Serve a built client when one exists (docs/client.md "Build and serve"): in production and in
  // development (`npm start` builds it first); under test only when CLIENT_DIST names one. Unknown
  // GET paths fall back to its index.html (single-page app routes), except the API, manifest and
  // WebSocket prefixes and paths that look like files (`/missing.js`), which keep the JSON 404.
  const clientDir = resolve(config.clientDist ?? "client/dist");
  const indexHtml = resolve(clientDir, "index.html");
  const serveClient = config.env !== "test" || config.clientDist !== undefined;
  if (serveClient && existsSync(indexHtml)) {
    const noCache = (res: express.Response) => res.set("Cache-Control", "no-cache");
    app.use(
      express.static(clientDir, {
        index: "index.html",
        maxAge: "1h",
        // index.html names the hashed assets of the current build: always revalidate it.
        setHeaders: (res, path) => {
          if (path === indexHtml) noCache(res);
        },
      }),
    );
    // `playground` too: the development playground's path is a JSON 404 in production, never the
    // client; so is `/metrics` on the game's port (metrics listen on METRICS_PORT only).
    const reserved = /^\/(?:api|manifests|ws|playground|metrics|mcp|colyseus)(?:\/|$)/;
    const looksLikeFile = /\.[^/]*$/;
    app.use((req, res, next) => {
      if ((req.method !== "GET" && req.method !== "HEAD") || reserved.test(req.path) || looksLikeFile.test(req.path)) return next();
      noCache(res);
      res.sendFile(indexHtml);
    });
    logger.info({ clientDir }, "serving built client");
  }

  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return { app, api };
}

const tokenResponse = z.object({ token: z.string(), accountId: z.string(), expiresAt: z.string().describe("ISO 8601") }).openapi("TokenResponse");

function registerAuthRoutes(api: ApiBuilder, router: Router, auth: AuthService) {
  api.route(
    router,
    {
      method: "post",
      path: "/api/auth/anonymous",
      summary: "Create a temporary anonymous account (anonymous mode only)",
      tags: ["auth"],
      auth: "none",
      body: z.object({ name: z.string().trim().min(1).max(32).optional() }).strict(),
      responses: { 201: { description: "Token", schema: tokenResponse }, 403: { description: "An identity provider is configured" } },
    },
    async ({ body }) => {
      if (!auth.anonymousMode) throw new ApiError("FORBIDDEN", "anonymous accounts are disabled: sign in with the identity provider");
      return auth.issueAnonymous(body.name);
    },
  );
  api.route(
    router,
    {
      method: "post",
      path: "/api/auth/exchange",
      summary: "Exchange an identity-provider access token (Bearer) for a server token",
      tags: ["auth"],
      auth: "none",
      responses: { 200: { description: "Token", schema: tokenResponse }, 403: { description: "No identity provider configured" } },
    },
    async ({ req }) => {
      if (auth.anonymousMode) throw new ApiError("FORBIDDEN", "no identity provider is configured");
      const token = bearerToken(req.headers.authorization);
      if (!token) throw unauthorized();
      try {
        return await auth.exchange(token);
      } catch (e) {
        if (e instanceof TokenError) throw unauthorized("identity-provider token rejected");
        throw e;
      }
    },
  );
  api.route(
    router,
    {
      method: "get",
      path: "/api/auth/session",
      summary: "Who the presented token belongs to",
      tags: ["auth"],
      auth: "required",
      responses: {
        200: {
          description: "Principal",
          schema: z.object({
            accountId: z.string(),
            roles: z.array(z.string()),
            characterId: z.string().optional(),
            anonymous: z.boolean(),
          }),
        },
      },
    },
    ({ principal }) => ({
      accountId: principal!.accountId,
      roles: principal!.roles,
      characterId: principal!.characterId,
      anonymous: principal!.anonymous,
    }),
  );
}
