/**
 * The tick grid of `TICK_PHASE=auto` (src/world/tick-grid.ts,
 * docs/operations.md "Scaling: several processes and machines"): each world's phase (van der Corput of world − 1), the first slot after a time, and the
 * slot of the next tick after a tick (on time, early timer, overrun, clock stepped back or forward).
 */
import assert from "node:assert/strict";
import { nextTick, slotAtOrAfter, tickPhaseMs, vanDerCorput } from "../../../src/world/tick-grid.js";

describe("tick grid", () => {
  it("vanDerCorput mirrors the binary digits after the point", () => {
    const table: [n: number, value: number][] = [
      [0, 0],
      [1, 1 / 2],
      [2, 1 / 4],
      [3, 3 / 4],
      [4, 1 / 8],
      [5, 5 / 8],
      [6, 3 / 8],
      [7, 7 / 8],
      [8, 1 / 16],
      [1023, 1023 / 1024],
    ];
    for (const [n, value] of table) assert.equal(vanDerCorput(n), value, `n = ${n}`);
    for (const bad of [-1, 0.5, NaN, Infinity]) assert.throws(() => vanDerCorput(bad), RangeError, String(bad));
  });

  it("tickPhaseMs: world 1 → 0, 2 → ½, 3 → ¼, 4 → ¾, 5 → ⅛ … of the tick, whole milliseconds", () => {
    const table: [world: number, tickMs: number, phaseMs: number][] = [
      [1, 600, 0],
      [2, 600, 300],
      [3, 600, 150],
      [4, 600, 450],
      [5, 600, 75],
      [6, 600, 375],
      [7, 600, 225],
      [8, 600, 525],
      [9, 600, 37], // 37.5 rounded down
      [2, 50, 25],
      [3, 50, 12], // 12.5
      [1, 10, 0],
    ];
    for (const [world, tickMs, phaseMs] of table) assert.equal(tickPhaseMs(world, tickMs), phaseMs, `world ${world} at ${tickMs} ms`);
    for (const bad of [0, -1, 1.5]) assert.throws(() => tickPhaseMs(bad, 600), RangeError, String(bad));
  });

  it("any number of worlds: phases in [0, tick), the first 2^k worlds 2^-k of the tick apart", () => {
    for (let world = 1; world <= 5000; world++) {
      const phase = tickPhaseMs(world, 600);
      assert.ok(phase >= 0 && phase < 600 && Number.isInteger(phase), `world ${world}: ${phase}`);
    }
    for (const k of [1, 2, 3, 4, 5]) {
      const n = 2 ** k;
      const phases = Array.from({ length: n }, (_, i) => tickPhaseMs(i + 1, 1024)).sort((a, b) => a - b);
      assert.deepEqual(
        phases,
        Array.from({ length: n }, (_, i) => (i * 1024) / n),
        `${n} worlds`,
      );
    }
  });

  it("slotAtOrAfter: the first grid time from t on", () => {
    const table: [t: number, tickMs: number, phaseMs: number, slot: number][] = [
      [0, 600, 0, 0], // on a slot: that one
      [1, 600, 0, 600],
      [599, 600, 0, 600],
      [600, 600, 0, 600],
      [601, 600, 0, 1200],
      [1_000_000, 600, 300, 1_000_500], // 1_000_000 = 1666 × 600 + 400
      [1_000_499, 600, 300, 1_000_500],
      [1_000_500, 600, 300, 1_000_500],
      [1_000_500.5, 600, 300, 1_001_100],
      [1_700_000_000_123, 600, 150, 1_700_000_000_550], // a Date.now(): 1_700_000_000_123 ≡ 323 (mod 600)
      [10, 50, 25, 25],
      [26, 50, 25, 75],
      [-10, 50, 25, 25], // before the epoch still lands on the grid
      [-30, 50, 25, -25],
    ];
    for (const [t, tickMs, phaseMs, slot] of table) {
      const got = slotAtOrAfter(t, tickMs, phaseMs);
      assert.equal(got, slot, `slotAtOrAfter(${t}, ${tickMs}, ${phaseMs})`);
      assert.equal((((got - phaseMs) % tickMs) + tickMs) % tickMs, 0, "on the grid");
    }
  });

  it("nextTick: the next free slot after the tick ended, and the slots it skipped", () => {
    const tick = 600;
    const phase = 300;
    const s = 1_000_500; // a slot of phase 300
    const table: [what: string, now: number, next: number, skipped: number][] = [
      ["ended within its slot", s + 40, s + 600, 0],
      ["ended exactly at the next slot: still free", s + 600, s + 600, 0],
      ["ended 1 ms after the next slot", s + 601, s + 1200, 1],
      ["ended just before the next slot", s + 599, s + 600, 0],
      ["the timer fired 1 ms early (now before the slot)", s - 1, s + 600, 0],
      ["overran by one slot", s + 700, s + 1200, 1],
      ["overran by three slots", s + 2000, s + 2400, 3],
      ["the clock stepped forward an hour", s + 3_600_000 + 10, s + 3_600_600, 6000],
      ["the clock stepped back an hour: re-anchored, nothing skipped", s - 3_600_000 + 10, s - 3_600_000 + 600, 0],
      ["the clock stepped back less than a tick", s - 500, s + 600, 0],
    ];
    for (const [what, now, next, skipped] of table) assert.deepEqual(nextTick(s, now, tick, phase), { next, skipped }, what);
  });
});
