/**
 * Rate limits and blocks shared by the processes of a cluster (
 * docs/operations.md "Scaling: several processes and machines"), so a client cannot multiply its budget by connecting to several processes:
 *
 * - `SharedRateLimitStore`: the express-rate-limit counters in Redis (`rate-limit-redis`). While
 *   Redis is unreachable every counter falls back to this process's memory (limits stay in force,
 *   per process) and goes back to Redis once it answers: the game stays playable.
 * - `SharedBlocks`: a block imposed by any process (HTTP limit, WebSocket flood, failed `/admin`
 *   codes) is written to Redis as a key with a TTL and announced on the bus; every process keeps the
 *   blocks in its local `Blocklist`, so a block check never waits on Redis (one map lookup per
 *   socket message at most). A process that starts, or whose Redis connection comes back, loads the
 *   keys still alive and writes its own.
 */
import { MemoryStore, type IncrementResponse, type Options, type Store, type ClientRateLimitInfo } from "express-rate-limit";
import type { Redis } from "ioredis";
import { RedisStore, type RedisReply } from "rate-limit-redis";
import { z } from "zod";
import type { Logger } from "../logger.js";
import type { Blocklist } from "../auth/address.js";
import type { ClusterBus } from "./bus.js";
import { isReady } from "./redis.js";

/** An express-rate-limit store in Redis that falls back to memory while Redis is unreachable. */
export class SharedRateLimitStore implements Store {
  private readonly redisStore: RedisStore;
  private readonly memory = new MemoryStore();
  private degraded = false;
  readonly localKeys = false;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly logger?: Logger,
  ) {
    this.redisStore = new RedisStore({ prefix, sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as Promise<RedisReply> });
  }

  init(options: Options): void {
    // Loads the store's scripts; while Redis is down that fails, and the store loads them again on first use.
    this.redisStore.init(options).catch(() => undefined);
    this.memory.init(options);
  }

  async get(key: string): Promise<ClientRateLimitInfo | undefined> {
    return this.either(
      () => this.redisStore.get(key),
      () => this.memory.get(key),
    );
  }

  async increment(key: string): Promise<IncrementResponse> {
    return this.either(
      () => this.redisStore.increment(key),
      () => this.memory.increment(key),
    );
  }

  async decrement(key: string): Promise<void> {
    return this.either(
      () => this.redisStore.decrement(key),
      () => this.memory.decrement(key),
    );
  }

  async resetKey(key: string): Promise<void> {
    await this.memory.resetKey(key);
    if (isReady(this.redis)) await this.redisStore.resetKey(key).catch(() => undefined);
  }

  shutdown(): void {
    this.memory.shutdown();
  }

  /** Redis when it can take the command now, memory otherwise (and when the command fails). */
  private async either<T>(shared: () => Promise<T>, local: () => T | Promise<T>): Promise<T> {
    if (isReady(this.redis)) {
      try {
        const v = await shared();
        if (this.degraded) this.logger?.info("rate limits: counting in Redis again");
        this.degraded = false;
        return v;
      } catch (e) {
        this.fellBack(e);
      }
    } else this.fellBack();
    return local();
  }

  private fellBack(e?: unknown) {
    if (!this.degraded)
      this.logger?.warn({ err: (e as Error | undefined)?.message }, "rate limits: Redis unavailable; counting in this process until it is back");
    this.degraded = true;
  }
}

/** A block announced on the bus: the key (`ip:…`, `account:…`) and the milliseconds left. */
const blockMessage = z.object({
  key: z
    .string()
    .max(200)
    .regex(/^(ip|account):[^\s]+$/),
  ms: z.number().int().min(1).max(86_400_000),
});

/** Bus topic of block announcements. */
export const BLOCKS_TOPIC = "blocks";

export interface SharedBlocksOptions {
  blocklist: Blocklist;
  bus: ClusterBus;
  redis: Redis;
  /** Key prefix of the block keys in Redis (`<prefix>block:<key>`). */
  prefix: string;
  logger?: Logger;
}

export class SharedBlocks {
  private unsubscribe?: () => Promise<void>;
  private readonly onReady = () => void this.resync();

  private constructor(private readonly opts: SharedBlocksOptions) {}

  /** Share `blocklist` with the cluster: blocks imposed here go out, those imposed elsewhere come in. */
  static async start(opts: SharedBlocksOptions): Promise<SharedBlocks> {
    const shared = new SharedBlocks(opts);
    const { bus, blocklist } = opts;
    shared.unsubscribe = await bus.subscribe(BLOCKS_TOPIC, blockMessage, (m, from) => {
      if (from !== bus.processId) blocklist.mirror(m.key, m.ms);
    });
    blocklist.onShare = (key, ms) => shared.share(key, ms);
    await shared.load();
    opts.redis.on("ready", shared.onReady);
    return shared;
  }

  /** Write a block to Redis and announce it; while Redis is down it stays local to this process. */
  share(key: string, ms: number): void {
    const { redis, bus, logger, prefix } = this.opts;
    if (!isReady(redis)) {
      logger?.warn({ scope: key.slice(0, key.indexOf(":")) }, "blocks: Redis unavailable; block kept in this process only until it is back");
      return;
    }
    redis.set(`${prefix}block:${key}`, "1", "PX", Math.round(ms)).catch((e: Error) => logger?.warn({ err: e.message }, "blocks: not written to Redis"));
    bus.publish(BLOCKS_TOPIC, { key, ms: Math.round(ms) }).catch((e: Error) => logger?.warn({ err: e.message }, "blocks: not announced"));
  }

  /** Every block key alive in Redis, mirrored into the local list. */
  async load(): Promise<number> {
    const { redis, prefix, blocklist } = this.opts;
    let cursor = "0";
    let count = 0;
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}block:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length === 0) continue;
      const ttls = await Promise.all(keys.map((k) => redis.pttl(k)));
      keys.forEach((k, i) => {
        const ms = ttls[i]!;
        if (ms > 0) {
          blocklist.mirror(k.slice(prefix.length + "block:".length), ms);
          count++;
        }
      });
    } while (cursor !== "0");
    return count;
  }

  /** After Redis came back: take the blocks it holds, then give it those imposed here meanwhile. */
  private async resync(): Promise<void> {
    const { redis, prefix, blocklist, logger } = this.opts;
    try {
      await this.load();
      const pipeline = redis.pipeline();
      for (const [key, ms] of blocklist.active()) pipeline.set(`${prefix}block:${key}`, "1", "PX", Math.max(1, Math.round(ms)));
      await pipeline.exec();
    } catch (e) {
      logger?.warn({ err: (e as Error).message }, "blocks: resynchronisation with Redis failed");
    }
  }

  async close(): Promise<void> {
    this.opts.redis.off("ready", this.onReady);
    this.opts.blocklist.onShare = undefined;
    await this.unsubscribe?.();
  }
}
