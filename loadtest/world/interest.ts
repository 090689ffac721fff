/**
 * `--interest`: a group of `--near` bots near the spawn measured alone, then with the rest of the
 * bots far away (at least 60 tiles): what the far ones cost the near group (egress ratio).
 */
import type { TargetKind } from "../bot.js";
import { seededRng } from "../lib/random.js";
import type { BotSpec, Role } from "../bot-worker.js";
import { safeHomes } from "../fleet.js";
import { shuffle } from "../lib/random.js";
import { round2 } from "../lib/report.js";
import { args, cli, JOIN_CONCURRENCY, probesFor, ROAM, workersFor } from "./options.js";
import { joinPhase, measure, type Ctx, type ScenarioResult } from "./phases.js";
import { Run } from "./run.js";
import { startTarget } from "./target.js";

export async function runInterest(kind: TargetKind, n: number, ctx: Ctx): Promise<ScenarioResult> {
  const label = `${kind} interest ${n}`;
  const nearCount = Math.min(n - 1, cli.int(args.near!, 2, 5_000, "--near"));
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
