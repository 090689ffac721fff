/**
 * NPCs: spawning, aggression within their aggro radius, chasing and hitting their target, wandering
 * near their spawn, dying (loot for the killer) and respawning.
 */
import type { CharacterStore } from "../ports/character-store.js";
import type { GameContent } from "../../content/load.js";
import { applyDamage, maxHealth, npcCombatant, rollAttack } from "../../domain/combat.js";
import { rollLoot } from "../../domain/loot.js";
import { chebyshev } from "../../domain/movement.js";
import { protectedDamage } from "../../domain/prayer.js";
import { DEFAULT_LAUNCHER_RANGE, lineOfSight } from "../../domain/ranged.js";
import { COINS_ITEM_ID, MAX_STACK, type Tile } from "../../domain/types.js";
import type { WorldClock } from "../clock.js";
import type { Npc } from "../objects.js";
import type { SpatialGrid } from "../grid.js";
import type { PlayerQueues } from "../player-queues.js";
import type { Player } from "../player.js";
import { canFightBack, combatantOf, inCombat, type NpcKiller } from "./combat.js";
import type { Deaths } from "./death.js";
import type { Ground } from "./ground.js";
import type { Progress } from "./progress.js";
import type { Visibility } from "./visibility.js";

export interface NpcsDeps {
  npcs: Map<string, Npc>;
  npcGrid: SpatialGrid<Npc>;
  players: ReadonlyMap<string, Player>;
  playerGrid: SpatialGrid<Player>;
  content: GameContent;
  clock: WorldClock;
  visibility: Visibility;
  deaths: Deaths;
  ground: Ground;
  progress: Progress;
  queues: PlayerQueues;
  characters: CharacterStore;
}

export class Npcs implements NpcKiller {
  constructor(private readonly d: NpcsDeps) {}

  /** Place every NPC of the content at its spawns. */
  spawn(): void {
    for (const def of this.d.content.npcs.values()) {
      def.spawns.forEach((s, i) => {
        const npc: Npc = {
          id: `npc:${def.id}:${i}`,
          def,
          spawn: { x: s.x, z: s.z },
          x: s.x,
          z: s.z,
          health: maxHealth(def.stats.constitution),
          maxHealth: maxHealth(def.stats.constitution),
          targetId: undefined,
          nextAttackTick: 0,
          respawnTick: undefined,
          nextWanderTick: 0,
        };
        this.d.npcs.set(npc.id, npc);
        this.d.npcGrid.set(npc, npc.x, npc.z);
      });
    }
  }

  /** Ids of NPCs of a kind (tests, bots). */
  idsOf(defId: string): string[] {
    return [...this.d.npcs.values()].filter((n) => n.def.id === defId).map((n) => n.id);
  }

  /** One tick of every NPC. */
  tick(): void {
    for (const n of this.d.npcs.values()) this.step(n);
  }

  /** Outline: respawn when due; drop a target it should not chase; look for one; fight, or idle. */
  private step(n: Npc): void {
    const { clock, content } = this.d;
    if (n.respawnTick !== undefined) {
      if (n.respawnTick <= clock.tick) {
        n.respawnTick = undefined;
        n.health = n.maxHealth;
        n.x = n.spawn.x;
        n.z = n.spawn.z;
        n.targetId = undefined;
        this.d.npcGrid.set(n, n.x, n.z);
      }
      return;
    }
    let target = n.targetId ? this.d.players.get(n.targetId) : undefined;
    const leash = n.def.wanderRadius + 10;
    if (
      target &&
      (target.dead ||
        (target.dropped !== undefined && !inCombat(target, clock.now())) ||
        content.isSafe(target.x, target.z) ||
        chebyshev(target, n.spawn) > leash)
    ) {
      target = undefined;
      n.targetId = undefined;
    }
    if (!target && n.def.aggressive && n.def.aggroRadius > 0) {
      for (const p of this.d.playerGrid.near(n.x, n.z, n.def.aggroRadius)) {
        if (p.dead || p.dropped !== undefined || content.isSafe(p.x, p.z)) continue;
        if (chebyshev(p, n) <= n.def.aggroRadius && p.combatLevel <= n.def.combatLevel * 2) {
          target = p;
          n.targetId = p.id;
          break;
        }
      }
    }
    if (target) return this.fight(n, target);
    // Idle: wander occasionally, or walk home after a chase.
    if (chebyshev(n, n.spawn) > n.def.wanderRadius) {
      const next = this.stepToward(n, n.spawn);
      if (next) this.move(n, next.x, next.z);
      return;
    }
    if (n.def.wanderRadius > 0 && clock.tick >= n.nextWanderTick) {
      n.nextWanderTick = clock.tick + 5 + Math.floor(clock.rng() * 10);
      const x = n.x + Math.floor(clock.rng() * 3) - 1;
      const z = n.z + Math.floor(clock.rng() * 3) - 1;
      if (chebyshev({ x, z }, n.spawn) <= n.def.wanderRadius && this.walkable(x, z)) this.move(n, x, z);
    }
  }

  /**
   * Close in on the target, or hit it when the attack is due: a melee NPC from the next tile, a
   * ranged one (`attackStyle: "ranged"`) from within its `attackRange` with a line of sight.
   */
  private fight(n: Npc, target: Player): void {
    const { clock, content } = this.d;
    const d = chebyshev(n, target);
    const style = n.def.attackStyle ?? "melee";
    const inReach =
      style === "ranged" ? d > 0 && d <= (n.def.attackRange ?? DEFAULT_LAUNCHER_RANGE) && lineOfSight(n, target, (x, z) => content.blocksSight(x, z)) : d === 1;
    if (!inReach) {
      const next = this.stepToward(n, target);
      if (next) this.move(n, next.x, next.z);
      return;
    }
    if (clock.tick < n.nextAttackTick) return;
    n.nextAttackTick = clock.tick + n.def.attackSpeed;
    const defender = combatantOf(target, this.d.content);
    const out = rollAttack(npcCombatant(n.def.stats, n.def.maxHit), defender, clock.rng);
    // A protection prayer against this style turns the hit aside whole (docs/combat.md#prayers).
    const res = applyDamage(target.health, protectedDamage(out.damage, style, target.protection || undefined, "npc"));
    target.health = res.health;
    target.safety.progressChanged();
    target.lastCombatAt = clock.now();
    target.attackedBy.set(n.id, target.lastCombatAt); // kept in the target's view (interest management)
    this.d.visibility.emitHit(
      { attackerId: n.id, targetId: target.id, damage: res.dealt, targetHealth: target.health, targetMaxHealth: target.maxHealth },
      target,
    );
    if (res.dead) {
      n.targetId = undefined;
      this.d.deaths.kill(target, n.id);
    } else if (!target.action && !target.isAgent && !target.tradeId && canFightBack(target, content)) {
      // Players fight back automatically when attacked and idle (not while trading: no fighting then).
      target.action = { kind: "attack", targetId: n.id };
    }
  }

  /** One greedy step toward `to` (NPCs do not path around obstacles beyond a single detour). */
  private stepToward(n: Npc, to: Tile): Tile | undefined {
    const dx = Math.sign(to.x - n.x);
    const dz = Math.sign(to.z - n.z);
    const options = [
      { x: n.x + dx, z: n.z + dz },
      { x: n.x + dx, z: n.z },
      { x: n.x, z: n.z + dz },
    ];
    return options.find((t) => (t.x !== n.x || t.z !== n.z) && this.walkable(t.x, t.z) && !(t.x === to.x && t.z === to.z));
  }

  /** May an NPC step onto the tile: inside the world, not blocked, not a gate (NPCs stay in their pens). */
  private walkable(x: number, z: number): boolean {
    return this.d.content.inBounds(x, z) && !this.d.content.blocksNpc(x, z);
  }

  private move(n: Npc, x: number, z: number): void {
    n.x = x;
    n.z = z;
    this.d.npcGrid.set(n, x, z);
  }

  /** The NPC died by `killer`'s hit: it waits to respawn, and its loot goes to the killer. */
  kill(n: Npc, killer: Player): void {
    const { clock, ground } = this.d;
    n.respawnTick = clock.tick + n.def.respawnTicks;
    n.targetId = undefined;
    killer.action = null;
    this.d.npcGrid.delete(n.id);
    // Drops: always-drops plus weighted rolls; coins go straight to the killer's coins.
    const drops = rollLoot(n.def.drops, clock.rng);
    let coins = 0;
    for (const d of drops) {
      if (d.itemId === COINS_ITEM_ID) coins += d.quantity;
      else ground.drop(d.itemId, d.quantity, n.x, n.z, killer.id);
    }
    // Coins go to the killer's coins, unless an item transaction of its own is running (it would
    // overwrite them) or they would pass the cap: then they lie on the ground for `pickup`.
    if (coins > 0) {
      if (!killer.itemsLocked && killer.coins + coins <= MAX_STACK) {
        killer.coins += coins;
        killer.safety.itemsChanged();
      } else ground.drop(COINS_ITEM_ID, Math.min(coins, MAX_STACK), n.x, n.z, killer.id);
    }
    this.d.progress.countGoal(killer, { type: "combat", npcId: n.def.id });
    killer.sync();
    void this.d.queues.run(killer.id, () => this.d.characters.recordKill(killer.id, n.def.id));
  }
}
