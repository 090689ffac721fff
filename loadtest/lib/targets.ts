/**
 * Starting the servers a load script measures: compile the server as `npm run build` does, read the
 * Node.js flags production starts it with, start a server process with the load settings
 * (`loadServerEnv`) and wait for `/health`, and stop it.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { sleep } from "./cli.js";
import { eachLine, freePort, loadServerEnv, ROOT } from "./processes.js";

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
 * Start a server on a free port of 127.0.0.1 with the load settings (`loadServerEnv`:
 * docs/protocol.md "Limits" on the per-address limits). Resolves once /health answers; throws (with the last
 * lines of output) if the process exits first or is not ready in time.
 */
export async function startLoadServer(o: LoadServerOptions): Promise<LoadServer> {
  const port = o.port ?? (await freePort());
  const proc = spawn(process.execPath, o.nodeArgs, { cwd: o.cwd ?? ROOT, env: loadServerEnv(port, o.world, o.env), stdio: ["ignore", "pipe", "pipe"] });
  o.onSpawn?.(proc);
  const s: LoadServer = {
    proc,
    url: `http://127.0.0.1:${port}`,
    exited: new Promise((r) => proc.on("exit", (code, signal) => r({ code, signal }))),
    tail: [],
  };
  const keep = o.tailLines ?? 50;
  eachLine(proc, (line) => {
    if (!line.trim() || o.onLine?.(line)) return;
    s.tail.push(line);
    if (s.tail.length > keep) s.tail.shift();
  });
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
    await sleep(250);
  }
}

/** SIGTERM, then SIGKILL if it has not exited after `ms`. */
export async function stopLoadServer(s: LoadServer, ms = 15_000): Promise<void> {
  s.proc.kill("SIGTERM");
  await Promise.race([s.exited, sleep(ms)]);
  if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill("SIGKILL");
}
