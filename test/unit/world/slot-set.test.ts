/**
 * rooms/world/tracked-view.ts's `SlotSet` against a Set: a view's patch writes the chunks and the
 * snapshots of what it holds in the order its sets give them, so random adds, deletes and clears
 * must leave the same members in the same order as a Set of the same slots.
 */
import assert from "node:assert/strict";
import { seededRng as rng } from "../../../loadtest/lib/random.js";
import { SlotSet } from "../../../rooms/world/tracked-view.js";

describe("SlotSet", () => {
  for (const seed of [1, 2, 3])
    it(`holds what a Set holds, in a Set's order (seed ${seed})`, () => {
      const r = rng(seed);
      const set = new Set<number>();
      const slots = new SlotSet<string>();
      for (let step = 0; step < 20_000; step++) {
        // Slots in a small range (members come back often) and, now and then, far beyond (the bits grow).
        const slot = r() < 0.01 ? Math.floor(r() * 5000) : Math.floor(r() * 300);
        const roll = r();
        if (roll < 0.55) {
          set.add(slot);
          slots.add(slot, `e${slot}`);
        } else if (roll < 0.999) {
          set.delete(slot);
          slots.delete(slot);
        } else {
          set.clear();
          slots.clear();
        }
        assert.equal(slots.has(slot), set.has(slot));
        if (step % 97 === 0) {
          assert.deepEqual(
            slots.items,
            [...set].map((s) => `e${s}`),
            `step ${step}`,
          );
          for (let s = 0; s < 400; s++) assert.equal(slots.has(s), set.has(s), `step ${step}, slot ${s}`);
        }
      }
      assert.equal(slots.size, set.size);
    });

  it("keeps a member's place and value when it is added again", () => {
    const slots = new SlotSet<string>();
    slots.add(3, "a");
    slots.add(1, "b");
    slots.add(3, "c");
    assert.deepEqual(slots.items, ["a", "b"]);
  });
});
