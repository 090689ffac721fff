/**
 * Redis for tests: the machine's server on 127.0.0.1:6379 (CI starts it before the tests, see
 * .ci/run), each test file on a logical database of its own that it empties before and after, so
 * no test depends on what another left. Bus channels carry the database number (`realm:<db>`), so
 * pub/sub stays apart too. `TEST_REDIS_HOST` (host:port) points the tests at another server, so two
 * checkouts can run their suites side by side.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { freePort } from "./process.js";

export const TEST_REDIS_HOST = process.env.TEST_REDIS_HOST || "127.0.0.1:6379";

/** The URL of logical database `db` of the test Redis. */
export const testRedisUrl = (db: number, host = TEST_REDIS_HOST) => `redis://${host}/${db}`;

/** True when the test Redis answers PING within 2 s. */
export async function redisAnswers(url = testRedisUrl(0)): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000, retryStrategy: () => null });
  r.on("error", () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** Empty logical database `db`. */
export async function flushDb(url: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await r.flushdb();
  } finally {
    r.disconnect();
  }
}

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

/** A redis-server of the test's own, on a free port, without persistence: stop and start it at will. */
export class OwnRedis {
  private proc?: ChildProcess;
  private constructor(readonly port: number) {}

  static async create(): Promise<OwnRedis> {
    return new OwnRedis(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  /** Start the server; resolves once it says it accepts connections. */
  async start(): Promise<void> {
    const proc = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = proc;
    let out = "";
    await new Promise<void>((resolve, reject) => {
      proc.stdout!.on("data", (d: Buffer) => {
        out += d.toString();
        if (/Ready to accept connections/.test(out)) resolve();
      });
      proc.once("exit", (code) => reject(new Error(`redis-server exited (${code}): ${out}`)));
    });
  }

  /** Stop it (SIGKILL: what an operator's crash looks like to the clients); resolves once it exited. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((r) => p.once("exit", () => r()));
    p.kill("SIGKILL");
    await exited;
  }
}
