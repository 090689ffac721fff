/** The options of `npm run soak` (documented at the top of loadtest/soak.ts) and the run's seeded choices. */
import { parseArgs } from "node:util";
import { cli as cliFor } from "../lib/cli.js";
import { seededRng } from "../lib/random.js";

export const cli = cliFor("soak");
/** RSS may grow by less than this share over the second half of the run. */
export const MEMORY_LIMIT = 0.1;

export const { values: args } = parseArgs({
  options: {
    bots: { type: "string", default: "300" },
    minutes: { type: "string", default: "10" },
    db: { type: "string", default: "postgres://postgres@127.0.0.1:5432/soak" },
    json: { type: "string" },
    "save-interval": { type: "string", default: "10" },
    seed: { type: "string", default: "1" },
    /** Use dist/ as it is (development only: the soak's point is to run what `npm run build` makes). */
    "skip-build": { type: "boolean", default: false },
  },
});
export const BOTS = cli.int(args.bots!, 2, 2_000, "--bots");
export const MINUTES = cli.num(args.minutes, 1, 240, "--minutes");

export const RUN_MS = MINUTES * 60_000;
export const rng = seededRng(cli.int(args.seed!, 0, 1e9, "--seed"));

export const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
