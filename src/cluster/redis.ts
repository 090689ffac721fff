/**
 * The Redis connection of a process in a cluster (docs/operations.md "Scaling: several processes and machines"):
 * one ioredis client for commands (the rate-limit store, the shared block list, Colyseus's driver
 * and presence), with settings that keep the game playable while Redis is gone — a command never
 * waits in an offline queue longer than one reconnection attempt, and none waits on a half-open
 * connection longer than COMMAND_TIMEOUT_MS. Callers that must not wait at all check `isReady`.
 */
import { Redis, type RedisOptions } from "ioredis";
import type { Logger } from "../logger.js";

/** Longest a Redis command may take before it fails (a half-open connection, an overloaded Redis). */
export const COMMAND_TIMEOUT_MS = 3_000;
/** Longest the server waits for Redis at start-up before refusing to start. */
export const CONNECT_TIMEOUT_MS = 10_000;

/** ioredis settings of every connection of the cluster (the subscriber connection is a duplicate). */
export function redisOptions(): RedisOptions {
  return {
    // A command sent while the connection is down fails after the next failed reconnection
    // attempt instead of waiting for Redis to come back.
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    // Reconnect for ever, at most every 2 s: Redis coming back is picked up without a restart.
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    lazyConnect: true,
  };
}

/** True when the client can take commands now (no offline queue, no reconnection in progress). */
export const isReady = (redis: Redis): boolean => redis.status === "ready";

/**
 * Connect to `url` (redis:// or rediss://, with an optional database number: `redis://host:6379/3`).
 * Resolves once Redis answers; rejects (and closes the client) when it does not within
 * CONNECT_TIMEOUT_MS. Connection state changes are logged once per change, never per command.
 */
export async function connectRedis(url: string, logger?: Logger, name = "redis"): Promise<Redis> {
  const redis = new Redis(url, redisOptions());
  watchConnection(redis, logger, name);
  try {
    await redis.connect();
    await redis.ping();
  } catch (e) {
    redis.disconnect();
    throw new Error(`${name}: could not connect to REDIS_URL (${redactUrl(url)}): ${(e as Error).message}`);
  }
  return redis;
}

/** Log a connection's losses and recoveries (one line each), and swallow its error events. */
export function watchConnection(redis: Redis, logger: Logger | undefined, name: string): void {
  let lost = false;
  redis.on("error", (e: Error) => {
    if (!lost) logger?.warn({ connection: name, err: e.message }, "redis: connection error");
    lost = true;
  });
  redis.on("close", () => {
    if (!lost) logger?.warn({ connection: name }, "redis: connection lost; reconnecting");
    lost = true;
  });
  redis.on("ready", () => {
    if (lost) logger?.info({ connection: name }, "redis: connection back");
    lost = false;
  });
}

/** The URL without its password (for logs and errors). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "(unparsable URL)";
  }
}
