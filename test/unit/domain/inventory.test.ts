import assert from "node:assert/strict";
import { unwrap } from "../../../src/domain/errors.js";
import {
  addItem,
  applyChanges,
  canHold,
  countItem,
  emptyInventory,
  freeSlots,
  INVENTORY_ERROR,
  inventoryFromSlots,
  inventoryToSlots,
  moveSlot,
  removeFromSlot,
  removeItem,
  transact,
  type Inventory,
} from "../../../src/domain/inventory.js";
import { MAX_STACK } from "../../../src/domain/types.js";
import { fullExcept, inv, ITEMS } from "./fixtures.js";

function code(r: { ok: boolean; error?: { code: string } }): string | undefined {
  return r.ok ? undefined : r.error!.code;
}

describe("domain/inventory", () => {
  describe("representation", () => {
    it("is 28 entries, index = slot, null = empty", () => {
      const i = inv([3, "logs", 1]);
      assert.equal(i.length, 28);
      assert.equal(i[0], null);
      assert.deepEqual(i[3], { slot: 3, itemId: "logs", quantity: 1 });
      assert.ok(Object.isFrozen(i));
    });
    it("round-trips through the compact list in slot order", () => {
      const list = [
        { slot: 5, itemId: "feather", quantity: 30 },
        { slot: 1, itemId: "logs", quantity: 1 },
      ];
      assert.deepEqual(inventoryToSlots(unwrap(inventoryFromSlots(list))), [list[1], list[0]]);
    });
    const bad: [string, { slot: number; itemId: string; quantity: number }[], string][] = [
      ["slot 28", [{ slot: 28, itemId: "logs", quantity: 1 }], INVENTORY_ERROR.INVALID_SLOT],
      ["slot -1", [{ slot: -1, itemId: "logs", quantity: 1 }], INVENTORY_ERROR.INVALID_SLOT],
      ["slot 1.5", [{ slot: 1.5, itemId: "logs", quantity: 1 }], INVENTORY_ERROR.INVALID_SLOT],
      ["quantity 0", [{ slot: 0, itemId: "logs", quantity: 0 }], INVENTORY_ERROR.INVALID_QUANTITY],
      ["quantity over MAX_STACK", [{ slot: 0, itemId: "logs", quantity: MAX_STACK + 1 }], INVENTORY_ERROR.INVALID_QUANTITY],
      [
        "duplicate slot",
        [
          { slot: 0, itemId: "logs", quantity: 1 },
          { slot: 0, itemId: "feather", quantity: 1 },
        ],
        INVENTORY_ERROR.INVALID_INVENTORY,
      ],
      ["empty item id", [{ slot: 0, itemId: "", quantity: 1 }], INVENTORY_ERROR.INVALID_INVENTORY],
    ];
    for (const [name, list, expected] of bad) {
      it(`refuses ${name}`, () => assert.equal(code(inventoryFromSlots(list)), expected));
    }
    it("refuses operations on an array that is not 28 slots", () => {
      assert.equal(code(addItem([] as Inventory, ITEMS.logs, 1)), INVENTORY_ERROR.INVALID_INVENTORY);
    });
  });

  describe("queries", () => {
    it("counts items and free slots", () => {
      const i = inv([0, "logs", 1], [4, "logs", 1], [7, "feather", 50]);
      assert.equal(countItem(i, "logs"), 2);
      assert.equal(countItem(i, "feather"), 50);
      assert.equal(countItem(i, "air_rune"), 0);
      assert.equal(freeSlots(i), 25);
      assert.equal(freeSlots(emptyInventory()), 28);
    });
  });

  describe("addItem", () => {
    it("merges a stackable into its existing stack", () => {
      const next = unwrap(addItem(inv([5, "feather", 10]), ITEMS.feather, 15));
      assert.deepEqual(inventoryToSlots(next), [{ slot: 5, itemId: "feather", quantity: 25 }]);
    });
    it("puts a new stackable in the lowest free slot", () => {
      const next = unwrap(addItem(inv([0, "logs", 1], [2, "logs", 1]), ITEMS.feather, 7));
      assert.deepEqual(next[1], { slot: 1, itemId: "feather", quantity: 7 });
    });
    it("gives each non-stackable unit its own lowest free slot", () => {
      const next = unwrap(addItem(inv([1, "logs", 1]), ITEMS.axe, 3));
      assert.deepEqual(
        inventoryToSlots(next).map((s) => [s.slot, s.itemId]),
        [
          [0, "bronze_axe"],
          [1, "logs"],
          [2, "bronze_axe"],
          [3, "bronze_axe"],
        ],
      );
    });
    it("merges a stackable even when the inventory is full", () => {
      const full = unwrap(addItem(fullExcept(9), ITEMS.feather, 1));
      assert.equal(countItem(unwrap(addItem(full, ITEMS.feather, 5)), "feather"), 6);
    });
    it("fills a stack exactly to MAX_STACK", () => {
      const next = unwrap(addItem(inv([0, "feather", MAX_STACK - 1]), ITEMS.feather, 1));
      assert.equal(next[0]!.quantity, MAX_STACK);
    });
    const refusals: [string, Inventory, keyof typeof ITEMS, number, string][] = [
      ["a new stackable into a full inventory", fullExcept(), "feather", 1, INVENTORY_ERROR.INVENTORY_FULL],
      ["a non-stackable into a full inventory", fullExcept(), "axe", 1, INVENTORY_ERROR.INVENTORY_FULL],
      ["more non-stackables than free slots (all or nothing)", fullExcept(3, 4), "axe", 3, INVENTORY_ERROR.INVENTORY_FULL],
      ["a stack past MAX_STACK", inv([0, "feather", MAX_STACK]), "feather", 1, INVENTORY_ERROR.STACK_OVERFLOW],
      ["quantity 0", emptyInventory(), "feather", 0, INVENTORY_ERROR.INVALID_QUANTITY],
      ["quantity -3", emptyInventory(), "feather", -3, INVENTORY_ERROR.INVALID_QUANTITY],
      ["quantity 2.5", emptyInventory(), "feather", 2.5, INVENTORY_ERROR.INVALID_QUANTITY],
      ["quantity over MAX_STACK", emptyInventory(), "feather", MAX_STACK + 1, INVENTORY_ERROR.INVALID_QUANTITY],
    ];
    for (const [name, start, key, qty, expected] of refusals) {
      it(`refuses ${name} with ${expected} and leaves the input unchanged`, () => {
        const before = inventoryToSlots(start);
        assert.equal(code(addItem(start, ITEMS[key], qty)), expected);
        assert.deepEqual(inventoryToSlots(start), before);
      });
    }
  });

  describe("removeFromSlot", () => {
    const start = inv([2, "feather", 10], [3, "logs", 1]);
    it("reduces a stack", () => assert.equal(unwrap(removeFromSlot(start, 2, 4))[2]!.quantity, 6));
    it("empties a slot taken whole", () => assert.equal(unwrap(removeFromSlot(start, 2, 10))[2], null));
    const refusals: [string, number, number, string][] = [
      ["an empty slot", 0, 1, INVENTORY_ERROR.EMPTY_SLOT],
      ["more than the slot holds", 2, 11, INVENTORY_ERROR.INSUFFICIENT_QUANTITY],
      ["slot 28", 28, 1, INVENTORY_ERROR.INVALID_SLOT],
      ["slot -1", -1, 1, INVENTORY_ERROR.INVALID_SLOT],
      ["slot 0.5", 0.5, 1, INVENTORY_ERROR.INVALID_SLOT],
      ["quantity 0", 2, 0, INVENTORY_ERROR.INVALID_QUANTITY],
    ];
    for (const [name, slot, qty, expected] of refusals) {
      it(`refuses ${name} with ${expected}`, () => assert.equal(code(removeFromSlot(start, slot, qty)), expected));
    }
  });

  describe("removeItem", () => {
    it("takes from the lowest slots first across slots", () => {
      const next = unwrap(removeItem(inv([1, "logs", 1], [4, "logs", 1], [9, "logs", 1]), "logs", 2));
      assert.deepEqual(inventoryToSlots(next), [{ slot: 9, itemId: "logs", quantity: 1 }]);
    });
    it("refuses more than is held, changing nothing", () => {
      const start = inv([1, "logs", 1]);
      assert.equal(code(removeItem(start, "logs", 2)), INVENTORY_ERROR.INSUFFICIENT_QUANTITY);
      assert.equal(countItem(start, "logs"), 1);
    });
  });

  describe("moveSlot", () => {
    it("swaps two occupied slots, keeping slot fields in step", () => {
      const next = unwrap(moveSlot(inv([0, "logs", 1], [5, "feather", 3]), 0, 5));
      assert.deepEqual(next[0], { slot: 0, itemId: "feather", quantity: 3 });
      assert.deepEqual(next[5], { slot: 5, itemId: "logs", quantity: 1 });
    });
    it("moves into an empty slot", () => {
      const next = unwrap(moveSlot(inv([0, "logs", 1]), 0, 27));
      assert.equal(next[0], null);
      assert.deepEqual(next[27], { slot: 27, itemId: "logs", quantity: 1 });
    });
    it("refuses an empty source and a bad slot", () => {
      assert.equal(code(moveSlot(emptyInventory(), 0, 1)), INVENTORY_ERROR.EMPTY_SLOT);
      assert.equal(code(moveSlot(inv([0, "logs", 1]), 0, 28)), INVENTORY_ERROR.INVALID_SLOT);
    });
  });

  describe("canHold", () => {
    const cases: [string, Inventory, { item: keyof typeof ITEMS; quantity: number }[], number, string | undefined][] = [
      ["non-stackables into free slots", fullExcept(0, 1), [{ item: "axe", quantity: 2 }], 0, undefined],
      ["one more than free", fullExcept(0, 1), [{ item: "axe", quantity: 3 }], 0, INVENTORY_ERROR.INVENTORY_FULL],
      ["counting freed slots", fullExcept(0, 1), [{ item: "axe", quantity: 3 }], 1, undefined],
      ["a stackable already held needs no slot", unwrap(addItem(fullExcept(0), ITEMS.feather, 1)), [{ item: "feather", quantity: 9 }], 0, undefined],
      [
        "two lots of one new stackable need one slot",
        fullExcept(0),
        [
          { item: "rune", quantity: 1 },
          { item: "rune", quantity: 2 },
        ],
        0,
        undefined,
      ],
      ["a stack past the cap", inv([0, "feather", MAX_STACK - 5]), [{ item: "feather", quantity: 6 }], 0, INVENTORY_ERROR.STACK_OVERFLOW],
      [
        "two lots past the cap together",
        emptyInventory(),
        [
          { item: "feather", quantity: MAX_STACK },
          { item: "feather", quantity: 1 },
        ],
        0,
        INVENTORY_ERROR.STACK_OVERFLOW,
      ],
    ];
    for (const [name, start, incoming, freed, expected] of cases) {
      it(`${name} → ${expected ?? "ok"}`, () => {
        const r = canHold(
          start,
          incoming.map((x) => ({ item: ITEMS[x.item], quantity: x.quantity })),
          freed,
        );
        assert.equal(code(r), expected);
      });
    }
  });

  describe("applyChanges", () => {
    it("removes first so freed slots take the additions", () => {
      const start = fullExcept();
      const next = unwrap(
        applyChanges(start, {
          remove: [
            { slot: 3, quantity: 1, itemId: "logs" },
            { itemId: "logs", quantity: 1 },
          ],
          add: [
            { item: ITEMS.axe, quantity: 1 },
            { item: ITEMS.feather, quantity: 20 },
          ],
        }),
      );
      assert.deepEqual(next[0], { slot: 0, itemId: "bronze_axe", quantity: 1 });
      assert.deepEqual(next[3], { slot: 3, itemId: "feather", quantity: 20 });
      assert.equal(freeSlots(next), 0);
    });
    it("is all or nothing when a later addition fails", () => {
      const start = fullExcept(0);
      const r = applyChanges(start, { remove: [{ slot: 1, quantity: 1 }], add: [{ item: ITEMS.axe, quantity: 3 }] });
      assert.equal(code(r), INVENTORY_ERROR.INVENTORY_FULL);
      assert.equal(freeSlots(start), 1);
    });
    it("detects a slot that now holds another item", () => {
      const r = applyChanges(inv([0, "feather", 5]), { remove: [{ slot: 0, quantity: 1, itemId: "logs" }] });
      assert.equal(code(r), INVENTORY_ERROR.ITEM_MISMATCH);
    });
    it("transact commits nothing when a step aborts", () => {
      const start = inv([0, "logs", 1]);
      const r = transact(start, (d) => d.removeFromSlot(0, 1) ?? d.removeFromSlot(0, 1));
      assert.equal(code(r), INVENTORY_ERROR.EMPTY_SLOT);
      assert.deepEqual(start[0], { slot: 0, itemId: "logs", quantity: 1 });
    });
  });
});
