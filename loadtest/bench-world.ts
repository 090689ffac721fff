/**
 * World benchmark, side by side with a bare Colyseus room (docs/benchmarks.md "Benchmarks"). For every scenario
 * and size it measures two targets one after the other, each in a fresh process: the bare Colyseus
 * 0.18 baseline (`loadtest/baseline/server.ts`: one room, one shared state) and the game server
 * (compiled `dist/src/main.js` as in production, or the sources with `--runtime tsx`), with the same
 * SDK bots spread over worker processes, and prints every figure with its ratio to the baseline.
 *
 *   npm run bench:world -- --crowd --spread --bots 50,200 --burst 500 --db postgres://…/h_bench
 *   npm run bench:world -- --crowd --bots 2000 --db postgres://…   (the integrator's run)
 *   npm run bench:world -- --interest --bots 500 [--near 50]
 *   npm run bench:world -- --crowd --bots 2000 --targets game --sigterm-joined --db postgres://…
 *     (then SIGTERM with every bot joined: exit time, save stage, logins closed by the shutdown save)
 *
 * Scenarios: `--crowd` (every bot joins at the spawn, then runs to a random free tile within
 * `--roam` (8) tiles of the spawn once a second: everyone sees everyone); `--spread` (bots over the
 * whole map, `--hotspot-share` of them in `--hotspots` crowds); `--burst N` (N clients join at once
 * and stay: outcomes counted by kind, `/status` polled throughout; with `--burst-retry` a client
 * told to retry joins again after its `Retry-After`, as a real client does, until `--join-deadline`);
 * `--interest` (a group near the spawn measured alone, then with the rest of the bots far away).
 * Without a scenario: `--crowd`.
 *
 * Storage: `--db postgres://…` (PostgreSQL, as the figures should be taken), else PGlite in the
 * run's temporary world directory (printed; PGlite adds its own memory to the server's RSS).
 * Characters are made up front over REST (`POST /api/character`, not timed) unless
 * `--create-on-join`. All traffic stays on 127.0.0.1; every phase is bounded in time; the servers
 * and workers are killed on any failure.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { cpus, release, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { loadContent, type GameContent } from "../src/content/load.js";
import { freePort } from "../test/helpers/process.js";
import { seededRng, type BotTarget, type TargetKind, type Tile } from "./bot.js";
import type { BotSpec, GroupReport, Role } from "./bot-worker.js";
import { botToken } from "./colyseus/tokens.js";
import { BotWorker, childrenKilledOnExit, hotspots, mergeJoins, pct, prepareCharacters, safeHomes, share, shuffle, type JoinSummary } from "./fleet.js";
import { byLabel, counterDiff, histogramQuantile, ProcSampler, round1, scrape, type Scrape } from "./sampler.js";
import { sigtermJoined, type ShutdownCheck } from "./shutdown-check.js";
import { buildDist, PROD_NODE_OPTIONS, ROOT, startLoadServer, type LoadServer, type Probe, type TickStats } from "./server.js";

const JWT_SECRET = "bench-secret-0123456789-abcdefghijklmnop";
const ADMIN_CODE = "bench-admin-code";

const { values: args } = parseArgs({
  options: {
    crowd: { type: "boolean", default: false },
    spread: { type: "boolean", default: false },
    interest: { type: "boolean", default: false },
    burst: { type: "string" },
    /** One size or several, comma-separated: 50,200. */
    bots: { type: "string", default: "100" },
    targets: { type: "string", default: "baseline,game" },
    duration: { type: "string", default: "30" },
    warmup: { type: "string", default: "10" },
    workers: { type: "string" },
    "join-concurrency": { type: "string", default: "64" },
    "join-timeout": { type: "string", default: "120" },
    "join-deadline": { type: "string", default: "300" },
    "burst-hold": { type: "string", default: "10" },
    "burst-retry": { type: "boolean", default: false },
    probes: { type: "string" },
    decode: { type: "string", default: "observers" },
    "create-on-join": { type: "boolean", default: false },
    "prepare-concurrency": { type: "string", default: "16" },
    "tick-ms": { type: "string" },
    "save-interval": { type: "string", default: "10" },
    db: { type: "string" },
    near: { type: "string", default: "50" },
    roam: { type: "string", default: "8" },
    hotspots: { type: "string", default: "4" },
    "hotspot-share": { type: "string", default: "0.3" },
    "chat-chance": { type: "string", default: "0" },
    json: { type: "string" },
    /** Write a V8 CPU profile of the game server into this directory (on exit). */
    "cpu-prof": { type: "string" },
    "cpu-prof-window": { type: "string" },
    /** Extra Node.js flags for the server processes, e.g. "--max-semi-space-size=4". */
    "server-node-options": { type: "string" },
    /** At the end of each game-server measurement, SIGTERM the server with every bot still joined and check the shutdown save (loadtest/shutdown-check.ts). */
    "sigterm-joined": { type: "boolean", default: false },
    /** How the game server runs: "dist" (compiled, production flags) or "tsx" (from the sources, as `npm start`). */
    runtime: { type: "string", default: "dist" },
  },
});

function int(v: string, min: number, max: number, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) fail(`${name} must be an integer from ${min} to ${max}`);
  return n;
}
function fail(message: string): never {
  console.error(`bench:world: ${message}`);
  process.exit(2);
}

if (args.runtime !== "dist" && args.runtime !== "tsx") fail(`--runtime must be "dist" or "tsx", not ${JSON.stringify(args.runtime)}`);
if (args.decode !== "observers" && args.decode !== "all") fail(`--decode must be "observers" or "all"`);
const SIZES = args.bots!.split(",").map((s) => int(s.trim(), 2, 5_000, "--bots"));
const BURST = args.burst === undefined ? undefined : int(args.burst, 1, 20_000, "--burst");
const TARGETS = args.targets!.split(",").map((s) => s.trim()) as TargetKind[];
for (const t of TARGETS) if (t !== "baseline" && t !== "game") fail(`--targets: unknown target ${t} (baseline, game)`);
if (TARGETS.length !== 2) console.warn("bench:world: only one target: no ratios to the baseline will be printed");
const SCENARIOS: ("crowd" | "spread" | "interest")[] = [];
if (args.crowd) SCENARIOS.push("crowd");
if (args.spread) SCENARIOS.push("spread");
if (args.interest) SCENARIOS.push("interest");
if (SCENARIOS.length === 0 && BURST === undefined) SCENARIOS.push("crowd");
const DURATION_S = int(args.duration!, 5, 3_600, "--duration");
const WARMUP_S = int(args.warmup!, 0, 600, "--warmup");
const JOIN_CONCURRENCY = int(args["join-concurrency"]!, 1, 20_000, "--join-concurrency");
const JOIN_TIMEOUT_MS = int(args["join-timeout"]!, 5, 3_600, "--join-timeout") * 1000;
const PREPARE_CONCURRENCY = int(args["prepare-concurrency"]!, 1, 256, "--prepare-concurrency");
const JOIN_DEADLINE_MS = int(args["join-deadline"]!, 10, 7_200, "--join-deadline") * 1000;
const BURST_HOLD_S = int(args["burst-hold"]!, 0, 600, "--burst-hold");
const ROAM = int(args.roam!, 1, 20, "--roam");
const HOTSPOTS = int(args.hotspots!, 0, 8, "--hotspots");
const HOTSPOT_SHARE = Number(args["hotspot-share"]);
if (!(HOTSPOT_SHARE >= 0 && HOTSPOT_SHARE <= 1)) fail("--hotspot-share must be from 0 to 1");
const CHAT_CHANCE = Number(args["chat-chance"]);
if (!(CHAT_CHANCE >= 0 && CHAT_CHANCE <= 1)) fail("--chat-chance must be from 0 to 1");
const TICK_MS = args["tick-ms"] ? int(args["tick-ms"], 10, 10_000, "--tick-ms") : 600;
const MOVE_EVERY_MS = 1_000;
const EXTRA_NODE = args["server-node-options"]?.split(/\s+/).filter(Boolean) ?? [];
const SERVER_NODE = [...(args.runtime === "tsx" ? [] : PROD_NODE_OPTIONS), ...EXTRA_NODE];
const workersFor = (n: number) => (args.workers ? int(args.workers, 1, 32, "--workers") : Math.min(4, Math.max(2, Math.ceil(n / 400))));
const probesFor = (n: number) => (args.probes ? int(args.probes, 0, 500, "--probes") : Math.max(1, Math.min(25, Math.floor(n / 10))));

// ------------------------------------------------------------------ processes

const { children, killAll } = childrenKilledOnExit();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The storage the game server uses: `--db <url>`, `--db pglite`, or PGlite by default (never a guessed database). */
async function storage(): Promise<{ url?: string; label: string }> {
  if (args.db && args.db !== "pglite") {
    const u = new URL(args.db);
    if (!(await reachable(u.hostname, Number(u.port || 5432)))) fail(`--db: nothing answers on ${u.hostname}:${u.port || 5432}`);
    return { url: args.db, label: `PostgreSQL ${u.hostname}:${u.port || 5432}${u.pathname}` };
  }
  return { label: "PGlite in the run's temporary world directory (its memory counts in the game server's RSS; pass --db postgres://… for PostgreSQL)" };
}

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

interface TargetServer extends LoadServer {
  kind: TargetKind;
  probes: Probe[];
  /** Where the probe times ticks: "WorldRoom.onTick", "global" (the baseline) or "none". */
  tickHook: string;
  metricsUrl?: string;
  /** Error-level lines of the server's output (pino level ≥ 50, uncaught exceptions). */
  errorLines: string[];
  errorCount: number;
  endpoint: string;
}

async function startTarget(kind: TargetKind, world: string, databaseUrl: string | undefined): Promise<TargetServer> {
  const probes: Probe[] = [];
  const info = { tickHook: "none" };
  const errors = { lines: [] as string[], count: 0 };
  const onLine = (line: string) => {
    if (line.startsWith("PROBE ")) {
      probes.push(JSON.parse(line.slice(6)) as Probe);
      return true;
    }
    if (line.startsWith("PROBE-INFO ")) {
      Object.assign(info, JSON.parse(line.slice(11)));
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
  if (kind === "baseline") {
    server = await startLoadServer({
      world,
      nodeArgs: [...SERVER_NODE, "--import", "tsx", "--import", pathToFileURL(join(ROOT, "loadtest/probe.ts")).href, "loadtest/baseline/server.ts"],
      env: { TICK_MS: String(TICK_MS), PROBE_HOOK: "none" },
      onLine,
      tailLines: 100,
      onSpawn: (p) => children.add(p),
    });
  } else {
    const metricsPort = await freePort();
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const prof = args["cpu-prof"] ? ["--cpu-prof", `--cpu-prof-dir=${resolve(args["cpu-prof"])}`] : [];
    const entry =
      args.runtime === "tsx"
        ? ["--import", "tsx", "--import", pathToFileURL(join(ROOT, "loadtest/probe.ts")).href, "src/main.ts"]
        : ["--import", pathToFileURL(join(ROOT, "dist/loadtest/probe.js")).href, "dist/src/main.js"];
    server = await startLoadServer({
      world,
      nodeArgs: [...prof, ...SERVER_NODE, ...entry],
      env: {
        JWT_SECRET,
        ADMIN_CODE,
        SAVE_INTERVAL: args["save-interval"],
        TICK_MS: args["tick-ms"] || undefined,
        DATABASE_URL: databaseUrl,
        METRICS_PORT: String(metricsPort),
        PROBE_PROFILE_DIR: args["cpu-prof-window"] ? resolve(args["cpu-prof-window"]) : undefined,
        // The shutdown's `players saved` line is at info.
        LOG_LEVEL: args["sigterm-joined"] ? "info" : undefined,
      },
      onLine,
      tailLines: 100,
      onSpawn: (p) => children.add(p),
    });
  }
  const s = server as TargetServer;
  return Object.assign(s, {
    kind,
    probes,
    get tickHook() {
      return info.tickHook;
    },
    metricsUrl,
    errorLines: errors.lines,
    get errorCount() {
      return errors.count;
    },
    endpoint: kind === "game" ? `${server.url}/ws` : server.url,
  });
}

async function stopTarget(s: TargetServer) {
  s.proc.kill("SIGTERM");
  await Promise.race([s.exited, sleep(15_000)]);
  if (s.proc.exitCode === null && s.proc.signalCode === null) s.proc.kill("SIGKILL");
}

// ------------------------------------------------------------------ workers

// ------------------------------------------------------------------ placement

/** Bot specs of a scenario: probe pairs first (observer, mover), then wanderers. */
function specs(scenario: "crowd" | "spread", n: number, content: GameContent, rng: () => number): BotSpec[] {
  const spawn = content.spawn;
  const pairs = Math.min(probesFor(n), Math.floor(n / 2));
  const out: BotSpec[] = [];
  let homes: Tile[] = [];
  let hot: Tile[] = [];
  if (scenario === "spread") {
    const all = safeHomes(content, ROAM);
    hot = hotspots(all, HOTSPOTS);
    const inHot = hot.length ? Math.round(n * HOTSPOT_SHARE) : 0;
    const wide = shuffle(all, rng);
    homes = Array.from({ length: n }, (_, i) => (i < inHot ? hot[i % hot.length]! : wide[(i - inHot) % wide.length]!));
    homes = shuffle(homes, rng);
    console.log(
      `  spread: ${inHot} bots in ${hot.length} hotspots (${hot.map((t) => `${t.x},${t.z}`).join("; ")}), ${n - inHot} over ${all.length} homes across the map`,
    );
  }
  const homeOf = (i: number) => (scenario === "crowd" ? spawn : homes[i]!);
  for (let p = 0; p < pairs; p++) {
    // Crowd: every pair at the spawn. Spread: alternately in a hotspot and at a bot's home out in the open.
    const spot = scenario === "crowd" ? spawn : p % 2 === 0 && hot.length ? hot[(p / 2) % hot.length]! : homeOf(p);
    out.push({ n: out.length, home: spot, group: "all", role: "observer", pair: p });
    out.push({ n: out.length, home: spot, group: "all", role: "mover", pair: p });
  }
  while (out.length < n) out.push({ n: out.length, home: homeOf(out.length), group: "all", role: "wander" });
  return out;
}

// ------------------------------------------------------------------ one measurement

interface StatusPoll {
  count: number;
  failed: number;
  p99Ms: number;
  maxMs: number;
}

/** Polls `/status` one request after another (each with a 15 s limit) until stopped. */
function pollStatus(url: string, gapMs: number) {
  const lat: number[] = [];
  let failed = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      const ok = await fetch(`${url}/status`, { signal: AbortSignal.timeout(15_000) }).then(
        async (r) => (await r.arrayBuffer(), r.ok),
        () => false,
      );
      lat.push(performance.now() - t0);
      if (!ok) failed++;
      await sleep(gapMs);
    }
  })();
  return {
    /** Figures since the last take (the poll goes on). */
    take(): StatusPoll {
      const l = lat.splice(0).sort((a, b) => a - b);
      const f = failed;
      failed = 0;
      return { count: l.length, failed: f, p99Ms: Math.round(pct(l, 99)), maxMs: Math.round(l.at(-1) ?? NaN) };
    },
    async stop() {
      running = false;
      await done;
    },
  };
}

interface Measured {
  seconds: number;
  connected: number;
  server: { cpuAvg: number; cpuPeak: number; rssPeakMb: number; loopDelayP99Ms: number; loopDelayMaxMs: number; elu: number };
  tick: {
    p50Ms?: number;
    p99Ms?: number;
    maxMs?: number;
    cpuP99Ms?: number;
    /** Game room: p50/p99 of how late a tick began after its slot, and of its start to its patch broadcast. */
    late?: TickStats;
    toPatch?: TickStats;
    /** Game room: p50/p99 of the patch broadcast's duration. */
    patch?: TickStats;
    count: number;
    source: string;
    metricsP99Ms?: number;
    metricsBucketMs?: number;
  };
  moveVisible: { count: number; p50Ms: number; p95Ms: number; p99Ms: number; maxMs: number; lost: number; unseen: number };
  egressBytesPerClientPerS: number;
  framesPerClientPerS: number;
  /** Players in each probe observer's state at the window's end (crowd: everyone is in view). */
  observersSee: { min: number; avg: number; max: number };
  bots: { cpuAvg: number; cpuPeak: number; rssPeakMb: number; loopDelayP99Ms: number; processes: number };
  host?: { busy: number; of: number };
  status: StatusPoll;
  closed: Record<string, number>;
  serverErrors: { saveFailures?: number; joinRefusals?: Record<string, number> };
}

interface Window {
  t: number;
  probesAt: number;
  metrics?: Scrape;
}

class Run {
  readonly sampler = new ProcSampler(1_000);
  readonly workers: BotWorker[] = [];
  constructor(readonly server: TargetServer) {
    this.sampler.watch("server", server.proc.pid);
  }
  spawnWorkers(n: number) {
    for (let i = 0; i < n; i++) {
      const w = new BotWorker(children);
      this.workers.push(w);
      this.sampler.watch("bots", w.proc.pid);
    }
  }
  target(): BotTarget {
    return { kind: this.server.kind, endpoint: this.server.endpoint, adminCode: ADMIN_CODE };
  }
  async join(list: BotSpec[], concurrency: number, manifests: string, spawn: Tile, retryBusy = false): Promise<JoinSummary> {
    const parts = share(list, this.workers.length);
    const reports = await Promise.all(
      this.workers.map((w, i) =>
        w.ask(
          {
            cmd: "join",
            target: this.target(),
            manifests,
            bots: parts[i]!,
            concurrency: Math.max(1, Math.ceil(concurrency / this.workers.length)),
            joinTimeoutMs: JOIN_TIMEOUT_MS,
            deadline: Date.now() + JOIN_DEADLINE_MS,
            decodeAll: args.decode === "all",
            spawn,
            retryBusy,
          },
          "joined",
          JOIN_DEADLINE_MS + JOIN_TIMEOUT_MS + 120_000,
        ),
      ),
    );
    return mergeJoins(reports, list.length);
  }
  go() {
    for (const w of this.workers) w.send({ cmd: "go", roam: ROAM, moveEveryMs: MOVE_EVERY_MS, chatChance: CHAT_CHANCE });
  }
  async open(): Promise<Window> {
    this.server.proc.kill("SIGUSR2");
    await Promise.all(this.workers.map((w) => w.ask({ cmd: "report" }, "report", 30_000)));
    const metrics = this.server.metricsUrl ? await scrape(this.server.metricsUrl) : undefined;
    this.sampler.sample();
    return { t: performance.now(), probesAt: this.server.probes.length, metrics };
  }
  async close(w: Window, status: StatusPoll, group?: string): Promise<Measured> {
    const reports = await Promise.all(this.workers.map((wk) => wk.ask({ cmd: "report" }, "report", 60_000)));
    const t = performance.now();
    this.sampler.sample();
    const metrics = this.server.metricsUrl ? await scrape(this.server.metricsUrl) : undefined;
    // The probe prints once a second: wait for the line that covers the window's end.
    const deadline = Date.now() + 5_000;
    const count = this.server.probes.length;
    while (this.server.probes.length === count && Date.now() < deadline) await sleep(100);
    const last = this.server.probes.at(-1);
    const gs: GroupReport[] = reports.flatMap((r) =>
      Object.entries(r.groups)
        .filter(([g]) => !group || g === group)
        .map(([, v]) => v),
    );
    const sum = (f: (g: GroupReport) => number) => gs.reduce((n, g) => n + f(g), 0);
    const seconds = Math.max(...reports.map((r) => r.elapsedMs)) / 1000;
    const connected = sum((g) => g.connected);
    const lat = gs.flatMap((g) => g.latencies).sort((a, b) => a - b);
    const closed: Record<string, number> = {};
    for (const g of gs) for (const [k, v] of Object.entries(g.closed)) closed[k] = (closed[k] ?? 0) + v;
    const srv = this.sampler.stats("server", w.t, t);
    const bots = this.sampler.stats("bots", w.t, t);
    const tickExact: TickStats | undefined = last?.window.tick.count ? last.window.tick : undefined;
    const tickMetrics = histogramQuantile(w.metrics, metrics, "realm_tick_duration_seconds", 0.99);
    return {
      seconds: round1(seconds),
      connected,
      server: {
        cpuAvg: srv.cpuAvg,
        cpuPeak: srv.cpuPeak,
        rssPeakMb: srv.rssPeakMb,
        loopDelayP99Ms: last?.window.p99 ?? NaN,
        loopDelayMaxMs: last?.window.max ?? NaN,
        elu: last?.window.elu ?? NaN,
      },
      tick: {
        count: tickExact?.count ?? tickMetrics?.count ?? 0,
        p50Ms: tickExact?.p50,
        p99Ms: tickExact?.p99 ?? (tickMetrics ? round1(tickMetrics.value * 1000) : undefined),
        maxMs: tickExact?.max,
        // CPU time the process used during the tick (leaves out waiting for a core on a busy machine).
        cpuP99Ms: tickExact ? last?.window.tickCpu.p99 : undefined,
        late: last?.window.tickLate?.count ? last.window.tickLate : undefined,
        toPatch: last?.window.tickToPatch?.count ? last.window.tickToPatch : undefined,
        patch: last?.window.tickPatch?.count ? last.window.tickPatch : undefined,
        source: tickExact ? `probe (${this.server.tickHook})` : tickMetrics ? "metrics histogram" : "none",
        metricsP99Ms: tickMetrics ? round1(tickMetrics.value * 1000) : undefined,
        metricsBucketMs: tickMetrics ? tickMetrics.bucket * 1000 : undefined,
      },
      moveVisible: {
        count: lat.length,
        p50Ms: Math.round(pct(lat, 50)),
        p95Ms: Math.round(pct(lat, 95)),
        p99Ms: Math.round(pct(lat, 99)),
        maxMs: Math.round(lat.at(-1) ?? NaN),
        lost: sum((g) => g.lost),
        unseen: sum((g) => g.unseen),
      },
      egressBytesPerClientPerS: Math.round(sum((g) => g.bytes) / Math.max(1, connected) / seconds),
      observersSee: ((seen) => ({
        min: Math.min(...seen),
        avg: Math.round(seen.reduce((a, b) => a + b, 0) / Math.max(1, seen.length)),
        max: Math.max(...seen),
      }))(gs.flatMap((g) => g.seen)),
      framesPerClientPerS: round1(sum((g) => g.frames) / Math.max(1, connected) / seconds),
      bots: { ...bots, loopDelayP99Ms: Math.round(Math.max(...reports.map((r) => r.loopDelayP99Ms))), processes: this.workers.length },
      host: this.sampler.hostStats(w.t, t),
      status,
      closed,
      serverErrors: metrics
        ? {
            saveFailures: counterDiff(w.metrics, metrics, "realm_save_failures_total"),
            joinRefusals: byLabel(w.metrics, metrics, "realm_join_refusals_total", "code"),
          }
        : {},
    };
  }
  async end() {
    await Promise.all(this.workers.map((w) => w.stop()));
    this.sampler.stop();
    await stopTarget(this.server);
  }
}

interface ScenarioResult {
  target: TargetKind;
  scenario: string;
  bots: number;
  workers: number;
  probePairs: number;
  prepare?: { ms: number; failed: number; errors: string[] };
  join?: JoinSummary & { serverCpuAvg: number; serverCpuPeak: number; serverRssPeakMb: number; botsCpuAvg: number; statusMaxMs: number; saveFailures?: number };
  /** Missing when too few bots joined (see `error`). */
  window?: Measured;
  /** Only for --interest: the near group alone. */
  alone?: Measured;
  serverErrorLines?: number;
  serverErrorSamples?: string[];
  /** Why the measurement stopped early (too few joined, a crash…). */
  error?: string;
  /** With --sigterm-joined: the graceful stop with every bot joined. */
  shutdown?: ShutdownCheck;
}

function logJoin(label: string, j: JoinSummary) {
  const bad = Object.entries(j.outcomes).filter(([k]) => k !== "joined");
  console.log(
    `  [${label}] ${j.joined}/${j.attempted} joined in ${j.allSeconds} s (join p50 ${j.p50Ms} / p99 ${j.p99Ms} ms)` +
      (bad.length ? `; not joined: ${bad.map(([k, v]) => `${v} × ${k}`).join(", ")}` : "") +
      (j.placeFailed ? `; ${j.placeFailed} not placed` : "") +
      (j.errors.length ? `\n      ${j.errors.join("\n      ")}` : ""),
  );
}

function logWindow(label: string, m: Measured) {
  console.log(
    `  [${label}] ${m.connected} bots measured over ${m.seconds} s: server cpu ${m.server.cpuAvg}% (peak ${m.server.cpuPeak}), rss ${m.server.rssPeakMb} MB, ` +
      `loop delay p99 ${m.server.loopDelayP99Ms} ms, tick p99 ${m.tick.p99Ms ?? "–"} ms (${m.tick.source}), ` +
      (m.tick.late ? `tick late p50/p99 ${m.tick.late.p50} / ${m.tick.late.p99} ms, ` : "") +
      (m.tick.toPatch ? `tick start → patch p50/p99 ${m.tick.toPatch.p50} / ${m.tick.toPatch.p99} ms, ` : "") +
      (m.tick.patch ? `patch broadcast p50/p99 ${m.tick.patch.p50} / ${m.tick.patch.p99} ms, ` : "") +
      `move→visible p50 ${m.moveVisible.p50Ms} / p99 ${m.moveVisible.p99Ms} ms over ${m.moveVisible.count} (${m.moveVisible.lost} lost), ` +
      `egress ${m.egressBytesPerClientPerS} B/client/s; observers see ${m.observersSee.min}–${m.observersSee.max} players` +
      (m.moveVisible.unseen ? ` (a mover out of its observer's state ${m.moveVisible.unseen} times)` : "") +
      `; bots cpu ${m.bots.cpuAvg}% (peak ${m.bots.cpuPeak}, ${m.bots.processes} procs, loop p99 ${m.bots.loopDelayP99Ms} ms); ` +
      `machine ${m.host?.busy ?? "?"} of ${m.host?.of ?? "?"}; /status max ${m.status.maxMs} ms` +
      (m.bots.loopDelayP99Ms > 100
        ? ` — WARNING: the bots' event loop lagged (p99 ${m.bots.loopDelayP99Ms} ms): they may be the bottleneck (more --workers, or fewer bots per machine)`
        : "") +
      (Object.keys(m.closed).length ? `; closed: ${JSON.stringify(m.closed)}` : ""),
  );
}

let runSeq = 0;
const RUN_ID = Date.now().toString(36);

function tokensFor(kind: TargetKind, n: number): (string | undefined)[] {
  if (kind !== "game") return Array.from({ length: n }, () => undefined);
  const prefix = `bench-${RUN_ID}-${++runSeq}`;
  return Array.from({ length: n }, (_, i) => botToken(JWT_SECRET, i, { prefix }));
}

async function joinPhase(run: Run, list: BotSpec[], concurrency: number, ctx: Ctx, label: string) {
  const tokens = tokensFor(run.server.kind, list.length);
  list.forEach((s, i) => (s.token = tokens[i]));
  let prepare: ScenarioResult["prepare"];
  if (run.server.kind === "game" && !args["create-on-join"]) {
    prepare = await prepareCharacters(run.server.url, tokens as string[], PREPARE_CONCURRENCY);
    console.log(
      `  [${label}] ${list.length - prepare.failed}/${list.length} characters made up front in ${(prepare.ms / 1000).toFixed(1)} s${prepare.errors.length ? ` (${prepare.errors.join("; ")})` : ""}`,
    );
  }
  const status = pollStatus(run.server.url, 500);
  const m0 = run.server.metricsUrl ? await scrape(run.server.metricsUrl) : undefined;
  run.sampler.sample();
  const t0 = performance.now();
  const joined = await run.join(list, concurrency, ctx.manifests, ctx.content.spawn);
  run.sampler.sample();
  const t1 = performance.now();
  const m1 = run.server.metricsUrl ? await scrape(run.server.metricsUrl) : undefined;
  await status.stop();
  const st = status.take();
  const srv = run.sampler.stats("server", t0, t1);
  const bots = run.sampler.stats("bots", t0, t1);
  logJoin(label, joined);
  return {
    prepare,
    join: {
      ...joined,
      serverCpuAvg: srv.cpuAvg,
      serverCpuPeak: srv.cpuPeak,
      serverRssPeakMb: srv.rssPeakMb,
      botsCpuAvg: bots.cpuAvg,
      statusMaxMs: st.maxMs,
      saveFailures: m1 ? counterDiff(m0, m1, "realm_save_failures_total") : undefined,
    },
  };
}

interface Ctx {
  world: string;
  manifests: string;
  content: GameContent;
  databaseUrl?: string;
}

async function measure(run: Run, label: string, group?: string): Promise<Measured> {
  run.go();
  await sleep(WARMUP_S * 1000);
  const status = pollStatus(run.server.url, 1_000);
  const w = await run.open();
  await sleep(DURATION_S * 1000);
  const st = status.take();
  const m = await run.close(w, st, group);
  await status.stop();
  logWindow(label, m);
  return m;
}

async function runScenario(kind: TargetKind, scenario: "crowd" | "spread", n: number, ctx: Ctx): Promise<ScenarioResult> {
  const label = `${kind} ${scenario} ${n}`;
  const since = new Date();
  const server = await startTarget(kind, ctx.world, ctx.databaseUrl);
  const run = new Run(server);
  try {
    const list = specs(scenario, n, ctx.content, seededRng(42));
    run.spawnWorkers(workersFor(n));
    const { prepare, join } = await joinPhase(run, list, JOIN_CONCURRENCY, ctx, label);
    const base = { target: kind, scenario, bots: n, workers: run.workers.length, probePairs: list.filter((s) => s.role === "observer").length, prepare, join };
    if (join.joined < n * 0.95) {
      console.log(`  [${label}] too many bots failed to join (${join.joined}/${n}): not measured; server log:\n    ${server.tail.slice(-10).join("\n    ")}`);
      return { ...base, error: `only ${join.joined}/${n} joined`, serverErrorLines: server.errorCount, serverErrorSamples: server.errorLines };
    }
    const window = await measure(run, label);
    let shutdown: ShutdownCheck | undefined;
    if (args["sigterm-joined"] && kind === "game") {
      shutdown = await sigtermJoined(server, ctx.databaseUrl, since);
      console.log(
        `  [${label}] SIGTERM with ${join.joined} joined: exit ${shutdown.exitCode} after ${shutdown.exitMs} ms; save stage ${shutdown.saved ? `${shutdown.saved.players} players in ${shutdown.saved.ms} ms` : "not finished"}` +
          `${shutdown.late ? " (LATE: did not finish in time)" : ""}; logins closed by the shutdown save ${shutdown.closedAtShutdown ?? "?"}, left open ${shutdown.stillOpen ?? "?"}`,
      );
      if (!shutdown.saved) console.log(`    server:\n    ${shutdown.lastLines.join("\n    ")}`);
    }
    return {
      shutdown,
      target: kind,
      scenario,
      bots: n,
      workers: run.workers.length,
      probePairs: list.filter((s) => s.role === "observer").length,
      prepare,
      join,
      window,
      serverErrorLines: server.errorCount,
      serverErrorSamples: server.errorLines,
    };
  } finally {
    await run.end();
  }
}

async function runInterest(kind: TargetKind, n: number, ctx: Ctx): Promise<ScenarioResult> {
  const label = `${kind} interest ${n}`;
  const nearCount = Math.min(n - 1, int(args.near!, 2, 5_000, "--near"));
  const server = await startTarget(kind, ctx.world, ctx.databaseUrl);
  const run = new Run(server);
  try {
    const rng = seededRng(42);
    const spawn = ctx.content.spawn;
    const pairs = Math.min(probesFor(nearCount), Math.floor(nearCount / 2));
    const near: BotSpec[] = [];
    for (let p = 0; p < pairs; p++) {
      near.push({ n: near.length, home: spawn, group: "near", role: "observer", pair: p });
      near.push({ n: near.length, home: spawn, group: "near", role: "mover", pair: p });
    }
    while (near.length < nearCount) near.push({ n: near.length, home: spawn, group: "near", role: "wander" });
    const farHomes = shuffle(
      safeHomes(ctx.content, ROAM, (t) => Math.max(Math.abs(t.x - spawn.x), Math.abs(t.z - spawn.z)) >= 60),
      rng,
    );
    const far: BotSpec[] = Array.from({ length: n - nearCount }, (_, i) => ({
      n: nearCount + i,
      home: farHomes[i % farHomes.length]!,
      group: "far",
      role: "wander" as Role,
    }));
    run.spawnWorkers(workersFor(n));
    const a = await joinPhase(run, near, JOIN_CONCURRENCY, ctx, `${label}: near`);
    const alone = await measure(run, `${label}: ${nearCount} near alone`, "near");
    const b = await joinPhase(run, far, JOIN_CONCURRENCY, ctx, `${label}: far`);
    const crowded = await measure(run, `${label}: ${nearCount} near + ${n - nearCount} far`, "near");
    console.log(`  [${label}] near-group egress with far bots / alone = ${round2(crowded.egressBytesPerClientPerS / alone.egressBytesPerClientPerS)}`);
    return {
      target: kind,
      scenario: "interest",
      bots: n,
      workers: run.workers.length,
      probePairs: pairs,
      prepare: a.prepare,
      join: b.join,
      window: crowded,
      alone,
      serverErrorLines: server.errorCount,
      serverErrorSamples: server.errorLines,
    };
  } finally {
    await run.end();
  }
}

const round2 = (n: number) => Math.round(n * 100) / 100;

interface BurstResult {
  target: TargetKind;
  clients: number;
  workers: number;
  prepare?: { ms: number; failed: number; errors: string[] };
  join: JoinSummary;
  /** Joined clients that were closed during the hold after the burst, by close code. */
  droppedAfterJoin: Record<string, number>;
  status: StatusPoll;
  server: { cpuAvg: number; cpuPeak: number; rssPeakMb: number; loopDelayP99Ms: number; loopDelayMaxMs: number };
  bots: { cpuAvg: number; cpuPeak: number; rssPeakMb: number };
  serverJoinRefusals?: Record<string, number>;
  saveFailures?: number;
  serverErrorLines: number;
  serverErrorSamples: string[];
}

async function runBurst(kind: TargetKind, n: number, ctx: Ctx): Promise<BurstResult> {
  const label = `${kind} burst ${n}`;
  const server = await startTarget(kind, ctx.world, ctx.databaseUrl);
  const run = new Run(server);
  try {
    const list: BotSpec[] = Array.from({ length: n }, (_, i) => ({ n: i, home: ctx.content.spawn, group: "burst", role: "idle" as Role }));
    run.spawnWorkers(args.workers ? workersFor(n) : 4);
    const tokens = tokensFor(kind, n);
    list.forEach((s, i) => (s.token = tokens[i]));
    let prepare: BurstResult["prepare"];
    if (kind === "game" && !args["create-on-join"]) {
      prepare = await prepareCharacters(server.url, tokens as string[], PREPARE_CONCURRENCY);
      console.log(`  [${label}] ${n - prepare.failed}/${n} characters made up front in ${(prepare.ms / 1000).toFixed(1)} s`);
    }
    await sleep(2_000);
    const status = pollStatus(server.url, 250);
    const w = await run.open();
    const joined = await run.join(list, n, ctx.manifests, ctx.content.spawn, args["burst-retry"]);
    logJoin(label, joined);
    if (joined.retries) console.log(`  [${label}] ${joined.retries} busy refusals retried; ${joined.joinedAfterRetry} bots joined after a retry`);
    await sleep(BURST_HOLD_S * 1000);
    const st = status.take();
    const m = await run.close(w, st);
    await status.stop();
    const result: BurstResult = {
      target: kind,
      clients: n,
      workers: run.workers.length,
      prepare,
      join: joined,
      droppedAfterJoin: m.closed,
      status: st,
      server: {
        cpuAvg: m.server.cpuAvg,
        cpuPeak: m.server.cpuPeak,
        rssPeakMb: m.server.rssPeakMb,
        loopDelayP99Ms: m.server.loopDelayP99Ms,
        loopDelayMaxMs: m.server.loopDelayMaxMs,
      },
      bots: { cpuAvg: m.bots.cpuAvg, cpuPeak: m.bots.cpuPeak, rssPeakMb: m.bots.rssPeakMb },
      serverJoinRefusals: m.serverErrors.joinRefusals,
      saveFailures: m.serverErrors.saveFailures,
      serverErrorLines: server.errorCount,
      serverErrorSamples: server.errorLines,
    };
    console.log(
      `  [${label}] /status p99 ${st.p99Ms} / max ${st.maxMs} ms over ${st.count} polls (${st.failed} failed); server cpu ${m.server.cpuAvg}% (peak ${m.server.cpuPeak}), rss ${m.server.rssPeakMb} MB, loop delay p99 ${m.server.loopDelayP99Ms} ms (max ${m.server.loopDelayMaxMs}); ` +
        `bots cpu ${m.bots.cpuAvg}%` +
        (Object.keys(m.closed).length ? `; dropped after joining: ${JSON.stringify(m.closed)}` : ""),
    );
    return result;
  } finally {
    await run.end();
  }
}

// ------------------------------------------------------------------ tables

type Row = Record<string, string>;

function table(rows: Row[]): string {
  if (rows.length === 0) return "";
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i < 3 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join(" | ")} |`;
  return [
    line(cols),
    `|${width.map((w, i) => (i < 3 ? `-${"-".repeat(w)}-` : `-${"-".repeat(w)}:`)).join("|")}|`,
    ...rows.map((r) => line(cols.map((c) => r[c] ?? ""))),
  ].join("\n");
}

const f = (n: number | undefined, unit = "") => (n === undefined || Number.isNaN(n) ? "–" : `${n}${unit}`);
const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b) || b === 0 ? "–" : `×${a / b >= 10 ? Math.round(a / b) : round2(a / b)}`;

function failures(r: ScenarioResult): string {
  const parts: string[] = [];
  if (r.error) parts.push(`NOT MEASURED: ${r.error}`);
  for (const [k, v] of Object.entries(r.join?.outcomes ?? {})) if (k !== "joined") parts.push(`${v} ${k}`);
  if (r.join?.placeFailed) parts.push(`${r.join.placeFailed} not placed`);
  for (const [k, v] of Object.entries(r.window?.closed ?? {})) parts.push(`${v} closed ${k}`);
  if (r.window?.moveVisible.lost) parts.push(`${r.window.moveVisible.lost} moves lost`);
  if (r.window?.moveVisible.unseen) parts.push(`mover unseen ${r.window.moveVisible.unseen}×`);
  const saves = (r.join?.saveFailures ?? 0) + (r.window?.serverErrors.saveFailures ?? 0);
  if (saves) parts.push(`${saves} save failures`);
  if (r.serverErrorLines) parts.push(`${r.serverErrorLines} error lines`);
  return parts.join(", ") || "none";
}

/** The figures of one scenario row (undefined where not measured). */
function figures(r: ScenarioResult) {
  const m = r.window;
  return {
    cpuAvg: m?.server.cpuAvg,
    cpuPeak: m?.server.cpuPeak,
    rss: r.join || m ? Math.max(m?.server.rssPeakMb ?? 0, r.join?.serverRssPeakMb ?? 0) : undefined,
    loop: m?.server.loopDelayP99Ms,
    tick: m?.tick.p99Ms,
    mvP50: m?.moveVisible.p50Ms,
    mvP99: m?.moveVisible.p99Ms,
    egress: m?.egressBytesPerClientPerS,
    joinAll: r.join?.allSeconds,
    bots: m?.bots.cpuAvg,
  };
}

function scenarioRows(results: ScenarioResult[]): Row[] {
  const rows: Row[] = [];
  const keyOf = (r: ScenarioResult) => `${r.scenario}/${r.bots}`;
  for (const r of results) {
    const a = figures(r);
    rows.push({
      scenario: r.scenario,
      bots: String(r.bots),
      target: r.target,
      "CPU avg/peak %": `${f(a.cpuAvg)} / ${f(a.cpuPeak)}`,
      "RSS MB": f(a.rss),
      "loop p99 ms": f(a.loop),
      "tick p99 ms": f(a.tick),
      "move→visible p50/p99 ms": `${f(a.mvP50)} / ${f(a.mvP99)}`,
      "egress B/s/client": f(a.egress),
      "join all s": f(a.joinAll),
      "bots CPU %": f(a.bots),
      failures: failures(r),
    });
    const base = results.find((b) => b.target === "baseline" && keyOf(b) === keyOf(r));
    if (r.target === "game" && base) {
      const b = figures(base);
      rows.push({
        scenario: "",
        bots: "",
        target: "game/baseline",
        "CPU avg/peak %": `${ratio(a.cpuAvg, b.cpuAvg)} / ${ratio(a.cpuPeak, b.cpuPeak)}`,
        "RSS MB": ratio(a.rss, b.rss),
        "loop p99 ms": ratio(a.loop, b.loop),
        "tick p99 ms": ratio(a.tick, b.tick),
        "move→visible p50/p99 ms": `${ratio(a.mvP50, b.mvP50)} / ${ratio(a.mvP99, b.mvP99)}`,
        "egress B/s/client": ratio(a.egress, b.egress),
        "join all s": ratio(a.joinAll, b.joinAll),
        "bots CPU %": ratio(a.bots, b.bots),
        failures: "",
      });
    }
  }
  return rows;
}

type BurstEntry = BurstResult | { target: TargetKind; clients: number; error: string };

function burstRows(results: BurstEntry[]): Row[] {
  const rows: Row[] = [];
  for (const r of results) {
    if ("error" in r) {
      rows.push({
        clients: String(r.clients),
        target: r.target,
        joined: "–",
        "503 busy": "–",
        "mm refused": "–",
        "other failures": `NOT MEASURED: ${r.error}`,
      });
      continue;
    }
    const other = Object.entries(r.join.outcomes).filter(([k]) => !["joined", "503"].includes(k) && !k.startsWith("http-4") && !k.startsWith("mm-"));
    const refused = Object.entries(r.join.outcomes).filter(([k]) => k.startsWith("http-4") || k.startsWith("mm-"));
    const dropped = Object.entries(r.droppedAfterJoin);
    rows.push({
      clients: String(r.clients),
      target: r.target,
      joined: String(r.join.joined),
      "503 busy": String(r.join.outcomes["503"] ?? 0),
      "mm refused": refused.map(([k, v]) => `${v} ${k}`).join(", ") || "0",
      "other failures":
        [
          ...other.map(([k, v]) => `${v} ${k}`),
          ...dropped.map(([k, v]) => `${v} dropped ${k}`),
          ...(r.serverErrorLines ? [`${r.serverErrorLines} error lines`] : []),
        ].join(", ") || "0",
      ...(args["burst-retry"] ? { "retried (joined after)": `${r.join.retries} (${r.join.joinedAfterRetry})` } : {}),
      "join all s": f(r.join.allSeconds),
      "join p99 ms": f(r.join.p99Ms),
      "/status max ms": f(r.status.maxMs),
      "CPU avg/peak %": `${f(r.server.cpuAvg)} / ${f(r.server.cpuPeak)}`,
      "RSS MB": f(r.server.rssPeakMb),
      "loop p99 ms": f(r.server.loopDelayP99Ms),
      "bots CPU %": f(r.bots.cpuAvg),
    });
  }
  return rows;
}

// ------------------------------------------------------------------ main

function machine() {
  return {
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
    memoryGb: Math.round(totalmem() / 1073741824),
    kernel: release(),
    node: process.version,
    postgres:
      args.db && args.db !== "pglite"
        ? spawnSync("psql", [args.db, "-tAc", "show server_version"], { encoding: "utf8", timeout: 5_000 }).stdout?.trim() || undefined
        : undefined,
  };
}

async function main() {
  const store = await storage();
  const world = mkdtempSync(join(tmpdir(), "bench-world-"));
  cpSync(join(ROOT, "world/manifests"), join(world, "manifests"), { recursive: true });
  const manifests = join(world, "manifests");
  const content = await loadContent(manifests);
  const ctx: Ctx = { world, manifests, content, databaseUrl: store.url };
  const budget = setTimeout(
    () => {
      console.error("benchmark exceeded its time budget; stopping");
      killAll();
      process.exit(2);
    },
    // Per measurement: start-up and characters, the join phase, warm-up and window (twice for --interest), the stop.
    (SCENARIOS.length * SIZES.length * TARGETS.length * (300 + JOIN_DEADLINE_MS / 1000 + 2 * (WARMUP_S + DURATION_S + JOIN_DEADLINE_MS / 1000)) +
      (BURST ? TARGETS.length * (300 + BURST / 20 + JOIN_TIMEOUT_MS / 1000 + BURST_HOLD_S) : 0) +
      600) *
      1000,
  );
  budget.unref();

  const info = {
    date: new Date().toISOString(),
    machine: machine(),
    storage: store.label,
    tickMs: TICK_MS,
    runtime: args.runtime,
    serverNodeOptions: SERVER_NODE.join(" ") || undefined,
    saveIntervalSeconds: Number(args["save-interval"]),
    roam: ROAM,
    chatChance: CHAT_CHANCE,
    decode: args.decode,
    joinConcurrency: JOIN_CONCURRENCY,
    warmupSeconds: WARMUP_S,
    durationSeconds: DURATION_S,
    charactersMadeUpFront: !args["create-on-join"],
  };
  console.log(
    `world benchmark: ${[...SCENARIOS.map((s) => `${s} ${SIZES.join(",")}`), ...(BURST ? [`burst ${BURST}`] : [])].join("; ")}; targets ${TARGETS.join(" then ")}; tick ${TICK_MS} ms\n` +
      `  storage (game): ${store.label}`,
  );

  const results: ScenarioResult[] = [];
  const bursts: BurstEntry[] = [];
  const out: Record<string, unknown> = { ...info, scenarios: results, bursts };
  const jsonPath = args.json ?? join(ROOT, "loadtest/results", `bench-world-${info.date.replace(/[:.]/g, "-")}.json`);
  const save = () => {
    mkdirSync(resolve(jsonPath, ".."), { recursive: true });
    writeFileSync(jsonPath, JSON.stringify(out, null, 2) + "\n");
  };
  try {
    if (TARGETS.includes("game") && args.runtime !== "tsx") buildDist();
    for (const scenario of SCENARIOS)
      for (const n of SIZES)
        for (const kind of TARGETS) {
          try {
            results.push(scenario === "interest" ? await runInterest(kind, n, ctx) : await runScenario(kind, scenario, n, ctx));
          } catch (e) {
            console.error(`  [${kind} ${scenario} ${n}] failed: ${(e as Error).stack ?? e}`);
            results.push({ target: kind, scenario, bots: n, workers: 0, probePairs: 0, error: String((e as Error).message ?? e).slice(0, 300) });
          }
          save();
        }
    if (BURST)
      for (const kind of TARGETS) {
        try {
          bursts.push(await runBurst(kind, BURST, ctx));
        } catch (e) {
          console.error(`  [${kind} burst ${BURST}] failed: ${(e as Error).stack ?? e}`);
          bursts.push({ target: kind, clients: BURST, error: String((e as Error).message ?? e).slice(0, 300) });
        }
        save();
      }
  } finally {
    rmSync(world, { recursive: true, force: true });
  }
  if (results.length) console.log(`\n${table(scenarioRows(results))}`);
  if (bursts.length) console.log(`\n${table(burstRows(bursts))}`);
  console.log(`\nresults: ${jsonPath}`);
}

main().then(
  () => process.exit(0),
  (e) => {
    console.error(e);
    killAll();
    process.exit(1);
  },
);
