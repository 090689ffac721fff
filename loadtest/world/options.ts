/**
 * The options of `npm run bench:world` (documented at the top of loadtest/bench-world.ts), checked
 * once when the script starts, and the figures derived from them.
 */
import { parseArgs } from "node:util";
import type { TargetKind } from "../bot.js";
import { cli as cliFor } from "../lib/cli.js";
import { PROD_NODE_OPTIONS } from "../lib/targets.js";

export const cli = cliFor("bench:world");

/** The scenarios that place bots and let them walk (`--interest` places two groups, README "Benchmarks"; docs/benchmarks.md). */
export type WalkScenario = "crowd" | "wander" | "spread";
export type ScenarioName = WalkScenario | "interest";

export const { values: args } = parseArgs({
  options: {
    crowd: { type: "boolean", default: false },
    wander: { type: "boolean", default: false },
    spread: { type: "boolean", default: false },
    interest: { type: "boolean", default: false },
    burst: { type: "string" },
    /** One size or several, comma-separated: 50,200. */
    bots: { type: "string", default: "100" },
    targets: { type: "string", default: "baseline,game" },
    duration: { type: "string", default: "30" },
    warmup: { type: "string", default: "10" },
    workers: { type: "string" },
    "join-concurrency": { type: "string", default: "64" },
    "join-timeout": { type: "string", default: "120" },
    "join-deadline": { type: "string", default: "300" },
    "burst-hold": { type: "string", default: "10" },
    "burst-retry": { type: "boolean", default: false },
    probes: { type: "string" },
    decode: { type: "string", default: "observers" },
    "create-on-join": { type: "boolean", default: false },
    "prepare-concurrency": { type: "string", default: "16" },
    "tick-ms": { type: "string" },
    "save-interval": { type: "string", default: "10" },
    db: { type: "string" },
    near: { type: "string", default: "50" },
    roam: { type: "string", default: "8" },
    hotspots: { type: "string", default: "4" },
    "hotspot-share": { type: "string", default: "0.3" },
    "chat-chance": { type: "string", default: "0" },
    json: { type: "string" },
    /** Write a V8 CPU profile of each server, the whole run, into this directory (on exit). */
    "cpu-prof": { type: "string" },
    /** Write a V8 CPU profile of each server's measurement window into this directory (loadtest/probe.ts). */
    "cpu-prof-window": { type: "string" },
    /** With `--cpu-prof-window`: a sampling heap profile of the same window too (`window-<pid>.heapprofile`). */
    "heap-prof-window": { type: "boolean", default: false },
    /** Extra Node.js flags for the server processes, e.g. "--max-semi-space-size=4". */
    "server-node-options": { type: "string" },
    /** Settings for the game server, `NAME=value`, repeatable (e.g. `--server-env JOIN_CONCURRENCY=24`): the server's environment is otherwise the bench's own. */
    "server-env": { type: "string", multiple: true },
    /** At the end of each game-server measurement, SIGTERM the server with every bot still joined and check the shutdown save (loadtest/shutdown-check.ts). */
    "sigterm-joined": { type: "boolean", default: false },
    /** How the game server runs: "dist" (compiled, production flags) or "tsx" (from the sources, as `npm start`). */
    runtime: { type: "string", default: "dist" },
  },
});

cli.oneOf(args.runtime, ["dist", "tsx"], "--runtime");
cli.oneOf(args.decode, ["observers", "all"], "--decode");
export const SIZES = args.bots!.split(",").map((s) => cli.int(s.trim(), 2, 5_000, "--bots"));
export const BURST = args.burst === undefined ? undefined : cli.int(args.burst, 1, 20_000, "--burst");
export const TARGETS = args.targets!.split(",").map((s) => s.trim()) as TargetKind[];
for (const t of TARGETS) if (t !== "baseline" && t !== "game") cli.fail(`--targets: unknown target ${t} (baseline, game)`);
if (TARGETS.length !== 2) console.warn("bench:world: only one target: no ratios to the baseline will be printed");
export const SCENARIOS: ScenarioName[] = [];
if (args.crowd) SCENARIOS.push("crowd");
if (args.wander) SCENARIOS.push("wander");
if (args.spread) SCENARIOS.push("spread");
if (args.interest) SCENARIOS.push("interest");
if (SCENARIOS.length === 0 && BURST === undefined) SCENARIOS.push("crowd");
export const DURATION_S = cli.int(args.duration!, 5, 3_600, "--duration");
export const WARMUP_S = cli.int(args.warmup!, 0, 600, "--warmup");
export const JOIN_CONCURRENCY = cli.int(args["join-concurrency"]!, 1, 20_000, "--join-concurrency");
export const JOIN_TIMEOUT_MS = cli.int(args["join-timeout"]!, 5, 3_600, "--join-timeout") * 1000;
export const PREPARE_CONCURRENCY = cli.int(args["prepare-concurrency"]!, 1, 256, "--prepare-concurrency");
export const JOIN_DEADLINE_MS = cli.int(args["join-deadline"]!, 10, 7_200, "--join-deadline") * 1000;
export const BURST_HOLD_S = cli.int(args["burst-hold"]!, 0, 600, "--burst-hold");
export const ROAM = cli.int(args.roam!, 1, 20, "--roam");
export const HOTSPOTS = cli.int(args.hotspots!, 0, 8, "--hotspots");
export const HOTSPOT_SHARE = cli.num(args["hotspot-share"], 0, 1, "--hotspot-share");
export const CHAT_CHANCE = cli.num(args["chat-chance"], 0, 1, "--chat-chance");
export const TICK_MS = args["tick-ms"] ? cli.int(args["tick-ms"], 10, 10_000, "--tick-ms") : 600;
export const MOVE_EVERY_MS = 1_000;
export const EXTRA_NODE = args["server-node-options"]?.split(/\s+/).filter(Boolean) ?? [];
export const SERVER_NODE = [...(args.runtime === "tsx" ? [] : PROD_NODE_OPTIONS), ...EXTRA_NODE];
/** `--server-env NAME=value` settings for the game server. */
export const SERVER_ENV: Record<string, string> = Object.fromEntries(
  (args["server-env"] ?? []).map((kv) => {
    const m = /^([A-Z][A-Z0-9_]*)=(.*)$/.exec(kv);
    if (!m) cli.fail(`--server-env takes NAME=value, got ${kv}`);
    return [m![1]!, m![2]!];
  }),
);
export const workersFor = (n: number) => (args.workers ? cli.int(args.workers, 1, 32, "--workers") : Math.min(4, Math.max(2, Math.ceil(n / 400))));
export const probesFor = (n: number) => (args.probes ? cli.int(args.probes, 0, 500, "--probes") : Math.max(1, Math.min(25, Math.floor(n / 10))));
