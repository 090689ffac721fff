/**
 * Skill experience: the OSRS-style XP curve for levels 1..99, XP gains with the 200M cap, and the
 * combat level formula. XP is always a whole number (storage keeps it in integer columns).
 */
import { err, ok, type Result } from "./errors.js";
import { SKILLS, STARTING_LEVELS, type SkillName } from "./types.js";

/** Highest level reachable from XP. */
export const MAX_LEVEL = 99;
/** XP stops accumulating at this amount. */
export const MAX_XP = 200_000_000;

export const XP_ERROR = {
  INVALID_XP: "INVALID_XP",
  INVALID_SKILL: "INVALID_SKILL",
} as const;
export type XpErrorCode = (typeof XP_ERROR)[keyof typeof XP_ERROR];

/** Level and XP of one skill. `level` is always `levelForXp(xp)`. */
export interface SkillProgress {
  readonly level: number;
  readonly xp: number;
}

/** Every skill of a character. */
export type SkillSet = Readonly<Record<SkillName, SkillProgress>>;

/** The outcome of one XP gain; the fields of the `skill:xp` event plus the new skill set. */
export interface XpGain {
  readonly skills: SkillSet;
  readonly skill: SkillName;
  /** XP actually added (smaller than requested when the cap is reached). */
  readonly gained: number;
  readonly xp: number;
  readonly level: number;
  readonly previousLevel: number;
  readonly leveledUp: boolean;
}

/** XP_TABLE[L] is the XP needed for level L (index 0 unused). */
const XP_TABLE: readonly number[] = (() => {
  const table = [0, 0];
  let points = 0;
  for (let level = 2; level <= MAX_LEVEL; level++) {
    const n = level - 1;
    points += Math.floor(n + 300 * Math.pow(2, n / 7));
    table.push(Math.floor(points / 4));
  }
  return Object.freeze(table);
})();

/**
 * XP needed to reach `level` (1..99). Level 2 needs 83, level 10 needs 1,154, level 99 needs
 * 13,034,431. Throws a RangeError for anything else: callers pass levels from content or storage.
 */
export function xpForLevel(level: number): number {
  if (!Number.isInteger(level) || level < 1 || level > MAX_LEVEL) {
    throw new RangeError(`level must be an integer from 1 to ${MAX_LEVEL}, got ${level}`);
  }
  return XP_TABLE[level]!;
}

/** The level an amount of XP gives (1..99). Negative or non-finite XP counts as 0. */
export function levelForXp(xp: number): number {
  if (!(xp > 0)) return 1;
  // Binary search for the highest level whose threshold is <= xp.
  let lo = 1;
  let hi = MAX_LEVEL;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (XP_TABLE[mid]! <= xp) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** The skill set of a new character: level 1 everywhere except STARTING_LEVELS (constitution 10). */
export function startingSkills(): SkillSet {
  const skills = {} as Record<SkillName, SkillProgress>;
  for (const skill of SKILLS) {
    const level = STARTING_LEVELS[skill] ?? 1;
    skills[skill] = Object.freeze({ level, xp: xpForLevel(level) });
  }
  return Object.freeze(skills);
}

/** Builds a skill set from stored XP values, deriving each level. Missing skills get their start XP. */
export function skillsFromXp(xp: Partial<Record<SkillName, number>>): SkillSet {
  const start = startingSkills();
  const skills = {} as Record<SkillName, SkillProgress>;
  for (const skill of SKILLS) {
    const value = Math.min(MAX_XP, Math.max(0, Math.floor(xp[skill] ?? start[skill].xp)));
    skills[skill] = Object.freeze({ level: levelForXp(value), xp: value });
  }
  return Object.freeze(skills);
}

/** The level of each skill, for formulas that want plain numbers. */
export function levelsOf(skills: SkillSet): Record<SkillName, number> {
  const levels = {} as Record<SkillName, number>;
  for (const skill of SKILLS) levels[skill] = skills[skill].level;
  return levels;
}

/**
 * Adds `amount` XP to one skill and returns the new skill set with the gain.
 * Refused with INVALID_XP unless `amount` is a non-negative integer, INVALID_SKILL for an unknown
 * skill. XP stops at MAX_XP; `gained` says how much was really added.
 */
export function addXp(skills: SkillSet, skill: SkillName, amount: number): Result<XpGain, XpErrorCode> {
  if (!(SKILLS as readonly string[]).includes(skill)) {
    return err(XP_ERROR.INVALID_SKILL, `Unknown skill ${String(skill)}.`);
  }
  if (!Number.isSafeInteger(amount) || amount < 0) {
    return err(XP_ERROR.INVALID_XP, "XP gains must be whole non-negative numbers.");
  }
  const before = skills[skill];
  const xp = Math.min(MAX_XP, before.xp + amount);
  const level = levelForXp(xp);
  const next: SkillSet = Object.freeze({ ...skills, [skill]: Object.freeze({ level, xp }) });
  return ok({
    skills: next,
    skill,
    gained: xp - before.xp,
    xp,
    level,
    previousLevel: before.level,
    leveledUp: level > before.level,
  });
}

/**
 * Applies several gains in SKILLS order (e.g. the attack and constitution XP of one hit).
 * All or nothing: the first invalid amount refuses the whole batch. Zero gains are skipped.
 */
export function addXpBatch(skills: SkillSet, gains: Partial<Record<SkillName, number>>): Result<{ skills: SkillSet; gains: XpGain[] }, XpErrorCode> {
  let current = skills;
  const applied: XpGain[] = [];
  for (const skill of SKILLS) {
    const amount = gains[skill];
    if (amount === undefined || amount === 0) continue;
    const result = addXp(current, skill, amount);
    if (!result.ok) return result;
    current = result.value.skills;
    applied.push(result.value);
  }
  return ok({ skills: current, gains: applied });
}

/** The skills the combat level formula reads. Constitution plays the role of hitpoints. */
export type CombatSkillLevels = Readonly<Pick<Record<SkillName, number>, "attack" | "strength" | "defense" | "constitution" | "prayer" | "ranged">>;

/**
 * OSRS-like combat level:
 * floor(0.25 * (defense + constitution + floor(prayer / 2)) + max(0.325 * (attack + strength),
 * 0.325 * floor(ranged * 1.5))). A new character (all 1, constitution 10) is level 3.
 */
export function combatLevel(levels: CombatSkillLevels): number {
  // In thousandths so that the sum is exact integer arithmetic (0.325 has no exact binary form).
  const base = 250 * (levels.defense + levels.constitution + Math.floor(levels.prayer / 2));
  const melee = 325 * (levels.attack + levels.strength);
  const range = 325 * Math.floor(levels.ranged * 1.5);
  return Math.floor((base + Math.max(melee, range)) / 1000);
}
