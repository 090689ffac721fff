/**
 * `npx tsx loadtest/bench-cluster-seat.ts [joins]`: what a seat costs when the room lives in another
 * process (docs/operations.md "Scaling: several processes and machines"). Two server processes on a Redis of
 * the run's own and TEST_DATABASE_URL; `joins` (default 200) sequential seat reservations through
 * process A, of A's own world room and of B's, and the median and 95th percentile of each. The
 * seats are reserved, not used (they expire).
 */
import { matchmake, ServerProcess, worldRoomOf } from "./lib/cluster.js";
import { OwnRedis } from "./lib/redis.js";
import { LOAD_SECRETS, loadToken } from "./lib/tokens.js";

const DATABASE_URL = process.env.TEST_DATABASE_URL;
if (!DATABASE_URL) throw new Error("set TEST_DATABASE_URL: the processes of a cluster share one PostgreSQL database");
const joins = Number(process.argv[2] ?? 200);
const redis = await OwnRedis.create();
await redis.start();
const env = { ...LOAD_SECRETS, REDIS_URL: redis.url, DATABASE_URL, TICK_MS: "50", JOIN_QUEUE: "100000", LOG_LEVEL: "info" };
const procs: ServerProcess[] = [];
try {
  for (const name of ["A", "B"]) {
    const p = await ServerProcess.create({ name, env }, () => undefined);
    procs.push(p);
    await p.start(); // one after the other: each applies the migrations at start-up
  }
  const [a, b] = procs as [ServerProcess, ServerProcess];
  const rooms = { local: (await worldRoomOf(redis.url, a.processId))!, remote: (await worldRoomOf(redis.url, b.processId))! };
  const tokens = Array.from({ length: joins }, () => loadToken());
  for (const [kind, roomId] of Object.entries(rooms)) {
    const ms: number[] = [];
    for (const token of tokens) {
      const t = performance.now();
      const seat = await matchmake(a.url, "joinById", roomId, token);
      ms.push(performance.now() - t);
      if (seat.status !== 200) throw new Error(`seat refused: ${seat.status} ${JSON.stringify(seat.body)}`);
    }
    ms.sort((x, y) => x - y);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(2);
    console.log(`${kind.padEnd(6)} room: ${joins} seats through A, median ${at(0.5)} ms, p95 ${at(0.95)} ms`);
  }
} finally {
  await Promise.all(procs.map((p) => p.kill()));
  await redis.stop();
}
