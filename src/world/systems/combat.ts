/**
 * Player combat: attacking an NPC or, in PvP areas, another player; chasing a target out of reach;
 * who counts as in combat (no logging out of a fight, docs/protocol.md "Leaving in combat").
 */
import type { GameContent } from "../../content/load.js";
import type { ContentItem } from "../../content/game-content.js";
import {
  applyDamage,
  COMBAT_LOGOUT_SECONDS,
  combatXp,
  DEFAULT_ATTACK_SPEED,
  equippedCombatant,
  npcCombatant,
  rollAttack,
  type Combatant,
} from "../../domain/combat.js";
import { canStep, chebyshev, NEIGHBOURS } from "../../domain/movement.js";
import { protectedDamage } from "../../domain/prayer.js";
import { arrowRecovered, checkShot, DEFAULT_LAUNCHER_RANGE, isLauncher, rangedCombatant, RANGED_ERROR, type AmmunitionDef } from "../../domain/ranged.js";
import type { Tile } from "../../domain/types.js";
import type { WorldClock } from "../clock.js";
import type { Npc } from "../objects.js";
import { refusal, refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { Deaths } from "./death.js";
import type { Ground } from "./ground.js";
import type { Movement } from "./movement.js";
import { boostsOf, protectionOfPlayer } from "./prayers.js";
import type { Progress } from "./progress.js";
import type { Saving } from "./saving.js";
import type { Visibility } from "./visibility.js";

export { COMBAT_LOGOUT_SECONDS };

/** Did the player deal or take a hit within the last COMBAT_LOGOUT_SECONDS (at `now`, ms)? */
export function inCombat(p: Player, now: number): boolean {
  return p.lastCombatAt !== undefined && now - p.lastCombatAt < COMBAT_LOGOUT_SECONDS * 1000;
}

/** A player as a combatant: its levels, the bonuses of what it wears, its style, its prayers' boosts. */
export function combatantOf(p: Player, content: GameContent): Combatant {
  const c = equippedCombatant(p.skills, p.equipment, (id) => content.items.get(id), p.style);
  const boosts = boostsOf(p, content);
  return boosts ? { ...c, boosts } : c;
}

/** The launcher a player wields (a weapon some ammunition names), if any. */
export function launcherOf(p: Player, content: GameContent): ContentItem | undefined {
  const weapon = p.equipment.weapon ? content.items.get(p.equipment.weapon.itemId) : undefined;
  return weapon && isLauncher(weapon.id, content.ammunition.values()) ? weapon : undefined;
}

/**
 * Can the player fight back at all: true unless it wields a launcher without ammunition it can
 * fire (automatic retaliation would only repeat that refusal).
 */
export function canFightBack(p: Player, content: GameContent): boolean {
  const launcher = launcherOf(p, content);
  if (!launcher) return true;
  const r = shotCheck(p, launcher, p.tile, content);
  return r.ok || r.error.code === RANGED_ERROR.OUT_OF_RANGE || r.error.code === RANGED_ERROR.NO_LINE_OF_SIGHT;
}

/** May `p` shoot at `target` now with its launcher (ammunition, level, range, line of sight)? */
export function shotCheck(p: Player, launcher: ContentItem, target: Tile, content: GameContent) {
  const range = launcher.attackRange ?? DEFAULT_LAUNCHER_RANGE;
  const input = { from: p.tile, to: target, range, launcherId: launcher.id, ammo: p.equipment.ammo, rangedLevel: p.skills.ranged.level };
  // Buildings and stations cut the line, fences do not: arrows fly over them (docs/combat.md).
  return checkShot(input, content.ammunition, (x, z) => content.blocksSight(x, z));
}

/**
 * What combat needs of the NPC system: an NPC brought to 0 health dies (loot, respawn). An interface
 * here rather than the Npcs class, which itself uses this module's helpers (no import cycle).
 */
export interface NpcKiller {
  kill(npc: Npc, killer: Player): void;
}

export interface CombatDeps {
  players: ReadonlyMap<string, Player>;
  npcs: ReadonlyMap<string, Npc>;
  content: GameContent;
  clock: WorldClock;
  movement: Movement;
  visibility: Visibility;
  progress: Progress;
  npcAi: NpcKiller;
  deaths: Deaths;
  saving: Saving;
  ground: Ground;
}

export class Combat {
  constructor(private readonly d: CombatDeps) {}

  /** PvP is allowed only when both players stand in a PvP area. */
  canPvp(a: Player, b: Player): boolean {
    return a.id !== b.id && this.d.content.isPvp(a.x, a.z) && this.d.content.isPvp(b.x, b.z);
  }

  /** The `attack` action: chase the target, then swing whenever the weapon's speed allows. */
  stepAttack(p: Player, targetId: string): void {
    const { clock, content } = this.d;
    // Fighting is refused while trading (docs/trading.md "Trading"), also for an attack set before the trade.
    if (p.tradeId) {
      p.action = null;
      return;
    }
    const npc = this.d.npcs.get(targetId);
    const victim = npc ? undefined : this.d.players.get(targetId);
    const target = npc ?? victim;
    if (!target || (npc && npc.respawnTick !== undefined) || (victim && (victim.dead || !this.canPvp(p, victim)))) {
      p.action = null;
      return;
    }
    const launcher = launcherOf(p, content);
    let ammo: AmmunitionDef | undefined;
    if (launcher) {
      // Ranged (docs/combat.md#ranged): shoot from where it stands; walk closer when the target left
      // its range or its sight; stop, saying why, without ammunition it can fire.
      const shot = shotCheck(p, launcher, { x: target.x, z: target.z }, content);
      if (!shot.ok && (shot.error.code === RANGED_ERROR.OUT_OF_RANGE || shot.error.code === RANGED_ERROR.NO_LINE_OF_SIGHT)) {
        this.chase(p, { x: target.x, z: target.z });
        return;
      }
      if (!shot.ok) {
        p.action = null;
        refuse(p, shot.error.code, shot.error.message);
        return;
      }
      ammo = shot.value;
    } else {
      const d = chebyshev(p.tile, { x: target.x, z: target.z });
      if (d > 1 || d === 0) {
        this.chase(p, { x: target.x, z: target.z });
        return;
      }
    }
    p.path = [];
    p.chase = undefined;
    if (clock.tick < p.nextAttackTick) return;
    // An item commit (a recovered arrow's, a bank's) is running: the shot waits for it.
    if (ammo && p.itemsLocked) return;
    const weapon = p.equipment.weapon ? content.items.get(p.equipment.weapon.itemId) : undefined;
    p.lastCombatAt = clock.now();
    if (victim) {
      victim.lastCombatAt = p.lastCombatAt;
      victim.attackedBy.set(p.id, p.lastCombatAt); // kept in the victim's view (interest management)
    }
    p.nextAttackTick = clock.tick + (weapon?.attackSpeed ?? DEFAULT_ATTACK_SPEED);
    const attacker = ammo
      ? { ...rangedCombatant(p.skills, p.equipment, (id) => content.items.get(id), p.style, ammo), boosts: boostsOf(p, content) }
      : combatantOf(p, content);
    const xpStyle = ammo ? "ranged" : p.style;
    const at = { x: target.x, z: target.z };
    if (npc) {
      const out = rollAttack(attacker, npcCombatant(npc.def.stats), clock.rng);
      const res = applyDamage(npc.health, out.damage);
      npc.health = res.health;
      if (!npc.targetId) npc.targetId = p.id;
      this.d.visibility.emitHit({ attackerId: p.id, targetId: npc.id, damage: res.dealt, targetHealth: npc.health, targetMaxHealth: npc.maxHealth }, npc);
      this.d.progress.grantXp(p, combatXp(res.dealt, xpStyle));
      if (res.dead) this.d.npcAi.kill(npc, p);
    } else if (victim) {
      const out = rollAttack(attacker, combatantOf(victim, content), clock.rng);
      const damage = protectedDamage(out.damage, ammo ? "ranged" : "melee", protectionOfPlayer(victim, content), "player");
      const res = applyDamage(victim.health, damage);
      victim.health = res.health;
      victim.safety.progressChanged();
      this.d.visibility.emitHit(
        { attackerId: p.id, targetId: victim.id, damage: res.dealt, targetHealth: victim.health, targetMaxHealth: victim.maxHealth },
        victim,
      );
      this.d.progress.grantXp(p, combatXp(res.dealt, xpStyle));
      if (res.dead) this.d.deaths.kill(victim, p.id);
    }
    if (ammo) this.spendArrow(p, ammo, at);
  }

  /**
   * One shot's arrow leaves the ammo slot. One that breaks is gone (saved with the next batch, like
   * any use of an item). One that lands under the target (ARROW_RECOVERY_CHANCE) is a drop: its
   * removal commits first, and the pile appears only after that commit (docs/persistence.md "Drops").
   */
  private spendArrow(p: Player, ammo: AmmunitionDef, at: Tile): void {
    const minusOne = () => {
      const worn = p.equipment.ammo;
      if (!worn || worn.itemId !== ammo.itemId || worn.quantity < 1) return undefined;
      const equipment = { ...p.equipment };
      if (worn.quantity > 1) equipment.ammo = { itemId: worn.itemId, quantity: worn.quantity - 1 };
      else delete equipment.ammo;
      return equipment;
    };
    if (arrowRecovered(this.d.clock.rng)) {
      void this.d.saving.commitItems(
        p,
        () => {
          const equipment = minusOne();
          return equipment ? { equipment } : refusal("OUT_OF_AMMO");
        },
        () => this.d.ground.drop(ammo.itemId, 1, at.x, at.z, p.id),
      );
      return;
    }
    const equipment = minusOne();
    if (!equipment) return;
    p.equipment = equipment;
    p.safety.itemsChanged();
    p.sync();
  }

  /**
   * Walk toward an attack target out of reach. A path is computed only when there is none for this
   * attack and target tile yet (a new attack, or the target moved), or when the chaser used up a
   * path that ended short of the target (unreachable or beyond the search budget) and can try again
   * from where it now stands. A chaser that got nowhere from its current tile gives up.
   */
  private chase(p: Player, target: Tile): void {
    const c = p.chase;
    const planned = c !== undefined && c.action === p.action && c.x === target.x && c.z === target.z;
    if (planned && p.pathLength > 0) return;
    if (planned && c.fromX === p.x && c.fromZ === p.z) return this.giveUp(p);
    const action = p.action!;
    let found: boolean | "wait";
    if (p.x === target.x && p.z === target.z) {
      // Standing on the target's tile: step off to a neighbour a path could take, to fight from there.
      const walkable = (x: number, z: number) => this.d.movement.walkable(x, z);
      const step = NEIGHBOURS.find(([dx, dz]) => canStep(p.x, p.z, dx, dz, walkable));
      const off = step && { x: p.x + step[0], z: p.z + step[1] };
      p.path = off ? [off] : [];
      found = off !== undefined;
    } else found = this.d.movement.actionPathTo(p, target, true);
    if (found === "wait") return; // the tick's path budget is spent: chase again next tick
    if (!found) return this.giveUp(p);
    p.chase = { action, x: target.x, z: target.z, fromX: p.x, fromZ: p.z };
  }

  private giveUp(p: Player): void {
    p.action = null;
    p.chase = undefined;
    refuse(p, "NO_PATH");
  }
}
