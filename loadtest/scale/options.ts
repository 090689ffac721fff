/**
 * The options of `npm run bench:scale` (documented at the top of loadtest/bench-scale.ts), checked
 * once when the script starts, and the run's time budget.
 */
import { parseArgs } from "node:util";
import { cli as cliFor } from "../lib/cli.js";

export const cli = cliFor("bench:scale");

export const { values: args } = parseArgs({
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

if (args.scenario !== "spread" && args.scenario !== "crowd") cli.fail(`--scenario must be "spread" or "crowd"`);
if (args.via !== "own" && args.via !== "other") cli.fail(`--via must be "own" or "other"`);
if (args["no-redis"] && args.via === "other") cli.fail("--via other needs Redis (a seat in another process's room): drop --no-redis");
export const BOTS_NICE = cli.int(args["bots-nice"], 0, 19, "--bots-nice");
export const TWO_REDIS = args["no-redis"] ? undefined : args.redis;
if (!args.db) cli.fail("--db postgres://… is required (the processes of a cluster share one PostgreSQL database)");
if (!/^redis:\/\/127\.0\.0\.1(:\d+)?\/\d+$/.test(args.redis!))
  cli.fail("--redis must be redis://127.0.0.1[:port]/<db> (a logical database of your own: it is emptied)");
export const SCENARIO = args.scenario as "spread" | "crowd";
export const STEP = cli.int(args.step, 10, 5_000, "--step");
export const START = args.start ? cli.int(args.start, 2, 10_000, "--start") : STEP;
export const MAX_ONE = cli.int(args["max-one"], 2, 10_000, "--max-one");
export const MAX_TWO = cli.int(args["max-two"], 4, 20_000, "--max-two");
export const TWO_STEP = args["two-step"] ? cli.int(args["two-step"], 10, 10_000, "--two-step") : STEP;
export const ONE_SHARE = Number(args["one-share"]);
if (!(ONE_SHARE > 0 && ONE_SHARE < 1)) cli.fail("--one-share must be between 0 and 1");
export const REFERENCE = args.reference ? cli.int(args.reference, 2, 10_000, "--reference") : undefined;
export const TICK_MS = cli.int(args["tick-ms"], 10, 10_000, "--tick-ms");
if (args["tick-phase"] !== "auto" && args["tick-phase"] !== "off") cli.fail(`--tick-phase must be "auto" or "off"`);
export const TICK_PHASE = args["tick-phase"];
export const BAR = args.p99 ? cli.int(args.p99, 1, 600_000, "--p99") : TICK_MS + 100;
export const DURATION_S = cli.int(args.duration, 5, 600, "--duration");
export const WARMUP_S = cli.int(args.warmup, 0, 300, "--warmup");
export const PROBES = cli.int(args.probes, 2, 200, "--probes");
export const WORKERS = cli.int(args.workers, 1, 16, "--workers");
export const JOIN_CONCURRENCY = cli.int(args["join-concurrency"], 1, 10_000, "--join-concurrency");
export const JOIN_TIMEOUT_MS = cli.int(args["join-timeout"], 5, 600, "--join-timeout") * 1000;
export const PREPARE_CONCURRENCY = cli.int(args["prepare-concurrency"], 1, 256, "--prepare-concurrency");
export const ROAM = cli.int(args.roam, 1, 20, "--roam");
export const HOTSPOTS = cli.int(args.hotspots, 0, 8, "--hotspots");
export const HOTSPOT_SHARE = cli.num(args["hotspot-share"], 0, 1, "--hotspot-share");
export const BUDGET_MS = cli.int(args.budget, 60, 7_200, "--budget") * 1000;
export const MOVE_EVERY_MS = 1_000;
/** A size passes only when this share of its bots joined. */
export const JOINED_SHARE = 0.99;
export const startedAt = Date.now();
/** What is left of `--budget`. */
export const timeLeft = () => BUDGET_MS - (Date.now() - startedAt);
