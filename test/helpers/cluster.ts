/**
 * Several server processes (the real `src/main.ts`) on one Redis and one database: a cluster as
 * docs/operations.md "Scaling: several processes and machines" runs it. Each process has its own port, world
 * directory and PUBLIC_WS_URL; processes start one after the other (each applies the migrations
 * at start-up, which must not race) and each is ready when it logs `listening`. Its Colyseus
 * process id is read from its `process id` log line.
 */
import { rmSync } from "node:fs";
import { freePort, startProcess, tempWorld, type Child } from "./process.js";
import { TEST_ENV } from "./server.js";
import { TEST_DATABASE_URL } from "./storage.js";

export { matchmake, worldRoomOf, type Seat } from "../../loadtest/lib/cluster.js";

export interface ClusterProcess {
  child: Child;
  port: number;
  /** http://127.0.0.1:<port> */
  url: string;
  /** Colyseus's id of the process. */
  processId: string;
  /** The publicAddress its rooms are announced at (`127.0.0.1:<port>/ws`). */
  publicAddress: string;
  world: string;
}

/**
 * Skip the suite (saying why) without TEST_DATABASE_URL: the processes of a cluster share one
 * PostgreSQL database (each on its own embedded PGlite would cost about 1 GB of memory apiece).
 */
export function requireClusterDatabase(suite: Mocha.Suite): void {
  suite.beforeAll(function () {
    if (TEST_DATABASE_URL) return;
    console.log("      (skipped: TEST_DATABASE_URL is not set; a cluster shares one PostgreSQL database)");
    this.skip();
  });
}

/** Start one process of the cluster on `redisUrl`; `env` adds or overrides settings. */
export async function startClusterProcess(redisUrl: string, env: NodeJS.ProcessEnv = {}): Promise<ClusterProcess> {
  const port = await freePort();
  const world = tempWorld();
  const child = startProcess({
    NODE_ENV: "development",
    PORT: String(port),
    WORLD: world,
    SKIP_MANIFESTS: "true",
    JWT_SECRET: TEST_ENV.JWT_SECRET,
    ADMIN_CODE: TEST_ENV.ADMIN_CODE,
    TICK_MS: "50",
    DISABLE_RATE_LIMIT: "true",
    MAX_SOCKETS_PER_ADDRESS: TEST_ENV.MAX_SOCKETS_PER_ADDRESS,
    LOG_LEVEL: "info",
    REDIS_URL: redisUrl,
    PUBLIC_WS_URL: `ws://127.0.0.1:${port}/ws`,
    DATABASE_URL: TEST_DATABASE_URL,
    ...env,
  });
  try {
    const line = await child.waitFor(/"msg":"process id"/, 120_000);
    await child.waitFor(/"msg":"listening"/, 120_000);
    const { processId, publicAddress } = JSON.parse(line) as { processId: string; publicAddress: string };
    return { child, port, url: `http://127.0.0.1:${port}`, processId, publicAddress, world };
  } catch (e) {
    child.proc.kill("SIGKILL");
    rmSync(world, { recursive: true, force: true });
    throw e;
  }
}

/** Start `n` processes, one after the other. */
export async function startCluster(n: number, redisUrl: string, env: NodeJS.ProcessEnv = {}): Promise<ClusterProcess[]> {
  const started: ClusterProcess[] = [];
  try {
    for (let i = 0; i < n; i++) started.push(await startClusterProcess(redisUrl, env));
  } catch (e) {
    await stopCluster(started);
    throw e;
  }
  return started;
}

/** Kill every process still running (SIGKILL: nothing to wait for) and remove its world directory. */
export async function stopCluster(processes: ClusterProcess[]): Promise<void> {
  await Promise.all(
    processes.map(async (p) => {
      if (p.child.proc.exitCode === null && p.child.proc.signalCode === null) await p.child.stop("SIGKILL");
      rmSync(p.world, { recursive: true, force: true });
    }),
  );
}

/** Players online in a process (`GET /status`). */
export async function playersOnline(base: string): Promise<number> {
  const res = await fetch(`${base}/status`);
  return ((await res.json()) as { playersOnline: number }).playersOnline;
}
