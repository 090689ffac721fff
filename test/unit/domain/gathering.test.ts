import assert from "node:assert/strict";
import { burnChance, COOKING_ERROR, rollCook, type BurnCurve } from "../../../src/domain/cooking.js";
import { unwrap } from "../../../src/domain/errors.js";
import {
  depleteAfterSuccess,
  depleteNode,
  freshNode,
  GATHER_ERROR,
  gatherFromNode,
  gatherSuccessChance,
  isDepleted,
  nodeCurve,
  respawnIfDue,
  rollDepletion,
  rollGather,
} from "../../../src/domain/gathering.js";
import { FakeClock, seq } from "./fixtures.js";

const near = (a: number, b: number) => Math.abs(a - b) < 1e-9;

describe("domain/gathering", () => {
  describe("gatherSuccessChance", () => {
    const cases: [string, number, number, number, number][] = [
      ["below the requirement", 14, 15, 0, 0],
      ["at the requirement", 15, 15, 0, 0.25],
      ["10 levels above", 25, 15, 0, 0.35],
      ["with a tier 2 tool", 15, 15, 2, 0.35],
      ["capped", 99, 1, 5, 0.95],
    ];
    for (const [name, level, req, tier, expected] of cases) {
      it(`${name} → ${expected}`, () => assert.ok(near(gatherSuccessChance(level, req, tier), expected)));
    }
    it("never decreases with level or tool tier", () => {
      for (let l = 1; l < 99; l++) assert.ok(gatherSuccessChance(l + 1, 1) >= gatherSuccessChance(l, 1));
      for (let t = 0; t < 6; t++) assert.ok(gatherSuccessChance(30, 15, t + 1) >= gatherSuccessChance(30, 15, t));
    });
  });

  describe("rollGather", () => {
    it("succeeds below the chance and fails at or above it", () => {
      assert.equal(unwrap(rollGather({ level: 15, requiredLevel: 15 }, seq(0.24))).success, true);
      assert.equal(unwrap(rollGather({ level: 15, requiredLevel: 15 }, seq(0.25))).success, false);
    });
    it("refuses a level below the requirement", () => {
      const r = rollGather({ level: 1, requiredLevel: 15 }, seq(0));
      assert.equal(!r.ok && r.error.code, GATHER_ERROR.LEVEL_TOO_LOW);
    });
  });

  describe("depletion", () => {
    it("depletes, stays depleted until the respawn time, then is available", () => {
      const clock = new FakeClock();
      const node = depleteNode(freshNode(), clock.now, 10_000);
      assert.equal(isDepleted(node, clock.now), true);
      assert.equal(isDepleted(node, clock.advance(9_999)), true);
      assert.equal(isDepleted(node, clock.advance(1)), false);
      assert.deepEqual(respawnIfDue(node, clock.now), freshNode());
    });
    it("rollDepletion compares the draw with the chance", () => {
      assert.equal(rollDepletion(1, seq(0.999)), true);
      assert.equal(rollDepletion(0, seq(0)), false);
      assert.equal(rollDepletion(0.125, seq(0.1)), true);
    });
    it("gatherFromNode: success then depletion, then refusal while depleted", () => {
      const clock = new FakeClock();
      const attempt = { level: 1, requiredLevel: 1, depleteChance: 0.5, respawnMs: 5_000 };
      const first = unwrap(gatherFromNode(freshNode(), attempt, clock.now, seq(0.1, 0.2)));
      assert.deepEqual([first.success, first.depleted], [true, true]);
      const refused = gatherFromNode(first.node, attempt, clock.advance(1_000), seq(0));
      assert.equal(!refused.ok && refused.error.code, GATHER_ERROR.DEPLETED);
      const later = unwrap(gatherFromNode(first.node, attempt, clock.advance(4_000), seq(0.9)));
      assert.deepEqual([later.success, later.depleted], [false, false]);
    });
  });
});

describe("domain/cooking", () => {
  const shrimp: BurnCurve = { requiredLevel: 1, stopBurnLevel: 34, maxBurnChance: 0.6 };
  const cases: [number, number][] = [
    [1, 0.6],
    [34, 0],
    [50, 0],
    [17.5, 0.3],
  ];
  for (const [level, expected] of cases) {
    it(`burn chance at level ${level} is ${expected}`, () => assert.ok(near(burnChance(level, shrimp), expected)));
  }
  it("burn chance falls as level rises", () => {
    for (let l = 1; l < 40; l++) assert.ok(burnChance(l + 1, shrimp) <= burnChance(l, shrimp));
  });
  it("rolls cooked or burnt", () => {
    assert.equal(unwrap(rollCook(1, shrimp, seq(0.59))), "burnt");
    assert.equal(unwrap(rollCook(1, shrimp, seq(0.6))), "cooked");
    assert.equal(unwrap(rollCook(34, shrimp, seq(0))), "cooked");
  });
  it("refuses below the required level", () => {
    const r = rollCook(10, { requiredLevel: 15, stopBurnLevel: 50 }, seq(0));
    assert.equal(!r.ok && r.error.code, COOKING_ERROR.LEVEL_TOO_LOW);
  });
});

describe("domain/gathering for content nodes", () => {
  // [name, successBase, level, required, tier, chance]: the node's base, then +0.01 a level and +0.05 a tier, at most 0.95.
  const chances: [string, number, number, number, number, number][] = [
    ["the node's own base at its level", 0.45, 1, 1, 0, 0.45],
    ["plus a level above", 0.4, 11, 1, 0, 0.5],
    ["plus a tool tier", 0.3, 20, 20, 2, 0.4],
    ["capped at 0.95", 0.9, 99, 1, 3, 0.95],
  ];
  for (const [name, base, level, req, tier, expected] of chances) {
    it(`nodeCurve: ${name} → ${expected}`, () => assert.ok(near(gatherSuccessChance(level, req, tier, nodeCurve(base)), expected)));
  }

  // [name, node, remaining, draw, expected]
  const depletion: [
    string,
    { resourcesPerNode?: number; depleteChance?: number },
    number | undefined,
    number,
    { depleted: boolean; remaining: number | undefined },
  ][] = [
    ["a one-ore rock runs out", { resourcesPerNode: 1 }, 1, 0.9, { depleted: true, remaining: 0 }],
    ["a counted node with successes left", { resourcesPerNode: 3 }, 3, 0, { depleted: false, remaining: 2 }],
    ["a tree falls under its chance", { depleteChance: 0.125 }, undefined, 0.1, { depleted: true, remaining: undefined }],
    ["a tree stands at or over it", { depleteChance: 0.125 }, undefined, 0.125, { depleted: false, remaining: undefined }],
  ];
  for (const [name, node, remaining, draw, expected] of depletion) {
    it(`depleteAfterSuccess: ${name}`, () => {
      let n = 0;
      assert.deepEqual(
        depleteAfterSuccess(node, remaining, () => (n++, draw)),
        expected,
      );
      assert.equal(n, node.resourcesPerNode === undefined ? 1 : 0, "draws only for chance nodes");
    });
  }
});
