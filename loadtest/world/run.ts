/**
 * One measurement of bench:world against one server: its bot processes, their joins, and the
 * window figures (server CPU and memory from outside, event loop from the probe, ticks from the
 * game's metrics or the baseline's probe, move → visible latency and egress from the bots).
 */
import type { BotTarget, Tile } from "../bot.js";
import type { BotSpec, GroupReport } from "../bot-worker.js";
import { BotWorker, mergeJoins, share, type JoinSummary } from "../fleet.js";
import { sleep } from "../lib/cli.js";
import { byLabel, counterDiff, scrape, tickFromMetrics, type Scrape, type TickStats } from "../lib/metrics.js";
import type { Probe } from "../lib/probe-lines.js";
import { pct, round1 } from "../lib/report.js";
import { ProcSampler } from "../lib/sampler.js";
import { LOAD_ADMIN_CODE } from "../lib/tokens.js";
import { args, CHAT_CHANCE, JOIN_DEADLINE_MS, JOIN_TIMEOUT_MS, MOVE_EVERY_MS, ROAM, TICK_MS } from "./options.js";
import type { StatusPoll } from "./status.js";
import { children, stopTarget, type TargetServer } from "./target.js";

/** Tick durations of a window: the baseline's from its probe, the game's from its `realm_tick_duration_seconds` histogram. */
export interface TickFigures {
  p50Ms?: number;
  p99Ms?: number;
  maxMs?: number;
  /** CPU time the process used during the tick (leaves out waiting for a core on a busy machine). */
  cpuP99Ms?: number;
  count: number;
  source: string;
  /** Game: the upper bound of the histogram bucket the p99 fell in (the figure's resolution; `maxMs` is a bucket bound too). */
  metricsBucketMs?: number;
}

export function tickFigures(last: Probe | undefined, a: Scrape | undefined, b: Scrape | undefined): TickFigures {
  const probed: TickStats | undefined = last?.window.tick.count ? last.window.tick : undefined;
  if (probed) return { count: probed.count, p50Ms: probed.p50, p99Ms: probed.p99, maxMs: probed.max, cpuP99Ms: last?.window.tickCpu.p99, source: "probe" };
  const m = tickFromMetrics(a, b);
  if (m) return { count: m.count, p50Ms: m.p50, p99Ms: m.p99, maxMs: m.max, cpuP99Ms: m.cpu?.p99, source: "metrics histogram", metricsBucketMs: m.bucketMs };
  return { count: 0, source: "none" };
}

export interface Measured {
  seconds: number;
  connected: number;
  server: {
    cpuAvg: number;
    cpuPeak: number;
    rssPeakMb: number;
    loopDelayP99Ms: number;
    loopDelayMaxMs: number;
    elu: number;
    gc?: Probe["window"]["gc"];
    threads?: Probe["window"]["threads"];
  };
  tick: TickFigures;
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

export interface Window {
  t: number;
  probesAt: number;
  metrics?: Scrape;
}

export class Run {
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
    return { kind: this.server.kind, endpoint: this.server.endpoint, adminCode: LOAD_ADMIN_CODE };
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
  /** Start the bots walking: within `--roam` tiles of their homes, or (`drift`, --wander) of where each stands. */
  go(drift = false) {
    for (const w of this.workers) w.send({ cmd: "go", roam: ROAM, drift, tickMs: TICK_MS, moveEveryMs: MOVE_EVERY_MS, chatChance: CHAT_CHANCE });
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
        gc: last?.window.gc,
        threads: last?.window.threads,
      },
      tick: tickFigures(last, w.metrics, metrics),
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
