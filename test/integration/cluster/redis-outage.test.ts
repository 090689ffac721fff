/**
 * Redis gone and back (docs/operations.md "When Redis dies"): on a
 * redis-server of the test's own (the machine's is never touched), two server processes. While
 * Redis is gone the processes keep running their worlds and the `/ws` joins, nothing crashes,
 * matchmaking fails cleanly within a bounded time, and rate limits count locally; when Redis is back (empty:
 * it has no persistence) each process lists its room again, exactly once, and matchmaking works.
 * One character, one world holds throughout: while the bus is down a join of A's character on B is
 * refused (409, A's player untouched); once Redis is back the same join replaces it (4009), and the
 * character's stored items are the same as before. No process logs an unhandled promise rejection
 * (Colyseus's commands that nobody waits for, src/cluster/handled.ts).
 */
import assert from "node:assert/strict";
import { closeAll, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { matchmake, requireClusterDatabase, startCluster, stopCluster, type ClusterProcess } from "../../helpers/cluster.js";
import { hasRedisServer, OwnRedis } from "../../helpers/redis.js";
import { postgresStorage, resetStorage } from "../../helpers/storage.js";
import { totals } from "../../helpers/trade.js";
import { CLOSE_CODES } from "../../../src/events.js";
import { Redis } from "ioredis";

describe("cluster: Redis stopped and restarted", function () {
  this.timeout(180_000);
  let redis: OwnRedis;
  let procs: ClusterProcess[] = [];
  const players: (SdkPlayer | RawPlayer | undefined)[] = [];

  requireClusterDatabase(this);
  before(async function () {
    if (!hasRedisServer()) {
      console.log("      (skipped: redis-server is not on the PATH; this test runs a Redis of its own)");
      this.skip();
    }
    await resetStorage(await postgresStorage());
    redis = await OwnRedis.create();
    await redis.start();
    procs = await startCluster(2, redis.url, { DISABLE_RATE_LIMIT: "false", TRUST_PROXY: "true" });
  });
  after(async () => {
    await closeAll(players.splice(0));
    await stopCluster(procs);
    await redis?.stop();
  });

  /** World room listings in Redis, by process. */
  async function listings(): Promise<string[]> {
    const r = new Redis(redis.url, { maxRetriesPerRequest: 1 });
    try {
      return Object.values(await r.hgetall("roomcaches"))
        .map((raw) => JSON.parse(raw) as { name: string; processId: string })
        .filter((room) => room.name === "world")
        .map((room) => room.processId)
        .sort();
    } finally {
      r.disconnect();
    }
  }

  it("keeps the worlds playing while Redis is gone, fails matchmaking cleanly, and recovers when it is back", async () => {
    const [a, b] = procs as [ClusterProcess, ClusterProcess];
    const onA = await RawPlayer.connect({ url: a.url });
    players.push(onA);
    const storage = await postgresStorage();
    const items = await totals(storage.orm, [onA.id]);
    const lostA = a.child.waitFor(/redis: connection lost|redis: connection error/);
    await redis.stop();
    await lostA;

    // Worlds keep ticking and /ws joins work: they need no Redis.
    onA.send("player:move", { x: 2, z: 3 });
    await onA.waitWorld((w) => w.players.get(onA.id)?.x === 2 && w.players.get(onA.id)?.z === 3, "the player on A to walk");
    players.push(await RawPlayer.connect({ url: b.url }));
    // Health answers; REST requests are still rate limited, by each process on its own.
    assert.equal((await fetch(`${a.url}/health`)).status, 200);
    const rest = await fetch(`${b.url}/api/v1/world/areas`, { headers: { "x-forwarded-for": "198.51.100.4" } });
    assert.equal(rest.status, 200);
    assert.ok(rest.headers.get("ratelimit"), "the REST limit is still counted");
    await b.child.waitFor(/rate limits: Redis unavailable/);

    // Matchmaking needs the room listings in Redis: it fails, within a bounded time, with an error.
    const started = performance.now();
    const seat = await matchmake(a.url, "join", "world", tokenFor().token);
    assert.ok(seat.status >= 400, `matchmaking refused (${seat.status} ${JSON.stringify(seat.body)})`);
    assert.ok(performance.now() - started < 15_000, "no hang");

    // A's character joining on B: B cannot ask A to let it go (no bus), so it is refused; A keeps it.
    const elsewhere = await RawPlayer.connect({ url: b.url }, { token: onA.token, accountId: onA.accountId, noWait: true });
    assert.equal((await elsewhere.log.waitClose()).code, 4409);
    assert.equal(onA.log.isClosed, false, "A's player still plays");

    // Redis back, empty: each process lists its room again, once.
    const restored = Promise.all(procs.map((p) => p.child.waitFor(/room listings restored/, 30_000)));
    await redis.start();
    await restored;
    assert.deepEqual(await listings(), [a.processId, b.processId].sort());
    for (const via of procs) {
      const s = await matchmake(via.url, "join", "world", tokenFor().token);
      assert.equal(s.status, 200, JSON.stringify(s.body));
    }
    players.push(await SdkPlayer.join({ url: b.url }));
    assert.deepEqual(await listings(), [a.processId, b.processId].sort(), "no room listed twice");
    // The bus is back: the same join now replaces A's connection, and nothing was duplicated or lost.
    const moved = await RawPlayer.connect({ url: b.url }, { token: onA.token, accountId: onA.accountId });
    players.push(moved);
    assert.equal(moved.id, onA.id);
    assert.equal((await onA.log.waitClose()).code, CLOSE_CODES.REPLACED);
    assert.deepEqual(await totals(storage.orm, [onA.id]), items, "the character's stored items are unchanged");
    for (const p of procs) assert.equal(p.child.proc.exitCode, null, "no process exited");
    assert.doesNotMatch(a.child.output() + b.child.output(), /uncaught exception|unhandled promise rejection/);
  });
});
