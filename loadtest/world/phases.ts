/**
 * The phases every bench:world scenario goes through: tokens and characters made up front, the
 * join phase (with `/status` polled and the server's CPU sampled), and the measured window after a
 * warm-up; with their log lines and the shape of a scenario's result.
 */
import type { GameContent } from "../../src/content/load.js";
import type { TargetKind } from "../bot.js";
import type { BotSpec } from "../bot-worker.js";
import { botToken } from "../colyseus/tokens.js";
import { prepareCharacters, type JoinSummary } from "../fleet.js";
import { sleep } from "../lib/cli.js";
import { counterDiff, scrape } from "../lib/metrics.js";
import { LOAD_JWT_SECRET } from "../lib/tokens.js";
import type { ShutdownCheck } from "./shutdown-check.js";
import { args, DURATION_S, PREPARE_CONCURRENCY, WARMUP_S } from "./options.js";
import type { Measured, Run } from "./run.js";
import { pollStatus } from "./status.js";

export interface ScenarioResult {
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

export function logJoin(label: string, j: JoinSummary) {
  const bad = Object.entries(j.outcomes).filter(([k]) => k !== "joined");
  console.log(
    `  [${label}] ${j.joined}/${j.attempted} joined in ${j.allSeconds} s (join p50 ${j.p50Ms} / p99 ${j.p99Ms} ms)` +
      (bad.length ? `; not joined: ${bad.map(([k, v]) => `${v} × ${k}`).join(", ")}` : "") +
      (j.placeFailed ? `; ${j.placeFailed} not placed` : "") +
      (j.errors.length ? `\n      ${j.errors.join("\n      ")}` : ""),
  );
}

export function logWindow(label: string, m: Measured) {
  console.log(
    `  [${label}] ${m.connected} bots measured over ${m.seconds} s: server cpu ${m.server.cpuAvg}% (peak ${m.server.cpuPeak}), rss ${m.server.rssPeakMb} MB, ` +
      `loop delay p99 ${m.server.loopDelayP99Ms} ms, tick p99 ${m.tick.p99Ms ?? "–"} ms (${m.tick.source}), ` +
      (m.server.threads
        ? `by thread main ${m.server.threads.main} / V8 workers ${m.server.threads.v8} / libuv ${m.server.threads.libuv} / other ${m.server.threads.other}% (probe window), `
        : "") +
      (m.server.gc
        ? `gc pauses ${m.server.gc.minor.ms} ms in ${m.server.gc.minor.count} scavenges + ${m.server.gc.major.ms} ms in ${m.server.gc.major.count} major, `
        : "") +
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

export function tokensFor(kind: TargetKind, n: number): (string | undefined)[] {
  if (kind !== "game") return Array.from({ length: n }, () => undefined);
  const prefix = `bench-${RUN_ID}-${++runSeq}`;
  return Array.from({ length: n }, (_, i) => botToken(LOAD_JWT_SECRET, i, { prefix }));
}

export async function joinPhase(run: Run, list: BotSpec[], concurrency: number, ctx: Ctx, label: string) {
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

export interface Ctx {
  world: string;
  manifests: string;
  content: GameContent;
  databaseUrl?: string;
}

/** Let the bots walk (`drift`: from where each stands, --wander), warm up, then measure one window. */
export async function measure(run: Run, label: string, group?: string, drift = false): Promise<Measured> {
  run.go(drift);
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
