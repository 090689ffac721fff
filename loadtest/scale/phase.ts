/**
 * One phase of bench:scale (one process, or two on Redis): its processes, bot workers and worlds; a
 * ladder step adds bots to those already there (`grow`), then every bot walks again and one window
 * is measured (`measure`).
 */
import { loadavg, setPriority } from "node:os";
import type { BotSpec, GroupReport, WorkerMessage } from "../bot-worker.js";
import { botToken } from "../colyseus/tokens.js";
import { BotWorker, mergeJoins, placement, prepareCharacters, share, type JoinSummary } from "../fleet.js";
import { sleep } from "../lib/cli.js";
import { byLabel, counterDiff, scrape, tickFromMetrics, type Scrape } from "../lib/metrics.js";
import { seededRng } from "../lib/random.js";
import { pct, round1 } from "../lib/report.js";
import { redisServerPid } from "../lib/redis.js";
import { ProcSampler } from "../lib/sampler.js";
import { LOAD_ADMIN_CODE, LOAD_JWT_SECRET } from "../lib/tokens.js";
import type { Ctx, ProcFigures, Step, WorldFigures, WorldSlot } from "./figures.js";
import {
  BOTS_NICE,
  DURATION_S,
  HOTSPOT_SHARE,
  HOTSPOTS,
  JOIN_CONCURRENCY,
  JOIN_TIMEOUT_MS,
  MAX_ONE,
  MAX_TWO,
  MOVE_EVERY_MS,
  PREPARE_CONCURRENCY,
  PROBES,
  ROAM,
  SCENARIO,
  timeLeft,
  WARMUP_S,
  WORKERS,
} from "./options.js";
import { children, postgresBackends, stopProc, type Proc } from "./procs.js";

const RUN_ID = Date.now().toString(36);

export class Phase {
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
      for (const s of list) s.token = botToken(LOAD_JWT_SECRET, s.n, { prefix });
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
            target: { kind: "game", endpoint: `${slot.via.server.url}/ws`, adminCode: LOAD_ADMIN_CODE, world: slot.world },
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
        tickP99Ms: tickFromMetrics(m0[i], m1[i])?.p99,
        tickCpuP99Ms: tickFromMetrics(m0[i], m1[i])?.cpu?.p99,
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
