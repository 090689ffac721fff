/**
 * `--spread`: bots over the whole map (homes out of reach of aggressive NPCs), `--hotspot-share` of
 * them in `--hotspots` crowds (fleet.ts `placement`, as bench:scale places them); each runs within
 * `--roam` tiles of its home. Probe pairs sit alternately in a hotspot and at a bot's home out in
 * the open.
 */
import { placement } from "../../fleet.js";
import { HOTSPOT_SHARE, HOTSPOTS, ROAM } from "../options.js";
import { pairsThenWalkers, type Scenario } from "./scenario.js";

export const spread: Scenario = {
  name: "spread",
  drift: false,
  specs(n, pairs, content, rng) {
    const { homes, hot, description } = placement("spread", n, content, rng, { roam: ROAM, hotspots: HOTSPOTS, hotspotShare: HOTSPOT_SHARE });
    console.log(`  spread: ${description}`);
    return pairsThenWalkers(
      n,
      pairs,
      (p) => (p % 2 === 0 && hot.length ? hot[(p / 2) % hot.length]! : homes[p]!),
      (i) => homes[i]!,
    );
  },
};
