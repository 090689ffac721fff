/**
 * Shared by the load scripts (`bench-world.ts`, `bench-pathing.ts`, `soak.ts`, `trade/bench.ts`):
 * compile the server as `npm run build` does, read the Node.js flags production starts it with, and
 * start the server process the same way for each of them.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { freePort } from "../test/helpers/process.js";

export const ROOT = resolve(import.meta.dirname, "..");

/** Node.js flags the production start script (`npm run start:prod`) gives the server: `config.nodeOptions` in package.json. */
export const PROD_NODE_OPTIONS: string[] = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).config?.nodeOptions ?? "")
  .split(/\s+/)
  .filter(Boolean);

/** Compile the server as `npm run build` does (without the model-bounds step), so the load runs what production runs. */
export function buildDist() {
  const t0 = Date.now();
  const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: ROOT, encoding: "utf8" });
  if (tsc.status !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
  console.log(`  compiled the server into dist/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}

export interface TickStats {
  count: number;
  p50?: number;
  p99?: number;
  max?: number;
}

/** One "PROBE {json}" line of `loadtest/probe.ts`: the server's CPU, memory, event loop and ticks. */
export interface Probe {
  t: number;
  cpu: number;
  rss: number;
  heap: number;
  eld: { p50: number; p99: number; max: number; elu: number };
  window: {
    seconds: number;
    cpu: number;
    peakRss: number;
    p50: number;
    p99: number;
    max: number;
    elu: number;
    tick: TickStats;
    tickCpu: TickStats;
    tickLate?: TickStats;
    tickToPatch?: TickStats;
    tickPatch?: TickStats;
  };
}

/** An `onLine` for servers started with the probe: its lines go to `probes` (and stay out of the tail). */
export function collectProbes(probes: Probe[]): (line: string) => boolean {
  return (line) => {
    if (!line.startsWith("PROBE ")) return false;
    probes.push(JSON.parse(line.slice(6)) as Probe);
    return true;
  };
}

export interface LoadServerOptions {
  /** World directory (its manifests are used as they are: SKIP_MANIFESTS). */
  world: string;
  /** Node.js arguments: flags, then the entry script (relative to `cwd`). */
  nodeArgs: string[];
  /** Settings added to the common ones (secrets, storage, TICK_MS, SAVE_INTERVAL...); undefined ones are left out. */
  env: Record<string, string | undefined>;
  /** Directory the server runs in (default: this checkout). */
  cwd?: string;
  /** Every non-empty line of output; return true to keep it out of `tail` (e.g. probe lines). */
  onLine?: (line: string) => boolean | void;
  /** Lines kept in `tail` (default 50). */
  tailLines?: number;
  /** Time allowed for start-up (default 180 s). */
  readyMs?: number;
  /** Told the process as soon as it is spawned (to kill it if the script exits during start-up). */
  onSpawn?: (proc: ChildProcess) => void;
  /** Port on 127.0.0.1 (default: a free one), e.g. chosen up front to name it in PUBLIC_WS_URL. */
  port?: number;
}

export interface LoadServer {
  proc: ChildProcess;
  /** Base URL (http://127.0.0.1:port). */
  url: string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The last lines of output (other than those `onLine` kept out). */
  tail: string[];
}

/**
 * Start the server on a free port of 127.0.0.1 as every load script runs it: development mode, the
 * world's manifests as they are, rate limits off and the per-address socket cap lifted (every bot
 * connects from 127.0.0.1, so per-address limits would measure nothing; docs/protocol.md "WebSocket protocol"),
 * log level warn; nothing from this process's environment but PATH and HOME. Resolves once /health
 * answers; throws (with the last lines of output) if the process exits first or is not ready in time.
 */
export async function startLoadServer(o: LoadServerOptions): Promise<LoadServer> {
  const port = o.port ?? (await freePort());
  const proc = spawn(process.execPath, o.nodeArgs, {
    cwd: o.cwd ?? ROOT,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: "development",
      PORT: String(port),
      WORLD: o.world,
      SKIP_MANIFESTS: "true",
      DISABLE_RATE_LIMIT: "true",
      MAX_SOCKETS_PER_ADDRESS: "100000",
      LOG_LEVEL: "warn",
      ...o.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  o.onSpawn?.(proc);
  const s: LoadServer = {
    proc,
    url: `http://127.0.0.1:${port}`,
    exited: new Promise((r) => proc.on("exit", (code, signal) => r({ code, signal }))),
    tail: [],
  };
  const keep = o.tailLines ?? 50;
  let buf = "";
  const onData = (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!line.trim() || o.onLine?.(line)) continue;
      s.tail.push(line);
      if (s.tail.length > keep) s.tail.shift();
    }
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  const readyMs = o.readyMs ?? 180_000;
  const deadline = Date.now() + readyMs;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`server exited during start-up:\n${s.tail.slice(-20).join("\n")}`);
    if (
      await fetch(`${s.url}/health`, { signal: AbortSignal.timeout(2_000) }).then(
        (r) => r.ok,
        () => false,
      )
    )
      return s;
    if (Date.now() > deadline) {
      proc.kill("SIGKILL");
      throw new Error(`server not ready after ${readyMs / 1000} s:\n${s.tail.slice(-20).join("\n")}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}
