/**
 * `npm run chaos [-- --minutes 10 --bots 60 --seed 1]`: the chaos run (docs/chaos.md). Needs
 * PostgreSQL (CHAOS_DATABASE_URL, else TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres:
 * the run creates a database of its own there and drops it after) and `redis-server` on the PATH.
 * Prints the report; exits 1 on any violation, 2 when the run itself failed.
 */
import { parseArgs } from "node:util";
import { runChaos } from "./harness.js";

const { values } = parseArgs({
  options: {
    minutes: { type: "string", default: "10" },
    bots: { type: "string", default: "60" },
    seed: { type: "string" },
    "tick-ms": { type: "string", default: "200" },
    "lease-ttl": { type: "string", default: "3" },
  },
});
const num = (name: string, v: string | undefined, min: number) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n < min) {
    console.error(`chaos: --${name} must be a number of at least ${min}`);
    process.exit(2);
  }
  return n;
};
const seed = values.seed === undefined ? Math.floor(Math.random() * 1_000_000) : num("seed", values.seed, 0);
const pgUrl = process.env.CHAOS_DATABASE_URL || process.env.TEST_DATABASE_URL || "postgres://postgres@127.0.0.1:5432/postgres";

process.once("SIGINT", () => process.exit(130));
try {
  const r = await runChaos({
    minutes: num("minutes", values.minutes, 0.1),
    bots: num("bots", values.bots, 2),
    seed,
    pgUrl,
    tickMs: num("tick-ms", values["tick-ms"], 10),
    leaseTtlSeconds: num("lease-ttl", values["lease-ttl"], 2),
  });
  console.log(r.report);
  console.log(`seed ${seed}: rerun with --seed ${seed}`);
  process.exit(r.violations.length === 0 ? 0 : 1);
} catch (e) {
  console.error(`chaos: the run failed: ${(e as Error).stack ?? String(e)}`);
  process.exit(2);
}
