import assert from "node:assert/strict";
import { ITEMS_KEPT_ON_DEATH, piles, planDeath, tally, type ItemCount } from "../../../src/domain/death.js";
import { inventoryToSlots } from "../../../src/domain/inventory.js";
import { MAX_STACK } from "../../../src/domain/types.js";
import { lookup } from "./fixtures.js";

const held = (...entries: [string, number][]): ItemCount[] => entries.map(([itemId, quantity]) => ({ itemId, quantity }));
/** The kept inventory as sorted `itemId×quantity` entries, one a slot. */
const slots = (plan: ReturnType<typeof planDeath>) =>
  inventoryToSlots(plan.inventory)
    .map((s) => `${s.itemId}×${s.quantity}`)
    .sort();
const expectedSlots = (kept: ItemCount[]) =>
  kept.flatMap((k) => (lookup(k.itemId)?.stackable ? [`${k.itemId}×${k.quantity}`] : Array.from({ length: k.quantity }, () => `${k.itemId}×1`))).sort();

describe("domain/death planDeath", () => {
  // [name, held, kept, dropped]: values are axe 16, air_rune 10 (stackable), logs 4, feather 2 (stackable), token 0.
  const cases: [string, ItemCount[], ItemCount[], ItemCount[]][] = [
    ["nothing held", [], [], []],
    ["three items or fewer are all kept", held(["bronze_axe", 1], ["logs", 2]), held(["bronze_axe", 1], ["logs", 2]), []],
    ["the three most valuable units stay", held(["logs", 3], ["bronze_axe", 2]), held(["bronze_axe", 2], ["logs", 1]), held(["logs", 2])],
    [
      "a stack is one unit worth its whole value",
      held(["air_rune", 100], ["bronze_axe", 3]),
      held(["air_rune", 100], ["bronze_axe", 2]),
      held(["bronze_axe", 1]),
    ],
    ["a cheap stack loses to dearer units", held(["feather", 5], ["logs", 3]), held(["feather", 5], ["logs", 2]), held(["logs", 1])],
    ["unknown items are worth nothing", held(["mystery", 1], ["logs", 3]), held(["logs", 3]), held(["mystery", 1])],
  ];
  for (const [name, items, kept, dropped] of cases) {
    it(name, () => {
      const plan = planDeath(items, lookup);
      assert.deepEqual(plan.kept, kept);
      assert.deepEqual(plan.dropped, dropped);
      assert.deepEqual(slots(plan), expectedSlots(kept), "the kept units, in a fresh inventory");
    });
  }

  it(`keeps ${ITEMS_KEPT_ON_DEATH} by default, or as many as asked`, () => {
    assert.equal(planDeath(held(["logs", 5]), lookup).kept[0]!.quantity, 3);
    assert.equal(planDeath(held(["logs", 5]), lookup, 1).kept[0]!.quantity, 1);
  });

  it("never loses a unit: kept plus dropped is what was held", () => {
    const items = held(["logs", 4], ["air_rune", 7], ["bronze_axe", 2], ["feather", 9], ["quest_token", 1]);
    const plan = planDeath(items, lookup);
    assert.deepEqual(
      tally([...plan.kept, ...plan.dropped]).sort((a, b) => a.itemId.localeCompare(b.itemId)),
      tally(items).sort((a, b) => a.itemId.localeCompare(b.itemId)),
    );
  });
});

describe("domain/death piles", () => {
  const cases: [string, ItemCount[], ItemCount[]][] = [
    ["sums per item", held(["logs", 1], ["feather", 2], ["logs", 2]), held(["logs", 3], ["feather", 2])],
    ["splits a total past the cap", held(["air_rune", MAX_STACK], ["air_rune", 5]), held(["air_rune", MAX_STACK], ["air_rune", 5])],
    ["nothing from nothing", [], []],
  ];
  for (const [name, list, expected] of cases) it(name, () => assert.deepEqual(piles(list), expected));
});
