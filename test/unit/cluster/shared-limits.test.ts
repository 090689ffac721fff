/**
 * Shared limits (src/cluster/shared-limits.ts) on the test Redis: counters of two stores (two
 * processes) add up; with Redis unreachable the store counts in memory at once (no wait); blocks
 * go out through Redis keys and the bus, come in from both, and a longer block is never shortened.
 */
import assert from "node:assert/strict";
import { LocalPresence } from "@colyseus/core";
import type { Options } from "express-rate-limit";
import { Redis } from "ioredis";
import { ClusterBus } from "../../../src/cluster/bus.js";
import { redisOptions } from "../../../src/cluster/redis.js";
import { SharedBlocks, SharedRateLimitStore } from "../../../src/cluster/shared-limits.js";
import { Blocklist } from "../../../src/auth/address.js";
import { eventually } from "../../helpers/clients.js";
import { useTestRedis } from "../../helpers/redis.js";

const init = { windowMs: 60_000 } as Options;

describe("shared limits", function () {
  const url = useTestRedis(this, 12);
  const clients: Redis[] = [];
  const connect = async () => {
    const r = new Redis(url, redisOptions());
    clients.push(r);
    await r.connect();
    return r;
  };
  after(() => clients.forEach((c) => c.disconnect()));

  it("two stores on one Redis count one budget", async () => {
    const [s1, s2] = [new SharedRateLimitStore(await connect(), "t:rl:", undefined), new SharedRateLimitStore(await connect(), "t:rl:", undefined)];
    s1.init(init);
    s2.init(init);
    assert.equal((await s1.increment("ip:1.2.3.4")).totalHits, 1);
    assert.equal((await s2.increment("ip:1.2.3.4")).totalHits, 2);
    assert.equal((await s1.increment("ip:1.2.3.4")).totalHits, 3);
    assert.equal((await s2.increment("ip:5.6.7.8")).totalHits, 1);
  });

  it("counts in memory, without waiting, while Redis is unreachable", async () => {
    const down = new Redis("redis://127.0.0.1:1/0", { ...redisOptions(), retryStrategy: () => null });
    down.on("error", () => undefined);
    await down.connect().catch(() => undefined);
    const store = new SharedRateLimitStore(down, "t:rl:", undefined);
    store.init(init);
    assert.equal((await store.increment("ip:9.9.9.9")).totalHits, 1);
    assert.equal((await store.increment("ip:9.9.9.9")).totalHits, 2);
    down.disconnect();
  });

  it("a block goes out through Redis and the bus, and a process that starts later loads it", async () => {
    const presence = new LocalPresence();
    const [busA, busB] = [new ClusterBus({ presence, processId: "a" }), new ClusterBus({ presence, processId: "b" })];
    await busA.start();
    await busB.start();
    const [listA, listB] = [new Blocklist(), new Blocklist()];
    const a = await SharedBlocks.start({ blocklist: listA, bus: busA, redis: await connect(), prefix: "t:" });
    const b = await SharedBlocks.start({ blocklist: listB, bus: busB, redis: await connect(), prefix: "t:" });
    listA.block("ip:203.0.113.1", 600);
    assert.equal(listB.retryAfter("ip:203.0.113.1"), 600, "mirrored at once through the (local) bus");
    // A shorter block announced later does not shorten the longer one already known.
    listB.mirror("ip:203.0.113.1", 5_000);
    assert.equal(listB.retryAfter("ip:203.0.113.1"), 600);

    const redis = await connect();
    await eventually(async () => (await redis.pttl("t:block:ip:203.0.113.1")) > 590_000, "the block key with its TTL");
    const listC = new Blocklist();
    const c = await SharedBlocks.start({ blocklist: listC, bus: new ClusterBus({ presence, processId: "c" }), redis, prefix: "t:" });
    assert.ok(listC.retryAfter("ip:203.0.113.1") > 590, "loaded from Redis at start");
    assert.equal(listC.retryAfter("ip:203.0.113.2"), 0);
    await Promise.all([a.close(), b.close(), c.close(), busA.close(), busB.close()]);
  });
});
