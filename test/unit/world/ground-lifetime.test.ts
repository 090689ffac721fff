/**
 * GROUND_ITEM_LIFETIME_TICKS (docs/operations.md#settings): a pile lives that many ticks, never fewer than
 * it stays private, and each despawn is counted in `realm_ground_piles_despawned_total`.
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { Metrics } from "../../../src/metrics.js";
import { GROUND_ITEM_LIFETIME_TICKS, GROUND_ITEM_PRIVATE_TICKS } from "../../../src/world/world.js";
import { worldWithoutStorage } from "../../helpers/world.js";

describe("ground item lifetime", () => {
  let content: GameContent;
  before(async () => {
    content = await loadContent("world/manifests");
  });

  const lifetimeOf = (lifetime: number | undefined, metrics?: Metrics) => {
    const world = worldWithoutStorage(content, { now: () => 0, groundItemLifetimeTicks: lifetime, metrics });
    world.ground.drop("bones", 1, 10, 10);
    let ticks = 0;
    while (world.groundItems.size > 0 && ticks < 10_000) {
      world.step();
      ticks++;
    }
    return ticks;
  };

  it("lives GROUND_ITEM_LIFETIME_TICKS by default", () => {
    assert.equal(lifetimeOf(undefined), GROUND_ITEM_LIFETIME_TICKS);
  });

  it("lives as long as the setting says, and the despawn is counted", async () => {
    const metrics = new Metrics(600);
    assert.equal(lifetimeOf(1_234, metrics), 1_234);
    assert.match(await metrics.registry.metrics(), /^realm_ground_piles_despawned_total 1$/m);
  });

  it("never lives less than it stays private", () => {
    assert.equal(lifetimeOf(GROUND_ITEM_PRIVATE_TICKS - 50), GROUND_ITEM_PRIVATE_TICKS);
  });
});
