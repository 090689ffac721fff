import assert from "node:assert/strict";
import { rollLoot, type LootTable } from "../../../src/domain/loot.js";
import { seq } from "./fixtures.js";

const goblin: LootTable = {
  always: [{ itemId: "bones", quantity: 1 }],
  rolls: 1,
  nothingWeight: 2,
  table: [
    { itemId: "coins", min: 5, max: 15, weight: 1 },
    { itemId: "bronze_axe", min: 1, max: 1, weight: 1 },
  ],
};

describe("domain/loot rollLoot", () => {
  // Total weight 4: a draw × 4 below 2 is nothing, [2, 3) coins, [3, 4) the axe.
  const cases: [string, LootTable, number[], { itemId: string; quantity: number }[]][] = [
    ["nothing rolled: only the always-drops", goblin, [0.49], [{ itemId: "bones", quantity: 1 }]],
    [
      "the first entry, quantity from the second draw (min)",
      goblin,
      [0.5, 0],
      [
        { itemId: "bones", quantity: 1 },
        { itemId: "coins", quantity: 5 },
      ],
    ],
    [
      "the first entry, quantity at max",
      goblin,
      [0.74, 0.999],
      [
        { itemId: "bones", quantity: 1 },
        { itemId: "coins", quantity: 15 },
      ],
    ],
    [
      "the second entry",
      goblin,
      [0.75, 0],
      [
        { itemId: "bones", quantity: 1 },
        { itemId: "bronze_axe", quantity: 1 },
      ],
    ],
    [
      "two rolls",
      { ...goblin, rolls: 2 },
      [0.9, 0, 0.1],
      [
        { itemId: "bones", quantity: 1 },
        { itemId: "bronze_axe", quantity: 1 },
      ],
    ],
    ["no rolls, no draws", { ...goblin, rolls: 0 }, [], [{ itemId: "bones", quantity: 1 }]],
    [
      "no nothing-weight: every roll lands",
      { ...goblin, nothingWeight: 0 },
      [0, 0.5],
      [
        { itemId: "bones", quantity: 1 },
        { itemId: "coins", quantity: 10 },
      ],
    ],
  ];
  for (const [name, table, draws, expected] of cases) {
    it(name, () => {
      let n = 0;
      const rng = seq(...(draws.length ? draws : [0]));
      assert.deepEqual(
        rollLoot(table, () => (n++, rng())),
        expected,
      );
      assert.equal(n, draws.length, "draws");
    });
  }

  it("does not share the table's always-drops", () => {
    const out = rollLoot({ ...goblin, rolls: 0 }, seq(0));
    out[0]!.quantity = 99;
    assert.equal(goblin.always[0]!.quantity, 1);
  });
});
