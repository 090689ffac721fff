/**
 * One walking scenario (scenarios/: crowd, wander, spread) against one target: start the server,
 * place and join the bots, measure a window, and with `--sigterm-joined` stop the game server with
 * every bot joined and check its shutdown save.
 */
import type { TargetKind } from "../bot.js";
import { seededRng } from "../lib/random.js";
import { sigtermJoined, type ShutdownCheck } from "./shutdown-check.js";
import { args, JOIN_CONCURRENCY, probesFor, workersFor } from "./options.js";
import { joinPhase, measure, type Ctx, type ScenarioResult } from "./phases.js";
import { Run } from "./run.js";
import type { Scenario } from "./scenarios/scenario.js";
import { startTarget, type TargetServer } from "./target.js";

export async function runWalk(kind: TargetKind, walk: Scenario, n: number, ctx: Ctx): Promise<ScenarioResult> {
  const since = new Date();
  const server = await startTarget(kind, ctx.world, ctx.databaseUrl);
  const run = new Run(server);
  let result: ScenarioResult;
  try {
    result = await walkOn(run, server, kind, walk, n, ctx, since);
  } finally {
    await run.end();
  }
  // Error lines until the server stopped: those of the bots' leaves and of its shutdown count too.
  return { ...result, serverErrorLines: server.errorCount, serverErrorSamples: server.errorLines };
}

async function walkOn(run: Run, server: TargetServer, kind: TargetKind, walk: Scenario, n: number, ctx: Ctx, since: Date): Promise<ScenarioResult> {
  const scenario = walk.name;
  const label = `${kind} ${scenario} ${n}`;
  const list = walk.specs(n, Math.min(probesFor(n), Math.floor(n / 2)), ctx.content, seededRng(42));
  run.spawnWorkers(workersFor(n));
  const { prepare, join } = await joinPhase(run, list, JOIN_CONCURRENCY, ctx, label);
  const base = { target: kind, scenario, bots: n, workers: run.workers.length, probePairs: list.filter((s) => s.role === "observer").length, prepare, join };
  if (join.joined < n * 0.95) {
    console.log(`  [${label}] too many bots failed to join (${join.joined}/${n}): not measured; server log:\n    ${server.tail.slice(-10).join("\n    ")}`);
    return { ...base, error: `only ${join.joined}/${n} joined` };
  }
  const window = await measure(run, label, undefined, walk.drift);
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
  };
}
