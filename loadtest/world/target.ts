/**
 * The two servers bench:world measures, each started fresh for one measurement: the bare Colyseus
 * baseline (loadtest/baseline/server.ts) and the game server (compiled `dist/src/main.js` as in
 * production, or the sources with `--runtime tsx`), both with the probe (loadtest/probe.ts) loaded;
 * the game also with its Prometheus page, where its tick durations are read.
 */
import { resolve } from "node:path";
import type { TargetKind } from "../bot.js";
import { postgresTarget } from "../lib/cli.js";
import { probeImport, type Probe } from "../lib/probe-lines.js";
import { childrenKilledOnExit, freePort, ROOT } from "../lib/processes.js";
import { startLoadServer, stopLoadServer, type LoadServer } from "../lib/targets.js";
import { LOAD_SECRETS } from "../lib/tokens.js";
import { args, cli, SERVER_ENV, SERVER_NODE, TICK_MS } from "./options.js";

/** Every server and bot process of the run: killed when the script exits. */
export const { children, killAll } = childrenKilledOnExit();

/** The storage the game server uses: `--db <url>`, `--db pglite`, or PGlite by default (never a guessed database). */
export async function storage(): Promise<{ url?: string; label: string }> {
  if (args.db && args.db !== "pglite") return postgresTarget(args.db, cli);
  return { label: "PGlite in the run's temporary world directory (its memory counts in the game server's RSS; pass --db postgres://… for PostgreSQL)" };
}

export interface TargetServer extends LoadServer {
  kind: TargetKind;
  probes: Probe[];
  /** The game's Prometheus page (its ticks, save failures, join refusals); none for the baseline. */
  metricsUrl?: string;
  /** Error-level lines of the server's output (pino level ≥ 50, uncaught exceptions). */
  errorLines: string[];
  errorCount: number;
  endpoint: string;
}

export async function startTarget(kind: TargetKind, world: string, databaseUrl: string | undefined): Promise<TargetServer> {
  const probes: Probe[] = [];
  const errors = { lines: [] as string[], count: 0 };
  const onLine = (line: string) => {
    if (line.startsWith("PROBE ")) {
      probes.push(JSON.parse(line.slice(6)) as Probe);
      return true;
    }
    if (/"level":(50|60)\b|uncaught|unhandled/i.test(line)) {
      errors.count++;
      if (errors.lines.length < 5) errors.lines.push(line.slice(0, 400));
    }
    return false;
  };
  let server: LoadServer;
  let metricsUrl: string | undefined;
  // A whole-run profile (`--cpu-prof`) of either server: the join phase of both compares.
  const prof = args["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${resolve(args["cpu-prof"])}`] : [];
  if (kind === "baseline") {
    server = await startLoadServer({
      world,
      nodeArgs: [...prof, ...SERVER_NODE, ...probeImport(ROOT, false), "loadtest/baseline/server.ts"],
      // A window profile (`--cpu-prof-window`) of the bare room too: what the game's costs compare with.
      env: { TICK_MS: String(TICK_MS), ...windowProfile() },
      onLine,
      tailLines: 100,
      onSpawn: (p) => children.add(p),
    });
  } else {
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const entry = args.runtime === "tsx" ? [...probeImport(ROOT, false), "src/main.ts"] : [...probeImport(ROOT, true), "dist/src/main.js"];
    server = await startLoadServer({
      world,
      nodeArgs: [...prof, ...SERVER_NODE, ...entry],
      env: {
        ...SERVER_ENV,
        ...LOAD_SECRETS,
        SAVE_INTERVAL: args["save-interval"],
        TICK_MS: args["tick-ms"] || undefined,
        DATABASE_URL: databaseUrl,
        METRICS_PORT: String(metricsPort),
        ...windowProfile(),
        // The shutdown's `players saved` line is at info.
        LOG_LEVEL: args["sigterm-joined"] ? "info" : undefined,
      },
      onLine,
      tailLines: 100,
      onSpawn: (p) => children.add(p),
    });
  }
  const target = Object.assign(server, {
    kind,
    probes,
    metricsUrl,
    errorLines: errors.lines,
    errorCount: 0,
    endpoint: kind === "game" ? `${server.url}/ws` : server.url,
  });
  // Counted as lines come (Object.assign would copy a getter's value once).
  Object.defineProperty(target, "errorCount", { get: () => errors.count });
  return target;
}

/** The probe's window profiles (`--cpu-prof-window`, `--heap-prof-window`), as its environment. */
function windowProfile(): Record<string, string | undefined> {
  const dir = args["cpu-prof-window"];
  return { PROBE_PROFILE_DIR: dir ? resolve(dir) : undefined, PROBE_HEAP_PROFILE: dir && args["heap-prof-window"] ? "1" : undefined };
}

export const stopTarget = (s: TargetServer) => stopLoadServer(s);
