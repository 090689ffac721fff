/**
 * `tsx scripts/redis-ping.ts <redis-url>`: exit 0 when that Redis answers PING within 3 s, 1
 * otherwise (one line on stderr says why). Used by `.ci/run` to make sure the test Redis runs
 * before the tests; it goes through the server's own Redis client, so it needs no redis-cli.
 */
import { Redis } from "ioredis";

const url = process.argv[2];
if (!url) {
  console.error("usage: tsx scripts/redis-ping.ts <redis-url>");
  process.exit(2);
}
const redis = new Redis(url, { lazyConnect: true, connectTimeout: 3_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
redis.on("error", () => undefined);
let ok = false;
try {
  await redis.connect();
  ok = (await redis.ping()) === "PONG";
} catch (e) {
  console.error(`redis-ping: no answer from Redis: ${(e as Error).message}`);
}
redis.disconnect();
process.exit(ok ? 0 : 1);
