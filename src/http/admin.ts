/**
 * Admin routes (`/api/admin/`): the header `X-Admin-Code: <ADMIN_CODE>` or a server token with the
 * `admin` role; anything else is 403. A wrong admin code (header or HTTP Basic password) counts as
 * a failed authentication attempt, so guessing it is blocked like guessing tokens.
 */
import { Router, type Request, type RequestHandler } from "express";
import { monitor } from "@colyseus/monitor";
import { z } from "zod";
import { TradeAuditEntity } from "../../entities/index.js";
import type { AuthService } from "../auth/service.js";
import type { Orm } from "../storage/orm.js";
import type { WorldAccess } from "../world/access.js";
import type { Limits } from "./limits.js";
import type { RouteModule } from "./app.js";
import { ApiError } from "./errors.js";

const offerSchema = z.object({
  items: z.array(z.object({ inventorySlot: z.number(), itemId: z.string(), quantity: z.number() })),
  coins: z.number(),
  value: z.number(),
});
const auditSchema = z
  .object({
    id: z.string(),
    characterA: z.string(),
    characterB: z.string(),
    offerA: offerSchema,
    offerB: offerSchema,
    outcome: z.enum(["completed", "cancelled"]),
    reason: z.string().nullable(),
    startedAt: z.string(),
    endedAt: z.string(),
  })
  .openapi("TradeAudit");

/**
 * Throws 403 unless the request carries admin rights; a wrong `X-Admin-Code` is counted as a
 * failed authentication attempt first.
 */
export async function assertAdmin(auth: AuthService, limits: Pick<Limits, "countAuthFailure">, req: Request): Promise<void> {
  const code = req.header("x-admin-code");
  if (auth.isAdmin(req.principal, code, req.ip)) return;
  if (code !== undefined) await limits.countAuthFailure(req);
  throw new ApiError("FORBIDDEN", "admin access required");
}

const worldMapSchema = z
  .object({
    world: z.int(),
    tick: z.int(),
    players: z.array(
      z.object({ id: z.string(), name: z.string(), x: z.int(), z: z.int(), health: z.int(), maxHealth: z.int(), isAgent: z.boolean(), online: z.boolean() }),
    ),
    npcs: z.array(
      z.object({ id: z.string(), npcId: z.string(), name: z.string(), x: z.int(), z: z.int(), health: z.int(), maxHealth: z.int(), alive: z.boolean() }),
    ),
  })
  .openapi("WorldMap");

export function adminRoutes(deps: { orm: Orm; auth: AuthService; limits: Pick<Limits, "countAuthFailure">; world: Pick<WorldAccess, "map"> }): RouteModule {
  return (api, router) => {
    api.route(
      router,
      {
        method: "get",
        path: "/api/admin/world-map",
        summary: "Every player and NPC of one world with positions and health, for the admin world map (admin)",
        tags: ["admin"],
        auth: "optional",
        adminCode: true,
        authorize: (_principal, req) => assertAdmin(deps.auth, deps.limits, req),
        query: z.object({ world: z.coerce.number().int().min(1).optional() }),
        responses: {
          200: { description: "The world's players and NPCs", schema: worldMapSchema },
          403: { description: "Not an admin" },
          404: { description: "World not hosted by this process" },
        },
      },
      async ({ query }) => {
        const map = await deps.world.map(query.world);
        if (!map) throw new ApiError("NOT_FOUND", "world not hosted here");
        return map;
      },
    );
    api.route(
      router,
      {
        method: "get",
        path: "/api/admin/trades",
        summary: "Trade audit log, newest first (admin)",
        tags: ["admin"],
        auth: "optional",
        adminCode: true,
        // Admin rights first: a caller without them learns nothing about the query (403, not 400).
        authorize: (_principal, req) => assertAdmin(deps.auth, deps.limits, req),
        query: z.object({
          characterId: z.string().min(1).max(128).optional(),
          outcome: z.enum(["completed", "cancelled"]).optional(),
          limit: z.coerce.number().int().min(1).max(200).default(50),
          offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
        }),
        responses: {
          200: {
            description: "A page of audit records",
            schema: z.object({ total: z.number(), limit: z.number(), offset: z.number(), trades: z.array(auditSchema) }),
          },
          403: { description: "Not an admin" },
        },
      },
      async ({ query }) => {
        const where: Record<string, unknown> = {};
        if (query.characterId) where.$or = [{ characterA: query.characterId }, { characterB: query.characterId }];
        if (query.outcome) where.outcome = query.outcome;
        const [rows, total] = await deps.orm.em
          .fork()
          .findAndCount(TradeAuditEntity, where, { orderBy: { endedAt: "desc", id: "asc" }, limit: query.limit, offset: query.offset });
        return {
          total,
          limit: query.limit,
          offset: query.offset,
          trades: rows.map((r) => ({
            id: r.id,
            characterA: r.characterA,
            characterB: r.characterB,
            offerA: r.offerA,
            offerB: r.offerB,
            outcome: r.outcome as "completed" | "cancelled",
            reason: r.reason ?? null,
            startedAt: r.startedAt.toISOString(),
            endedAt: r.endedAt.toISOString(),
          })),
        };
      },
    );
  };
}

/** Where the Colyseus monitor lives (the path the Colyseus documentation uses). */
export const MONITOR_PATH = "/colyseus";
/** Where it used to live; requests there are redirected (`monitorRedirect`). */
export const OLD_MONITOR_PATH = "/admin/monitor";

/**
 * The Colyseus monitor panel (mounted at MONITOR_PATH), for admins: HTTP Basic auth with any user
 * name and ADMIN_CODE as the password (browsers can't send X-Admin-Code), or X-Admin-Code. A wrong
 * code or password counts as a failed authentication attempt; a request with neither only gets the
 * challenge.
 */
export function monitorRouter(auth: AuthService, limits: Pick<Limits, "countAuthFailure">): Router {
  const guard: RequestHandler = async (req, res, next) => {
    const basic = /^Basic\s+(\S+)$/i.exec(req.header("authorization") ?? "")?.[1];
    const password = basic ? Buffer.from(basic, "base64").toString("utf8").split(":").slice(1).join(":") : undefined;
    const presented = req.header("x-admin-code") ?? password;
    if (auth.isAdmin(undefined, presented, req.ip)) return next();
    if (presented !== undefined) await limits.countAuthFailure(req);
    res
      .set("WWW-Authenticate", 'Basic realm="admin"')
      .status(401)
      .json({ error: { code: "UNAUTHORIZED", message: "admin code required" } });
  };
  const r = Router();
  r.use(guard, monitor() as unknown as RequestHandler);
  return r;
}

/**
 * The monitor's old address (mounted at OLD_MONITOR_PATH): a permanent redirect (308, so the method
 * is kept) to the same place under MONITOR_PATH, rest of the path and query included. It reveals
 * nothing, so it needs no admin rights; the monitor itself checks them.
 */
export function monitorRedirect(): RequestHandler {
  return (req, res) => {
    const q = req.originalUrl.indexOf("?");
    const query = q < 0 ? "" : req.originalUrl.slice(q);
    const rest = req.path === "/" ? "/" : req.path;
    res.redirect(308, `${MONITOR_PATH}${rest}${query}`);
  };
}
