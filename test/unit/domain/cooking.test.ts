import assert from "node:assert/strict";
import { burnChance, COOKING_ERROR, rollCook, type BurnCurve, type CookingErrorCode } from "../../../src/domain/cooking.js";
import { seq } from "./fixtures.js";

describe("domain/cooking rollCook", () => {
  const trout: BurnCurve = { requiredLevel: 15, stopBurnLevel: 50 };
  // [name, level, draw, outcome]: the default max burn chance 0.6 at the required level.
  const cases: [string, number, number, "cooked" | "burnt" | CookingErrorCode][] = [
    ["below the level", 14, 0, COOKING_ERROR.LEVEL_TOO_LOW],
    ["at the level, a draw under 0.6 burns", 15, 0.59, "burnt"],
    ["at the level, 0.6 cooks", 15, 0.6, "cooked"],
    ["half way, under 0.3 burns", 32.5, 0.29, "burnt"],
    ["half way, 0.3 cooks", 32.5, 0.3, "cooked"],
    ["from the stop-burn level, never burns", 50, 0, "cooked"],
  ];
  for (const [name, level, draw, expected] of cases) {
    it(name, () => {
      const r = rollCook(level, trout, seq(draw));
      assert.equal(r.ok ? r.value : r.error.code, expected);
    });
  }
  it("draws once, comparing with burnChance", () => {
    let n = 0;
    rollCook(20, trout, () => (n++, 0.5));
    assert.equal(n, 1);
    assert.ok(Math.abs(burnChance(20, trout) - 0.6 * (1 - 5 / 35)) < 1e-9);
  });
  it("refuses with the level it needs", () => {
    const r = rollCook(1, trout, seq(0));
    assert.equal(!r.ok && r.error.message, "You need cooking level 15 to cook that.");
  });
});
