/**
 * Redis for tests: the machine's server on 127.0.0.1:6379 (CI starts it before the tests, see
 * .ci/run), each test file on a logical database of its own that it empties before and after, so
 * no test depends on what another left. Bus channels carry the database number (`realm:<db>`), so
 * pub/sub stays apart too. `TEST_REDIS_HOST` (host:port) points the tests at another server, so two
 * checkouts can run their suites side by side.
 */
import { spawnSync } from "node:child_process";
import { flushDb, redisAnswers as answers } from "../../loadtest/lib/redis.js";

export { flushDb, OwnRedis } from "../../loadtest/lib/redis.js";

export const TEST_REDIS_HOST = process.env.TEST_REDIS_HOST || "127.0.0.1:6379";

/** The URL of logical database `db` of the test Redis. */
export const testRedisUrl = (db: number, host = TEST_REDIS_HOST) => `redis://${host}/${db}`;

/** True when the test Redis answers PING within 2 s. */
export const redisAnswers = (url = testRedisUrl(0)) => answers(url);

/**
 * Skip the suite (with the reason in the output) when the test Redis does not answer; otherwise
 * empty database `db` before and after it. Returns the database URL.
 */
export function useTestRedis(suite: Mocha.Suite, db: number): string {
  const url = testRedisUrl(db);
  suite.beforeAll(async function () {
    if (!(await redisAnswers(url))) {
      console.log(`      (skipped: no Redis at ${TEST_REDIS_HOST}; CI starts one, see .ci/run)`);
      this.skip();
    }
    await flushDb(url);
  });
  suite.afterAll(async () => {
    if (await redisAnswers(url)) await flushDb(url);
  });
  return url;
}

/** True when `redis-server` is on the PATH. */
export const hasRedisServer = (): boolean => spawnSync("redis-server", ["--version"], { stdio: "ignore" }).status === 0;
