/**
 * Colyseus matchmaking (`POST /ws/matchmake/<method>/<room>`) under the API's body rules and the
 * server's room policy (docs/rooms.md "What a client may ask the matchmaker"). Colyseus reads the
 * body itself (up to 1 MB) and answers failures in its own shape; here the body is read first with
 * the API's limit, so an oversized body is 413 `PAYLOAD_TOO_LARGE` and malformed JSON is 400
 * `INVALID_JSON` with the API's error body (docs/http.md#error-body). Then the verb is checked: only the server creates rooms,
 * so `create` and `joinOrCreate` are refused (403 `ROOM_CREATION_FORBIDDEN`), `join` by name only
 * reaches the world room, and `joinById` of a trade room only its two traders (403
 * `ROOM_JOIN_FORBIDDEN`). A request that passes is replayed to Colyseus unchanged, so the SDK sees
 * no difference; the rooms check again (`onCreate`, `onJoin`).
 *
 * A world join (`join`, or `joinById` of the world room) is then admitted (src/net/admission.ts):
 * the request holds a slot of the join gate while Colyseus checks the token and reserves the seat.
 * When the gate cannot take it (queue full, waited too long, event loop overloaded) the answer is
 * 503 `SERVER_BUSY` with `Retry-After`, before any seat is reserved; a 503 `SERVER_BUSY` the room's
 * `onAuth` raises (storage failed) is given the same body and header.
 */
import { Readable } from "node:stream";
import { matchMaker } from "@colyseus/core";
import express, { type Request, type RequestHandler, type Response } from "express";
import { bearerToken } from "../auth/tokens.js";
import { MATCHMAKE_RATE_LIMITED, retryAfterOf, SERVER_BUSY, ServerBusyError, type Admission } from "../net/admission.js";
import { ApiError, errorBody } from "./errors.js";
import { routeWorldJoin, WORLD_FULL_RETRY_SECONDS, type WorldRoute } from "../cluster/routing.js";

/** Largest matchmaking body accepted (join options are a few hundred bytes). */
export const MATCHMAKE_BODY_LIMIT = 16 * 1024;

/**
 * The path Colyseus's matchmaking router acts on (`@colyseus/core` `router/node.ts`: WHATWG `URL`
 * of `req.url`, so `\` becomes `/` and `.`, `..`, `%2e%2e` segments resolve), or undefined when the
 * URL does not parse.
 */
export function colyseusPath(url: string): string | undefined {
  try {
    return new URL(url || "/", "http://localhost").pathname;
  } catch {
    return undefined;
  }
}

/** The path part of the raw request URL (below the `/ws` mount), as the client wrote it. */
const rawPath = (req: Request) => req.url.split("?", 1)[0] ?? "";

/**
 * The only spelling of a matchmaking path this guard accepts: `/matchmake/<verb>/<target>`, the verb
 * a word (Colyseus's `(\w+)`), the target a room name or room id (letters, digits, `_`, `-`).
 */
const CANONICAL_MATCHMAKE = /^\/matchmake\/(\w+)\/([A-Za-z0-9_-]+)$/;

/**
 * True when the request is meant for the matchmaker, by the reading of Colyseus (WHATWG) or of
 * Express (the raw path, slashes of either kind collapsed, case ignored): every spelling goes through
 * the guard, which then accepts the canonical one only (`matchmakePath`).
 */
function isMatchmakeRequest(req: Request): boolean {
  if (req.method !== "POST") return false;
  const seen = colyseusPath(req.url);
  if (seen === undefined || seen.startsWith("/matchmake/")) return true;
  return /^\/matchmake(\/|$)/i.test(rawPath(req).replace(/[\\/]+/g, "/"));
}

/**
 * The verb and target of a matchmaking path, or undefined when the path is not in its one canonical
 * spelling: the raw path must be exactly what Colyseus will read (no `\`, no dot segments, no
 * percent-encoding, no doubled slash), so the body limit, the policy, admission control and world
 * routing judge the request Colyseus will act on (docs/http.md#matchmaking-requests).
 */
export function matchmakePath(url: string): { verb: string; target: string } | undefined {
  const raw = url.split("?", 1)[0] ?? "";
  if (colyseusPath(url) !== raw) return undefined;
  const m = CANONICAL_MATCHMAKE.exec(raw);
  return m ? { verb: m[1]!, target: m[2]! } : undefined;
}

/** 400: a matchmaking path spelled otherwise than `/matchmake/<verb>/<room>` (see `matchmakePath`). */
export const MATCHMAKE_PATH_INVALID = "MATCHMAKE_PATH_INVALID";

/** Codes of the matchmaking refusals (HTTP 403). */
export const MATCHMAKE_REFUSAL = {
  /** `create` or `joinOrCreate` of any room type: rooms are created by the server only. */
  ROOM_CREATION_FORBIDDEN: "ROOM_CREATION_FORBIDDEN",
  /** `join` of a room type other than `world`, or `joinById` of a trade room by anyone but its two traders. */
  ROOM_JOIN_FORBIDDEN: "ROOM_JOIN_FORBIDDEN",
} as const;
export type MatchmakeRefusalCode = keyof typeof MATCHMAKE_REFUSAL;

/** A refusal: its code and a message safe to show. */
export interface MatchmakeRefusal {
  code: MatchmakeRefusalCode;
  message: string;
}

/** Room types a client may `join` by name (the world is created by the server at start-up). */
export const JOINABLE_BY_NAME: ReadonlySet<string> = new Set(["world"]);

/** Verbs that may create a room: never a client's. */
const CREATING_VERBS: ReadonlySet<string> = new Set(["create", "joinOrCreate"]);

/** What the policy needs from the server to check a `joinById`. */
export interface MatchmakingPolicy {
  /**
   * A refusal when `roomId` is a room the caller (its bearer token, its join options) may not join
   * by id — a trade room it is not a trader of — or undefined to let Colyseus and the room decide
   * (an unknown room, an invalid token: Colyseus answers those in its own shape).
   */
  checkJoinById(roomId: string, token: string | undefined, options: Record<string, unknown>): Promise<MatchmakeRefusal | undefined>;
}

/**
 * The refusal of a matchmaking call before Colyseus sees it, or undefined when it may go on.
 * `verb` and `target` are the two path segments after `/matchmake/` (a room name, or a room id for
 * `joinById` and `reconnect`).
 */
export async function matchmakeRefusal(
  verb: string,
  target: string,
  token: string | undefined,
  options: Record<string, unknown>,
  policy?: MatchmakingPolicy,
): Promise<MatchmakeRefusal | undefined> {
  if (CREATING_VERBS.has(verb)) {
    return { code: "ROOM_CREATION_FORBIDDEN", message: `rooms are created by the server; use join("world") to enter the world` };
  }
  if (verb === "join" && !JOINABLE_BY_NAME.has(target)) {
    return { code: "ROOM_JOIN_FORBIDDEN", message: `only the world room can be joined by name` };
  }
  if (verb === "joinById" && policy) return policy.checkJoinById(target, token, options);
  return undefined; // reconnect (its reconnection token decides), unknown verbs (Colyseus refuses)
}

/**
 * Answer a refusal: 403 with the API's error body, plus `message` at the top level, which is what
 * the Colyseus SDK puts in the `MatchMakeError` it throws (its `code` is the HTTP status).
 */
function refuse(res: Response, refusal: MatchmakeRefusal) {
  res.status(403).json({ ...errorBody(refusal.code, refusal.message), message: refusal.message });
}

/** Answer a world join that can't be routed (400 INVALID_WORLD, 404 WORLD_NOT_FOUND, 503 WORLD_FULL with Retry-After). */
function refuseWorld(res: Response, route: Extract<WorldRoute, { ok: false }>) {
  if (route.status === 503) res.set("Retry-After", String(WORLD_FULL_RETRY_SECONDS));
  res.status(route.status).json({ ...errorBody(route.code, route.message), message: `${route.code}: ${route.message}` });
}

/**
 * Answer a busy refusal: 503 with the API's error body and `Retry-After`, plus `message` at the top
 * level (what the SDK's `MatchMakeError` carries), with the code in front: `SERVER_BUSY: …`.
 */
function refuseBusy(res: Response, e: ServerBusyError) {
  res
    .status(e.status)
    .set("Retry-After", String(e.retryAfterSeconds))
    .json({ ...errorBody(SERVER_BUSY, e.message), message: e.tagged });
}

/**
 * True for the matchmaking calls that enter the world: `join` (only the world is joinable by name)
 * and `joinById` of a world room, this process's or (with REDIS_URL) another's, found in the room
 * listings; a listing that cannot be read is left to Colyseus, which fails the same way.
 */
async function entersWorld(verb: string, target: string): Promise<boolean> {
  if (verb === "join") return JOINABLE_BY_NAME.has(target);
  if (verb !== "joinById") return false;
  const local = matchMaker.getLocalRoomById(target);
  if (local) return local.roomName === "world";
  const listed = await Promise.resolve(matchMaker.driver.findOne({ roomId: target })).catch(() => undefined);
  return listed?.name === "world";
}

/** The code and wait of a refusal message the world's `onAuth` raised (`SERVER_BUSY: … retry in N s`, `RATE_LIMITED: … retry in N s`). */
function taggedRefusal(status: number, message: string): { code: string; retry: number } | undefined {
  if (status === 503 && message.startsWith(`${SERVER_BUSY}: `)) {
    const retry = retryAfterOf(message);
    return retry === undefined ? undefined : { code: SERVER_BUSY, retry };
  }
  const m = status === 429 && message.startsWith(`${MATCHMAKE_RATE_LIMITED}: `) ? /retry in (\d+) s/.exec(message) : null;
  return m ? { code: MATCHMAKE_RATE_LIMITED, retry: Number(m[1]) } : undefined;
}

/**
 * Colyseus answers a refusal the room raised in `onAuth` as `{ code, error }` with the status of
 * the refusal. A 503 whose message is a `SERVER_BUSY: …` refusal, or a 429 whose message is a
 * `RATE_LIMITED: …` one (the account's matchmaking limit), is rewritten into the API's error body,
 * with `Retry-After`; any other answer passes unchanged.
 */
function rewriteBusyAnswer(res: Response) {
  // The originals, put back by `restore` and called with `this` = res.
  /* eslint-disable @typescript-eslint/unbound-method -- kept to be restored and called with .call(res) */
  const writeHead = res.writeHead;
  const write = res.write;
  const end = res.end;
  /* eslint-enable @typescript-eslint/unbound-method */
  let held: Buffer[] | undefined;
  let heldStatus = 503;
  const restore = () => Object.assign(res, { writeHead, write, end });
  res.writeHead = function (this: Response, status: number, ...rest: unknown[]) {
    if (status !== 503 && status !== 429) {
      restore();
      return (writeHead as (...a: unknown[]) => Response).call(this, status, ...rest);
    }
    held = [];
    heldStatus = status;
    return this;
  } as typeof res.writeHead;
  res.write = function (this: Response, chunk: unknown, ...rest: unknown[]) {
    if (!held) return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
    if (chunk) held.push(Buffer.from(chunk as Buffer));
    return true;
  } as typeof res.write;
  res.end = function (this: Response, chunk?: unknown, ...rest: unknown[]) {
    if (!held) {
      restore();
      return (end as (...a: unknown[]) => Response).call(this, chunk, ...rest);
    }
    if (chunk && typeof chunk !== "function") held.push(Buffer.from(chunk as Buffer));
    const raw = Buffer.concat(held).toString("utf8");
    restore();
    let message: unknown;
    try {
      message = (JSON.parse(raw) as { error?: unknown }).error;
    } catch {
      message = undefined;
    }
    const status = heldStatus;
    const tagged = typeof message === "string" ? taggedRefusal(status, message) : undefined;
    if (!tagged || typeof message !== "string") {
      res.writeHead(status);
      return res.end(raw);
    }
    const text = message.slice(tagged.code.length + 2);
    res.removeHeader("content-length");
    res
      .status(status)
      .set("Retry-After", String(tagged.retry))
      .json({ ...errorBody(tagged.code, text), message });
    return res;
  } as typeof res.end;
}

/**
 * Middleware to mount at `/ws` in place of Colyseus's matchmaking middleware.
 * @param matchmaking Colyseus's `createNodeMatchmakingMiddleware()`
 * @param policy checks `joinById` against the rooms of this process (trade rooms: only their traders)
 */
export function guardedMatchmaking(
  matchmaking: RequestHandler,
  limitBytes = MATCHMAKE_BODY_LIMIT,
  policy?: MatchmakingPolicy,
  /** Told the status of every matchmaking request answered with an error: this guard's, the socket cap's and Colyseus's (metrics). */
  onRefused?: (status: number) => void,
  /** Admission control of world joins; without it they are not bounded. */
  admission?: Admission,
  /** The per-address matchmaking rate limit (`Limits.matchmake`), before the body is read. */
  limiter?: RequestHandler,
): RequestHandler[] {
  const readBody = express.raw({ type: () => true, limit: limitBytes });
  return [
    (req, res, next) => {
      if (!isMatchmakeRequest(req)) return next();
      if (onRefused) res.once("finish", () => res.statusCode >= 400 && onRefused(res.statusCode));
      if (!limiter) return readBody(req, res, next);
      return limiter(req, res, (err?: unknown) => (err ? next(err) : readBody(req, res, next)));
    },
    async (req, res, next) => {
      if (!isMatchmakeRequest(req)) return matchmaking(req, res, next);
      const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      let options: unknown = {};
      if (raw.length > 0) {
        try {
          options = JSON.parse(raw.toString("utf8"));
        } catch {
          throw new ApiError("INVALID_JSON", "request body is not valid JSON");
        }
        if (options === null || typeof options !== "object" || Array.isArray(options)) {
          throw new ApiError("INVALID_REQUEST", "matchmaking options must be a JSON object");
        }
      }
      const path = matchmakePath(req.url);
      if (!path) {
        const message = "matchmaking path is not in its canonical form /matchmake/<verb>/<room>";
        return res.status(400).json({ ...errorBody(MATCHMAKE_PATH_INVALID, message), message });
      }
      const { verb, target } = path;
      const refusal = await matchmakeRefusal(verb, target, bearerToken(req.headers.authorization), options as Record<string, unknown>, policy);
      if (refusal) return refuse(res, refusal);
      // A world join goes to the world asked for (src/cluster/routing.ts): its number put in the options.
      let body = raw;
      if (verb === "join" && target === "world") {
        const route = await routeWorldJoin(options as Record<string, unknown>);
        if (!route.ok) return refuseWorld(res, route);
        body = Buffer.from(JSON.stringify(route.options));
      }
      if (admission && (await entersWorld(verb, target))) {
        let gone = false;
        const onGone = () => (gone = true);
        res.once("close", onGone);
        let release: () => void;
        try {
          release = await admission.admitMatchmaking();
        } catch (e) {
          if (e instanceof ServerBusyError) return refuseBusy(res, e);
          throw e;
        } finally {
          res.off("close", onGone);
        }
        // The client gave up while waiting: nothing to reserve.
        if (gone) return release();
        // Held until the answer is sent (or the client went away).
        res.once("close", release);
        rewriteBusyAnswer(res);
      }
      // Colyseus reads the body from the request stream, which is consumed: hand it a request that
      // replays the same bytes (it uses the URL, method, headers and body of the request; `ip` is
      // the client address that the world's `onAuth` counts and blocks by).
      const replay = Object.assign(Readable.from(body.length > 0 ? [body] : []), {
        url: req.url,
        method: req.method,
        headers: req.headers,
        socket: req.socket,
        ip: req.ip,
      });
      return matchmaking(replay as unknown as Request, res, next);
    },
  ];
}
