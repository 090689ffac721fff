/**
 * Rate limits (docs/http.md#rate-limits-and-blocks): REST 100 requests per minute, authentication
 * 10 attempts per minute, per client address. Exceeding either blocks the client for
 * RATE_LIMIT_BLOCK_SECONDS; while blocked every request answers 429 with Retry-After.
 * The same Blocklist is used by the WebSocket flood guard (accounts and addresses).
 * Matchmaking (`POST /ws/matchmake/…`) has limits of its own, per address and per account
 * (docs/http.md#matchmaking-requests): past them it answers 429 `RATE_LIMITED` with Retry-After,
 * without blocking the client.
 */
import type { Request, RequestHandler } from "express";
import { rateLimit, ipKeyGenerator, MemoryStore, type Store } from "express-rate-limit";
import { ApiError } from "./errors.js";
import { addressKey, Blocklist } from "../auth/address.js";

// The block list and the address key are shared with the WebSocket paths (src/auth/address.ts).
export { addressKey, Blocklist };

/** The rate-limit key of a request: its address (IPv6 grouped by /56), honouring TRUST_PROXY via req.ip. */
export const clientKey = (req: Request): string => `ip:${ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? "unknown")}`;

export const rateLimited = (retryAfter: number) =>
  new ApiError("RATE_LIMITED", "too many requests; try again later", undefined, { "Retry-After": String(retryAfter) });

export interface LimitOptions {
  enabled: boolean;
  blockSeconds: number;
  blocklist: Blocklist;
  restPerMinute?: number;
  authPerMinute?: number;
  /**
   * The store of a limiter's counters (`rest`, `auth`): shared by the processes of a cluster with
   * REDIS_URL (src/cluster/shared-limits.ts). Absent: each process counts in its own memory.
   */
  store?: (identifier: "rest" | "auth" | "matchmake" | "matchmake-account") => Store;
  /** Matchmaking requests a minute, per client address and per account (120 and 20 without it). */
  matchmake?: { perAddress: number; perAccount: number };
}

/** Limits and the block guard, as middleware plus a counter for failed token checks. */
export interface Limits {
  /** Answers 429 while the client is blocked. Mount before everything that counts. */
  blockGuard: RequestHandler;
  /** Counts requests under /api/. */
  rest: RequestHandler;
  /** Counts requests under /api/auth/ as authentication attempts. */
  auth: RequestHandler;
  /**
   * Count one failed authentication attempt outside /api/auth/ (an invalid token, a wrong admin
   * code or password). The attempt that reaches the limit blocks the client, so its next request
   * answers 429, as the request after the 10th under /api/auth/ does.
   */
  countAuthFailure(req: Request): Promise<void>;
  /**
   * Count one authentication attempt by client address, for the WebSocket paths (an invalid token,
   * an anonymous identity). Blocks the address past the limit; returns true when it is over.
   */
  countAuthAttempt(address: string): Promise<boolean>;
  /** Counts matchmaking requests per client address; past the limit 429 `RATE_LIMITED` with Retry-After. */
  matchmake: RequestHandler;
  /**
   * Count one matchmaking request of an account (its token checked): 0 while within the limit, else
   * the seconds until the window lets it again.
   */
  countMatchmake(accountId: string): Promise<number>;
}

/** Build the limiters. When disabled, every piece is a no-op. */
export function createLimits(opts: LimitOptions): Limits {
  const noop: RequestHandler = (_req, _res, next) => next();
  if (!opts.enabled)
    return {
      blockGuard: noop,
      rest: noop,
      auth: noop,
      countAuthFailure: () => Promise.resolve(),
      countAuthAttempt: () => Promise.resolve(false),
      matchmake: noop,
      countMatchmake: () => Promise.resolve(0),
    };
  const { blocklist, blockSeconds } = opts;
  const windowMs = 60_000;

  const onExceeded: RequestHandler = (req, _res, next) => {
    blocklist.block(clientKey(req), blockSeconds);
    next(rateLimited(blockSeconds));
  };
  const common = {
    windowMs,
    standardHeaders: "draft-8" as const,
    legacyHeaders: false,
    keyGenerator: clientKey,
    handler: onExceeded,
    // trust proxy is configured once on the app; this library's own proxy warnings are noise here.
    validate: { trustProxy: false, xForwardedForHeader: false },
  };
  const rest = rateLimit({ ...common, limit: opts.restPerMinute ?? 100, ...(opts.store ? { store: opts.store("rest") } : {}) });
  const authStore = opts.store?.("auth") ?? new MemoryStore();
  const auth = rateLimit({ ...common, limit: opts.authPerMinute ?? 10, store: authStore, identifier: "auth" });
  /**
   * Count one attempt for a key. The attempt that reaches the limit blocks the key, so the next
   * request of any kind answers 429 (as the request after the 10th under /api/auth/ does); returns
   * true when this attempt itself is past the limit.
   */
  const countKey = async (key: string) => {
    const limit = opts.authPerMinute ?? 10;
    const { totalHits } = await authStore.increment(key);
    if (totalHits >= limit) blocklist.block(key, blockSeconds);
    return totalHits > limit;
  };

  const perAddress = opts.matchmake?.perAddress ?? 120;
  const perAccount = opts.matchmake?.perAccount ?? 20;
  /** Seconds until a window that resets at `resetTime` lets the client again (1 at least). */
  const secondsUntil = (resetTime: Date | undefined) => Math.max(1, Math.ceil(((resetTime?.getTime() ?? Date.now() + windowMs) - Date.now()) / 1000));
  const matchmake = rateLimit({
    ...common,
    limit: perAddress,
    identifier: "matchmake",
    // Over the limit: refused, not blocked (a shared address's other clients are not shut out for a minute).
    handler: (req, _res, next) => next(rateLimited(secondsUntil((req as Request & { rateLimit?: { resetTime?: Date } }).rateLimit?.resetTime))),
    ...(opts.store ? { store: opts.store("matchmake") } : {}),
  });
  const accountStore = opts.store?.("matchmake-account") ?? new MemoryStore();
  // Not given to a limiter, so initialised here (a store's init may be async: a Redis script load).
  void Promise.resolve(accountStore.init?.({ windowMs } as Parameters<NonNullable<Store["init"]>>[0])).catch(() => undefined);

  return {
    matchmake,
    async countMatchmake(accountId) {
      const { totalHits, resetTime } = await accountStore.increment(`account:${accountId}`);
      return totalHits > perAccount ? secondsUntil(resetTime) : 0;
    },
    blockGuard: (req, _res, next) => {
      const left = blocklist.retryAfter(clientKey(req));
      if (left > 0) next(rateLimited(left));
      else next();
    },
    rest,
    auth,
    async countAuthFailure(req) {
      // Requests under /api/auth/ were already counted by the auth limiter.
      if (req.originalUrl.startsWith("/api/auth/")) return;
      await countKey(clientKey(req));
    },
    countAuthAttempt: (address) => countKey(addressKey(address)),
  };
}
