/**
 * Player combat: attacking an NPC or, in PvP areas, another player; chasing a target out of reach;
 * who counts as in combat (no logging out of a fight, README "Combat logout").
 */
import type { GameContent } from "../../content/load.js";
import { applyDamage, COMBAT_LOGOUT_SECONDS, combatXp, DEFAULT_ATTACK_SPEED, equippedCombatant, npcCombatant, rollAttack, type Combatant } from "../../domain/combat.js";
import { canStep, chebyshev, NEIGHBOURS } from "../../domain/movement.js";
import type { Tile } from "../../domain/types.js";
import type { WorldClock } from "../clock.js";
import type { Npc } from "../objects.js";
import { refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { Deaths } from "./death.js";
import type { Movement } from "./movement.js";
import type { Progress } from "./progress.js";
import type { Visibility } from "./visibility.js";

export { COMBAT_LOGOUT_SECONDS };

/** Did the player deal or take a hit within the last COMBAT_LOGOUT_SECONDS (at `now`, ms)? */
export function inCombat(p: Player, now: number): boolean {
  return p.lastCombatAt !== undefined && now - p.lastCombatAt < COMBAT_LOGOUT_SECONDS * 1000;
}

/** A player as a combatant: its levels, the bonuses of what it wears, its style. */
export function combatantOf(p: Player, content: GameContent): Combatant {
  return equippedCombatant(p.skills, p.equipment, (id) => content.items.get(id), p.style);
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
    // Fighting is refused while trading (README "Trading"), also for an attack set before the trade.
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
    const d = chebyshev(p.tile, { x: target.x, z: target.z });
    if (d > 1 || d === 0) {
      this.chase(p, { x: target.x, z: target.z });
      return;
    }
    p.path = [];
    p.chase = undefined;
    if (clock.tick < p.nextAttackTick) return;
    const weapon = p.equipment.weapon ? content.items.get(p.equipment.weapon.itemId) : undefined;
    p.lastCombatAt = clock.now();
    if (victim) {
      victim.lastCombatAt = p.lastCombatAt;
      victim.attackedBy.set(p.id, p.lastCombatAt); // kept in the victim's view (interest management)
    }
    p.nextAttackTick = clock.tick + (weapon?.attackSpeed ?? DEFAULT_ATTACK_SPEED);
    const attacker = combatantOf(p, content);
    if (npc) {
      const out = rollAttack(attacker, npcCombatant(npc.def.stats), clock.rng);
      const res = applyDamage(npc.health, out.damage);
      npc.health = res.health;
      if (!npc.targetId) npc.targetId = p.id;
      this.d.visibility.emitHit({ attackerId: p.id, targetId: npc.id, damage: res.dealt, targetHealth: npc.health, targetMaxHealth: npc.maxHealth }, npc);
      this.d.progress.grantXp(p, combatXp(res.dealt, p.style));
      if (res.dead) this.d.npcAi.kill(npc, p);
    } else if (victim) {
      const out = rollAttack(attacker, combatantOf(victim, content), clock.rng);
      const res = applyDamage(victim.health, out.damage);
      victim.health = res.health;
      victim.safety.progressChanged();
      this.d.visibility.emitHit({ attackerId: p.id, targetId: victim.id, damage: res.dealt, targetHealth: victim.health, targetMaxHealth: victim.maxHealth }, victim);
      this.d.progress.grantXp(p, combatXp(res.dealt, p.style));
      if (res.dead) this.d.deaths.kill(victim, p.id);
    }
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
    if (planned && p.path.length > 0) return;
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
