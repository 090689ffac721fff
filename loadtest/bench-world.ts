/**
 * World benchmark, side by side with a bare Colyseus room (docs/benchmarks.md "Benchmarks"). For every scenario
 * and size it measures two targets one after the other, each in a fresh process: the bare Colyseus
 * 0.18 baseline (`loadtest/baseline/server.ts`: one room, one shared state) and the game server
 * (compiled `dist/src/main.js` as in production, or the sources with `--runtime tsx`), with the same
 * SDK bots spread over worker processes, and prints every figure with its ratio to the baseline.
 *
 *   npm run bench:world -- --crowd --wander --spread --bots 50,200 --burst 500 --db postgres://…/h_bench
 *   npm run bench:world -- --crowd --bots 2000 --db postgres://…   (the integrator's run)
 *   npm run bench:world -- --interest --bots 500 [--near 50]
 *   npm run bench:world -- --crowd --bots 2000 --targets game --sigterm-joined --db postgres://…
 *     (then SIGTERM with every bot joined: exit time, save stage, logins closed by the shutdown save)
 *
 * Scenarios (loadtest/world/): `--crowd` (every bot joins at the spawn, then runs to a random free
 * tile within `--roam` (8) tiles of the spawn once a second: everyone sees everyone); `--wander` (as
 * `--crowd`, but each move goes within `--roam` tiles of where the bot stands, not of the spawn: the
 * crowd drifts apart over minutes); `--spread` (bots over the
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
import { loadContent } from "../src/content/load.js";
import { buildDist } from "./lib/targets.js";
import { machine, resultsPath, table, writeJson } from "./lib/report.js";
import { tempWorld } from "./lib/processes.js";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { runBurst } from "./world/burst.js";
import { runInterest } from "./world/interest.js";
import {
  args,
  BURST,
  BURST_HOLD_S,
  CHAT_CHANCE,
  DURATION_S,
  JOIN_CONCURRENCY,
  JOIN_DEADLINE_MS,
  JOIN_TIMEOUT_MS,
  ROAM,
  SCENARIOS,
  SERVER_NODE,
  SIZES,
  TARGETS,
  TICK_MS,
  WARMUP_S,
  type WalkScenario,
} from "./world/options.js";
import type { Ctx, ScenarioResult } from "./world/phases.js";
import { crowd } from "./world/scenarios/crowd.js";
import type { Scenario } from "./world/scenarios/scenario.js";
import { spread } from "./world/scenarios/spread.js";
import { wander } from "./world/scenarios/wander.js";
import { burstRows, scenarioRows, type BurstEntry } from "./world/tables.js";
import { killAll, storage } from "./world/target.js";
import { runWalk } from "./world/walk.js";

const WALKS: Record<WalkScenario, Scenario> = { crowd, wander, spread };

async function main() {
  const store = await storage();
  const world = tempWorld("bench-world-");
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
    machine: machine(args.db && args.db !== "pglite" ? args.db : undefined),
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
  const jsonPath = resultsPath("bench-world", info.date, args.json);
  const save = () => writeJson(jsonPath, out);
  try {
    if (TARGETS.includes("game") && args.runtime !== "tsx") buildDist();
    for (const scenario of SCENARIOS)
      for (const n of SIZES)
        for (const kind of TARGETS) {
          try {
            results.push(scenario === "interest" ? await runInterest(kind, n, ctx) : await runWalk(kind, WALKS[scenario], n, ctx));
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
  if (results.length) console.log(`\n${table(scenarioRows(results), 3)}`);
  if (bursts.length) console.log(`\n${table(burstRows(bursts), 3)}`);
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
