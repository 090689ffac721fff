/**
 * Prayer rules (docs/combat.md#prayers): switching prayers on and off, the drain of prayer points
 * while they are on, the altar's recharge, the boosts they give and the protections they grant.
 * Pure: the world passes the prayer list, the prayer level and the elapsed time.
 */
import type { AttackMode, BoostedSkill } from "./combat.js";
import { err, ok, type Result } from "./errors.js";

/** Share of a PvP hit a matching protection prayer takes away (NPC hits it takes away whole). */
export const PVP_PROTECTION_SHARE = 0.4;
/** Milliseconds in the `drainPerMinute` of prayers.json. */
const MINUTE_MS = 60_000;

/** A prayer as prayers.json gives it. */
export interface PrayerDef {
  readonly id: string;
  readonly name: string;
  readonly level: number;
  readonly drainPerMinute: number;
  readonly boosts: Readonly<Partial<Record<BoostedSkill, number>>>;
  readonly protectFrom?: AttackMode;
}

/** A player's prayer: points left (fractional while draining) and the ids of active prayers. */
export interface PrayerState {
  readonly points: number;
  readonly active: readonly string[];
}

export const PRAYER_ERROR = {
  UNKNOWN_PRAYER: "UNKNOWN_PRAYER",
  LEVEL_TOO_LOW: "LEVEL_TOO_LOW",
  /** No prayer points left: recharge at an altar. */
  NO_PRAYER_POINTS: "NO_PRAYER_POINTS",
} as const;
export type PrayerErrorCode = (typeof PRAYER_ERROR)[keyof typeof PRAYER_ERROR];

/** Prayer points of a full recharge: the prayer level. */
export function maxPrayerPoints(prayerLevel: number): number {
  return Math.max(0, Math.floor(prayerLevel));
}

/** Do two prayers compete (a boost of the same skill, or both protections)? Only one of them is on. */
function overlaps(a: PrayerDef, b: PrayerDef): boolean {
  if (a.protectFrom && b.protectFrom) return true;
  return (Object.keys(a.boosts) as BoostedSkill[]).some((s) => b.boosts[s] !== undefined);
}

/**
 * Switch a prayer on: refused for an unknown id (UNKNOWN_PRAYER), below its level (LEVEL_TOO_LOW)
 * and with no points left (NO_PRAYER_POINTS). Active prayers that boost a skill it boosts, or the
 * other protection, switch off. Already on: unchanged.
 */
export function activatePrayer(
  state: PrayerState,
  prayers: ReadonlyMap<string, PrayerDef>,
  id: string,
  prayerLevel: number,
): Result<PrayerState, PrayerErrorCode> {
  const def = prayers.get(id);
  if (!def) return err(PRAYER_ERROR.UNKNOWN_PRAYER, "There is no such prayer.");
  if (prayerLevel < def.level) return err(PRAYER_ERROR.LEVEL_TOO_LOW, `You need prayer level ${def.level} to use ${def.name}.`);
  if (state.points <= 0) return err(PRAYER_ERROR.NO_PRAYER_POINTS, "You have run out of prayer points; recharge them at an altar.");
  if (state.active.includes(id)) return ok(state);
  const kept = state.active.filter((a) => {
    const other = prayers.get(a);
    return other !== undefined && !overlaps(def, other);
  });
  return ok({ points: state.points, active: [...kept, id] });
}

/** Switch a prayer off (UNKNOWN_PRAYER for an unknown id; off already: unchanged). */
export function deactivatePrayer(state: PrayerState, prayers: ReadonlyMap<string, PrayerDef>, id: string): Result<PrayerState, PrayerErrorCode> {
  if (!prayers.has(id)) return err(PRAYER_ERROR.UNKNOWN_PRAYER, "There is no such prayer.");
  return ok(state.active.includes(id) ? { points: state.points, active: state.active.filter((a) => a !== id) } : state);
}

/** Points per minute the active prayers drain together. */
export function drainRate(active: readonly string[], prayers: ReadonlyMap<string, PrayerDef>): number {
  let rate = 0;
  for (const id of active) rate += prayers.get(id)?.drainPerMinute ?? 0;
  return rate;
}

/**
 * Drain `elapsedMs` of the active prayers: points fall by their summed `drainPerMinute` per minute.
 * At zero every prayer switches off (`emptied`). With nothing active, nothing changes.
 */
export function drainPrayer(state: PrayerState, prayers: ReadonlyMap<string, PrayerDef>, elapsedMs: number): { state: PrayerState; emptied: boolean } {
  if (state.active.length === 0) return { state, emptied: false };
  const points = state.points - (drainRate(state.active, prayers) * Math.max(0, elapsedMs)) / MINUTE_MS;
  if (points <= 1e-9) return { state: { points: 0, active: [] }, emptied: true };
  return { state: { points, active: state.active }, emptied: false };
}

/** The altar's recharge: points back to the prayer level; active prayers stay on. */
export function rechargePrayer(state: PrayerState, prayerLevel: number): PrayerState {
  return { points: maxPrayerPoints(prayerLevel), active: state.active };
}

/** Every prayer off (death, or logging in with none saved): points kept. */
export function prayersOff(state: PrayerState): PrayerState {
  return state.active.length === 0 ? state : { points: state.points, active: [] };
}

/** The boosts of the active prayers, percent per skill (the highest where two would apply). */
export function prayerBoosts(active: readonly string[], prayers: ReadonlyMap<string, PrayerDef>): Partial<Record<BoostedSkill, number>> {
  const out: Partial<Record<BoostedSkill, number>> = {};
  for (const id of active) {
    const def = prayers.get(id);
    if (!def) continue;
    for (const [skill, pct] of Object.entries(def.boosts) as [BoostedSkill, number][]) out[skill] = Math.max(out[skill] ?? 0, pct);
  }
  return out;
}

/** The attack style the active prayers protect from, if any. */
export function protectionOf(active: readonly string[], prayers: ReadonlyMap<string, PrayerDef>): AttackMode | undefined {
  for (const id of active) {
    const p = prayers.get(id)?.protectFrom;
    if (p) return p;
  }
  return undefined;
}

/**
 * Damage after the defender's protection: a hit of the protected style from an NPC does nothing;
 * from a player it loses PVP_PROTECTION_SHARE of itself (rounded down to whole points).
 */
export function protectedDamage(damage: number, style: AttackMode, protection: AttackMode | undefined, from: "npc" | "player"): number {
  if (protection !== style) return damage;
  if (from === "npc") return 0;
  return Math.floor(damage * (1 - PVP_PROTECTION_SHARE));
}
