/**
 * Ranged combat rules (docs/combat.md#ranged): which weapons are launchers, whether a shot may be
 * fired (ammunition, level, range, line of sight), the ranged combatant, and where the arrow goes.
 * Pure: the world passes the sight-blocking lookup (`GameContent.blocksSight`: fences do not cut
 * sight) and the random draw.
 */
import { equippedCombatant, type Combatant, type CombatStyle } from "./combat.js";
import { err, ok, type Result } from "./errors.js";
import type { ItemLookup } from "./inventory.js";
import { chebyshev } from "./movement.js";
import type { EquipSlot, Tile } from "./types.js";

/** Range in tiles (Chebyshev) of a launcher whose item gives no `attackRange`. */
export const DEFAULT_LAUNCHER_RANGE = 7;
/**
 * Chance that a fired arrow lands under its target as a pile its shooter can pick up; otherwise it
 * breaks. One `rng()` draw per shot.
 */
export const ARROW_RECOVERY_CHANCE = 0.5;

/** An ammunition entry as ammunition.json gives it. */
export interface AmmunitionDef {
  readonly itemId: string;
  readonly rangedStrength: number;
  readonly levelRequired: number;
  /** Weapon item ids that fire it. */
  readonly launchers: readonly string[];
}

export const RANGED_ERROR = {
  /** No ammunition worn in the ammo slot. */
  OUT_OF_AMMO: "OUT_OF_AMMO",
  /** The worn ammunition is not fired by the wielded launcher. */
  WRONG_AMMO: "WRONG_AMMO",
  /** The ranged level is below the ammunition's `levelRequired`. */
  LEVEL_TOO_LOW: "LEVEL_TOO_LOW",
  /** The target is farther than the launcher's range. */
  OUT_OF_RANGE: "OUT_OF_RANGE",
  /** A building or station stands between shooter and target (a fence does not: arrows fly over). */
  NO_LINE_OF_SIGHT: "NO_LINE_OF_SIGHT",
} as const;
export type RangedErrorCode = (typeof RANGED_ERROR)[keyof typeof RANGED_ERROR];

/** Is `weaponId` a launcher: does some ammunition name it? */
export function isLauncher(weaponId: string | undefined, ammunition: Iterable<AmmunitionDef>): boolean {
  if (!weaponId) return false;
  for (const a of ammunition) if (a.launchers.includes(weaponId)) return true;
  return false;
}

/**
 * Is there a line of sight from tile `from` to tile `to`? The supercover line between the tile
 * centres: every tile it passes through, the two ends aside, must be free. `blocked` says what
 * cuts sight: the world passes `blocksSight` (buildings and stations, not fences). Where the line passes
 * exactly through a tile corner it squeezes between the two tiles beside the corner, and is cut
 * only when both are blocked (a shot may graze a wall's corner).
 */
export function lineOfSight(from: Tile, to: Tile, blocked: (x: number, z: number) => boolean): boolean {
  const dx = Math.abs(to.x - from.x);
  const dz = Math.abs(to.z - from.z);
  const sx = Math.sign(to.x - from.x);
  const sz = Math.sign(to.z - from.z);
  let x = from.x;
  let z = from.z;
  let ix = 0;
  let iz = 0;
  while (ix < dx || iz < dz) {
    // Which grid line the segment crosses next: a vertical one (step x), a horizontal one (step
    // z), or both at once (a corner). Compares (ix + ½) / dx with (iz + ½) / dz in integers.
    const next = (1 + 2 * ix) * dz - (1 + 2 * iz) * dx;
    if (next === 0) {
      if (blocked(x + sx, z) && blocked(x, z + sz)) return false;
      x += sx;
      z += sz;
      ix++;
      iz++;
    } else if (next < 0) {
      x += sx;
      ix++;
    } else {
      z += sz;
      iz++;
    }
    if ((x !== to.x || z !== to.z) && blocked(x, z)) return false;
  }
  return true;
}

/** What `checkShot` reads of the shooter and the target. */
export interface ShotInput {
  readonly from: Tile;
  readonly to: Tile;
  /** The wielded launcher's range in tiles. */
  readonly range: number;
  readonly launcherId: string;
  /** What the ammo slot holds, if anything. */
  readonly ammo: { readonly itemId: string; readonly quantity: number } | undefined;
  readonly rangedLevel: number;
}

/**
 * May this shot be fired? In order: ammunition worn (OUT_OF_AMMO), fired by this launcher
 * (WRONG_AMMO), the ranged level for it (LEVEL_TOO_LOW), the target within range (OUT_OF_RANGE),
 * and a line of sight (NO_LINE_OF_SIGHT). Returns the ammunition fired.
 */
export function checkShot(
  s: ShotInput,
  ammunition: ReadonlyMap<string, AmmunitionDef>,
  blocked: (x: number, z: number) => boolean,
): Result<AmmunitionDef, RangedErrorCode> {
  if (!s.ammo || s.ammo.quantity < 1) return err(RANGED_ERROR.OUT_OF_AMMO, "You have no ammunition left.");
  const def = ammunition.get(s.ammo.itemId);
  if (!def || !def.launchers.includes(s.launcherId)) return err(RANGED_ERROR.WRONG_AMMO, "You can't fire that ammunition with this weapon.");
  if (s.rangedLevel < def.levelRequired) return err(RANGED_ERROR.LEVEL_TOO_LOW, `You need ranged level ${def.levelRequired} to fire that ammunition.`);
  if (chebyshev(s.from, s.to) > s.range) return err(RANGED_ERROR.OUT_OF_RANGE, "Your target is out of range.");
  if (!lineOfSight(s.from, s.to, blocked)) return err(RANGED_ERROR.NO_LINE_OF_SIGHT, "You can't see your target from here.");
  return ok(def);
}

/**
 * A player as a ranged combatant: its melee side (levels, worn bonuses, defence) plus its ranged
 * level, the ranged bonus of what it wears and the ranged strength of the ammunition it fires.
 */
export function rangedCombatant(
  skills: Readonly<Record<"attack" | "strength" | "defense" | "ranged", { readonly level: number }>>,
  equipment: Readonly<Partial<Record<EquipSlot, { readonly itemId: string }>>>,
  items: ItemLookup,
  style: CombatStyle,
  ammo: AmmunitionDef,
): Combatant {
  let rangedBonus = 0;
  for (const e of Object.values(equipment)) rangedBonus += (e && items(e.itemId)?.bonuses?.ranged) ?? 0;
  return {
    ...equippedCombatant(skills, equipment, items, style),
    mode: "ranged",
    ranged: skills.ranged.level,
    rangedBonus,
    rangedStrength: ammo.rangedStrength,
  };
}

/** Does the fired arrow land under the target (`rng()` below ARROW_RECOVERY_CHANCE)? */
export function arrowRecovered(rng: () => number): boolean {
  return rng() < ARROW_RECOVERY_CHANCE;
}
