/** bench:world --wander: where a drifting bot stands, reckoned from its last move (loadtest/bot.ts `standingAt`). */
import assert from "node:assert/strict";
import { standingAt } from "../../../loadtest/bot.js";
import { RUN_TILES_PER_TICK } from "../../../src/domain/movement.js";

describe("bench:world --wander: standingAt", () => {
  const from = { x: 0, z: 0 };

  it("stands where it started until a tick has passed", () => {
    assert.deepEqual(standingAt(from, { x: 8, z: 3 }, 599, 600), from);
  });

  it("runs RUN_TILES_PER_TICK tiles a tick on each axis towards the target (diagonal steps first)", () => {
    assert.deepEqual(standingAt(from, { x: 8, z: 3 }, 600, 600), { x: RUN_TILES_PER_TICK, z: RUN_TILES_PER_TICK });
    assert.deepEqual(standingAt(from, { x: 8, z: 3 }, 1_200, 600), { x: 2 * RUN_TILES_PER_TICK, z: 3 });
    assert.deepEqual(standingAt(from, { x: -8, z: -1 }, 1_200, 600), { x: -2 * RUN_TILES_PER_TICK, z: -1 });
  });

  it("stops at the target", () => {
    assert.deepEqual(standingAt(from, { x: 8, z: -3 }, 60_000, 600), { x: 8, z: -3 });
  });
});
