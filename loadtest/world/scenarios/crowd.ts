/**
 * `--crowd`: every bot joins at the spawn, then runs to a random free tile within `--roam` (8) tiles
 * of the spawn once a second: the crowd stays together and everyone sees everyone.
 */
import { pairsThenWalkers, type Scenario } from "./scenario.js";

export const crowd: Scenario = {
  name: "crowd",
  drift: false,
  specs: (n, pairs, content) =>
    pairsThenWalkers(
      n,
      pairs,
      () => content.spawn,
      () => content.spawn,
    ),
};
