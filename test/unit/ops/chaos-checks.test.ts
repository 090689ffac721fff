/**
 * The checks of the chaos run (loadtest/chaos/report.ts, docs/chaos.md "What it checks") on facts
 * made by hand: each kind of violation is reported, and a balanced run has none. The ground reader
 * finds pile-shaped objects wherever a `world_chunks` row keeps them.
 */
import assert from "node:assert/strict";
import { pilesIn } from "../../../loadtest/chaos/ground.js";
import { check, type ChaosFacts } from "../../../loadtest/chaos/report.js";

const facts = (over: Partial<ChaosFacts> = {}): ChaosFacts => ({
  seconds: 60,
  start: { coins: 50, bread: 2 },
  end: { coins: 50, bread: 2 },
  groundAtStart: { totals: {}, sources: ["world_chunks: 0 rows, 0 piles"] },
  groundAtEnd: { totals: {}, sources: ["world_chunks: 0 rows, 0 piles"] },
  tradesSeen: new Map([["t1", "p1/w1"]]),
  audits: new Set(["t1", "t2"]),
  doublePlays: [],
  openDeaths: 0,
  outcomes: new Map([["trade:completed", 1]]),
  faults: [{ at: 1_000, kind: "stall", target: "p1" }],
  faultErrors: [],
  bots: [],
  watched: new Map(),
  storageDown: [],
  uncleanExits: [],
  logFile: "/tmp/x.log",
  ...over,
});

describe("chaos run checks", () => {
  it("passes a run whose totals, audits and worlds hold", () => {
    const r = check(facts());
    assert.deepEqual(r.violations, []);
    assert.deepEqual(r.delta, {});
    assert.match(r.report, /violations: none/);
  });

  it("reports items created and lost, item by item", () => {
    const r = check(facts({ end: { coins: 51, bread: 1 } }));
    assert.deepEqual(r.delta, { bread: -1, coins: 1 });
    assert.deepEqual(r.violations, ["conservation: 1 items created and 1 lost (bread -1, coins +1)"]);
  });

  it("counts the ground: an item moved from a character to a stored pile is neither created nor lost", () => {
    const r = check(facts({ end: { coins: 50, bread: 1 }, groundAtEnd: { totals: { bread: 1 }, sources: ["world_chunks: 1 rows, 1 piles"] } }));
    assert.deepEqual(r.violations, []);
  });

  it("reports a completed trade without its audit record", () => {
    const r = check(facts({ tradesSeen: new Map([["t9", "p2/w2"]]) }));
    assert.equal(r.violations.length, 1);
    assert.match(r.violations[0]!, /^audits: 1 trades seen completed have no completed audit record \(e\.g\. t9\)/);
  });

  it("reports a character played by two worlds at once, with the faults before it", () => {
    const d = { character: "c1", event: "player:sync", stale: "p3/w1", current: "p2/w2", at: 5_000, loadedAt: 4_000 };
    const r = check(facts({ doublePlays: [d, { ...d, at: 5_100 }] }));
    assert.deepEqual(r.violations, [
      "one world at a time: c1 got player:sync from p3/w1 1000 ms after p2/w2 had loaded it (faults in the 20 s before: stall p1 -4.0 s)",
    ]);
  });

  it("finds piles wherever a world chunk keeps them", () => {
    const data = { piles: [{ itemId: "bread", quantity: 2, ownerId: "c1" }], fires: [{ x: 1 }], nested: { more: [{ itemId: "coins", quantity: 5 }] } };
    assert.deepEqual(pilesIn(data), [
      { itemId: "bread", quantity: 2 },
      { itemId: "coins", quantity: 5 },
    ]);
    assert.deepEqual(pilesIn({ itemId: "bread", quantity: 0 }), []);
  });
});
