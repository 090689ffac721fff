/** The real server entry point (`src/main.ts`) as a child process, set up as the process tests need it. */
import { rmSync } from "node:fs";
import { openStorage, type Storage } from "../../src/storage/orm.js";
import { freePort, startProcess, tempWorld, type Child } from "./process.js";
import { TEST_ENV } from "./server.js";
import { postgresStorage, resetStorage, TEST_DATABASE_URL } from "./storage.js";

export interface ServerProcess {
  child: Child;
  /** Base URL (http://127.0.0.1:port). */
  url: string;
}

/**
 * Start `src/main.ts` on a free port of 127.0.0.1 with the world directory `world` (its manifests
 * as they are: SKIP_MANIFESTS), the test JWT secret and admin code, rate limits off and the
 * per-address socket cap of the tests (every test client comes from 127.0.0.1), log level info, and
 * storage on TEST_DATABASE_URL when configured (otherwise PGlite in `world`). `env` adds or
 * overrides settings. Resolves once the server listens; a server that does not is killed.
 */
export async function startServerProcess(world: string, env: NodeJS.ProcessEnv = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = startProcess({
    NODE_ENV: "development",
    PORT: String(port),
    WORLD: world,
    SKIP_MANIFESTS: "true",
    JWT_SECRET: TEST_ENV.JWT_SECRET,
    ADMIN_CODE: TEST_ENV.ADMIN_CODE,
    DISABLE_RATE_LIMIT: "true",
    // docs/protocol.md "WebSocket protocol": sockets per address.
    MAX_SOCKETS_PER_ADDRESS: TEST_ENV.MAX_SOCKETS_PER_ADDRESS,
    LOG_LEVEL: "info",
    ...(TEST_DATABASE_URL ? { DATABASE_URL: TEST_DATABASE_URL } : {}),
    ...env,
  });
  try {
    await child.waitFor(/"msg":"listening"/, 120_000);
  } catch (e) {
    child.proc.kill("SIGKILL");
    throw e;
  }
  return { child, url: `http://127.0.0.1:${port}` };
}

/**
 * For a describe block that runs the server process (with `env`) on one temporary world, kills and
 * restarts it, and inspects its storage in between: storage is reset before, the process killed and
 * the world removed after.
 */
export function useServerProcess(env: NodeJS.ProcessEnv) {
  const ctx = {
    world: "",
    child: undefined as Child | undefined,
    pg: undefined as Storage | undefined,
    /** Start the server process; resolves with its base URL once it listens. */
    async start(): Promise<string> {
      const server = await startServerProcess(ctx.world, env);
      ctx.child = server.child;
      return server.url;
    },
    /** Storage to inspect: the shared PostgreSQL one, or the process's PGlite directory (server stopped). */
    async withStorage<T>(fn: (s: Storage) => Promise<T>): Promise<T> {
      if (ctx.pg) return fn(ctx.pg);
      const s = await openStorage({ pgliteDir: `${ctx.world}/db` });
      try {
        return await fn(s);
      } finally {
        await s.close();
      }
    },
  };
  before(async () => {
    ctx.world = tempWorld();
    if (TEST_DATABASE_URL) {
      ctx.pg = await postgresStorage();
      await resetStorage(ctx.pg);
    }
  });
  after(() => {
    ctx.child?.proc.kill("SIGKILL");
    rmSync(ctx.world, { recursive: true, force: true });
  });
  return ctx;
}
