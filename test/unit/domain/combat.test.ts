import assert from "node:assert/strict";
import {
  applyDamage,
  attackRoll,
  combatXp,
  defenseRoll,
  effectiveLevel,
  heal,
  hitChance,
  maxHealth,
  maxHit,
  maxHitOf,
  playerCombatant,
  rollAttack,
  sumBonuses,
  type Combatant,
  type NpcStats,
} from "../../../src/domain/combat.js";
import { seq } from "./fixtures.js";

const newbie: Combatant = { attack: 1, strength: 1, defense: 1 };
const goblin: NpcStats = { attack: 1, strength: 1, defense: 1, constitution: 5, attackSpeed: 4, maxHit: 10 };

describe("domain/combat", () => {
  describe("health", () => {
    for (const [level, health] of [
      [10, 100],
      [1, 10],
      [99, 990],
    ] as const) {
      it(`constitution ${level} → ${health} max health`, () => assert.equal(maxHealth(level), health));
    }
    it("applyDamage never goes below 0 and reports death", () => {
      assert.deepEqual(applyDamage(100, 30), { health: 70, dealt: 30, dead: false });
      assert.deepEqual(applyDamage(20, 30), { health: 0, dealt: 20, dead: true });
      assert.deepEqual(applyDamage(20, -5), { health: 20, dealt: 0, dead: false });
    });
    it("heal stops at max", () => {
      assert.equal(heal(90, 30, 100), 100);
      assert.equal(heal(50, 30, 100), 80);
    });
  });

  describe("rolls and chances", () => {
    it("effective level adds 8 and the stance bonus", () => {
      assert.equal(effectiveLevel(1), 9);
      assert.equal(effectiveLevel(50, 3), 61);
    });
    it("attack and defence rolls use (bonus + 64) and the stance", () => {
      assert.equal(attackRoll(newbie), 9 * 64);
      assert.equal(attackRoll({ ...newbie, attackBonus: 10, style: "attack" }), 12 * 74);
      assert.equal(defenseRoll({ ...newbie, defenseBonus: 6, style: "defense" }), 12 * 70);
      assert.equal(attackRoll({ ...newbie, attackBonus: -100 }), 0, "a hugely negative bonus clamps at 0");
    });
    const chances: [number, number, number][] = [
      [576, 576, 576 / (2 * 577)],
      [1000, 100, 1 - 102 / (2 * 1001)],
      [100, 1000, 100 / (2 * 1001)],
      [0, 500, 0],
    ];
    for (const [a, d, expected] of chances) {
      it(`hit chance ${a} vs ${d}`, () => assert.ok(Math.abs(hitChance(a, d) - expected) < 1e-12));
    }
    const maxHits: [number, number, number, number][] = [
      [1, 0, 0, 9],
      [1, 0, 3, 12],
      [10, 0, 0, 18],
      [99, 0, 3, 110],
      [99, 100, 3, 282],
      [40, 14, 0, 59],
    ];
    for (const [level, bonus, stance, expected] of maxHits) {
      it(`max hit: strength ${level}, bonus ${bonus}, stance ${stance} → ${expected}`, () => {
        assert.equal(maxHit(level, bonus, stance), expected);
      });
    }
    it("an NPC's fixed max hit replaces the formula", () => assert.equal(maxHitOf(goblin), 10));
  });

  describe("rollAttack", () => {
    const chance = hitChance(attackRoll(newbie), defenseRoll(goblin));
    const cases: [string, number[], boolean, number][] = [
      ["misses when the first draw is at the chance", [chance], false, 0],
      ["misses on a high draw", [0.99], false, 0],
      ["hits on a low draw and rolls 0 damage", [0, 0], true, 0],
      ["hits and rolls the max", [0, 0.9999], true, 9],
      ["hits and rolls the middle", [0.1, 0.5], true, 5],
    ];
    for (const [name, draws, hit, damage] of cases) {
      it(name, () => {
        const out = rollAttack(newbie, goblin, seq(...draws));
        assert.equal(out.hit, hit);
        assert.equal(out.damage, damage);
        assert.equal(out.maxHit, 9);
      });
    }
    it("draws once on a miss and twice on a hit", () => {
      let draws = 0;
      const rng = () => (draws++, 0.2);
      rollAttack(newbie, goblin, rng);
      assert.equal(draws, 2);
      draws = 0;
      rollAttack(newbie, goblin, () => (draws++, 0.99));
      assert.equal(draws, 1);
    });
    it("damage never exceeds max hit over many draws", () => {
      let x = 0.123;
      const rng = () => (x = (x * 9301 + 0.49297) % 1);
      for (let i = 0; i < 1000; i++) {
        const out = rollAttack(goblin, newbie, rng);
        assert.ok(out.damage >= 0 && out.damage <= 10 && Number.isInteger(out.damage));
      }
    });
  });

  describe("combatXp", () => {
    const cases: [number, "attack" | "strength" | "defense", Record<string, number>][] = [
      [0, "attack", {}],
      [1, "attack", { attack: 4, constitution: 1 }],
      [3, "strength", { strength: 12, constitution: 4 }],
      [10, "defense", { defense: 40, constitution: 13 }],
    ];
    for (const [damage, style, expected] of cases) {
      it(`${damage} damage in ${style}`, () => assert.deepEqual(combatXp(damage, style), expected));
    }
  });

  describe("equipment", () => {
    it("sums bonuses and builds a player combatant", () => {
      const bonuses = sumBonuses([
        { id: "sword", name: "sword", value: 1, stackable: false, tradeable: true, bonuses: { attack: 7, strength: 6, defense: 0, ranged: 0 } },
        { id: "shield", name: "shield", value: 1, stackable: false, tradeable: true, bonuses: { attack: 0, strength: 0, defense: 5, ranged: -2 } },
        undefined,
      ]);
      assert.deepEqual(bonuses, { attack: 7, strength: 6, defense: 5, ranged: -2 });
      const c = playerCombatant({ attack: 5, strength: 6, defense: 7 }, bonuses, "strength");
      assert.deepEqual(c, { attack: 5, strength: 6, defense: 7, attackBonus: 7, strengthBonus: 6, defenseBonus: 5, style: "strength" });
      assert.equal(maxHitOf(c), maxHit(6, 6, 3));
    });
  });
});
