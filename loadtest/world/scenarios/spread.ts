/**
 * `--spread`: bots over the whole map (homes out of reach of aggressive NPCs), `--hotspot-share` of
 * them in `--hotspots` crowds; each runs within `--roam` tiles of its home. Probe pairs sit
 * alternately in a hotspot and at a bot's home out in the open.
 */
import type { Tile } from "../../bot.js";
import { hotspots, safeHomes, shuffle } from "../../fleet.js";
import { HOTSPOT_SHARE, HOTSPOTS, ROAM } from "../options.js";
import { pairsThenWalkers, type Scenario } from "./scenario.js";

export const spread: Scenario = {
  name: "spread",
  drift: false,
  specs(n, pairs, content, rng) {
    const all = safeHomes(content, ROAM);
    const hot = hotspots(all, HOTSPOTS);
    const inHot = hot.length ? Math.round(n * HOTSPOT_SHARE) : 0;
    const wide = shuffle(all, rng);
    let homes: Tile[] = Array.from({ length: n }, (_, i) => (i < inHot ? hot[i % hot.length]! : wide[(i - inHot) % wide.length]!));
    homes = shuffle(homes, rng);
    console.log(
      `  spread: ${inHot} bots in ${hot.length} hotspots (${hot.map((t) => `${t.x},${t.z}`).join("; ")}), ${n - inHot} over ${all.length} homes across the map`,
    );
    return pairsThenWalkers(
      n,
      pairs,
      (p) => (p % 2 === 0 && hot.length ? hot[(p / 2) % hot.length]! : homes[p]!),
      (i) => homes[i]!,
    );
  },
};
