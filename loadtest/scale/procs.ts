/**
 * The server processes bench:scale measures (compiled, production Node flags, the probe loaded, its
 * metrics on a port of its own), and the other processes whose CPU it samples: the Redis server
 * and the PostgreSQL backends of the run's database.
 */
import { spawnSync } from "node:child_process";
import { probeImport, type Probe } from "../lib/probe-lines.js";
import { childrenKilledOnExit, freePort, ROOT } from "../lib/processes.js";
import { PROD_NODE_OPTIONS, startLoadServer, stopLoadServer, type LoadServer } from "../lib/targets.js";
import { LOAD_SECRETS } from "../lib/tokens.js";
import { args, TICK_MS, TICK_PHASE } from "./options.js";
import type { Ctx } from "./figures.js";

/** Every server and bot process of the run: killed when the script exits. */
export const { children, killAll } = childrenKilledOnExit();

export interface Proc {
  /** "one", "A" or "B". */
  name: string;
  world: number;
  server: LoadServer;
  probes: Probe[];
  metricsUrl: string;
  errorLines: string[];
  errorCount: number;
}

export async function startProc(name: string, world: number, ctx: Ctx, redisUrl?: string): Promise<Proc> {
  const port = await freePort();
  const metricsPort = await freePort();
  const p = { name, world, probes: [] as Probe[], metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, errorLines: [] as string[], errorCount: 0 };
  const server = await startLoadServer({
    world: ctx.world,
    port,
    nodeArgs: [...PROD_NODE_OPTIONS, ...probeImport(ROOT, true), "dist/src/main.js"],
    env: {
      ...LOAD_SECRETS,
      SAVE_INTERVAL: args["save-interval"],
      TICK_MS: String(TICK_MS),
      TICK_PHASE,
      DATABASE_URL: args.db,
      METRICS_PORT: String(metricsPort),
      WORLDS: String(world),
      REDIS_URL: redisUrl,
      PUBLIC_WS_URL: redisUrl ? `ws://127.0.0.1:${port}/ws` : undefined,
    },
    onLine: (line) => {
      if (line.startsWith("PROBE ")) {
        p.probes.push(JSON.parse(line.slice(6)) as Probe);
        return true;
      }
      if (/"level":(50|60)\b|uncaught|unhandled/i.test(line)) {
        p.errorCount++;
        if (p.errorLines.length < 5) p.errorLines.push(line.slice(0, 400));
      }
      return false;
    },
    tailLines: 100,
    onSpawn: (c) => children.add(c),
  });
  console.log(
    `  process ${name}: world ${world} at ${server.url} (pid ${server.proc.pid})${redisUrl ? `, Redis ${redisUrl}, PUBLIC_WS_URL ws://127.0.0.1:${port}/ws` : ""}`,
  );
  return { ...p, server };
}

export const stopProc = (p: Proc) => stopLoadServer(p.server, 20_000);

/** Pids of the PostgreSQL backends connected to the benchmark's database (the servers' pools), to sample their CPU. */
export function postgresBackends(): number[] {
  const r = spawnSync("psql", [args.db!, "-tAc", "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()"], {
    encoding: "utf8",
    timeout: 10_000,
  });
  return r.status === 0
    ? r.stdout
        .split("\n")
        .map(Number)
        .filter((n) => Number.isInteger(n) && n > 0)
    : [];
}
