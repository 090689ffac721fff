/**
 * `--wander`: every bot joins at the spawn, as in `--crowd`, then once a second runs to a random free
 * tile within `--roam` (8) tiles of where it stands (not of its home), so the crowd drifts apart over
 * minutes. Where a bot stands is reckoned by its worker from its last move and the time since, at
 * running pace (bot.ts `standingAt`); the probe pairs stay at the spawn as in `--crowd`.
 */
import { crowd } from "./crowd.js";
import type { Scenario } from "./scenario.js";

export const wander: Scenario = { name: "wander", drift: true, specs: crowd.specs };
