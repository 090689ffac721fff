/**
 * Prayer rules, table-driven (docs/combat.md#prayers): switching on and off, drain per tick, the
 * altar's recharge, boosts, and protections against NPCs and players. The prayers are the shipped
 * prayers.json.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import {
  activatePrayer,
  deactivatePrayer,
  drainPrayer,
  maxPrayerPoints,
  prayerBoosts,
  prayersOff,
  protectedDamage,
  protectionOf,
  PVP_PROTECTION_SHARE,
  rechargePrayer,
  type PrayerDef,
  type PrayerErrorCode,
  type PrayerState,
} from "../../../src/domain/prayer.js";

const PRAYERS = new Map((JSON.parse(readFileSync("world/manifests/prayers.json", "utf8")) as PrayerDef[]).map((p) => [p.id, p]));
const TICK_MS = 600;

describe("domain/prayer", () => {
  describe("activatePrayer", () => {
    const cases: [string, PrayerState, string, number, PrayerErrorCode | string[]][] = [
      ["Bark Ward at prayer 1", { points: 1, active: [] }, "bark_ward", 1, ["bark_ward"]],
      ["an unknown prayer", { points: 5, active: [] }, "smite", 99, "UNKNOWN_PRAYER"],
      ["Ember Grip below level 4", { points: 3, active: [] }, "ember_grip", 3, "LEVEL_TOO_LOW"],
      ["Ember Grip at level 4", { points: 4, active: [] }, "ember_grip", 4, ["ember_grip"]],
      ["no points left", { points: 0, active: [] }, "bark_ward", 10, "NO_PRAYER_POINTS"],
      ["already on", { points: 5, active: ["bark_ward"] }, "bark_ward", 10, ["bark_ward"]],
      ["two skills side by side", { points: 5, active: ["bark_ward"] }, "ember_grip", 10, ["bark_ward", "ember_grip"]],
      [
        "a stronger boost of the same skill replaces the weaker",
        { points: 10, active: ["bark_ward", "ember_grip"] },
        "granite_ward",
        10,
        ["ember_grip", "granite_ward"],
      ],
      ["one protection at a time", { points: 50, active: ["ward_of_blades", "keen_edge"] }, "ward_of_arrows", 40, ["keen_edge", "ward_of_arrows"]],
      ["Ward of Blades below 37", { points: 36, active: [] }, "ward_of_blades", 36, "LEVEL_TOO_LOW"],
    ];
    for (const [name, state, id, level, want] of cases) {
      it(`${name} → ${Array.isArray(want) ? want.join("+") : want}`, () => {
        const r = activatePrayer(state, PRAYERS, id, level);
        if (typeof want === "string") assert.equal(r.ok ? "ok" : r.error.code, want);
        else {
          assert.ok(r.ok);
          assert.deepEqual(r.value, { points: state.points, active: want });
        }
      });
    }
    it("deactivates, idempotently, and refuses unknown ids", () => {
      assert.deepEqual(deactivatePrayer({ points: 2, active: ["bark_ward", "ember_grip"] }, PRAYERS, "bark_ward"), {
        ok: true,
        value: { points: 2, active: ["ember_grip"] },
      });
      const off = { points: 2, active: [] };
      assert.deepEqual(deactivatePrayer(off, PRAYERS, "bark_ward"), { ok: true, value: off });
      const r = deactivatePrayer(off, PRAYERS, "nope");
      assert.equal(r.ok ? "ok" : r.error.code, "UNKNOWN_PRAYER");
    });
  });

  describe("drain per tick", () => {
    // [prayers on, starting points, ticks of 600 ms, points left (undefined: emptied, all off)]
    const cases: [string[], number, number, number | undefined][] = [
      [["bark_ward"], 1, 1, 1 - 0.03],
      [["bark_ward"], 1, 10, 0.7],
      [["bark_ward"], 1, 33, 0.01],
      [["bark_ward"], 1, 34, undefined],
      [["bark_ward", "ember_grip"], 5, 50, 2],
      [["ward_of_blades"], 40, 100, 28],
      [["ward_of_blades"], 40, 334, undefined],
      [[], 3, 1000, 3],
    ];
    for (const [active, points, ticks, left] of cases) {
      it(`${active.join("+") || "nothing"} from ${points} points for ${ticks} ticks → ${left ?? "empty"}`, () => {
        let state: PrayerState = { points, active };
        let emptiedAt: number | undefined;
        for (let t = 1; t <= ticks; t++) {
          const r = drainPrayer(state, PRAYERS, TICK_MS);
          state = r.state;
          if (r.emptied) emptiedAt ??= t;
        }
        if (left === undefined) {
          assert.deepEqual(state, { points: 0, active: [] });
          assert.ok(emptiedAt !== undefined);
        } else {
          assert.ok(Math.abs(state.points - left) < 1e-9, `${state.points} ≠ ${left}`);
          assert.deepEqual(state.active, active);
        }
      });
    }
    it("the altar recharges to the prayer level and keeps prayers on; death switches them off", () => {
      assert.equal(maxPrayerPoints(43), 43);
      assert.deepEqual(rechargePrayer({ points: 0.2, active: ["bark_ward"] }, 7), { points: 7, active: ["bark_ward"] });
      assert.deepEqual(prayersOff({ points: 3.5, active: ["bark_ward"] }), { points: 3.5, active: [] });
    });
  });

  describe("boosts and protections", () => {
    it("boosts are the highest per skill", () => {
      assert.deepEqual(prayerBoosts(["bark_ward", "bulls_resolve", "falcon_eye"], PRAYERS), { defense: 5, strength: 10, ranged: 10 });
      assert.deepEqual(prayerBoosts([], PRAYERS), {});
    });
    it("the protection comes from the active prayers", () => {
      assert.equal(protectionOf(["keen_edge", "ward_of_arrows"], PRAYERS), "ranged");
      assert.equal(protectionOf(["keen_edge"], PRAYERS), undefined);
    });
    const cases: [number, "melee" | "ranged", "melee" | "ranged" | undefined, "npc" | "player", number][] = [
      [40, "melee", "melee", "npc", 0],
      [40, "ranged", "ranged", "npc", 0],
      [40, "melee", "ranged", "npc", 40],
      [40, "melee", undefined, "npc", 40],
      [40, "melee", "melee", "player", Math.floor(40 * (1 - PVP_PROTECTION_SHARE))],
      [15, "ranged", "ranged", "player", 9],
      [15, "ranged", "melee", "player", 15],
      [1, "melee", "melee", "player", 0],
    ];
    for (const [damage, style, protection, from, want] of cases) {
      it(`${damage} ${style} from ${from}, protected from ${protection ?? "nothing"} → ${want}`, () =>
        assert.equal(protectedDamage(damage, style, protection, from), want));
    }
  });
});
