/**
 * Ranged rules, table-driven (docs/combat.md#ranged): line of sight on the tile grid, the checks
 * before a shot, the ranged combatant, its hit chance and max hit, prayer boosts in the formulas,
 * arrow recovery and ranged XP.
 */
import assert from "node:assert/strict";
import { attackRoll, boostedLevel, combatXp, defenseRoll, hitChance, maxHitOf, rollAttack, type Combatant } from "../../../src/domain/combat.js";
import type { ItemLookup } from "../../../src/domain/inventory.js";
import {
  ARROW_RECOVERY_CHANCE,
  arrowRecovered,
  checkShot,
  isLauncher,
  lineOfSight,
  rangedCombatant,
  type AmmunitionDef,
  type RangedErrorCode,
} from "../../../src/domain/ranged.js";
import type { ItemDef } from "../../../src/domain/types.js";
import { seq } from "./fixtures.js";

const BRONZE: AmmunitionDef = { itemId: "bronze_arrow", rangedStrength: 7, levelRequired: 1, launchers: ["shortbow", "oak_shortbow"] };
const IRON: AmmunitionDef = { itemId: "iron_arrow", rangedStrength: 10, levelRequired: 10, launchers: ["shortbow", "oak_shortbow"] };
const AMMO = new Map([BRONZE, IRON].map((a) => [a.itemId, a]));

/** A blocked-tile lookup from "x,z" keys. */
const walls = (...tiles: [number, number][]) => {
  const set = new Set(tiles.map(([x, z]) => `${x},${z}`));
  return (x: number, z: number) => set.has(`${x},${z}`);
};

describe("domain/ranged", () => {
  describe("lineOfSight (supercover between tile centres)", () => {
    const cases: [string, [number, number], [number, number], [number, number][], boolean][] = [
      ["open ground", [0, 0], [5, 0], [], true],
      ["same tile", [3, 3], [3, 3], [[3, 3]], true],
      ["a wall on the row", [0, 0], [5, 0], [[2, 0]], false],
      ["a wall beside the row", [0, 0], [5, 0], [[2, 1]], true],
      ["the target's own tile does not cut", [0, 0], [5, 0], [[5, 0]], true],
      ["the shooter's own tile does not cut", [0, 0], [5, 0], [[0, 0]], true],
      ["a diagonal past one corner tile", [0, 0], [3, 3], [[1, 0]], true],
      [
        "a diagonal between two corner tiles",
        [0, 0],
        [3, 3],
        [
          [1, 0],
          [0, 1],
        ],
        false,
      ],
      ["a diagonal through a wall", [0, 0], [3, 3], [[2, 2]], false],
      ["a knight's line crosses (1,0)", [0, 0], [2, 1], [[1, 0]], false],
      ["a knight's line crosses (1,1)", [0, 0], [2, 1], [[1, 1]], false],
      ["a knight's line misses (0,1)", [0, 0], [2, 1], [[0, 1]], true],
      ["negative directions", [0, 0], [-4, -2], [[-2, -1]], false],
      [
        "across a building seven tiles wide",
        [0, 0],
        [7, 0],
        [
          [1, 0],
          [2, 0],
          [3, 0],
          [4, 0],
          [5, 0],
          [6, 0],
        ],
        false,
      ],
    ];
    for (const [name, [fx, fz], [tx, tz], blocked, expected] of cases) {
      it(`${name}: ${expected ? "seen" : "cut"}`, () => {
        assert.equal(lineOfSight({ x: fx, z: fz }, { x: tx, z: tz }, walls(...blocked)), expected);
        assert.equal(lineOfSight({ x: tx, z: tz }, { x: fx, z: fz }, walls(...blocked)), expected, "both ways alike");
      });
    }
    it("is symmetric on random grids", () => {
      let s = 7;
      const rnd = () => (s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
      for (let n = 0; n < 300; n++) {
        const tiles: [number, number][] = [];
        for (let i = 0; i < 12; i++) tiles.push([Math.floor(rnd() * 9) - 4, Math.floor(rnd() * 9) - 4]);
        const a = { x: Math.floor(rnd() * 9) - 4, z: Math.floor(rnd() * 9) - 4 };
        const b = { x: Math.floor(rnd() * 9) - 4, z: Math.floor(rnd() * 9) - 4 };
        assert.equal(lineOfSight(a, b, walls(...tiles)), lineOfSight(b, a, walls(...tiles)), `${JSON.stringify([a, b, tiles])}`);
      }
    });
  });

  describe("checkShot", () => {
    const base = { from: { x: 0, z: 0 }, to: { x: 5, z: 0 }, range: 7, launcherId: "shortbow", ammo: { itemId: "bronze_arrow", quantity: 10 }, rangedLevel: 1 };
    const cases: [string, Partial<typeof base> & { ammo?: { itemId: string; quantity: number } | undefined }, [number, number][], RangedErrorCode | "ok"][] = [
      ["bronze arrows from a shortbow at 5 tiles", {}, [], "ok"],
      ["at exactly the range", { to: { x: 7, z: 7 } }, [], "ok"],
      ["no ammunition", { ammo: undefined }, [], "OUT_OF_AMMO"],
      ["an empty stack", { ammo: { itemId: "bronze_arrow", quantity: 0 } }, [], "OUT_OF_AMMO"],
      ["arrows the weapon does not fire", { launcherId: "bronze_sword" }, [], "WRONG_AMMO"],
      ["something that is not ammunition", { ammo: { itemId: "feather", quantity: 5 } }, [], "WRONG_AMMO"],
      ["iron arrows below ranged 10", { ammo: { itemId: "iron_arrow", quantity: 3 }, rangedLevel: 9 }, [], "LEVEL_TOO_LOW"],
      ["iron arrows at ranged 10", { ammo: { itemId: "iron_arrow", quantity: 3 }, rangedLevel: 10 }, [], "ok"],
      ["one tile past the range", { to: { x: 8, z: 0 } }, [], "OUT_OF_RANGE"],
      ["a wall between", {}, [[3, 0]], "NO_LINE_OF_SIGHT"],
    ];
    for (const [name, over, blocked, expected] of cases) {
      it(`${name} → ${expected}`, () => {
        const r = checkShot({ ...base, ...over }, AMMO, walls(...blocked));
        assert.equal(r.ok ? "ok" : r.error.code, expected);
      });
    }
    it("knows launchers from the ammunition list", () => {
      assert.equal(isLauncher("shortbow", AMMO.values()), true);
      assert.equal(isLauncher("bronze_sword", AMMO.values()), false);
      assert.equal(isLauncher(undefined, AMMO.values()), false);
    });
  });

  describe("ranged hit chance and max hit (built like melee)", () => {
    const bow: ItemDef = {
      id: "shortbow",
      name: "Shortbow",
      value: 1,
      stackable: false,
      tradeable: true,
      equipSlot: "weapon",
      bonuses: { attack: 0, strength: 0, defense: 0, ranged: 8 },
    };
    const chaps: ItemDef = {
      id: "chaps",
      name: "Chaps",
      value: 1,
      stackable: false,
      tradeable: true,
      equipSlot: "legs",
      bonuses: { attack: 0, strength: 0, defense: 4, ranged: 1 },
    };
    const items: ItemLookup = (id) => [bow, chaps].find((i) => i.id === id);
    const skills = (ranged: number) => ({ attack: { level: 1 }, strength: { level: 1 }, defense: { level: 1 }, ranged: { level: ranged } });
    const chicken: Combatant = { attack: 1, strength: 1, defense: 1 };
    const cases: [string, number, Record<string, { itemId: string }>, AmmunitionDef, Record<string, number>, { roll: number; max: number; chance: number }][] =
      [
        ["ranged 1, no bow bonus, bronze", 1, {}, BRONZE, {}, { roll: 9 * 64, max: 10, chance: 576 / (2 * 577) }],
        ["ranged 1, shortbow, bronze", 1, { weapon: { itemId: "shortbow" } }, BRONZE, {}, { roll: 9 * 72, max: 10, chance: 1 - 578 / (2 * 649) }],
        [
          "ranged 1, shortbow and chaps",
          1,
          { weapon: { itemId: "shortbow" }, legs: { itemId: "chaps" } },
          BRONZE,
          {},
          { roll: 9 * 73, max: 10, chance: 1 - 578 / (2 * 658) },
        ],
        ["ranged 50, shortbow, iron", 50, { weapon: { itemId: "shortbow" } }, IRON, {}, { roll: 58 * 72, max: 67, chance: 1 - 578 / (2 * (58 * 72 + 1)) }],
        [
          "ranged 50 with +10% (Falcon Eye)",
          50,
          { weapon: { itemId: "shortbow" } },
          IRON,
          { ranged: 10 },
          { roll: 63 * 72, max: 73, chance: 1 - 578 / (2 * (63 * 72 + 1)) },
        ],
      ];
    for (const [name, ranged, worn, ammo, boosts, want] of cases) {
      it(name, () => {
        const c = { ...rangedCombatant(skills(ranged), worn, items, "attack", ammo), boosts };
        assert.equal(attackRoll(c), want.roll);
        assert.equal(maxHitOf(c), want.max);
        assert.ok(Math.abs(hitChance(attackRoll(c), defenseRoll(chicken)) - want.chance) < 1e-12);
      });
    }
    it("the stance gives ranged no bonus; melee keeps its own", () => {
      const c = rangedCombatant(skills(1), {}, items, "attack", BRONZE);
      assert.equal(attackRoll(c), 9 * 64);
      assert.equal(attackRoll({ ...c, mode: "melee" }), 12 * 64);
    });
    it("a ranged swing rolls accuracy then damage from the ranged max hit", () => {
      const c = rangedCombatant(skills(1), { weapon: { itemId: "shortbow" } }, items, "attack", BRONZE);
      assert.deepEqual(rollAttack(c, chicken, seq(0.1, 0.999)), { hit: true, damage: 10, maxHit: 10, hitChance: 1 - 578 / (2 * 649) });
      assert.equal(rollAttack(c, chicken, seq(0.9)).hit, false);
    });
    it("ranged XP: 4 per damage in ranged and 1.33 in constitution", () => {
      assert.deepEqual(combatXp(9, "ranged"), { ranged: 36, constitution: 12 });
      assert.deepEqual(combatXp(0, "ranged"), {});
    });
  });

  describe("prayer boosts in the melee formulas", () => {
    const cases: [string, Combatant, { attack: number; defense: number; max: number }][] = [
      ["no boost", { attack: 10, strength: 10, defense: 20 }, { attack: 18 * 64, defense: 28 * 64, max: 18 }],
      ["+10% strength", { attack: 10, strength: 10, defense: 20, boosts: { strength: 10 } }, { attack: 18 * 64, defense: 28 * 64, max: 19 }],
      ["+10% attack", { attack: 10, strength: 10, defense: 20, boosts: { attack: 10 } }, { attack: 19 * 64, defense: 28 * 64, max: 18 }],
      ["+5% defence", { attack: 10, strength: 10, defense: 20, boosts: { defense: 5 } }, { attack: 18 * 64, defense: 29 * 64, max: 18 }],
      ["+5% of level 1 rounds down to nothing", { attack: 1, strength: 1, defense: 1, boosts: { attack: 5 } }, { attack: 9 * 64, defense: 9 * 64, max: 9 }],
    ];
    for (const [name, c, want] of cases) {
      it(name, () => {
        assert.equal(attackRoll(c), want.attack);
        assert.equal(defenseRoll(c), want.defense);
        assert.equal(maxHitOf(c), want.max);
      });
    }
    it("boostedLevel rounds down", () => {
      assert.deepEqual([boostedLevel(10, 5), boostedLevel(20, 5), boostedLevel(99, 10), boostedLevel(7)], [10, 21, 108, 7]);
    });
  });

  describe("arrow recovery", () => {
    for (const [draw, kept] of [
      [0, true],
      [ARROW_RECOVERY_CHANCE - 0.001, true],
      [ARROW_RECOVERY_CHANCE, false],
      [0.99, false],
    ] as const) {
      it(`draw ${draw} → ${kept ? "lands under the target" : "breaks"}`, () =>
        assert.equal(
          arrowRecovered(() => draw),
          kept,
        ));
    }
  });
});
