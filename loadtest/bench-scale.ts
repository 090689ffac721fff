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
 * any exit. The phases and ladders are in loadtest/scale/.
 */
import { rmSync } from "node:fs";
import { join } from "node:path";
import { loadavg } from "node:os";
import { loadContent } from "../src/content/load.js";
import type { Capacity } from "./capacity.js";
import { postgresTarget } from "./lib/cli.js";
import { tempWorld } from "./lib/processes.js";
import { flushDb, redisAnswers } from "./lib/redis.js";
import { machine, resultsPath, round1, round2, table, writeJson } from "./lib/report.js";
import { buildDist, PROD_NODE_OPTIONS } from "./lib/targets.js";
import type { Ctx, Step } from "./scale/figures.js";
import { capacity, ladder } from "./scale/ladder.js";
import {
  args,
  BAR,
  BOTS_NICE,
  BUDGET_MS,
  cli,
  DURATION_S,
  JOIN_CONCURRENCY,
  JOINED_SHARE,
  MAX_ONE,
  MAX_TWO,
  ONE_SHARE,
  PROBES,
  REFERENCE,
  SCENARIO,
  START,
  startedAt,
  STEP,
  TICK_MS,
  TICK_PHASE,
  TWO_REDIS,
  TWO_STEP,
  WARMUP_S,
  WORKERS,
} from "./scale/options.js";
import { Phase } from "./scale/phase.js";
import { killAll, startProc, stopProc, type Proc } from "./scale/procs.js";
import { rows } from "./scale/tables.js";

async function main() {
  const db = new URL(args.db!);
  if (db.hostname !== "127.0.0.1" && db.hostname !== "localhost") cli.fail("--db must be on 127.0.0.1 (all traffic stays on this machine)");
  await postgresTarget(args.db!, cli);
  if (!(await redisAnswers(args.redis!))) cli.fail(`--redis: ${args.redis} does not answer`);
  const budget = setTimeout(() => {
    console.error("bench:scale: the run exceeded its --budget; stopping");
    save();
    killAll();
    process.exit(2);
  }, BUDGET_MS + 120_000);
  budget.unref();

  const world = tempWorld("bench-scale-");
  const manifests = join(world, "manifests");
  const ctx: Ctx = { world, manifests, content: await loadContent(manifests) };
  const date = new Date().toISOString();
  const jsonPath = resultsPath("bench-scale", date, args.json);
  const steps: Step[] = [];
  const out: Record<string, unknown> = {
    date,
    machine: machine(),
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
  const save = () => writeJson(jsonPath, out);

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
      const first = args["two-start"] ? cli.int(args["two-start"], 4, 20_000, "--two-start") : Math.max(cap1.passed, START);
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

main().then(
  () => process.exit(0),
  (e) => {
    console.error(`bench:scale: ${(e as Error).stack ?? e}`);
    killAll();
    process.exit(1);
  },
);
