import assert from "node:assert/strict";
import { unwrap } from "../../../src/domain/errors.js";
import {
  addXp,
  addXpBatch,
  combatLevel,
  levelForXp,
  levelsOf,
  MAX_XP,
  skillsFromXp,
  startingSkills,
  XP_ERROR,
  xpForLevel,
  type CombatSkillLevels,
} from "../../../src/domain/xp.js";

describe("domain/xp", () => {
  describe("xpForLevel", () => {
    const table: [number, number][] = [
      [1, 0],
      [2, 83],
      [3, 174],
      [10, 1154],
      [50, 101_333],
      [92, 6_517_253],
      [99, 13_034_431],
    ];
    for (const [level, xp] of table) {
      it(`level ${level} needs ${xp} XP`, () => assert.equal(xpForLevel(level), xp));
    }
    for (const bad of [0, 100, 1.5, NaN]) {
      it(`throws for level ${bad}`, () => assert.throws(() => xpForLevel(bad), RangeError));
    }
    it("is strictly increasing", () => {
      for (let l = 2; l <= 99; l++) assert.ok(xpForLevel(l) > xpForLevel(l - 1));
    });
  });

  describe("levelForXp", () => {
    const table: [number, number][] = [
      [-5, 1],
      [0, 1],
      [82, 1],
      [83, 2],
      [1153, 9],
      [1154, 10],
      [101_332, 49],
      [101_333, 50],
      [13_034_430, 98],
      [13_034_431, 99],
      [MAX_XP, 99],
    ];
    for (const [xp, level] of table) {
      it(`${xp} XP is level ${level}`, () => assert.equal(levelForXp(xp), level));
    }
    it("inverts xpForLevel at every threshold", () => {
      for (let l = 1; l <= 99; l++) assert.equal(levelForXp(xpForLevel(l)), l);
    });
  });

  describe("startingSkills", () => {
    it("starts constitution at level 10 with 1154 XP and the rest at level 1", () => {
      const skills = startingSkills();
      assert.deepEqual(skills.constitution, { level: 10, xp: 1154 });
      assert.deepEqual(skills.attack, { level: 1, xp: 0 });
      assert.deepEqual(skills.smithing, { level: 1, xp: 0 });
    });
    it("gives a new character combat level 3", () => {
      assert.equal(combatLevel(levelsOf(startingSkills())), 3);
    });
  });

  describe("skillsFromXp", () => {
    it("derives levels, fills missing skills with the start and clamps to the cap", () => {
      const skills = skillsFromXp({ attack: 101_333, mining: 300_000_000 });
      assert.deepEqual(skills.attack, { level: 50, xp: 101_333 });
      assert.deepEqual(skills.mining, { level: 99, xp: MAX_XP });
      assert.deepEqual(skills.constitution, { level: 10, xp: 1154 });
    });
  });

  describe("addXp", () => {
    const cases: { name: string; start: number; amount: number; xp: number; level: number; gained: number; leveledUp: boolean }[] = [
      { name: "below a threshold", start: 0, amount: 82, xp: 82, level: 1, gained: 82, leveledUp: false },
      { name: "exactly at a threshold", start: 0, amount: 83, xp: 83, level: 2, gained: 83, leveledUp: true },
      { name: "several levels at once", start: 0, amount: 1154, xp: 1154, level: 10, gained: 1154, leveledUp: true },
      { name: "zero", start: 500, amount: 0, xp: 500, level: levelForXp(500), gained: 0, leveledUp: false },
      { name: "up to the cap", start: MAX_XP - 10, amount: 100, xp: MAX_XP, level: 99, gained: 10, leveledUp: false },
      { name: "at the cap", start: MAX_XP, amount: 5, xp: MAX_XP, level: 99, gained: 0, leveledUp: false },
    ];
    for (const c of cases) {
      it(c.name, () => {
        const skills = skillsFromXp({ woodcutting: c.start });
        const gain = unwrap(addXp(skills, "woodcutting", c.amount));
        assert.equal(gain.xp, c.xp);
        assert.equal(gain.level, c.level);
        assert.equal(gain.gained, c.gained);
        assert.equal(gain.leveledUp, c.leveledUp);
        assert.deepEqual(gain.skills.woodcutting, { level: c.level, xp: c.xp });
        assert.equal(skills.woodcutting.xp, c.start, "input unchanged");
      });
    }
    for (const bad of [-1, 1.5, NaN, Infinity]) {
      it(`refuses ${bad} with INVALID_XP`, () => {
        const r = addXp(startingSkills(), "attack", bad);
        assert.equal(r.ok, false);
        assert.equal(!r.ok && r.error.code, XP_ERROR.INVALID_XP);
      });
    }
    it("refuses an unknown skill", () => {
      const r = addXp(startingSkills(), "sailing" as never, 10);
      assert.equal(!r.ok && r.error.code, XP_ERROR.INVALID_SKILL);
    });
  });

  describe("addXpBatch", () => {
    it("applies every gain and skips zeros", () => {
      const { skills, gains } = unwrap(addXpBatch(startingSkills(), { attack: 100, constitution: 33, mining: 0 }));
      assert.equal(skills.attack.xp, 100);
      assert.equal(skills.constitution.xp, 1187);
      assert.deepEqual(
        gains.map((g) => g.skill),
        ["attack", "constitution"],
      );
    });
    it("is all or nothing", () => {
      const r = addXpBatch(startingSkills(), { attack: 100, strength: -1 });
      assert.equal(!r.ok && r.error.code, XP_ERROR.INVALID_XP);
    });
  });

  describe("combatLevel", () => {
    const base: CombatSkillLevels = { attack: 1, strength: 1, defense: 1, constitution: 10, prayer: 1, ranged: 1 };
    const cases: [string, Partial<CombatSkillLevels>, number][] = [
      ["new character", {}, 3],
      ["all 99", { attack: 99, strength: 99, defense: 99, constitution: 99, prayer: 99, ranged: 99 }, 126],
      ["pure ranger", { ranged: 99 }, 50],
      ["40 attack, 40 strength", { attack: 40, strength: 40 }, 28],
      ["odd prayer rounds down", { prayer: 3 }, 3],
    ];
    for (const [name, levels, expected] of cases) {
      it(`${name} → ${expected}`, () => assert.equal(combatLevel({ ...base, ...levels }), expected));
    }
  });
});
