/**
 * World benchmark: starts one server process (with `loadtest/probe.ts` loaded into it), spreads
 * wandering SDK bots over worker processes, and reports server CPU, RSS, event-loop delay, bytes
 * received per client per second and the move-to-visible latency.
 *
 *   npm run bench:world -- --bots 100 [--duration 30] [--warmup 5] [--workers 2]
 *                          [--tick-ms 600] [--save-interval 10] [--db <url>|pglite] [--json out.json]
 *   npm run bench:world -- --interest --bots 500 [--near 50]
 *   npm run bench:world -- --bots 500 --cpu-prof /tmp/prof   (V8 profile of the server)
 *
 * `--interest` checks interest management: a group of `--near` bots wander together near the spawn;
 * their egress is measured alone, then again after the remaining bots join far away (60+ tiles).
 *
 * Storage is PostgreSQL at postgres://postgres@127.0.0.1:5432/test when it answers (or `--db`),
 * else PGlite in the benchmark's temporary world directory. All traffic stays on 127.0.0.1.
 * Every phase is bounded in time; the server and workers are killed on any failure.
 */
import { fork, spawnSync, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { loadContent, type GameContent } from "../src/content/load.js";
import { seededRng, type Tile } from "./bot.js";
import type { Command, GroupReport, JoinCommand, WorkerMessage } from "./bot-worker.js";
import { buildDist, collectProbes, PROD_NODE_OPTIONS, ROOT, startLoadServer, type LoadServer, type Probe, type TickStats } from "./server.js";

const DEFAULT_PG = "postgres://postgres@127.0.0.1:5432/test";
const JWT_SECRET = "bench-secret-0123456789-abcdefghijklmnop";
const ADMIN_CODE = "bench-admin-code";

const { values: args } = parseArgs({
  options: {
    bots: { type: "string", default: "100" },
    duration: { type: "string", default: "30" },
    warmup: { type: "string", default: "5" },
    workers: { type: "string" },
    "tick-ms": { type: "string" },
    "save-interval": { type: "string", default: "10" },
    db: { type: "string" },
    interest: { type: "boolean", default: false },
    near: { type: "string", default: "50" },
    roam: { type: "string", default: "8" },
    "chat-chance": { type: "string", default: "0.05" },
    json: { type: "string" },
    /** Write a V8 CPU profile of the server into this directory (on exit). */
    "cpu-prof": { type: "string" },
    /** Extra Node.js flags for the server process, e.g. "--max-semi-space-size=4". */
    "server-node-options": { type: "string" },
    /** How the server runs: "dist" (compiled by `npm run build`, as in production) or "tsx" (from the sources, as `npm start`). */
    runtime: { type: "string", default: "dist" },
  },
});

if (args.runtime !== "dist" && args.runtime !== "tsx") {
  console.error(`--runtime must be "dist" or "tsx", not ${JSON.stringify(args.runtime)}`);
  process.exit(2);
}
const BOTS = int(args.bots!, 1, 5_000, "--bots");
const DURATION_S = int(args.duration!, 5, 3_600, "--duration");
const WARMUP_S = int(args.warmup!, 0, 600, "--warmup");
const WORKERS = args.workers ? int(args.workers, 1, 32, "--workers") : Math.min(4, Math.max(1, Math.ceil(BOTS / 125)));
const NEAR = Math.min(BOTS, int(args.near!, 1, 5_000, "--near"));
const ROAM = int(args.roam!, 1, 20, "--roam");
const CHAT_CHANCE = Number(args["chat-chance"]);

function int(v: string, min: number, max: number, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

// ------------------------------------------------------------------ processes

const children = new Set<ChildProcess>();

function killAll() {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
}
process.on("exit", killAll);
for (const sig of ["SIGINT", "SIGTERM"] as const)
  process.on(sig, () => {
    killAll();
    process.exit(130);
  });

function reachable(host: string, port: number, ms = 1_000): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(ms, () => done(false));
    sock.once("connect", () => done(true));
    sock.once("error", () => done(false));
  });
}

interface ServerHandle extends LoadServer {
  probes: Probe[];
}

async function startServer(world: string, databaseUrl: string | undefined): Promise<ServerHandle> {
  const prof = args["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${resolve(args["cpu-prof"])}`] : [];
  const extra = args["server-node-options"]?.split(/\s+/).filter(Boolean) ?? [];
  const entry =
    args.runtime === "tsx"
      ? ["--import", "tsx", "--import", pathToFileURL(join(ROOT, "loadtest/probe.ts")).href, "src/main.ts"]
      : ["--import", pathToFileURL(join(ROOT, "dist/loadtest/probe.js")).href, "dist/src/main.js"];
  const probes: Probe[] = [];
  const server = await startLoadServer({
    world,
    nodeArgs: [...prof, ...(args.runtime === "tsx" ? [] : PROD_NODE_OPTIONS), ...extra, ...entry],
    env: {
      JWT_SECRET,
      ADMIN_CODE,
      SAVE_INTERVAL: args["save-interval"],
      TICK_MS: args["tick-ms"] || undefined,
      DATABASE_URL: databaseUrl,
    },
    onLine: collectProbes(probes),
    tailLines: 200,
    onSpawn: (proc) => children.add(proc),
  });
  return Object.assign(server, { probes });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ------------------------------------------------------------------ workers

class Worker {
  readonly proc: ChildProcess;
  private waiting: { type: WorkerMessage["type"]; resolve: (m: any) => void }[] = [];
  constructor() {
    this.proc = fork(join(ROOT, "loadtest/bot-worker.ts"), [], { cwd: ROOT, execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    children.add(this.proc);
    this.proc.on("message", (m: WorkerMessage) => {
      const i = this.waiting.findIndex((w) => w.type === m.type);
      if (i >= 0) this.waiting.splice(i, 1)[0]!.resolve(m);
    });
  }
  send(c: Command) {
    this.proc.send(c);
  }
  ask<T extends WorkerMessage["type"]>(c: Command, type: T, timeoutMs: number): Promise<Extract<WorkerMessage, { type: T }>> {
    return new Promise((res, rej) => {
      const t = setTimeout(() => rej(new Error(`worker did not answer ${c.cmd} within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push({
        type,
        resolve: (m) => {
          clearTimeout(t);
          res(m);
        },
      });
      this.send(c);
    });
  }
}

// ------------------------------------------------------------------ placement

/** Tiles where a bot can wander `roam` tiles around without meeting an aggressive NPC or a wall. */
function safeHomes(content: GameContent, keep: (t: Tile) => boolean): Tile[] {
  const b = content.worldBounds;
  const danger = [...content.npcs.values()]
    .filter((d) => d.aggressive)
    .flatMap((d) => d.spawns.map((s) => ({ ...s, r: d.wanderRadius + d.aggroRadius + ROAM + 6 })));
  const out: Tile[] = [];
  for (let x = b.minX + ROAM; x <= b.maxX - ROAM; x += 3)
    for (let z = b.minZ + ROAM; z <= b.maxZ - ROAM; z += 3) {
      const t = { x, z };
      if (content.isBlocked(x, z) || !keep(t)) continue;
      if (danger.some((d) => Math.max(Math.abs(d.x - x), Math.abs(d.z - z)) <= d.r)) continue;
      out.push(t);
    }
  return out;
}

function shuffle<T>(list: T[], rng: () => number): T[] {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

function take(homes: Tile[], n: number): Tile[] {
  return Array.from({ length: n }, (_, i) => homes[i % homes.length]!);
}

// ------------------------------------------------------------------ measuring

interface Summary {
  bots: number;
  connected: number;
  seconds: number;
  bytesPerClientPerSecond: number;
  framesPerClientPerSecond: number;
  moves: number;
  latencyMs: { count: number; p50: number; p95: number; p99: number; max: number; lost: number };
}

function pct(sorted: number[], p: number) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

function summarise(reports: Extract<WorkerMessage, { type: "report" }>[], group?: string): Summary {
  const gs: GroupReport[] = reports.flatMap((r) => Object.entries(r.groups).filter(([g]) => !group || g === group).map(([, v]) => v));
  const seconds = Math.max(...reports.map((r) => r.elapsedMs)) / 1000;
  const sum = (f: (g: GroupReport) => number) => gs.reduce((n, g) => n + f(g), 0);
  const connected = sum((g) => g.connected);
  const lat = gs.flatMap((g) => g.latencies).sort((a, b) => a - b);
  return {
    bots: sum((g) => g.bots),
    connected,
    seconds: Math.round(seconds * 10) / 10,
    bytesPerClientPerSecond: Math.round(sum((g) => g.bytes) / Math.max(1, connected) / seconds),
    framesPerClientPerSecond: Math.round((sum((g) => g.frames) / Math.max(1, connected) / seconds) * 10) / 10,
    moves: sum((g) => g.moves),
    latencyMs: {
      count: lat.length,
      p50: Math.round(pct(lat, 50)),
      p95: Math.round(pct(lat, 95)),
      p99: Math.round(pct(lat, 99)),
      max: Math.round(lat.at(-1) ?? NaN),
      lost: sum((g) => g.lost),
    },
  };
}

interface ServerWindow {
  cpuPercent: number;
  peakRssMb: number;
  peakHeapUsedMb: number;
  loopDelayP50Ms: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  loopUtilisation: number;
  tickMs: TickStats;
  tickCpuMs: TickStats;
}

/** Busy and total CPU jiffies of the whole machine (Linux), to tell how much else was running. */
function hostCpu(): { busy: number; total: number } | undefined {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3]! + (f[4] ?? 0);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

/** Open a window: the probe restarts its window histogram, workers restart their counters. */
async function openWindow(server: ServerHandle, workers: Worker[]) {
  server.proc.kill("SIGUSR2");
  await Promise.all(workers.map((w) => w.ask({ cmd: "report" }, "report", 30_000)));
  return { probesAt: server.probes.length, host: hostCpu() };
}

async function closeWindow(server: ServerHandle, workers: Worker[], opened: { probesAt: number; host: ReturnType<typeof hostCpu> }) {
  const probesAt = opened.probesAt;
  const reports = await Promise.all(workers.map((w) => w.ask({ cmd: "report" }, "report", 60_000)));
  const host = hostCpu();
  // The probe prints once a second: wait for the line that covers the window's end.
  const deadline = Date.now() + 5_000;
  const count = server.probes.length;
  while (server.probes.length === count && Date.now() < deadline) await sleep(100);
  const last = server.probes.at(-1)!;
  const inWindow = server.probes.slice(probesAt);
  const win: ServerWindow = {
    cpuPercent: last.window.cpu,
    peakRssMb: Math.round(Math.max(last.window.peakRss, ...inWindow.map((p) => p.rss)) / 1048576),
    peakHeapUsedMb: Math.round(Math.max(...inWindow.map((p) => p.heap)) / 1048576),
    loopDelayP50Ms: last.window.p50,
    loopDelayP99Ms: last.window.p99,
    loopDelayMaxMs: last.window.max,
    loopUtilisation: last.window.elu,
    tickMs: last.window.tick,
    tickCpuMs: last.window.tickCpu,
  };
  const seconds = Math.max(...reports.map((r) => r.elapsedMs)) / 1000;
  const botsCpuPercent = Math.round(reports.reduce((n, r) => n + r.cpuMs, 0) / seconds / 10);
  // Whole machine, in percent of one core (so it compares with the process numbers).
  const hostBusyPercent =
    host && opened.host ? Math.round(((host.busy - opened.host.busy) / (host.total - opened.host.total)) * cpus().length * 100) : undefined;
  return {
    reports,
    server: win,
    workerLoopDelayP99Ms: Math.round(Math.max(...reports.map((r) => r.loopDelayP99Ms))),
    cpu: { server: win.cpuPercent, bots: botsCpuPercent, host: hostBusyPercent, cores: cpus().length },
  };
}

async function joinBots(server: ServerHandle, workers: Worker[], specs: JoinCommand["bots"], manifests: string) {
  const url = server.url;
  const share = workers.map(() => [] as JoinCommand["bots"]);
  specs.forEach((s, i) => share[i % workers.length]!.push(s));
  const t0 = Date.now();
  const joined = await Promise.all(
    workers.map((w, i) =>
      w.ask(
        {
          cmd: "join",
          url,
          jwtSecret: JWT_SECRET,
          adminCode: ADMIN_CODE,
          bots: share[i]!,
          roam: ROAM,
          moveEveryMs: 1_000,
          chatChance: CHAT_CHANCE,
          concurrency: 8,
          manifests,
        },
        "joined",
        600_000,
      ),
    ),
  );
  const ok = joined.reduce((n, j) => n + j.ok, 0);
  const errors = joined.flatMap((j) => j.errors);
  console.log(`  ${ok}/${specs.length} bots joined in ${((Date.now() - t0) / 1000).toFixed(1)} s${errors.length ? ` (errors: ${errors.join("; ")})` : ""}`);
  if (ok < specs.length) console.log(`  server log (last lines):\n    ${server.tail.slice(-10).join("\n    ")}`);
  if (ok < specs.length * 0.95) throw new Error(`too many bots failed to join: ${errors.join("; ")}`);
  for (const w of workers) w.send({ cmd: "go" });
}

// ------------------------------------------------------------------ main

function machine() {
  const pg = spawnSync("psql", [DEFAULT_PG, "-tAc", "show server_version"], { encoding: "utf8", timeout: 5_000 });
  return {
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
    memoryGb: Math.round(totalmem() / 1073741824),
    kernel: release(),
    node: process.version,
    postgres: pg.status === 0 ? pg.stdout.trim() : undefined,
  };
}

async function main() {
  const world = mkdtempSync(join(tmpdir(), "bench-world-"));
  cpSync(join(ROOT, "world/manifests"), join(world, "manifests"), { recursive: true });
  const manifests = join(world, "manifests");
  const databaseUrl = args.db === "pglite" ? undefined : (args.db ?? ((await reachable("127.0.0.1", 5432)) ? DEFAULT_PG : undefined));
  const content = await loadContent(manifests);
  const rng = seededRng(42);
  const budget = setTimeout(() => {
    console.error("benchmark exceeded its time budget; stopping");
    killAll();
    process.exit(2);
  }, (WARMUP_S + DURATION_S) * 2_000 + 15 * 60_000);
  budget.unref();

  const info = {
    date: new Date().toISOString(),
    machine: machine(),
    storage: databaseUrl ? "postgresql" : "pglite",
    tickMs: Number(args["tick-ms"] ?? 600),
    runtime: args.runtime,
    serverNodeOptions: [...(args.runtime === "tsx" ? [] : PROD_NODE_OPTIONS), ...(args["server-node-options"]?.split(/\s+/).filter(Boolean) ?? [])].join(" ") || undefined,
    saveIntervalSeconds: Number(args["save-interval"]),
    workers: WORKERS,
    roam: ROAM,
    chatChance: CHAT_CHANCE,
  };
  console.log(`world benchmark: ${args.interest ? `interest check, ${NEAR} near + ${BOTS - NEAR} far` : `${BOTS} bots`}, ${WORKERS} worker(s), storage ${info.storage}, tick ${info.tickMs} ms`);

  let server: ServerHandle | undefined;
  const workers: Worker[] = [];
  try {
    if (args.runtime !== "tsx") buildDist();
    server = await startServer(world, databaseUrl);
    for (let i = 0; i < WORKERS; i++) workers.push(new Worker());
    const result: Record<string, unknown> = { ...info };

    const measure = async (label: string, group?: string) => {
      await sleep(WARMUP_S * 1000);
      const at = await openWindow(server!, workers);
      await sleep(DURATION_S * 1000);
      const w = await closeWindow(server!, workers, at);
      const s = summarise(w.reports, group);
      const all = group ? summarise(w.reports) : s;
      console.log(
        `  [${label}] ${s.connected} bots measured (${all.connected} connected), ${s.seconds} s: ` +
          `server cpu ${w.server.cpuPercent}%, peak rss ${w.server.peakRssMb} MB (heap ${w.server.peakHeapUsedMb} MB), loop delay p99 ${w.server.loopDelayP99Ms} ms (max ${w.server.loopDelayMaxMs}), ` +
          `tick p50 ${w.server.tickMs.p50} / p99 ${w.server.tickMs.p99} / max ${w.server.tickMs.max} ms (cpu p50 ${w.server.tickCpuMs.p50} / p99 ${w.server.tickCpuMs.p99}), ` +
          `egress ${s.bytesPerClientPerSecond} B/client/s (${s.framesPerClientPerSecond} frames/s), ` +
          `move→visible p50 ${s.latencyMs.p50} / p95 ${s.latencyMs.p95} / p99 ${s.latencyMs.p99} / max ${s.latencyMs.max} ms over ${s.latencyMs.count} moves (${s.latencyMs.lost} lost); ` +
          `bot loop delay p99 ${w.workerLoopDelayP99Ms} ms; cpu % of one core: server ${w.cpu.server}, bots ${w.cpu.bots}, whole machine ${w.cpu.host} of ${w.cpu.cores * 100}`,
      );
      return { clients: s, allClients: all, server: w.server, workerLoopDelayP99Ms: w.workerLoopDelayP99Ms, cpu: w.cpu };
    };

    if (!args.interest) {
      const homes = take(shuffle(safeHomes(content, () => true), rng), BOTS);
      await joinBots(server, workers, homes.map((home, n) => ({ n, home, group: "all" })), manifests);
      result.run = await measure(`${BOTS} bots`);
    } else {
      const nearTiles: Tile[] = [];
      for (let x = -6; x <= 6; x++) for (let z = -6; z <= 6; z++) if (!content.isBlocked(x, z)) nearTiles.push({ x, z });
      const near = take(shuffle(nearTiles, rng), NEAR);
      const far = take(shuffle(safeHomes(content, (t) => Math.max(Math.abs(t.x), Math.abs(t.z)) >= 60), rng), BOTS - NEAR);
      await joinBots(server, workers, near.map((home, n) => ({ n, home, group: "near" })), manifests);
      const alone = await measure(`${NEAR} near bots alone`, "near");
      await joinBots(server, workers, far.map((home, i) => ({ n: NEAR + i, home, group: "far" })), manifests);
      const crowded = await measure(`${NEAR} near + ${BOTS - NEAR} far`, "near");
      const ratio = Math.round((crowded.clients.bytesPerClientPerSecond / alone.clients.bytesPerClientPerSecond) * 100) / 100;
      console.log(`  near-group egress with far bots / alone = ${ratio}`);
      result.interest = { near: NEAR, far: BOTS - NEAR, alone, crowded, egressRatio: ratio };
    }

    if (args.json) writeFileSync(args.json, JSON.stringify(result, null, 2) + "\n");
    console.log(JSON.stringify(result));
  } finally {
    await Promise.all(workers.map((w) => w.ask({ cmd: "stop" }, "stopped", 30_000).catch(() => w.proc.kill("SIGKILL"))));
    if (server) {
      server.proc.kill("SIGTERM");
      await Promise.race([new Promise((r) => server!.proc.once("exit", r)), sleep(15_000)]);
    }
    killAll();
    rmSync(world, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    killAll();
    process.exit(1);
  },
);
