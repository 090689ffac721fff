/**
 * Melee combat, OSRS-inspired: effective levels, attack roll against defence roll, hit chance,
 * max hit and a damage roll, plus health and the XP a hit earns.
 *
 * Units: health is constitution level × 10 (a new character has 100), and damage is in the same
 * health points, so max hits are OSRS max hits ×10 computed without the coarse rounding
 * (strength 1, no bonus: 9). NPC `maxHit` values in content are health points too.
 */
import type { ItemLookup } from "./inventory.js";
import type { EquipSlot, ItemBonuses, ItemDef, SkillName } from "./types.js";

/** Health points per constitution level. */
export const HEALTH_PER_LEVEL = 10;
/** Ticks between attacks when a weapon or NPC does not say. */
export const DEFAULT_ATTACK_SPEED = 4;
/**
 * Seconds after its last combat action (a hit it dealt or took) during which a player cannot leave
 * the world: its connection may go, the player stays, can be attacked and can die (
 * docs/protocol.md "Leaving in combat").
 */
export const COMBAT_LOGOUT_SECONDS = 10;
/** Invisible level bonus of the chosen stance (OSRS accurate/aggressive/defensive). */
export const STANCE_BONUS = 3;
/** XP in the trained style per point of damage dealt. */
export const XP_PER_DAMAGE = 4;
/** Constitution XP per point of damage dealt (1.33...). */
export const CONSTITUTION_XP_PER_DAMAGE = 4 / 3;

/** The skill a player trains with melee: attack (accurate), strength (aggressive), defense (defensive). */
export type CombatStyle = "attack" | "strength" | "defense";
export const COMBAT_STYLES: readonly CombatStyle[] = ["attack", "strength", "defense"];

/** What `rollAttack` needs of either side. Players and NPCs both fit. */
export interface Combatant {
  readonly attack: number;
  readonly strength: number;
  readonly defense: number;
  /** Equipment bonuses; 0 when absent. */
  readonly attackBonus?: number;
  readonly strengthBonus?: number;
  readonly defenseBonus?: number;
  /** Stance: +3 to the matching effective level. None for NPCs. */
  readonly style?: CombatStyle;
  /** A fixed max hit (NPCs from content) that replaces the strength formula. */
  readonly maxHit?: number;
  /** Active prayer boosts in percent per skill (`src/domain/prayer.ts`); none when absent. */
  readonly boosts?: Readonly<Partial<Record<BoostedSkill, number>>>;
  /** How it attacks: "ranged" takes the attack roll and max hit from the ranged fields below. */
  readonly mode?: AttackMode;
  /** Ranged level, ranged bonus of what it wears, ranged strength of the ammunition it fires. */
  readonly ranged?: number;
  readonly rangedBonus?: number;
  readonly rangedStrength?: number;
}

/** The skills a prayer boosts (prayers.json `boosts`). */
export type BoostedSkill = "attack" | "strength" | "defense" | "ranged";
/** Melee (next to the target) or ranged (from a distance, with ammunition). */
export type AttackMode = "melee" | "ranged";

/** NPC combat stats as the content manifest gives them. */
export interface NpcStats extends Combatant {
  readonly constitution: number;
  /** Ticks between attacks. */
  readonly attackSpeed: number;
}

/** Max health for a constitution level: level × 10. */
export function maxHealth(constitutionLevel: number): number {
  return constitutionLevel * HEALTH_PER_LEVEL;
}

/** Level used by the rolls: level + stance bonus + 8. */
export function effectiveLevel(level: number, stanceBonus = 0): number {
  return Math.floor(level) + stanceBonus + 8;
}

/** A level raised by a prayer boost of `percent`: floor(level × (100 + percent) / 100). */
export function boostedLevel(level: number, percent = 0): number {
  return Math.floor((Math.floor(level) * (100 + Math.max(0, percent))) / 100);
}

function stance(c: Combatant, skill: CombatStyle): number {
  return c.mode !== "ranged" && c.style === skill ? STANCE_BONUS : 0;
}

/** The combatant's level in a skill with its prayer boost. */
function level(c: Combatant, skill: BoostedSkill): number {
  return boostedLevel(skill === "ranged" ? (c.ranged ?? 1) : c[skill], c.boosts?.[skill]);
}

/**
 * Attack roll: effective attack × (attack bonus + 64); for a ranged attack, effective ranged ×
 * (ranged bonus + 64). Ranged has no stance bonus (docs/combat.md#ranged).
 */
export function attackRoll(c: Combatant): number {
  if (c.mode === "ranged") return effectiveLevel(level(c, "ranged")) * Math.max(0, (c.rangedBonus ?? 0) + 64);
  return effectiveLevel(level(c, "attack"), stance(c, "attack")) * Math.max(0, (c.attackBonus ?? 0) + 64);
}

/** Defence roll: effective defense × (defense bonus + 64), against melee and ranged alike. */
export function defenseRoll(c: Combatant): number {
  return effectiveLevel(level(c, "defense"), stance(c, "defense")) * Math.max(0, (c.defenseBonus ?? 0) + 64);
}

/**
 * Chance that an attack lands, from the two rolls (OSRS):
 * A > D: 1 - (D + 2) / (2 (A + 1)); otherwise A / (2 (D + 1)).
 */
export function hitChance(attack: number, defense: number): number {
  return attack > defense ? 1 - (defense + 2) / (2 * (attack + 1)) : attack / (2 * (defense + 1));
}

/**
 * Max hit in health points: floor(0.5 + effective strength × (strength bonus + 64) / 64), with
 * effective strength = strength level + stance bonus + 8. Strength 1 and no bonus gives 9.
 */
export function maxHit(strengthLevel: number, strengthBonus: number, stanceBonus = 0): number {
  const effective = effectiveLevel(strengthLevel, stanceBonus);
  return Math.max(0, Math.floor(0.5 + (effective * Math.max(0, strengthBonus + 64)) / 64));
}

/** The max hit a combatant deals: its fixed `maxHit`, the ranged formula with the ammunition's
 * ranged strength for a ranged attack (`maxHit` of the ranged level), or the strength formula. */
export function maxHitOf(c: Combatant): number {
  if (c.maxHit !== undefined) return c.maxHit;
  if (c.mode === "ranged") return maxHit(level(c, "ranged"), c.rangedStrength ?? 0);
  return maxHit(level(c, "strength"), c.strengthBonus ?? 0, stance(c, "strength"));
}

/** Outcome of one swing. */
export interface AttackOutcome {
  readonly hit: boolean;
  /** 0 on a miss; otherwise uniform 0..maxHit (a hit can still roll 0). */
  readonly damage: number;
  readonly maxHit: number;
  readonly hitChance: number;
}

/**
 * One attack. Draws `rng()` (uniform in [0, 1)) once for accuracy and, on a hit, once for damage.
 * The caller caps damage at the target's health (`applyDamage`).
 */
export function rollAttack(attacker: Combatant, defender: Combatant, rng: () => number): AttackOutcome {
  const chance = hitChance(attackRoll(attacker), defenseRoll(defender));
  const max = maxHitOf(attacker);
  if (!(rng() < chance)) return { hit: false, damage: 0, maxHit: max, hitChance: chance };
  const damage = Math.min(max, Math.floor(rng() * (max + 1)));
  return { hit: true, damage, maxHit: max, hitChance: chance };
}

/** Health after taking damage (never below 0) and whether that kills. */
export function applyDamage(health: number, damage: number): { health: number; dealt: number; dead: boolean } {
  const dealt = Math.max(0, Math.min(health, Math.floor(damage)));
  const next = health - dealt;
  return { health: next, dealt, dead: next <= 0 };
}

/** Health after eating or regenerating, never above max. */
export function heal(health: number, amount: number, max: number): number {
  return Math.min(max, health + Math.max(0, Math.floor(amount)));
}

/**
 * XP for dealing `damage` in `style` (a melee stance, or "ranged" for a ranged attack): 4 per
 * damage in that skill and 1.33 per damage in constitution, rounded to whole XP per hit. Zero
 * damage earns nothing.
 */
export function combatXp(damage: number, style: CombatStyle | "ranged"): Partial<Record<SkillName, number>> {
  const dealt = Math.max(0, Math.floor(damage));
  if (dealt === 0) return {};
  return { [style]: dealt * XP_PER_DAMAGE, constitution: Math.round(dealt * CONSTITUTION_XP_PER_DAMAGE) };
}

/** Sum of the bonuses of worn items (items without bonuses add nothing). */
export function sumBonuses(items: readonly (ItemDef | undefined)[]): ItemBonuses {
  const total: ItemBonuses = { attack: 0, strength: 0, defense: 0, ranged: 0 };
  for (const item of items) {
    if (!item?.bonuses) continue;
    total.attack += item.bonuses.attack;
    total.strength += item.bonuses.strength;
    total.defense += item.bonuses.defense;
    total.ranged += item.bonuses.ranged;
  }
  return total;
}

/** A player as a combatant, from levels, worn bonuses and stance. */
export function playerCombatant(
  levels: Readonly<Pick<Record<SkillName, number>, "attack" | "strength" | "defense">>,
  bonuses: ItemBonuses,
  style: CombatStyle,
): Combatant {
  return {
    attack: levels.attack,
    strength: levels.strength,
    defense: levels.defense,
    attackBonus: bonuses.attack,
    strengthBonus: bonuses.strength,
    defenseBonus: bonuses.defense,
    style,
  };
}

/**
 * A player as a combatant, built from what it is: its attack, strength and defense levels, the
 * items it wears (their bonuses summed; unknown items add nothing) and its stance. The one way the
 * world builds a player's side of a swing, attacking or defending.
 */
export function equippedCombatant(
  skills: Readonly<Record<"attack" | "strength" | "defense", { readonly level: number }>>,
  equipment: Readonly<Partial<Record<EquipSlot, { readonly itemId: string }>>>,
  items: ItemLookup,
  style: CombatStyle,
): Combatant {
  const worn = Object.values(equipment).map((e) => (e ? items(e.itemId) : undefined));
  return playerCombatant({ attack: skills.attack.level, strength: skills.strength.level, defense: skills.defense.level }, sumBonuses(worn), style);
}

/** An NPC as a combatant: its stats from the content, and its fixed max hit when it attacks. */
export function npcCombatant(stats: { readonly attack: number; readonly strength: number; readonly defense: number }, maxHit?: number): Combatant {
  return { attack: stats.attack, strength: stats.strength, defense: stats.defense, ...(maxHit !== undefined ? { maxHit } : {}) };
}
