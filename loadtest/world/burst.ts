/**
 * `--burst N`: N clients join at once and stay for `--burst-hold` seconds: outcomes counted by kind,
 * `/status` polled throughout; with `--burst-retry` a client told to retry joins again after its
 * `Retry-After`, as a real client does, until `--join-deadline`.
 */
import type { TargetKind } from "../bot.js";
import type { BotSpec, Role } from "../bot-worker.js";
import { prepareCharacters, type JoinSummary } from "../fleet.js";
import { sleep } from "../lib/cli.js";
import { args, BURST_HOLD_S, PREPARE_CONCURRENCY, workersFor } from "./options.js";
import { logJoin, tokensFor, type Ctx } from "./phases.js";
import { Run } from "./run.js";
import { pollStatus, type StatusPoll } from "./status.js";
import { startTarget } from "./target.js";

export interface BurstResult {
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

export async function runBurst(kind: TargetKind, n: number, ctx: Ctx): Promise<BurstResult> {
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
