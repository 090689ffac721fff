/**
 * `npx tsx loadtest/bench-cluster-seat.ts [joins]`: what a seat costs when the room lives in another
 * process (docs/operations.md "Scaling: several processes and machines"). Two server processes on the local
 * Redis (database 9, emptied before and after) and TEST_DATABASE_URL;
 * `joins` (default 200) sequential seat reservations through process A, of A's own world room and
 * of B's, and the median and 95th percentile of each. The seats are reserved, not used (they expire).
 */
import { tokenFor } from "../test/helpers/clients.js";
import { matchmake, startCluster, stopCluster, worldRoomOf } from "../test/helpers/cluster.js";
import { flushDb, testRedisUrl } from "../test/helpers/redis.js";
import { TEST_DATABASE_URL } from "../test/helpers/storage.js";

if (!TEST_DATABASE_URL) throw new Error("set TEST_DATABASE_URL: the processes of a cluster share one PostgreSQL database");
const joins = Number(process.argv[2] ?? 200);
const redisUrl = testRedisUrl(9);
await flushDb(redisUrl);
const procs = await startCluster(2, redisUrl, { JOIN_QUEUE: "100000" });
try {
  const [a, b] = procs as [(typeof procs)[0], (typeof procs)[0]];
  const rooms = { local: (await worldRoomOf(redisUrl, a.processId))!, remote: (await worldRoomOf(redisUrl, b.processId))! };
  const tokens = Array.from({ length: joins }, () => tokenFor().token);
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
  await stopCluster(procs);
  await flushDb(redisUrl);
}
