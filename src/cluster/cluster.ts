/**
 * The cluster pieces of one process (docs/operations.md "Scaling: several processes and machines",
 * docs/rooms.md "Processes and worlds"). Without REDIS_URL nothing here touches the network: Colyseus keeps
 * its local presence and driver, rate limits and blocks stay in memory, and the bus runs on the
 * local presence (a request to this process's own id works; there is no other). With REDIS_URL:
 * one Redis connection (plus the presence's subscriber) carries Colyseus's presence and driver,
 * the shared rate-limit counters, the shared blocks and the bus.
 */
import { matchMaker, type Presence } from "@colyseus/core";
import { RedisPresence } from "@colyseus/redis-presence";
import type { Store } from "express-rate-limit";
import type { Redis } from "ioredis";
import type { Config } from "../config.js";
import type { Logger } from "../logger.js";
import type { Blocklist } from "../auth/address.js";
import type { MatchMakerDriver } from "../net/colyseus.js";
import { ClusterBus } from "./bus.js";
import { ResilientRedisDriver } from "./driver.js";
import { handleRejections, redisFailureLog } from "./handled.js";
import { connectRedis, redactUrl, watchConnection } from "./redis.js";
import { SharedBlocks, SharedRateLimitStore } from "./shared-limits.js";

export interface Cluster {
  /** For `setupColyseus`: undefined without REDIS_URL (Colyseus's local ones). */
  presence?: Presence;
  driver?: MatchMakerDriver;
  publicAddress?: string;
  /** The rate-limit store factory for `createLimits` (undefined: in memory). */
  rateLimitStore?: (identifier: string) => Store;
  /** Channel and key prefix of this cluster (`realm:<db>`): clusters on one Redis stay apart. */
  namespace: string;
  /** After `matchMaker.setup`: the bus on Colyseus's presence, and the blocks shared through it. */
  start(blocklist: Blocklist): Promise<ClusterBus>;
  /** End the bus and the block sharing (before Colyseus shuts down). */
  stop(): Promise<void>;
  /** Close the Redis connections (after Colyseus shut down). */
  disconnect(): void;
}

/** Open the cluster pieces of `config` (connects to Redis when REDIS_URL is set; throws when it does not answer). */
export async function openCluster(config: Config, logger: Logger): Promise<Cluster> {
  let bus: ClusterBus | undefined;
  let blocks: SharedBlocks | undefined;
  const base = {
    async stop() {
      await blocks?.close();
      await bus?.close();
    },
  };
  if (!config.cluster) {
    return {
      ...base,
      namespace: "realm",
      async start() {
        bus = new ClusterBus({ presence: matchMaker.presence, processId: matchMaker.processId, namespace: "realm", logger });
        await bus.start();
        return bus;
      },
      disconnect() {},
    };
  }
  const { redisUrl, publicAddress } = config.cluster;
  const redis = await connectRedis(redisUrl, logger, "redis");
  const namespace = `realm:${redis.options.db ?? 0}`;
  // Colyseus does not wait for many of their commands: each failure must still be handled.
  const failures = redisFailureLog(logger);
  const presence = handleRejections(new RedisPresence(redis), failures);
  watchConnection((presence as unknown as { sub: Redis }).sub, logger, "redis-subscriber");
  const driver = handleRejections(new ResilientRedisDriver(redis), failures) as unknown as MatchMakerDriver;
  logger.info({ redis: redactUrl(redisUrl), publicAddress, namespace }, "cluster: Colyseus on Redis presence and driver");
  return {
    ...base,
    presence,
    driver,
    publicAddress,
    namespace,
    rateLimitStore: (identifier) => new SharedRateLimitStore(redis, `${namespace}:rl:${identifier}:`, logger),
    async start(blocklist) {
      bus = new ClusterBus({ presence, processId: matchMaker.processId, namespace, logger });
      await bus.start();
      blocks = await SharedBlocks.start({ blocklist, bus, redis, prefix: `${namespace}:`, logger });
      // A Redis that restarted empty has lost this process's room listings and stats: put them
      // back, so the matchmaker finds its rooms again (the presence subscribes its channels again itself).
      let lost = false;
      redis.on("close", () => (lost = true));
      redis.on("ready", () => {
        if (!lost) return;
        lost = false;
        Promise.all([matchMaker.restoreMissingRoomCaches(), matchMaker.stats.persist()]).then(
          () => logger.info("cluster: room listings restored in Redis"),
          (e: Error) => logger.warn({ err: e.message }, "cluster: restoring room listings failed"),
        );
      });
      return bus;
    },
    disconnect() {
      presence.shutdown();
    },
  };
}
