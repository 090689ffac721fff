/**
 * A walking scenario of bench:world (`--crowd`, `--wander`, `--spread`): where its bots live, and
 * whether they walk around their homes or drift from where they stand.
 */
import type { GameContent } from "../../../src/content/load.js";
import type { Tile } from "../../bot.js";
import type { BotSpec } from "../../bot-worker.js";
import type { WalkScenario } from "../options.js";

export interface Scenario {
  name: WalkScenario;
  /** Each move goes to a tile within `--roam` of where the bot stands (true) or of its home (false). */
  drift: boolean;
  /** Bot specs: probe pairs first (observer, mover: `pairs` of them), then walkers. */
  specs(n: number, pairs: number, content: GameContent, rng: () => number): BotSpec[];
}

/** `pairs` probe pairs at `spotOf(p)`, then walkers at `homeOf(i)` up to `n` bots. */
export function pairsThenWalkers(n: number, pairs: number, spotOf: (pair: number) => Tile, homeOf: (i: number) => Tile): BotSpec[] {
  const out: BotSpec[] = [];
  for (let p = 0; p < pairs; p++) {
    const spot = spotOf(p);
    out.push({ n: out.length, home: spot, group: "all", role: "observer", pair: p });
    out.push({ n: out.length, home: spot, group: "all", role: "mover", pair: p });
  }
  while (out.length < n) out.push({ n: out.length, home: homeOf(out.length), group: "all", role: "wander" });
  return out;
}
