/**
 * Two processes against one (docs/benchmarks.md#two-processes-one-world-each-npm-run-benchscale): how many clients
 * two server processes on one Redis, one world each, carry at the move → visible p99 one process
 * reaches, as a ratio to one process measured in the same run on the same machine with the same bots.
 *
 *   npm run bench:scale -- --db postgres://postgres@127.0.0.1:5432/h_scale
 *   npm run bench:scale -- --db postgres://… --scenario crowd --step 250 --p99 700
 *   npm run bench:scale -- --db postgres://… --reference 1000      (the p99 of one process at 1,000 is the bar)
 *
 * 1. One process (`WORLDS=1`, no Redis): bots are added `--step` at a time (a ladder: 250, 500, …)
 *    into world 1 and after each step the window is measured; the ladder stops at the first size
 *    that does not pass. A size passes when ≥ 99 % of its bots joined and the move → visible p99
 *    (a probe move not seen within 5 s counts as infinitely late) is at most the bar: `--p99`
 *    (default one tick + 100 ms, 700 ms at TICK_MS 600). With `--reference N1` one process is
 *    measured at N1 only and the bar is the p99 it reached there.
 * 2. Two processes on Redis (`REDIS_URL`, database `--redis`, emptied before and after): A hosts
 *    world 1, B world 2, each on its own port with its own PUBLIC_WS_URL. Bots are split half per
 *    world; each joins with `{ world: w }` through its own world's process (`--via own`), or through
 *    the other process (`--via other`: every seat is a cross-process seat, the SDK then connects to
 *    the owner's public address). The ladder of totals starts at what one process carried and grows
 *    by `--step` until a total does not pass the same bar.
 * 3. The capacity of each is the largest size that passed; the ratio two / one is printed, and one
 *    interpolated linearly between the last size that passed and the first that did not.
 *
 * Each phase keeps its processes and bots: a ladder step adds bots to those already there (made up
 * front over REST, joined, sent home with admin `/tp` in spread), restarts every bot's walk, waits
 * `--warmup` s and measures `--duration` s. Probe pairs (`--probes`, split over the worlds) join
 * with the first step. The compiled server (`dist/`, production Node flags) runs on PostgreSQL
 * (`--db`, required: a cluster shares one database). All traffic stays on 127.0.0.1; every phase is
 * bounded in time and the whole run by `--budget` seconds; servers and bot processes are killed on
 * any exit.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { cpus, loadavg, release, setPriority, tmpdir, totalmem } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { Redis } from "ioredis";
import { loadContent, type GameContent } from "../src/content/load.js";
import { freePort } from "../test/helpers/process.js";
import { flushDb, redisAnswers } from "../test/helpers/redis.js";
import { seededRng } from "./bot.js";
import type { BotSpec, GroupReport, WorkerMessage } from "./bot-worker.js";
import { botToken } from "./colyseus/tokens.js";
import { ladderCapacity, type Capacity } from "./capacity.js";
import { BotWorker, childrenKilledOnExit, mergeJoins, pct, placement, prepareCharacters, share, type JoinSummary, type Placement } from "./fleet.js";
import { byLabel, counterDiff, ProcSampler, round1, scrape, type Scrape } from "./sampler.js";
import { buildDist, PROD_NODE_OPTIONS, ROOT, startLoadServer, type LoadServer, type Probe } from "./server.js";

const JWT_SECRET = "bench-secret-0123456789-abcdefghijklmnop";
const ADMIN_CODE = "bench-admin-code";

const { values: args } = parseArgs({
  options: {
    scenario: { type: "string", default: "spread" },
    step: { type: "string", default: "250" },
    /** First size of the one-process ladder (default: one step). */
    start: { type: "string" },
    "max-one": { type: "string", default: "3000" },
    "max-two": { type: "string", default: "6000" },
    /** First total of the two-process ladder (default: what one process carried). */
    "two-start": { type: "string" },
    /** Step of the two-process ladder (default: --step). */
    "two-step": { type: "string" },
    /** Share of --budget the one-process ladder may use (the rest is the two processes'). */
    "one-share": { type: "string", default: "0.4" },
    p99: { type: "string" },
    reference: { type: "string" },
    via: { type: "string", default: "own" },
    db: { type: "string" },
    redis: { type: "string", default: "redis://127.0.0.1:6379/10" },
    duration: { type: "string", default: "20" },
    warmup: { type: "string", default: "5" },
    probes: { type: "string", default: "24" },
    workers: { type: "string", default: "3" },
    "join-concurrency": { type: "string", default: "64" },
    "join-timeout": { type: "string", default: "60" },
    "prepare-concurrency": { type: "string", default: "16" },
    "tick-ms": { type: "string", default: "600" },
    /** The servers' TICK_PHASE: `auto` (each world on its phase of the wall-clock tick grid) or `off` (Colyseus's interval). */
    "tick-phase": { type: "string", default: "auto" },
    "save-interval": { type: "string", default: "10" },
    roam: { type: "string", default: "8" },
    hotspots: { type: "string", default: "4" },
    "hotspot-share": { type: "string", default: "0.3" },
    /** Seconds the whole run may take; a ladder stops early (saying so) when the next step would not fit. */
    budget: { type: "string", default: "720" },
    /** Diagnostic: the two processes without Redis (no shared matchmaking; each bot joins its own world's process). */
    "no-redis": { type: "boolean", default: false },
    /** Niceness of the bot processes (0–19): a higher one lets the servers have the cores first when both want them. */
    "bots-nice": { type: "string", default: "0" },
    /** Skip `tsc` (dist/ already built from this checkout). */
    "no-build": { type: "boolean", default: false },
    json: { type: "string" },
  },
});

function fail(message: string): never {
  console.error(`bench:scale: ${message}`);
  process.exit(2);
}
function int(v: string | undefined, min: number, max: number, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) fail(`${name} must be an integer from ${min} to ${max}`);
  return n;
}

if (args.scenario !== "spread" && args.scenario !== "crowd") fail(`--scenario must be "spread" or "crowd"`);
if (args.via !== "own" && args.via !== "other") fail(`--via must be "own" or "other"`);
if (args["no-redis"] && args.via === "other") fail("--via other needs Redis (a seat in another process's room): drop --no-redis");
const BOTS_NICE = int(args["bots-nice"], 0, 19, "--bots-nice");
const TWO_REDIS = args["no-redis"] ? undefined : args.redis;
if (!args.db) fail("--db postgres://… is required (the processes of a cluster share one PostgreSQL database)");
if (!/^redis:\/\/127\.0\.0\.1(:\d+)?\/\d+$/.test(args.redis!))
  fail("--redis must be redis://127.0.0.1[:port]/<db> (a logical database of your own: it is emptied)");
const SCENARIO = args.scenario as "spread" | "crowd";
const STEP = int(args.step, 10, 5_000, "--step");
const START = args.start ? int(args.start, 2, 10_000, "--start") : STEP;
const MAX_ONE = int(args["max-one"], 2, 10_000, "--max-one");
const MAX_TWO = int(args["max-two"], 4, 20_000, "--max-two");
const TWO_STEP = args["two-step"] ? int(args["two-step"], 10, 10_000, "--two-step") : STEP;
const ONE_SHARE = Number(args["one-share"]);
if (!(ONE_SHARE > 0 && ONE_SHARE < 1)) fail("--one-share must be between 0 and 1");
const REFERENCE = args.reference ? int(args.reference, 2, 10_000, "--reference") : undefined;
const TICK_MS = int(args["tick-ms"], 10, 10_000, "--tick-ms");
if (args["tick-phase"] !== "auto" && args["tick-phase"] !== "off") fail(`--tick-phase must be "auto" or "off"`);
const TICK_PHASE = args["tick-phase"];
const BAR = args.p99 ? int(args.p99, 1, 600_000, "--p99") : TICK_MS + 100;
const DURATION_S = int(args.duration, 5, 600, "--duration");
const WARMUP_S = int(args.warmup, 0, 300, "--warmup");
const PROBES = int(args.probes, 2, 200, "--probes");
const WORKERS = int(args.workers, 1, 16, "--workers");
const JOIN_CONCURRENCY = int(args["join-concurrency"], 1, 10_000, "--join-concurrency");
const JOIN_TIMEOUT_MS = int(args["join-timeout"], 5, 600, "--join-timeout") * 1000;
const PREPARE_CONCURRENCY = int(args["prepare-concurrency"], 1, 256, "--prepare-concurrency");
const ROAM = int(args.roam, 1, 20, "--roam");
const HOTSPOTS = int(args.hotspots, 0, 8, "--hotspots");
const HOTSPOT_SHARE = Number(args["hotspot-share"]);
if (!(HOTSPOT_SHARE >= 0 && HOTSPOT_SHARE <= 1)) fail("--hotspot-share must be from 0 to 1");
const BUDGET_MS = int(args.budget, 60, 7_200, "--budget") * 1000;
const MOVE_EVERY_MS = 1_000;
/** A size passes only when this share of its bots joined. */
const JOINED_SHARE = 0.99;

// ------------------------------------------------------------------ processes

const { children, killAll } = childrenKilledOnExit();

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const startedAt = Date.now();
const timeLeft = () => BUDGET_MS - (Date.now() - startedAt);

interface Proc {
  /** "one", "A" or "B". */
  name: string;
  world: number;
  server: LoadServer;
  probes: Probe[];
  metricsUrl: string;
  errorLines: string[];
  errorCount: number;
}

async function startProc(name: string, world: number, ctx: Ctx, redisUrl?: string): Promise<Proc> {
  const port = await freePort();
  const metricsPort = await freePort();
  const p = { name, world, probes: [] as Probe[], metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`, errorLines: [] as string[], errorCount: 0 };
  const server = await startLoadServer({
    world: ctx.world,
    port,
    nodeArgs: [...PROD_NODE_OPTIONS, "--import", pathToFileURL(join(ROOT, "dist/loadtest/probe.js")).href, "dist/src/main.js"],
    env: {
      JWT_SECRET,
      ADMIN_CODE,
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
      if (line.startsWith("PROBE-INFO ")) return true;
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

async function stopProc(p: Proc) {
  p.server.proc.kill("SIGTERM");
  await Promise.race([p.server.exited, sleep(20_000)]);
  if (p.server.proc.exitCode === null && p.server.proc.signalCode === null) p.server.proc.kill("SIGKILL");
}

/** Pid of the Redis server (INFO server), to sample its CPU. */
async function redisServerPid(url: string): Promise<number | undefined> {
  const r = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  r.on("error", () => undefined);
  try {
    await r.connect();
    const pid = Number(/process_id:(\d+)/.exec(await r.info("server"))?.[1]);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    r.disconnect();
  }
}

/** Pids of the PostgreSQL backends connected to the benchmark's database (the servers' pools), to sample their CPU. */
function postgresBackends(): number[] {
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

// ------------------------------------------------------------------ a phase: processes, bots, ladder steps

interface Ctx {
  world: string;
  manifests: string;
  content: GameContent;
}

interface WorldSlot {
  world: number;
  /** The process hosting the world. */
  host: Proc;
  /** The process the world's bots make characters and matchmake through. */
  via: Proc;
  place: Placement;
  bots: number;
  pairs: number;
}

interface ProcFigures {
  name: string;
  world: number;
  cpuAvg: number;
  cpuPeak: number;
  rssPeakMb: number;
  loopP99Ms: number;
  tickP99Ms?: number;
  tickCpuP99Ms?: number;
  saveFailures: number;
  joinRefusals: Record<string, number>;
  errorLines: number;
}

interface WorldFigures {
  world: number;
  bots: number;
  connected: number;
  samples: number;
  lost: number;
  unseen: number;
  p50Ms: number;
  p99Ms: number;
  /** Players each observer's state held at the window's end. */
  observersSee: { min: number; max: number };
  /** Players `GET /api/v1/worlds` of the first process lists in this world after the window (every process's rooms once Redis shares them). */
  listed?: number;
}

interface Step {
  phase: "one" | "two";
  total: number;
  join: JoinSummary;
  prepareFailed: number;
  procs: ProcFigures[];
  worlds: WorldFigures[];
  cpuTotal: number;
  rssTotalMb: number;
  moveVisible: { samples: number; lost: number; p50Ms: number; p99Ms: number };
  bots: { cpuAvg: number; rssPeakMb: number; loopP99Ms: number };
  /** PostgreSQL backends connected to the benchmark's database, % of one core. */
  postgresCpu: number;
  machineBusy?: { busy: number; of: number };
  /** The Redis server (the whole server: other users of it count too), % of one core; two processes on Redis only. */
  redisCpu?: number;
  /** Busy CPU of the machine not used by the servers, the bots, the database's backends or Redis (other work), % of one core. */
  otherCpu?: number;
  loadAvg: number[];
  closed: Record<string, number>;
  pass: boolean;
  /** Why it did not pass. */
  why?: string;
}

const RUN_ID = Date.now().toString(36);

class Phase {
  readonly sampler = new ProcSampler(1_000);
  readonly workers: BotWorker[] = [];
  readonly slots: WorldSlot[];
  private n = 0;

  constructor(
    readonly name: "one" | "two",
    readonly procs: Proc[],
    private readonly ctx: Ctx,
    via: "own" | "other",
    /** The processes' Redis, if they share one. */
    readonly redis?: string,
  ) {
    for (const p of procs) this.sampler.watch(p.name, p.server.proc.pid);
    const max = name === "one" ? MAX_ONE : Math.ceil(MAX_TWO / procs.length);
    this.slots = procs.map((p, i) => ({
      world: p.world,
      host: p,
      via: via === "other" && procs.length > 1 ? procs[(i + 1) % procs.length]! : p,
      // The same placement in every world (same seed): two half-size worlds look like one world of half the bots.
      place: placement(SCENARIO, max, ctx.content, seededRng(42), { roam: ROAM, hotspots: HOTSPOTS, hotspotShare: HOTSPOT_SHARE }),
      bots: 0,
      pairs: 0,
    }));
    for (let i = 0; i < WORKERS; i++) {
      const w = new BotWorker(children);
      if (BOTS_NICE && w.proc.pid) setPriority(w.proc.pid, BOTS_NICE);
      this.workers.push(w);
      this.sampler.watch("bots", w.proc.pid);
    }
  }

  /** Add bots until there are `total` over the worlds (split evenly, the first world takes the odd one). */
  async grow(total: number): Promise<{ join: JoinSummary; prepareFailed: number }> {
    const prefix = `scale-${RUN_ID}-${this.name}`;
    const perWorld = this.slots.map((_, i) => Math.floor(total / this.slots.length) + (i < total % this.slots.length ? 1 : 0));
    const lists = this.slots.map((slot, i) => {
      const list: BotSpec[] = [];
      const group = `w${slot.world}`;
      if (slot.bots === 0) {
        const pairs = Math.max(1, Math.round(PROBES / this.slots.length));
        for (let p = 0; p < pairs && list.length + 2 <= perWorld[i]!; p++) {
          const spot = slot.place.pairSpot(p);
          const pair = this.slots.indexOf(slot) * 1_000 + p;
          list.push({ n: this.n++, home: spot, group, role: "observer", pair });
          list.push({ n: this.n++, home: spot, group, role: "mover", pair });
          slot.pairs++;
        }
      }
      for (let k = slot.bots + list.length; k < perWorld[i]!; k++)
        list.push({ n: this.n++, home: slot.place.homes[k % slot.place.homes.length]!, group, role: "wander" });
      for (const s of list) s.token = botToken(JWT_SECRET, s.n, { prefix });
      return list;
    });
    let prepareFailed = 0;
    const prepared = await Promise.all(
      this.slots.map((slot, i) =>
        prepareCharacters(
          slot.via.server.url,
          lists[i]!.map((s) => s.token!),
          Math.max(1, Math.ceil(PREPARE_CONCURRENCY / this.slots.length)),
        ),
      ),
    );
    for (const p of prepared) {
      prepareFailed += p.failed;
      if (p.errors.length) console.log(`    characters: ${p.failed} failed (${p.errors.join("; ")})`);
    }
    const deadline = Date.now() + Math.min(300_000, Math.max(60_000, timeLeft() - 60_000));
    const asks = this.slots.flatMap((slot, i) => {
      const parts = share(lists[i]!, this.workers.length);
      return this.workers.map((w, k) =>
        w.ask(
          {
            cmd: "join",
            target: { kind: "game", endpoint: `${slot.via.server.url}/ws`, adminCode: ADMIN_CODE, world: slot.world },
            manifests: this.ctx.manifests,
            bots: parts[k]!,
            concurrency: Math.max(1, Math.ceil(JOIN_CONCURRENCY / (this.workers.length * this.slots.length))),
            joinTimeoutMs: JOIN_TIMEOUT_MS,
            deadline,
            decodeAll: false,
            spawn: this.ctx.content.spawn,
          },
          "joined",
          deadline - Date.now() + JOIN_TIMEOUT_MS + 120_000,
        ),
      );
    });
    const reports = await Promise.all(asks);
    this.slots.forEach((slot, i) => (slot.bots += lists[i]!.length));
    const added = lists.reduce((n, l) => n + l.length, 0);
    return { join: mergeJoins(reports, added), prepareFailed };
  }

  async measure(): Promise<Omit<Step, "phase" | "total" | "join" | "prepareFailed" | "pass" | "why">> {
    for (const w of this.workers) w.send({ cmd: "go", roam: ROAM, moveEveryMs: MOVE_EVERY_MS, chatChance: 0 });
    await sleep(WARMUP_S * 1000);
    for (const p of this.procs) p.server.proc.kill("SIGUSR2");
    await Promise.all(this.workers.map((w) => w.ask({ cmd: "report" }, "report", 30_000)));
    const m0 = await Promise.all(this.procs.map((p) => scrape(p.metricsUrl)));
    const e0 = this.procs.map((p) => p.errorCount);
    for (const pid of postgresBackends()) this.sampler.watch("postgres", pid);
    if (this.redis) this.sampler.watch("redis", await redisServerPid(this.redis));
    this.sampler.sample();
    const t0 = performance.now();
    await sleep(DURATION_S * 1000);
    const reports = (await Promise.all(this.workers.map((w) => w.ask({ cmd: "report" }, "report", 60_000)))) as Extract<WorkerMessage, { type: "report" }>[];
    const t1 = performance.now();
    this.sampler.sample();
    const m1: (Scrape | undefined)[] = await Promise.all(this.procs.map((p) => scrape(p.metricsUrl)));
    // The probe prints once a second: wait for a line of each process that covers the window's end.
    const counts = this.procs.map((p) => p.probes.length);
    const until = Date.now() + 5_000;
    while (this.procs.some((p, i) => p.probes.length === counts[i]) && Date.now() < until) await sleep(100);

    const procs: ProcFigures[] = this.procs.map((p, i) => {
      const s = this.sampler.stats(p.name, t0, t1);
      const last = p.probes.at(-1);
      return {
        name: p.name,
        world: p.world,
        cpuAvg: s.cpuAvg,
        cpuPeak: s.cpuPeak,
        rssPeakMb: s.rssPeakMb,
        loopP99Ms: last?.window.p99 ?? NaN,
        tickP99Ms: last?.window.tick.p99,
        tickCpuP99Ms: last?.window.tickCpu.p99,
        saveFailures: counterDiff(m0[i], m1[i], "realm_save_failures_total"),
        joinRefusals: byLabel(m0[i], m1[i], "realm_join_refusals_total", "code"),
        errorLines: p.errorCount - e0[i]!,
      };
    });
    const groups = (name: string) => reports.flatMap((r) => (r.groups[name] ? [r.groups[name]] : []));
    const latencies = (gs: GroupReport[]) => {
      // A probe move not seen within 5 s counts as infinitely late.
      const l = gs.flatMap((g) => g.latencies);
      for (let i = 0, lost = gs.reduce((n, g) => n + g.lost, 0); i < lost; i++) l.push(Infinity);
      return l.sort((a, b) => a - b);
    };
    const closed: Record<string, number> = {};
    const worlds: WorldFigures[] = this.slots.map((slot) => {
      const gs = groups(`w${slot.world}`);
      const l = latencies(gs);
      for (const g of gs) for (const [k, v] of Object.entries(g.closed)) closed[k] = (closed[k] ?? 0) + v;
      const seen = gs.flatMap((g) => g.seen);
      return {
        world: slot.world,
        bots: gs.reduce((n, g) => n + g.bots, 0),
        connected: gs.reduce((n, g) => n + g.connected, 0),
        samples: l.length,
        lost: gs.reduce((n, g) => n + g.lost, 0),
        unseen: gs.reduce((n, g) => n + g.unseen, 0),
        p50Ms: Math.round(pct(l, 50)),
        p99Ms: Math.round(pct(l, 99)),
        observersSee: { min: seen.length ? Math.min(...seen) : NaN, max: seen.length ? Math.max(...seen) : NaN },
      };
    });
    // Where the players really are: the world listing (checks each bot landed in the world it asked for).
    // Asked of the process that does not host the world when there is one (with Redis it lists every
    // process's rooms; without, only its own, so then the host is asked).
    for (const [i, w] of worlds.entries()) {
      const ask = this.redis ? this.procs[(i + 1) % this.procs.length]! : this.procs[i]!;
      const listing = (await fetch(`${ask.server.url}/api/v1/worlds`, { signal: AbortSignal.timeout(10_000) })
        .then((r) => r.json())
        .catch(() => undefined)) as { worlds?: { world: number; players: number }[] } | undefined;
      w.listed = listing?.worlds?.find((l) => l.world === w.world)?.players;
    }
    const all = latencies(this.slots.flatMap((slot) => groups(`w${slot.world}`)));
    const bots = this.sampler.stats("bots", t0, t1);
    const postgres = this.sampler.stats("postgres", t0, t1);
    const redis = this.redis ? this.sampler.stats("redis", t0, t1).cpuAvg : undefined;
    const machineBusy = this.sampler.hostStats(t0, t1);
    const cpuTotal = round1(procs.reduce((n, p) => n + p.cpuAvg, 0));
    return {
      procs,
      worlds,
      cpuTotal,
      rssTotalMb: procs.reduce((n, p) => n + p.rssPeakMb, 0),
      moveVisible: { samples: all.length, lost: worlds.reduce((n, w) => n + w.lost, 0), p50Ms: Math.round(pct(all, 50)), p99Ms: Math.round(pct(all, 99)) },
      bots: { cpuAvg: bots.cpuAvg, rssPeakMb: bots.rssPeakMb, loopP99Ms: Math.round(Math.max(...reports.map((r) => r.loopDelayP99Ms))) },
      postgresCpu: postgres.cpuAvg,
      machineBusy,
      redisCpu: redis,
      otherCpu: machineBusy ? Math.max(0, Math.round(machineBusy.busy - cpuTotal - bots.cpuAvg - postgres.cpuAvg - (redis ?? 0))) : undefined,
      loadAvg: loadavg().map((x) => round1(x)),
      closed,
    };
  }

  async end() {
    await Promise.all(this.workers.map((w) => w.stop()));
    this.sampler.stop();
    await Promise.all(this.procs.map(stopProc));
  }
}

/** Time one ladder step may need at most (join, warm-up, window, slack), to stop before the budget runs out. */
const stepMs = (added: number) => (WARMUP_S + DURATION_S + 30) * 1000 + added * 40;

async function ladder(phase: Phase, sizes: number[], bar: () => number, steps: Step[], label: string, until: number): Promise<string | undefined> {
  let have = 0;
  for (const total of sizes) {
    if (until - Date.now() < stepMs(total - have)) return `stopped before ${total}: the --budget would run out`;
    const t = Date.now();
    const { join, prepareFailed } = await phase.grow(total);
    have = total;
    const bad = Object.entries(join.outcomes).filter(([k]) => k !== "joined");
    console.log(
      `  [${label} ${total}] +${join.attempted}: ${join.joined} joined in ${join.allSeconds} s (p99 ${join.p99Ms} ms)` +
        (bad.length ? `; not joined: ${bad.map(([k, v]) => `${v} × ${k}`).join(", ")}` : "") +
        (join.placeFailed ? `; ${join.placeFailed} not placed` : "") +
        (join.errors.length ? `\n      ${join.errors.join("\n      ")}` : ""),
    );
    const m = await phase.measure();
    const connected = m.worlds.reduce((n, w) => n + w.connected, 0);
    const why: string[] = [];
    if (connected < total * JOINED_SHARE) why.push(`${connected}/${total} connected`);
    if (!(m.moveVisible.p99Ms <= bar())) why.push(`p99 ${m.moveVisible.p99Ms} ms > ${bar()} ms`);
    if (m.moveVisible.samples < 20) why.push(`only ${m.moveVisible.samples} probe samples`);
    const step: Step = { phase: phase.name, total, join, prepareFailed, ...m, pass: why.length === 0, why: why.join(", ") || undefined };
    steps.push(step);
    console.log(
      `  [${label} ${total}] ${connected} connected; ` +
        m.procs
          .map(
            (p) =>
              `${p.name}: cpu ${p.cpuAvg}% (peak ${p.cpuPeak}), rss ${p.rssPeakMb} MB, tick p99 ${p.tickP99Ms ?? "–"} ms (cpu ${p.tickCpuP99Ms ?? "–"}), loop p99 ${p.loopP99Ms} ms`,
          )
          .join("; ") +
        `; move→visible p50 ${m.moveVisible.p50Ms} / p99 ${m.moveVisible.p99Ms} ms over ${m.moveVisible.samples}` +
        (m.worlds.length > 1 ? ` (${m.worlds.map((w) => `w${w.world} ${w.p99Ms}`).join(", ")})` : "") +
        `; observers see ${m.worlds.map((w) => `${w.observersSee.min}–${w.observersSee.max}`).join(", ")}; listed ${m.worlds.map((w) => `w${w.world} ${f(w.listed)}`).join(", ")}; bots cpu ${m.bots.cpuAvg}% (loop p99 ${m.bots.loopP99Ms} ms); ` +
        `postgres ${m.postgresCpu}%${m.redisCpu === undefined ? "" : `, redis ${m.redisCpu}%`}; machine ${m.machineBusy?.busy ?? "?"} of ${m.machineBusy?.of ?? "?"} (other work ${m.otherCpu ?? "?"}), load ${m.loadAvg.join(" ")}; ${((Date.now() - t) / 1000).toFixed(0)} s — ${step.pass ? "passes" : `does not pass (${step.why})`}` +
        (m.bots.loopP99Ms > 100 ? ` — WARNING: the bots' event loop lagged (p99 ${m.bots.loopP99Ms} ms): they may be the bottleneck` : ""),
    );
    if (!step.pass) return undefined;
  }
  return undefined;
}

// ------------------------------------------------------------------ capacity and tables

function capacity(steps: Step[], bar: number): Capacity {
  return ladderCapacity(
    steps.map((s) => ({
      total: s.total,
      pass: s.pass,
      p99Ms: s.moveVisible.p99Ms,
      overBarOnly: !s.pass && s.why?.startsWith("p99") === true && !s.why.includes(","),
    })),
    bar,
  );
}

type Row = Record<string, string>;
function table(rows: Row[]): string {
  if (rows.length === 0) return "";
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i < 1 ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join(" | ")} |`;
  return [
    line(cols),
    `|${width.map((w, i) => (i < 1 ? `-${"-".repeat(w)}-` : `-${"-".repeat(w)}:`)).join("|")}|`,
    ...rows.map((r) => line(cols.map((c) => r[c] ?? ""))),
  ].join("\n");
}

const f = (n: number | undefined) => (n === undefined || Number.isNaN(n) ? "–" : n === Infinity ? "∞" : String(n));

function failures(s: Step): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(s.join.outcomes)) if (k !== "joined") parts.push(`${v} ${k}`);
  if (s.prepareFailed) parts.push(`${s.prepareFailed} characters not made`);
  if (s.join.placeFailed) parts.push(`${s.join.placeFailed} not placed`);
  for (const [k, v] of Object.entries(s.closed)) parts.push(`${v} closed ${k}`);
  if (s.moveVisible.lost) parts.push(`${s.moveVisible.lost} moves lost`);
  const unseen = s.worlds.reduce((n, w) => n + w.unseen, 0);
  if (unseen) parts.push(`mover unseen ${unseen}×`);
  const saves = s.procs.reduce((n, p) => n + p.saveFailures, 0);
  if (saves) parts.push(`${saves} save failures`);
  const errors = s.procs.reduce((n, p) => n + p.errorLines, 0);
  if (errors) parts.push(`${errors} error lines`);
  for (const w of s.worlds)
    if (w.listed === undefined || Math.abs(w.listed - w.connected) > Math.max(2, w.connected * 0.02))
      parts.push(`world ${w.world} lists ${f(w.listed)} players for ${w.connected} bots`);
  return parts.join(", ") || "none";
}

function rows(steps: Step[]): Row[] {
  return steps.map((s) => ({
    processes: s.phase === "one" ? "1 (world 1)" : TWO_REDIS ? "2 (A: w1, B: w2)" : "2, no Redis",
    clients: s.phase === "one" ? String(s.total) : `${s.total} (${s.worlds.map((w) => w.bots).join("+")})`,
    "CPU % per process": s.procs.map((p) => f(p.cpuAvg)).join(" / "),
    "CPU % total": f(s.cpuTotal),
    "RSS MB": s.procs.map((p) => f(p.rssPeakMb)).join(" / "),
    "tick p99 ms": s.procs.map((p) => f(p.tickP99Ms)).join(" / "),
    "move→visible p50/p99 ms": `${f(s.moveVisible.p50Ms)} / ${f(s.moveVisible.p99Ms)}`,
    "p99 per world": s.worlds.length > 1 ? s.worlds.map((w) => f(w.p99Ms)).join(" / ") : "",
    samples: String(s.moveVisible.samples),
    joined: String(s.worlds.reduce((n, w) => n + w.connected, 0)),
    "bots CPU %": f(s.bots.cpuAvg),
    "PG / Redis CPU %": `${f(s.postgresCpu)} / ${f(s.redisCpu)}`,
    "machine busy % (other)": s.machineBusy ? `${s.machineBusy.busy}/${s.machineBusy.of} (${f(s.otherCpu)})` : "–",
    failures: failures(s),
    "at the bar": s.pass ? "yes" : "no",
  }));
}

// ------------------------------------------------------------------ main

async function reachable(host: string, port: number, ms = 1_000): Promise<boolean> {
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

async function main() {
  const db = new URL(args.db!);
  if (db.hostname !== "127.0.0.1" && db.hostname !== "localhost") fail("--db must be on 127.0.0.1 (all traffic stays on this machine)");
  if (!(await reachable(db.hostname, Number(db.port || 5432)))) fail(`--db: nothing answers on ${db.hostname}:${db.port || 5432}`);
  if (!(await redisAnswers(args.redis))) fail(`--redis: ${args.redis} does not answer`);
  const budget = setTimeout(() => {
    console.error("bench:scale: the run exceeded its --budget; stopping");
    save();
    killAll();
    process.exit(2);
  }, BUDGET_MS + 120_000);
  budget.unref();

  const world = mkdtempSync(join(tmpdir(), "bench-scale-"));
  cpSync(join(ROOT, "world/manifests"), join(world, "manifests"), { recursive: true });
  const manifests = join(world, "manifests");
  const ctx: Ctx = { world, manifests, content: await loadContent(manifests) };
  const date = new Date().toISOString();
  const jsonPath = args.json ?? join(ROOT, "loadtest/results", `bench-scale-${date.replace(/[:.]/g, "-")}.json`);
  const steps: Step[] = [];
  const out: Record<string, unknown> = {
    date,
    machine: {
      cpu: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
      memoryGb: Math.round(totalmem() / 1073741824),
      kernel: release(),
      node: process.version,
    },
    loadAvgAtStart: loadavg().map(round1),
    options: {
      scenario: SCENARIO,
      step: STEP,
      tickMs: TICK_MS,
      tickPhase: TICK_PHASE,
      bar: REFERENCE ? `p99 of one process at ${REFERENCE}` : BAR,
      via: args.via,
      twoProcessesOnRedis: !args["no-redis"],
      botsNice: BOTS_NICE,
      probes: PROBES,
      workers: WORKERS,
      warmupSeconds: WARMUP_S,
      durationSeconds: DURATION_S,
      joinConcurrency: JOIN_CONCURRENCY,
      serverNodeOptions: PROD_NODE_OPTIONS.join(" "),
      storage: `PostgreSQL ${db.host}${db.pathname}`,
      redis: args.redis,
    },
    steps,
  };
  function save() {
    mkdirSync(resolve(jsonPath, ".."), { recursive: true });
    writeFileSync(jsonPath, JSON.stringify(out, null, 2) + "\n");
  }

  let bar = REFERENCE ? NaN : BAR;
  const notes: string[] = [];
  console.log(
    `scale benchmark: ${SCENARIO}, one process then two (one world each, bots split), tick ${TICK_MS} ms (TICK_PHASE ${TICK_PHASE}), bar ${REFERENCE ? `the p99 of one process at ${REFERENCE}` : `move→visible p99 ≤ ${BAR} ms`}; ` +
      `storage PostgreSQL ${db.host}${db.pathname}; Redis ${args.redis}; load average ${loadavg().map(round1).join(" ")}`,
  );
  try {
    if (!args["no-build"]) buildDist();
    // ---- one process
    {
      const one = await startProc("one", 1, ctx);
      const phase = new Phase("one", [one], ctx, "own");
      console.log(`  placement: ${phase.slots[0]!.place.description}`);
      const oneSteps: Step[] = [];
      try {
        const sizes = REFERENCE ? [REFERENCE] : Array.from({ length: Math.floor((MAX_ONE - START) / STEP) + 1 }, (_, i) => START + i * STEP);
        const note = await ladder(phase, sizes, () => (REFERENCE ? Infinity : BAR), oneSteps, "one process", startedAt + BUDGET_MS * ONE_SHARE);
        if (note) notes.push(`one process: ${note}`);
      } finally {
        steps.push(...oneSteps);
        save();
        await phase.end();
      }
      if (REFERENCE) {
        const s = oneSteps[0];
        if (!s || s.worlds[0]!.connected < REFERENCE * JOINED_SHARE) throw new Error(`one process did not carry the reference ${REFERENCE} clients`);
        bar = s.moveVisible.p99Ms;
        out.bar = bar;
        console.log(`  the bar: one process's move→visible p99 at ${REFERENCE} clients, ${bar} ms`);
      }
    }
    const cap1 = REFERENCE ? { passed: REFERENCE } : capacity(steps, bar);
    // ---- two processes
    await flushDb(args.redis!);
    const a = await startProc("A", 1, ctx, TWO_REDIS);
    let b: Proc;
    try {
      b = await startProc("B", 2, ctx, TWO_REDIS);
    } catch (e) {
      await stopProc(a);
      throw e;
    }
    const phase = new Phase("two", [a, b], ctx, args.via as "own" | "other", TWO_REDIS);
    const twoSteps: Step[] = [];
    try {
      const first = args["two-start"] ? int(args["two-start"], 4, 20_000, "--two-start") : Math.max(cap1.passed, START);
      const sizes = Array.from({ length: Math.max(0, Math.floor((MAX_TWO - first) / TWO_STEP) + 1) }, (_, i) => first + i * TWO_STEP);
      const note = await ladder(phase, sizes, () => bar, twoSteps, "two processes", startedAt + BUDGET_MS - 30_000);
      if (note) notes.push(`two processes: ${note}`);
    } finally {
      steps.push(...twoSteps);
      save();
      await phase.end();
      await flushDb(args.redis!).catch(() => undefined);
    }
    const cap2 = capacity(twoSteps, bar);
    const ratio = cap1.passed ? round2(cap2.passed / cap1.passed) : NaN;
    const c1i = "interpolated" in cap1 ? (cap1.interpolated ?? cap1.passed) : cap1.passed;
    const ratioInterpolated = c1i && cap2.interpolated ? round2(cap2.interpolated / c1i) : undefined;
    // One process's capacity must be known (its ladder reached a size over the bar) for a ratio; two
    // processes that never went over the bar give a lower bound.
    const oneKnown = REFERENCE !== undefined || (cap1 as Capacity).failedAt !== undefined;
    const twoKnown = cap2.failedAt !== undefined;
    const verdict = !oneKnown || Number.isNaN(ratio) ? "undetermined" : ratio >= 1.6 ? "met" : twoKnown ? "not met" : "undetermined";
    out.summary = { bar, one: cap1, two: cap2, ratio, ratioInterpolated, ratioIsLowerBound: oneKnown && !twoKnown, target: 1.6, verdict, notes };
    out.loadAvgAtEnd = loadavg().map(round1);
    save();
    console.log(`\n${table(rows(steps))}\n`);
    const describe = (c: Capacity | { passed: number }, what: string) =>
      `${what}: ${c.passed ? `${c.passed} clients` : "none of the sizes"} at move→visible p99 ≤ ${bar} ms` +
      ("failedAt" in c && c.failedAt
        ? ` (not ${c.failedAt}${c.interpolated ? `; about ${c.interpolated} by linear interpolation` : ""})`
        : "failedAt" in c
          ? " (the ladder never went over the bar: a lower bound)"
          : "");
    console.log(describe(cap1, "one process"));
    console.log(describe(cap2, "two processes"));
    console.log(
      `ratio two / one: ${Number.isNaN(ratio) ? "–" : `×${ratio}${oneKnown && !twoKnown ? " or more" : ""}`}${ratioInterpolated ? ` (interpolated ×${ratioInterpolated})` : ""}; target ×1.6: ${verdict}` +
        (!cap1.passed
          ? " (one process did not pass at its first size: lower --start)"
          : !oneKnown
            ? " (one process never went over the bar: raise --max-one)"
            : !cap2.passed
              ? ` (two processes did not pass at their first size, ${cap2.failedAt}: they carry less than one)`
              : !twoKnown && verdict !== "met"
                ? " (two processes never went over the bar: raise --max-two or --budget)"
                : ""),
    );
    for (const n of notes) console.log(`note: ${n}`);
    console.log(`load average at the end ${loadavg().map(round1).join(" ")}; ${((Date.now() - startedAt) / 1000).toFixed(0)} s in all`);
  } finally {
    save();
    rmSync(world, { recursive: true, force: true });
  }
  console.log(`results: ${jsonPath}`);
}

const round2 = (n: number) => Math.round(n * 100) / 100;

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`bench:scale: ${(e as Error).stack ?? e}`);
    killAll();
    process.exit(1);
  },
);
