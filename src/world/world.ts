/**
 * The world simulation: who is here, where everything is, and the fixed tick that moves, fights,
 * gathers and respawns. Rules come from `src/domain/`, data from the content manifests. The tick
 * never waits on storage: saves are queued per player (`PlayerQueues`), immediate item transactions
 * run beside the loop and apply their result when committed.
 *
 * Outline: membership (join, drop, leave) → tick (players, NPCs, nodes, items) → visibility (what
 * each player sees) → persistence (batched saves, immediate transactions, death).
 */
import { randomUUID } from "node:crypto";
import { ServerError } from "@colyseus/core";
import type { CharacterRecord, CharacterRepository } from "../../entities/character-repository.js";
import type { StoredGoal } from "../../entities/character.js";
import type { GameContent } from "../content/load.js";
import type { NpcDef } from "../content/schemas.js";
import { applyDamage, combatXp, maxHealth, playerCombatant, rollAttack, sumBonuses, DEFAULT_ATTACK_SPEED } from "../domain/combat.js";
import { advanceGoal, type GoalEvent } from "../domain/goal-progress.js";
import { addItem, inventoryToSlots, removeFromSlot, type Inventory } from "../domain/inventory.js";
import { canStep, chebyshev, findPath, NEIGHBOURS, RUN_TILES_PER_TICK, stepAlong, WALK_TILES_PER_TICK } from "../domain/movement.js";
import { MoveQueue, Regions, searchLimit, type MoveRequest, type MoveTickReport } from "../domain/pathing.js";
import { COINS_ITEM_ID, MAX_STACK, type SkillName, type Tile } from "../domain/types.js";
import { addXp } from "../domain/xp.js";
import type { ChatMessage, CombatHit, PlayerSync } from "../events.js";
import type { PlayerPublic } from "../protocol/player.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import { groundItemView, npcView, resourceView, type GroundItem, type Npc, type PublicView, type ResourceInstance } from "./entities.js";
import { SpatialGrid } from "./grid.js";
import { PlayerQueues } from "./persistence.js";
import { Player, type Connection } from "./player.js";
import type { LivePlayerSummary, Surroundings, WorldPort, WorldSnapshot } from "./port.js";

/** Tiles (Chebyshev) a player sees around itself. See docs/protocol.md#interest-management. */
export const VIEW_RADIUS = 24;
/** Seconds a dropped connection's player stays in the world awaiting reconnection. */
export const RECONNECT_SECONDS = 20;
/** Ticks a dropped or death item stays private to its owner, and lives in total. */
export const GROUND_ITEM_PRIVATE_TICKS = 100;
export const GROUND_ITEM_LIFETIME_TICKS = 300;
/** Ticks between gathering attempts. */
export const GATHER_INTERVAL_TICKS = 4;
/** Players saved in parallel at shutdown (`leaveAll`). */
export const SHUTDOWN_SAVE_BATCH = 16;
/** Items kept on death (most valuable units). */
export const ITEMS_KEPT_ON_DEATH = 3;
/** Longest wait, in ticks, between attempts to resolve a death lock that failed to resolve. */
export const PENDING_DEATH_MAX_BACKOFF_TICKS = 50;
/**
 * Seconds after its last combat action (a hit it dealt or took) during which a player cannot leave
 * the world: its connection may go, the player stays, can be attacked and can die (README "Combat
 * logout").
 */
export const COMBAT_LOGOUT_SECONDS = 10;

/** Stable codes of system refusals (`chat:message` `code`), as `as const` (README "Refusal codes"). */
export const REFUSAL = {
  /** The player is dead (its death is being written): nothing can be done until it respawns. */
  PLAYER_DEAD: "PLAYER_DEAD",
} as const;
export type RefusalCode = (typeof REFUSAL)[keyof typeof REFUSAL];

/** A recorded death whose lock is not resolved yet: its dropped items are off the ground. */
interface PendingDeath {
  deathId: string;
  ownerId: string;
  tile: Tile;
  dropped: { itemId: string; quantity: number }[];
  nextTick: number;
  attempts: number;
  inFlight: boolean;
}

/** Social relations the world consults for chat and trade requests. */
export interface SocialPort {
  /** Does the account owning `targetCharacterId` ignore `senderCharacterId`? */
  isIgnoring(targetCharacterId: string, senderCharacterId: string): Promise<boolean>;
  areFriends(a: string, b: string): Promise<boolean>;
  invalidate?(characterIds: string[]): void;
}

/** What the trade system wants to hear from the world. */
export interface TradeHooks {
  /** A player moved, died or left: the open trade ends with this reason. */
  playerInterrupted(playerId: string, reason: "moved_away" | "player_died" | "disconnected"): void;
}

/** The answer to an in-game admin code. */
export type AdminCodeCheck = "ok" | "wrong" | "blocked";

export interface WorldDeps {
  content: GameContent;
  characters: CharacterRepository;
  logger: Logger;
  saveIntervalSeconds: number;
  social?: SocialPort;
  /**
   * Check an in-game `/admin <code>` from a client address: `wrong` codes count as authentication
   * attempts of the address, and an address past the limit gets `blocked` without a check.
   */
  checkAdminCode: (code: string, address: string | undefined) => AdminCodeCheck | Promise<AdminCodeCheck>;
  rng?: () => number;
  now?: () => number;
  /** Prometheus metrics (README "Metrics"). */
  metrics?: Metrics;
}

/** Visible entity ids per collection. */
export interface VisibleSet {
  players: Set<string>;
  npcs: Set<string>;
  resources: Set<string>;
  groundItems: Set<string>;
}

/** The walkable regions of each loaded content (the map is static; worlds of one content share them). */
const regionCache = new WeakMap<GameContent, Regions>();
function regionsOf(content: GameContent): Regions {
  let r = regionCache.get(content);
  if (!r) regionCache.set(content, (r = Regions.build(content.worldBounds, (x, z) => content.isBlocked(x, z))));
  return r;
}

export class World implements WorldPort {
  readonly content: GameContent;
  readonly players = new Map<string, Player>();
  readonly npcs = new Map<string, Npc>();
  readonly resources = new Map<string, ResourceInstance>();
  readonly groundItems = new Map<string, GroundItem>();
  readonly queues: PlayerQueues;
  tick = 0;
  /** Seconds a dropped player waits for its client to reconnect (RECONNECT_SECONDS; tests shorten it). */
  reconnectSeconds = RECONNECT_SECONDS;
  tradeHooks: TradeHooks | undefined;
  /** Called when a player's public state should be re-sent (new, gone). Set by the room. */
  onPlayerRemoved: ((playerId: string) => void) | undefined;

  private readonly playerGrid = new SpatialGrid<Player>();
  private readonly npcGrid = new SpatialGrid<Npc>();
  private readonly resourceGrid = new SpatialGrid<ResourceInstance>();
  private readonly itemGrid = new SpatialGrid<GroundItem>();
  readonly rng: () => number;
  readonly now: () => number;
  private lastSaveAt: number;
  /** Deaths whose lock failed to resolve; retried on the tick. */
  private readonly pendingDeaths: PendingDeath[] = [];
  private fireSeq = 0;
  private itemSeq = 0;
  /** Characters with an out-of-world change running (count), and when the last one ended. */
  private readonly outOfWorldWork = new Map<string, number>();
  private readonly outOfWorldEnded = new Map<string, number>();
  /** Characters whose items are held by a settlement (count): a player joining meanwhile is locked. */
  private readonly itemHolds = new Map<string, number>();
  /** Walkable regions of the static map: unreachable targets are refused before any search. */
  readonly regions: Regions;
  /** `player:move` targets waiting for the tick's path-finding budget (README "Movement and path-finding cost"). */
  readonly moves = new MoveQueue();
  /** What the last tick's move searches did (diagnostics and tests). */
  lastMoveTick: MoveTickReport = { served: [], expanded: 0, deferred: 0 };

  constructor(readonly deps: WorldDeps) {
    this.content = deps.content;
    this.regions = regionsOf(this.content);
    this.rng = deps.rng ?? Math.random;
    this.now = deps.now ?? Date.now;
    this.queues = new PlayerQueues(deps.logger, () => deps.metrics?.saveFailures.inc());
    this.lastSaveAt = this.now();
    this.spawnContent();
  }

  // ------------------------------------------------------------------ membership

  private spawnContent() {
    for (const def of this.content.npcs.values()) {
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
          path: [],
          damageBy: new Map(),
        };
        this.npcs.set(npc.id, npc);
        this.npcGrid.set(npc, npc.x, npc.z);
      });
    }
    for (const r of this.content.resourceNodes) {
      const node = this.content.gatheringNodes.get(r.type)!;
      const inst: ResourceInstance = {
        id: r.id,
        type: r.type,
        skill: node.skill,
        x: r.x,
        z: r.z,
        node,
        respawnTick: undefined,
        remaining: node.resourcesPerNode,
        expiresTick: undefined,
      };
      this.resources.set(inst.id, inst);
      this.resourceGrid.set(inst, inst.x, inst.z);
    }
  }

  /**
   * Put a character in the world, or hand an existing one (lingering after a drop, or connected
   * elsewhere) to the new connection. The old connection is closed with `replacedCode`.
   */
  join(record: CharacterRecord, connection: Connection, replacedCode: number): { player: Player; resumed: boolean } {
    const existing = this.players.get(record.character.id);
    if (existing) {
      const old = existing.connection;
      existing.connection = connection;
      existing.dropped = undefined;
      existing.leaving = undefined;
      if (old && old.id !== connection.id) old.close(replacedCode, "replaced by a new connection");
      existing.sync();
      return { player: existing, resumed: true };
    }
    this.assertMayJoin(record.character.id, record);
    const player = new Player(record);
    player.connection = connection;
    // Its items are being settled (a trade): it was built from rows that may predate the
    // settlement, and stays locked until the settlement has put the committed items in it.
    if (this.itemHolds.has(player.id)) player.itemsLocked = true;
    if (!this.content.inBounds(player.x, player.z) || this.content.isBlocked(player.x, player.z)) {
      player.x = this.content.spawn.x;
      player.z = this.content.spawn.z;
    }
    if (player.health <= 0) player.health = player.maxHealth;
    this.players.set(player.id, player);
    this.playerGrid.set(player, player.x, player.z);
    player.sync();
    return { player, resumed: false };
  }

  /**
   * The connection dropped; the player stays for `reconnectSeconds` unless it reconnects. The tick
   * ends that window, unless `seat`: the connection holds a reconnection seat whose own timer ends
   * it (an SDK client's `allowReconnection`; its expiry calls `leave`), so one timer owns the window
   * and a reconnection within the seat always finds its player.
   */
  drop(playerId: string, connectionId: string, seat = false) {
    const p = this.players.get(playerId);
    if (!p || p.connection?.id !== connectionId) return;
    p.connection = undefined;
    p.dropped = { at: this.now(), connectionId, seat };
    p.path = [];
    this.moves.cancel(p.id);
    p.action = null;
    if (p.tradeId) this.tradeHooks?.playerInterrupted(p.id, "disconnected");
  }

  /**
   * The connection that dropped comes back (SDK reconnection, same connection object). Refused
   * (undefined) unless the player is still here with no live connection and this is the very
   * connection that dropped: a fresh join in between, or a later drop of that fresh connection,
   * makes the old one stale.
   */
  reconnect(playerId: string, connection: Connection): Player | undefined {
    const p = this.players.get(playerId);
    if (!p || p.connection || p.dropped?.connectionId !== connection.id) return undefined;
    p.connection = connection;
    p.dropped = undefined;
    p.sync();
    return p;
  }

  /**
   * The player if `connectionId` is still its live connection; undefined when the player is gone
   * or the connection was replaced or dropped.
   */
  connectedPlayer(playerId: string, connectionId: string): Player | undefined {
    const p = this.players.get(playerId);
    return p?.connection?.id === connectionId ? p : undefined;
  }

  /**
   * Remove a player: interrupt its trade, save it, close its session. Resolves when saved.
   * With `connectionId`, only that connection's player goes: the live one, or the one that dropped
   * and is waiting for it; a connection that was replaced or went stale removes nothing.
   * A player in combat (`inCombat`) is not removed unless `force` (shutdown, a kick, a reload): it
   * loses its connection and stays until the tick finds it out of combat, then leaves with `reason`.
   */
  async leave(playerId: string, reason: string, connectionId?: string, force = false): Promise<void> {
    const p = this.players.get(playerId);
    if (!p) return;
    if (connectionId && (p.connection ? p.connection.id : p.dropped?.connectionId) !== connectionId) return;
    if (!force && this.inCombat(p)) {
      // No logging out of a fight: the player stays, without a connection, until the tick finds it
      // out of combat (README "Combat logout").
      const gone = p.connection?.id ?? p.dropped?.connectionId ?? "";
      if (p.connection) this.drop(p.id, p.connection.id);
      p.dropped = { at: p.dropped?.at ?? this.now(), connectionId: gone, seat: false };
      p.leaving = reason;
      return;
    }
    if (p.tradeId) this.tradeHooks?.playerInterrupted(p.id, "disconnected");
    this.players.delete(playerId);
    this.playerGrid.delete(playerId);
    this.onPlayerRemoved?.(playerId);
    await this.queues.run(p.id, async () => {
      await this.deps.characters.save(p.snapshot(true));
      if (p.loginId) await this.deps.characters.recordLogout(p.loginId, reason);
    });
  }

  // ------------------------------------------------------------------ tick

  /** Advance the world by one tick. Never awaits. */
  step(): void {
    this.tick++;
    const now = this.now();
    this.planMoves();
    for (const p of this.players.values()) {
      if (p.dropped && !p.dropped.seat && (p.leaving || now - p.dropped.at > this.reconnectSeconds * 1000) && !this.inCombat(p)) {
        void this.leave(p.id, p.leaving ?? "reconnect_timeout", undefined, true);
        continue;
      }
      if (!p.dead) this.stepPlayer(p);
    }
    for (const n of this.npcs.values()) this.stepNpc(n);
    for (const r of this.resources.values()) {
      if (r.respawnTick !== undefined && r.respawnTick <= this.tick) {
        r.respawnTick = undefined;
        r.remaining = r.node?.resourcesPerNode;
      }
      if (r.expiresTick !== undefined && r.expiresTick <= this.tick) {
        this.resources.delete(r.id);
        this.resourceGrid.delete(r.id);
      }
    }
    for (const g of this.groundItems.values()) {
      if (g.expiresTick <= this.tick) this.removeGroundItem(g.id);
    }
    for (const d of this.pendingDeaths) if (d.nextTick <= this.tick) this.resolvePendingDeath(d);
    if (now - this.lastSaveAt >= this.deps.saveIntervalSeconds * 1000) {
      this.lastSaveAt = now;
      this.saveDirty();
    }
  }

  private stepPlayer(p: Player) {
    const a = p.action;
    if (a?.kind === "attack") this.stepAttack(p, a.targetId);
    else if (a?.kind === "gather") this.stepGather(p, a);
    else if (a?.kind === "pickup") this.stepPickup(p, a.groundItemId);
    this.advance(p);
  }

  /** Did the player deal or take a hit within the last COMBAT_LOGOUT_SECONDS? */
  inCombat(p: Player): boolean {
    return p.lastCombatAt !== undefined && this.now() - p.lastCombatAt < COMBAT_LOGOUT_SECONDS * 1000;
  }

  /** Move a player along its path by one tick's worth of tiles. */
  private advance(p: Player) {
    if (p.path.length === 0) return;
    const step = stepAlong(p.path, p.running ? RUN_TILES_PER_TICK : WALK_TILES_PER_TICK);
    p.path = [...step.remaining];
    if (step.position) {
      const areaBefore = p.goal?.type === "explore" ? this.content.areaAt(p.x, p.z) : undefined;
      p.x = step.position.x;
      p.z = step.position.z;
      p.progressDirty = true;
      this.playerGrid.set(p, p.x, p.z);
      if (p.tradeId) this.tradeHooks?.playerInterrupted(p.id, "moved_away");
      if (p.goal?.type === "explore") {
        const area = this.content.areaAt(p.x, p.z);
        if (area && area !== areaBefore && this.countGoal(p, { type: "explore", areaId: area.id })) p.sync();
      }
    }
  }

  /** Admin teleport: an instant move (ends any trade, like any move). */
  teleport(p: Player, x: number, z: number) {
    p.path = [];
    this.moves.cancel(p.id);
    p.action = null;
    p.x = x;
    p.z = z;
    p.progressDirty = true;
    this.playerGrid.set(p, x, z);
    if (p.tradeId) this.tradeHooks?.playerInterrupted(p.id, "moved_away");
    p.sync();
  }

  /**
   * Record a `player:move` target; the tick searches it within its budget (`planMoves`). Refused
   * at once, with no search, when no path can reach it (another walkable region): returns false.
   */
  requestMove(p: Player, req: MoveRequest): boolean {
    if (!this.regions.reachable(p.tile, req)) return false;
    this.moves.request(p.id, req);
    return true;
  }

  /** Is a `player:move` of this player waiting for its search? */
  hasPendingMove(playerId: string): boolean {
    return this.moves.get(playerId) !== undefined;
  }

  /** The tick's `player:move` searches, in arrival order, within the tick's node budget. */
  private planMoves() {
    if (this.moves.size === 0) return;
    const stats = { expanded: 0 };
    this.lastMoveTick = this.moves.runTick(
      (id, req) => {
        const p = this.players.get(id);
        return p && !p.dead && !p.dropped ? searchLimit(p.tile, req) : undefined;
      },
      (id, req, maxNodes) => {
        const p = this.players.get(id)!;
        // Something the player did since asking (an attack, gathering) replaced the walk.
        if (p.action) return 0;
        p.running = req.run;
        if (!this.pathTo(p, req, false, maxNodes, stats)) this.system(p, "You can't reach that.");
        return stats.expanded;
      },
    );
  }

  /**
   * Path a player to `to` (or next to it when `adjacent`). Returns false when no path exists: at once
   * when `to` lies in another walkable region, else after a search of at most `maxNodes` tiles
   * (proportional to the distance by default).
   */
  pathTo(p: Player, to: Tile, adjacent = false, maxNodes = searchLimit(p.tile, to), stats?: { expanded: number }): boolean {
    if (stats) stats.expanded = 0;
    if (!this.regions.reachable(p.tile, to, adjacent)) return false;
    const res = findPath(p.tile, to, (x, z) => this.content.isBlocked(x, z), this.content.worldBounds, maxNodes, stats);
    if (!res.ok) return false;
    let tiles = [...res.value.tiles];
    if (adjacent && tiles.length > 0) {
      // Stop on the first tile next to the target.
      const i = tiles.findIndex((t) => chebyshev(t, to) <= 1);
      if (i >= 0) tiles = tiles.slice(0, i + 1);
    }
    p.path = tiles;
    return true;
  }

  private stepAttack(p: Player, targetId: string) {
    // Fighting is refused while trading (README "Trading"), also for an attack set before the trade.
    if (p.tradeId) {
      p.action = null;
      return;
    }
    const npc = this.npcs.get(targetId);
    const victim = npc ? undefined : this.players.get(targetId);
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
    if (this.tick < p.nextAttackTick) return;
    const weapon = p.equipment.weapon ? this.content.items.get(p.equipment.weapon.itemId) : undefined;
    p.lastCombatAt = this.now();
    if (victim) victim.lastCombatAt = p.lastCombatAt;
    p.nextAttackTick = this.tick + (weapon?.attackSpeed ?? DEFAULT_ATTACK_SPEED);
    const bonuses = sumBonuses(Object.values(p.equipment).map((e) => (e ? this.content.items.get(e.itemId) : undefined)));
    const attacker = playerCombatant(
      { attack: p.skills.attack.level, strength: p.skills.strength.level, defense: p.skills.defense.level },
      bonuses,
      p.style,
    );
    if (npc) {
      const defender = { attack: npc.def.stats.attack, strength: npc.def.stats.strength, defense: npc.def.stats.defense };
      const out = rollAttack(attacker, defender, this.rng);
      const res = applyDamage(npc.health, out.damage);
      npc.health = res.health;
      npc.damageBy.set(p.id, (npc.damageBy.get(p.id) ?? 0) + res.dealt);
      if (!npc.targetId) npc.targetId = p.id;
      this.emitHit({ attackerId: p.id, targetId: npc.id, damage: res.dealt, targetHealth: npc.health, targetMaxHealth: npc.maxHealth }, npc);
      this.grantXp(p, combatXp(res.dealt, p.style));
      if (res.dead) this.killNpc(npc, p);
    } else if (victim) {
      const vb = sumBonuses(Object.values(victim.equipment).map((e) => (e ? this.content.items.get(e.itemId) : undefined)));
      const defender = playerCombatant(
        { attack: victim.skills.attack.level, strength: victim.skills.strength.level, defense: victim.skills.defense.level },
        vb,
        victim.style,
      );
      const out = rollAttack(attacker, defender, this.rng);
      const res = applyDamage(victim.health, out.damage);
      victim.health = res.health;
      victim.progressDirty = true;
      this.emitHit({ attackerId: p.id, targetId: victim.id, damage: res.dealt, targetHealth: victim.health, targetMaxHealth: victim.maxHealth }, victim);
      this.grantXp(p, combatXp(res.dealt, p.style));
      if (res.dead) this.killPlayer(victim, p.id);
    }
  }

  /**
   * Walk toward an attack target out of reach. A path is computed only when there is none for this
   * attack and target tile yet (a new attack, or the target moved), or when the chaser used up a
   * path that ended short of the target (unreachable or beyond the search budget) and can try again
   * from where it now stands. A chaser that got nowhere from its current tile gives up.
   */
  private chase(p: Player, target: Tile) {
    const c = p.chase;
    const planned = c !== undefined && c.action === p.action && c.x === target.x && c.z === target.z;
    if (planned && p.path.length > 0) return;
    if (planned && c.fromX === p.x && c.fromZ === p.z) {
      p.action = null;
      p.chase = undefined;
      this.system(p, "You can't reach that.");
      return;
    }
    const action = p.action!;
    let found: boolean;
    if (p.x === target.x && p.z === target.z) {
      // Standing on the target's tile: step off to a neighbour a path could take, to fight from there.
      const walkable = (x: number, z: number) => this.walkable(x, z);
      const step = NEIGHBOURS.find(([dx, dz]) => canStep(p.x, p.z, dx, dz, walkable));
      const off = step && { x: p.x + step[0], z: p.z + step[1] };
      p.path = off ? [off] : [];
      found = off !== undefined;
    } else found = this.pathTo(p, target, true);
    if (!found) {
      p.action = null;
      p.chase = undefined;
      this.system(p, "You can't reach that.");
      return;
    }
    p.chase = { action, x: target.x, z: target.z, fromX: p.x, fromZ: p.z };
  }

  /** PvP is allowed only when both players stand in a PvP area. */
  canPvp(a: Player, b: Player): boolean {
    return a.id !== b.id && this.content.isPvp(a.x, a.z) && this.content.isPvp(b.x, b.z);
  }

  private stepGather(p: Player, a: { nodeId: string; nextAttemptTick: number }) {
    const r = this.resources.get(a.nodeId);
    if (!r || !r.node) {
      p.action = null;
      return;
    }
    if (r.respawnTick !== undefined) {
      p.action = null;
      this.system(p, `The ${r.node.name.toLowerCase()} is depleted.`);
      return;
    }
    const d = chebyshev(p.tile, r);
    if (d > 1) {
      if (p.path.length === 0 && !this.pathTo(p, r, true)) p.action = null;
      return;
    }
    p.path = [];
    if (this.tick < a.nextAttemptTick) return;
    a.nextAttemptTick = this.tick + GATHER_INTERVAL_TICKS;
    const node = r.node;
    const skill = node.skill as SkillName;
    const tool = this.bestTool(p, node.tools);
    if (!tool) {
      p.action = null;
      this.system(p, `You need a ${node.tools.map((t) => this.content.items.get(t)?.name ?? t).join(" or ")} for that.`);
      return;
    }
    if (p.skills[skill].level < node.levelRequired) {
      p.action = null;
      this.system(p, `You need ${skill} level ${node.levelRequired} to do that.`);
      return;
    }
    if (p.itemsLocked || p.tradeId) return;
    const chance = Math.min(0.95, node.successBase + 0.01 * (p.skills[skill].level - node.levelRequired) + 0.05 * tool.tier);
    if (!(this.rng() < chance)) return;
    let inv: Inventory = p.inventory;
    if (node.consumes) {
      const idx = inv.findIndex((s) => s?.itemId === node.consumes!.itemId && s.quantity >= node.consumes!.quantity);
      if (idx < 0) {
        p.action = null;
        this.system(p, `You have no ${this.content.items.get(node.consumes.itemId)?.name ?? node.consumes.itemId} left.`);
        return;
      }
      const used = removeFromSlot(inv, idx, node.consumes.quantity);
      if (!used.ok) return;
      inv = used.value;
    }
    const added = addItem(inv, this.content.items.get(node.yields)!, 1);
    if (!added.ok) {
      p.action = null;
      this.system(p, "Your inventory is too full to hold any more.");
      return;
    }
    p.inventory = added.value;
    p.itemsDirty = true;
    this.grantXp(p, { [skill]: node.xp });
    this.countGoal(p, { type: skill as "woodcutting" | "fishing" | "mining", nodeId: node.id, itemId: node.yields });
    p.sync();
    const depleted = node.resourcesPerNode !== undefined ? (r.remaining = (r.remaining ?? 1) - 1) <= 0 : this.rng() < (node.depleteChance ?? 0);
    if (depleted) {
      r.respawnTick = this.tick + node.respawnTicks;
      p.action = null;
    }
  }

  /** The best tool the player holds (inventory or wielded) among `toolIds`. */
  bestTool(p: Player, toolIds: readonly string[]): { itemId: string; tier: number } | undefined {
    let best: { itemId: string; tier: number } | undefined;
    const held = new Set([...inventoryToSlots(p.inventory).map((s) => s.itemId), p.equipment.weapon?.itemId].filter(Boolean) as string[]);
    for (const id of toolIds) {
      if (!held.has(id)) continue;
      const t = this.content.tools.get(id);
      const tier = t?.tier ?? 0;
      if (!best || tier > best.tier) best = { itemId: id, tier };
    }
    return best;
  }

  private stepPickup(p: Player, itemId: string) {
    const g = this.groundItems.get(itemId);
    if (!g || !this.canSeeGroundItem(p, g)) {
      p.action = null;
      return;
    }
    if (p.x !== g.x || p.z !== g.z) {
      if (p.path.length === 0 && !this.pathTo(p, g)) p.action = null;
      return;
    }
    p.action = null;
    if (p.itemsLocked || p.tradeId) {
      this.system(p, "You can't do that right now.");
      return;
    }
    if (g.itemId === COINS_ITEM_ID) {
      // All or nothing: a pile that would pass the coin cap stays on the ground.
      if (p.coins + g.quantity > MAX_STACK) {
        this.system(p, "You can't carry that many coins.");
        return;
      }
      p.coins += g.quantity;
      p.itemsDirty = true;
      this.removeGroundItem(g.id);
      p.sync();
      return;
    }
    const def = this.content.items.get(g.itemId);
    if (!def) return;
    const added = addItem(p.inventory, def, g.quantity);
    if (!added.ok) {
      this.system(p, "You don't have enough inventory space.");
      return;
    }
    p.inventory = added.value;
    p.itemsDirty = true;
    this.removeGroundItem(g.id);
    p.sync();
  }

  // ------------------------------------------------------------------ NPCs

  private stepNpc(n: Npc) {
    if (n.respawnTick !== undefined) {
      if (n.respawnTick <= this.tick) {
        n.respawnTick = undefined;
        n.health = n.maxHealth;
        n.x = n.spawn.x;
        n.z = n.spawn.z;
        n.targetId = undefined;
        n.damageBy.clear();
        this.npcGrid.set(n, n.x, n.z);
      }
      return;
    }
    let target = n.targetId ? this.players.get(n.targetId) : undefined;
    const leash = n.def.wanderRadius + 10;
    if (
      target &&
      (target.dead || (target.dropped !== undefined && !this.inCombat(target)) || this.content.isSafe(target.x, target.z) || chebyshev(target, n.spawn) > leash)
    ) {
      target = undefined;
      n.targetId = undefined;
      n.path = [];
    }
    if (!target && n.def.aggressive && n.def.aggroRadius > 0) {
      for (const p of this.playerGrid.near(n.x, n.z, n.def.aggroRadius)) {
        if (p.dead || p.dropped !== undefined || this.content.isSafe(p.x, p.z)) continue;
        if (chebyshev(p, n) <= n.def.aggroRadius && p.combatLevel <= n.def.combatLevel * 2) {
          target = p;
          n.targetId = p.id;
          break;
        }
      }
    }
    if (target) {
      const d = chebyshev(n, target);
      if (d > 1 || d === 0) {
        const next = this.npcStepToward(n, target);
        if (next) this.moveNpc(n, next.x, next.z);
        return;
      }
      if (this.tick < n.nextAttackTick) return;
      n.nextAttackTick = this.tick + n.def.attackSpeed;
      const vb = sumBonuses(Object.values(target.equipment).map((e) => (e ? this.content.items.get(e.itemId) : undefined)));
      const defender = playerCombatant(
        { attack: target.skills.attack.level, strength: target.skills.strength.level, defense: target.skills.defense.level },
        vb,
        target.style,
      );
      const attacker = { attack: n.def.stats.attack, strength: n.def.stats.strength, defense: n.def.stats.defense, maxHit: n.def.maxHit };
      const out = rollAttack(attacker, defender, this.rng);
      const res = applyDamage(target.health, out.damage);
      target.health = res.health;
      target.progressDirty = true;
      target.lastCombatAt = this.now();
      this.emitHit({ attackerId: n.id, targetId: target.id, damage: res.dealt, targetHealth: target.health, targetMaxHealth: target.maxHealth }, target);
      if (res.dead) {
        n.targetId = undefined;
        this.killPlayer(target, n.id);
      } else if (!target.action && !target.isAgent && !target.tradeId) {
        // Players fight back automatically when attacked and idle (not while trading: no fighting then).
        target.action = { kind: "attack", targetId: n.id };
      }
      return;
    }
    // Idle: wander occasionally, or walk home after a chase.
    if (chebyshev(n, n.spawn) > n.def.wanderRadius) {
      const next = this.npcStepToward(n, n.spawn);
      if (next) this.moveNpc(n, next.x, next.z);
      return;
    }
    if (n.def.wanderRadius > 0 && this.tick >= n.nextWanderTick) {
      n.nextWanderTick = this.tick + 5 + Math.floor(this.rng() * 10);
      const x = n.x + Math.floor(this.rng() * 3) - 1;
      const z = n.z + Math.floor(this.rng() * 3) - 1;
      if (chebyshev({ x, z }, n.spawn) <= n.def.wanderRadius && this.walkable(x, z)) this.moveNpc(n, x, z);
    }
  }

  private walkable(x: number, z: number) {
    return this.content.inBounds(x, z) && !this.content.isBlocked(x, z);
  }

  /** One greedy step toward `to` (NPCs do not path around obstacles beyond a single detour). */
  private npcStepToward(n: Npc, to: Tile): Tile | undefined {
    const dx = Math.sign(to.x - n.x);
    const dz = Math.sign(to.z - n.z);
    const options = [
      { x: n.x + dx, z: n.z + dz },
      { x: n.x + dx, z: n.z },
      { x: n.x, z: n.z + dz },
    ];
    return options.find((t) => (t.x !== n.x || t.z !== n.z) && this.walkable(t.x, t.z) && !(t.x === to.x && t.z === to.z));
  }

  private moveNpc(n: Npc, x: number, z: number) {
    n.x = x;
    n.z = z;
    this.npcGrid.set(n, x, z);
  }

  private killNpc(n: Npc, killer: Player) {
    n.respawnTick = this.tick + n.def.respawnTicks;
    n.targetId = undefined;
    killer.action = null;
    this.npcGrid.delete(n.id);
    // Drops: always-drops plus weighted rolls; coins go straight to the killer's coins.
    const drops: { itemId: string; quantity: number }[] = [...n.def.drops.always];
    const table = n.def.drops.table;
    const total = n.def.drops.nothingWeight + table.reduce((s, d) => s + d.weight, 0);
    for (let i = 0; i < n.def.drops.rolls; i++) {
      let roll = this.rng() * total - n.def.drops.nothingWeight;
      if (roll < 0) continue;
      for (const d of table) {
        roll -= d.weight;
        if (roll < 0) {
          drops.push({ itemId: d.itemId, quantity: d.min + Math.floor(this.rng() * (d.max - d.min + 1)) });
          break;
        }
      }
    }
    let coins = 0;
    for (const d of drops) {
      if (d.itemId === COINS_ITEM_ID) coins += d.quantity;
      else this.dropToGround(d.itemId, d.quantity, n.x, n.z, killer.id);
    }
    // Coins go to the killer's coins, unless an item transaction of its own is running (it would
    // overwrite them) or they would pass the cap: then they lie on the ground for `pickup`.
    if (coins > 0) {
      if (!killer.itemsLocked && killer.coins + coins <= MAX_STACK) {
        killer.coins += coins;
        killer.itemsDirty = true;
      } else this.dropToGround(COINS_ITEM_ID, Math.min(coins, MAX_STACK), n.x, n.z, killer.id);
    }
    this.countGoal(killer, { type: "combat", npcId: n.def.id });
    killer.sync();
    void this.queues.run(killer.id, () => this.deps.characters.recordKill(killer.id, n.def.id));
  }

  // ------------------------------------------------------------------ death

  /**
   * A player died. In memory it is dead at once (so a second death cannot start and it can't act);
   * in its storage queue — after any settlement or item transaction already queued — the death
   * lock, the lost items and the respawn are written in one transaction, computed from the items
   * it holds at that moment. Then the player respawns, and the dropped items go on the ground.
   *
   * Exactly once: the dropped items are owed to exactly one place. While the lock is open they are
   * owed to the bank (`recoverOpenDeath`, run when the character next joins a world it is not live
   * in); the world puts them on the ground only after `resolveDeath` has closed the still-open lock.
   * Both close it conditionally, so whichever wins owns the items. A failed resolve is retried on
   * later ticks (`pendingDeaths`); if the process ends first, the lock stays open and the bank gets
   * them. Ground items live only in memory, so a crash after the resolve loses what lay on the
   * ground, like any dropped item, but never hands it out twice.
   *
   * No death recorded (one is still open, or the transaction failed): the player respawns with
   * everything it had and storage is unchanged.
   */
  killPlayer(p: Player, killerId: string) {
    if (p.dead) return;
    p.dead = true;
    p.action = null;
    p.path = [];
    p.lastCombatAt = undefined;
    if (p.tradeId) this.tradeHooks?.playerInterrupted(p.id, "player_died");
    for (const n of this.npcs.values()) if (n.targetId === p.id) n.targetId = undefined;
    const deathTile = { x: p.x, z: p.z };
    let dropped: { itemId: string; quantity: number }[] | undefined;
    let deathId: string | null = null;
    void this.queues
      .run(p.id, async () => {
        try {
          // Items in memory that can't be trusted (a trade whose outcome is unknown) are never the
          // plan: storage holds the truth, and the death is planned from its rows (read in this
          // queue, where every write of the character runs), which the death then replaces.
          const stored = p.itemsStale ? await this.deps.characters.load(p.id) : undefined;
          if (p.itemsStale && !stored) throw new Error("character not found while planning its death");
          const held = stored ? new Player(stored) : p;
          const plan = this.planDeath(held);
          const candidate = Object.assign(Object.create(Object.getPrototypeOf(p)) as Player, p, {
            inventory: plan.inventory,
            equipment: {},
            coins: held.coins,
            bank: held.bank,
            itemsStale: false,
            x: this.content.spawn.x,
            z: this.content.spawn.z,
            health: p.maxHealth,
          });
          deathId = await this.deps.characters.recordDeath(
            { characterId: p.id, x: deathTile.x, z: deathTile.z, killedBy: killerId, items: { dropped: plan.dropped, kept: plan.kept } },
            candidate.snapshot(true),
          );
          // A death already open: storage changes nothing (the player still respawns, below).
          if (!deathId) return;
          p.inventory = plan.inventory;
          p.equipment = {};
          p.coins = held.coins;
          p.bank = held.bank;
          p.itemsDirty = false;
          // Memory now holds what the death transaction wrote.
          p.itemsStale = false;
          dropped = plan.dropped;
        } finally {
          // Respawn, whatever storage said: the recorded post-death state, or (no death recorded)
          // everything the player had, healed in town. Still in the queue, so a save queued after
          // the death (the player left meanwhile) writes the respawned state.
          p.x = this.content.spawn.x;
          p.z = this.content.spawn.z;
          p.health = p.maxHealth;
          p.progressDirty = true;
          p.dead = false;
        }
      })
      .catch((e) => this.deps.logger.error({ err: e, playerId: p.id }, "death transaction failed; nothing changed"))
      .finally(() => {
        // A player that left meanwhile is not put back in the world (it would linger in the grid).
        if (this.players.get(p.id) === p) {
          this.playerGrid.set(p, p.x, p.z);
          this.system(p, "Oh dear, you are dead! You wake up in Lumbrook.");
          p.sync();
        }
        if (deathId && dropped) {
          const pending: PendingDeath = { deathId, ownerId: p.id, tile: deathTile, dropped, nextTick: this.tick, attempts: 0, inFlight: false };
          this.pendingDeaths.push(pending);
          this.resolvePendingDeath(pending);
        }
      });
  }

  /**
   * Close a death lock and, if this call closed it, put its dropped items on the ground. A failure
   * leaves it pending for a later tick (backing off up to PENDING_DEATH_MAX_BACKOFF_TICKS).
   */
  private resolvePendingDeath(d: PendingDeath) {
    if (d.inFlight) return;
    d.inFlight = true;
    d.attempts++;
    this.deps.characters
      .resolveDeath(d.deathId)
      .then((closedHere) => {
        this.pendingDeaths.splice(this.pendingDeaths.indexOf(d), 1);
        // Closed by recoverOpenDeath meanwhile: the bank has the items.
        if (!closedHere) return;
        for (const item of d.dropped) this.dropToGround(item.itemId, item.quantity, d.tile.x, d.tile.z, d.ownerId);
      })
      .catch((e) => {
        d.nextTick = this.tick + Math.min(PENDING_DEATH_MAX_BACKOFF_TICKS, 2 ** d.attempts);
        this.deps.logger.error({ err: e, deathId: d.deathId, attempts: d.attempts }, "death lock not resolved yet; its items wait off the ground");
      })
      .finally(() => {
        d.inFlight = false;
      });
  }

  /** Which items a dying player keeps (the most valuable units) and drops (the rest). */
  private planDeath(p: Player): { inventory: Inventory; kept: { itemId: string; quantity: number }[]; dropped: { itemId: string; quantity: number }[] } {
    const held: { itemId: string; quantity: number }[] = [
      ...inventoryToSlots(p.inventory).map((s) => ({ itemId: s.itemId, quantity: s.quantity })),
      ...Object.values(p.equipment).flatMap((e) => (e ? [{ itemId: e.itemId, quantity: e.quantity }] : [])),
    ];
    // Rank single units (a stackable stack counts as one unit worth its whole value).
    const units = held.flatMap((h) => {
      const def = this.content.items.get(h.itemId);
      const value = def?.value ?? 0;
      return def?.stackable ? [{ itemId: h.itemId, value: value * h.quantity, stack: h.quantity }] : Array.from({ length: h.quantity }, () => ({ itemId: h.itemId, value, stack: 1 }));
    });
    units.sort((a, b) => b.value - a.value);
    const kept = tally(units.slice(0, ITEMS_KEPT_ON_DEATH).map((u) => ({ itemId: u.itemId, quantity: u.stack })));
    const keepLeft = new Map(kept.map((k) => [k.itemId, k.quantity]));
    let inventory = Array(28).fill(null) as Inventory;
    const dropped: { itemId: string; quantity: number }[] = [];
    for (const h of held) {
      const def = this.content.items.get(h.itemId);
      const keepQty = Math.min(keepLeft.get(h.itemId) ?? 0, h.quantity);
      if (def && keepQty > 0) {
        const r = addItem(inventory, def, keepQty);
        if (r.ok) {
          inventory = r.value;
          keepLeft.set(h.itemId, (keepLeft.get(h.itemId) ?? 0) - keepQty);
        } else dropped.push({ itemId: h.itemId, quantity: keepQty });
      }
      if (h.quantity - keepQty > 0) dropped.push({ itemId: h.itemId, quantity: h.quantity - keepQty });
    }
    return { inventory, kept, dropped: piles(dropped) };
  }

  // ------------------------------------------------------------------ helpers used by actions

  /**
   * Put a pile on the ground (private to `ownerId` for GROUND_ITEM_PRIVATE_TICKS). Items that come
   * from a player's stored items go here only after their removal committed (a drop's transaction,
   * a death's resolved lock): nothing on the ground can exist in a stored inventory too (README,
   * Persistence).
   */
  dropToGround(itemId: string, quantity: number, x: number, z: number, ownerId?: string) {
    const g: GroundItem = {
      id: `item:${++this.itemSeq}`,
      itemId,
      quantity,
      x,
      z,
      ownerId,
      publicTick: this.tick + GROUND_ITEM_PRIVATE_TICKS,
      expiresTick: this.tick + GROUND_ITEM_LIFETIME_TICKS,
    };
    this.groundItems.set(g.id, g);
    this.itemGrid.set(g, x, z);
    return g;
  }

  removeGroundItem(id: string) {
    this.groundItems.delete(id);
    this.itemGrid.delete(id);
  }

  canSeeGroundItem(p: Player, g: GroundItem) {
    return !g.ownerId || g.ownerId === p.id || this.tick >= g.publicTick;
  }

  lightFire(x: number, z: number, lifetimeTicks: number) {
    const fire: ResourceInstance = {
      id: `fire:${++this.fireSeq}`,
      type: "fire",
      skill: "firemaking",
      x,
      z,
      node: undefined,
      respawnTick: undefined,
      remaining: undefined,
      expiresTick: this.tick + lifetimeTicks,
    };
    this.resources.set(fire.id, fire);
    this.resourceGrid.set(fire, x, z);
    return fire;
  }

  /**
   * Count an event toward the player's agent goal (`src/domain/goal-progress.ts`); a completed goal
   * is announced in chat. Returns true when the goal changed: the caller sends `player:sync`.
   */
  countGoal(p: Player, event: GoalEvent): boolean {
    const next = p.goal ? advanceGoal(p.goal, event, new Date(this.now()).toISOString()) : undefined;
    if (!next) return false;
    p.goal = next;
    p.progressDirty = true;
    if (next.completedAt) this.system(p, `Goal complete: ${next.description} (${next.progress}/${next.targetCount}).`);
    return true;
  }

  /** Add XP and tell the player (`skill:xp`), once per skill. */
  grantXp(p: Player, gains: Partial<Record<SkillName, number>>) {
    let changed = false;
    for (const [skill, amount] of Object.entries(gains) as [SkillName, number][]) {
      const whole = Math.floor(amount);
      if (whole <= 0) continue;
      const r = addXp(p.skills, skill, whole);
      if (!r.ok) continue;
      p.skills = r.value.skills;
      changed = true;
      p.send("skill:xp", { skill, gained: r.value.gained, xp: r.value.xp, level: r.value.level, leveledUp: r.value.leveledUp });
    }
    if (changed) p.progressDirty = true;
  }

  private emitHit(hit: CombatHit, at: Tile) {
    for (const viewer of this.playerGrid.near(at.x, at.z, VIEW_RADIUS)) {
      if (chebyshev(viewer, at) <= VIEW_RADIUS) viewer.send("combat:hit", hit);
    }
  }

  /** A system chat line for one player. */
  system(p: Player, text: string) {
    p.send("chat:message", chatMessage("system", text));
  }

  /** Players who can see the tile. */
  *viewersOf(x: number, z: number): Generator<Player> {
    for (const p of this.playerGrid.near(x, z, VIEW_RADIUS)) if (chebyshev(p, { x, z }) <= VIEW_RADIUS) yield p;
  }

  // ------------------------------------------------------------------ visibility

  /**
   * Everything within VIEW_RADIUS of the player. Pass `out` to refill existing sets instead of
   * allocating new ones (the room double-buffers them: this runs for every client every tick).
   */
  visibleFor(p: Player, out?: VisibleSet): VisibleSet {
    const v: VisibleSet = out ?? { players: new Set(), npcs: new Set(), resources: new Set(), groundItems: new Set() };
    v.players.clear();
    v.npcs.clear();
    v.resources.clear();
    v.groundItems.clear();
    const near = (e: { x: number; z: number }) => Math.max(Math.abs(e.x - p.x), Math.abs(e.z - p.z)) <= VIEW_RADIUS;
    for (const o of this.playerGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(o)) v.players.add(o.id);
    v.players.add(p.id);
    for (const n of this.npcGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(n) && n.respawnTick === undefined) v.npcs.add(n.id);
    for (const r of this.resourceGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(r)) v.resources.add(r.id);
    for (const g of this.itemGrid.near(p.x, p.z, VIEW_RADIUS)) if (near(g) && this.canSeeGroundItem(p, g)) v.groundItems.add(g.id);
    return v;
  }

  /** Public view of an entity by collection and id. */
  publicView<K extends keyof VisibleSet>(kind: K, id: string): PublicView<K> | undefined {
    let view: PublicView | undefined;
    if (kind === "players") {
      const p = this.players.get(id);
      view = p ? playerView(p) : undefined;
    } else if (kind === "npcs") {
      const n = this.npcs.get(id);
      view = n ? npcView(n) : undefined;
    } else if (kind === "resources") {
      const r = this.resources.get(id);
      view = r ? resourceView(r, this.tick) : undefined;
    } else {
      const g = this.groundItems.get(id);
      view = g ? groundItemView(g) : undefined;
    }
    return view as PublicView<K> | undefined;
  }

  // ------------------------------------------------------------------ persistence

  /** Queue a save of every player whose state changed. Never awaited by the tick. */
  saveDirty() {
    for (const p of this.players.values()) {
      if (!p.progressDirty && !p.itemsDirty) continue;
      if (p.itemsLocked) continue;
      void this.queues.run(p.id, () => this.savePlayer(p));
    }
  }

  /** Save one player now (inside its queue). */
  private async savePlayer(p: Player) {
    const items = p.itemsDirty;
    p.progressDirty = false;
    p.itemsDirty = false;
    try {
      await this.deps.characters.save(p.snapshot(items));
    } catch (e) {
      p.progressDirty = true;
      if (items) p.itemsDirty = true;
      throw e;
    }
  }

  /**
   * Shutdown: every player leaves — interrupting its trade, saved once with its items, its session
   * closed — `batch` players at a time in parallel (each save is one transaction, so a batch about
   * the size of the storage pool keeps it busy without queueing hundreds of waiters), then every
   * storage queue is drained.
   */
  async leaveAll(reason: string, batch = SHUTDOWN_SAVE_BATCH): Promise<void> {
    const ids = [...this.players.keys()];
    for (let i = 0; i < ids.length; i += batch) {
      await Promise.allSettled(ids.slice(i, i + batch).map((id) => this.leave(id, reason, undefined, true)));
    }
    await this.queues.drain();
  }

  /**
   * Commit an item change immediately (bank, store, admin): `plan` returns the new inventory, coins
   * and bank, or an error message. The change is written in one transaction; memory is updated
   * only after it commits.
   */
  async commitItems(
    p: Player,
    plan: () => { inventory?: Inventory; coins?: number; bank?: Map<string, number>; equipment?: Player["equipment"] } | string,
    onCommitted?: () => void,
  ): Promise<boolean> {
    if (p.itemsLocked || p.dead) {
      this.system(p, "Please wait a moment.");
      return false;
    }
    const result = plan();
    if (typeof result === "string") {
      this.system(p, result);
      return false;
    }
    p.itemsLocked = true;
    const candidate = Object.assign(Object.create(Object.getPrototypeOf(p)) as Player, p, {
      inventory: result.inventory ?? p.inventory,
      coins: result.coins ?? p.coins,
      bank: result.bank ?? p.bank,
      equipment: result.equipment ?? p.equipment,
    });
    try {
      await this.queues.run(p.id, () => this.deps.characters.save(candidate.snapshot(true)));
      p.inventory = candidate.inventory;
      p.coins = candidate.coins;
      p.bank = candidate.bank;
      p.equipment = candidate.equipment;
      p.itemsDirty = false;
      onCommitted?.();
      return true;
    } catch (e) {
      this.deps.logger.error({ err: e, playerId: p.id }, "item transaction failed");
      this.system(p, "That didn't work; nothing changed. Please try again.");
      return false;
    } finally {
      // A settlement that holds the character's items keeps them locked (`holdItems`).
      p.itemsLocked = this.itemHolds.has(p.id);
      p.sync();
    }
  }

  /**
   * Hold the items of characters while a trade settles: their players — the ones here now and any
   * that joins before `release` — are locked (`itemsLocked`), so no item change (bank, store, use,
   * gathering, kill coins, pickup) is planned from items the settlement is about to replace. The
   * settlement unlocks the players it refreshed; `release` (idempotent) ends the hold itself.
   */
  holdItems(characterIds: readonly string[]): () => void {
    for (const id of characterIds) {
      this.itemHolds.set(id, (this.itemHolds.get(id) ?? 0) + 1);
      const p = this.players.get(id);
      if (p) p.itemsLocked = true;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const id of characterIds) {
        const left = this.itemHolds.get(id)! - 1;
        if (left > 0) this.itemHolds.set(id, left);
        else this.itemHolds.delete(id);
      }
    };
  }

  /** Is a settlement holding the character's items (`holdItems`)? */
  itemsHeld(characterId: string): boolean {
    return this.itemHolds.has(characterId);
  }

  /** A system refusal with a stable code (README "Refusal codes"). */
  refuse(p: Player, code: RefusalCode, text: string) {
    p.send("chat:message", { ...chatMessage("system", text), code });
  }

  // ------------------------------------------------------------------ WorldPort

  playersOnline(): number {
    let n = 0;
    for (const p of this.players.values()) if (p.connection) n++;
    return n;
  }

  isOnline(characterId: string): boolean {
    return this.players.get(characterId)?.connection !== undefined;
  }

  isInWorld(characterId: string): boolean {
    return this.players.has(characterId);
  }

  /**
   * The change runs inside the character's storage queue, where joins read and build their player
   * (`CharacterResolver.resolveCharacter`): a join queued before it is in the world when it starts (the
   * change is then refused), one queued after it reads what it wrote. Joins asked for while it is
   * queued or running are refused at once (`assertMayJoin`).
   */
  async whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    if (this.players.has(characterId)) return { ok: false };
    this.outOfWorldWork.set(characterId, (this.outOfWorldWork.get(characterId) ?? 0) + 1);
    try {
      // A failed change comes back as a value: thrown, it would be logged as a failed storage job.
      const r = await this.queues.run(characterId, async (): Promise<{ ok: true; value: T } | { ok: false } | { failed: unknown }> => {
        if (this.players.has(characterId)) return { ok: false };
        try {
          return { ok: true, value: await work() };
        } catch (e) {
          return { failed: e };
        }
      });
      if ("failed" in r) throw r.failed;
      return r;
    } finally {
      const left = this.outOfWorldWork.get(characterId)! - 1;
      if (left > 0) this.outOfWorldWork.set(characterId, left);
      else this.outOfWorldWork.delete(characterId);
      const ended = performance.now();
      this.outOfWorldEnded.set(characterId, ended);
      for (const [id, at] of this.outOfWorldEnded) if (ended - at > 600_000) this.outOfWorldEnded.delete(id);
    }
  }

  /**
   * Refuse a join (409) while an out-of-world change of the character is queued or running, or one
   * built from a record read before such a change ended (`record.loadedAt`).
   */
  assertMayJoin(characterId: string, record?: CharacterRecord) {
    const ended = this.outOfWorldEnded.get(characterId);
    const stale = record !== undefined && ended !== undefined && (record.loadedAt === undefined || record.loadedAt <= ended);
    if (this.outOfWorldWork.has(characterId) || stale) throw new ServerError(409, "this character is being changed; try again");
  }

  /**
   * Applied in the character's storage queue, after the caller's write: a join that read the
   * character before that write is in the world by then and gets the new flag; one that reads after
   * it reads the new flag.
   */
  setAgentFlag(characterId: string, isAgent: boolean): void {
    void this.queues.run(characterId, async () => {
      const p = this.players.get(characterId);
      if (!p || p.isAgent === isAgent) return;
      p.isAgent = isAgent;
      p.sync();
    });
  }

  livePlayer(characterId: string): LivePlayerSummary | undefined {
    const p = this.players.get(characterId);
    if (!p) return undefined;
    return {
      id: p.id,
      accountId: p.accountId,
      name: p.name,
      isAgent: p.isAgent,
      position: { x: p.x, y: p.y, z: p.z },
      combatLevel: p.combatLevel,
      health: p.health,
      maxHealth: p.maxHealth,
    };
  }

  livePlayerSync(characterId: string): PlayerSync | undefined {
    return this.players.get(characterId)?.syncPayload();
  }

  snapshot(): WorldSnapshot {
    // Connected players only, like playersOnline (a dropped one lingering for reconnection is not online).
    const players = [...this.players.values()].filter((p) => p.connection !== undefined).map((p) => ({
      id: p.id,
      name: p.name,
      position: { x: p.x, y: p.y, z: p.z },
      combatLevel: p.combatLevel,
      isAgent: p.isAgent,
    }));
    let alive = 0;
    for (const n of this.npcs.values()) if (n.respawnTick === undefined) alive++;
    return {
      tick: this.tick,
      serverTime: new Date(this.now()).toISOString(),
      playersOnline: this.playersOnline(),
      players,
      npcCount: alive,
      resourceCount: this.resources.size,
      groundItemCount: this.groundItems.size,
    };
  }

  surroundings(characterId: string, radius: number): Surroundings | undefined {
    const p = this.players.get(characterId);
    if (!p) return undefined;
    const dist = (e: Tile) => chebyshev(p, e);
    return {
      stations: this.content.stations
        .filter((s) => dist(s) <= radius)
        .map((s) => ({ id: s.id, type: s.type, name: s.name, x: s.x, z: s.z, distance: dist(s) })),
      resources: [...this.resourceGrid.near(p.x, p.z, radius)]
        .filter((r) => dist(r) <= radius)
        .map((r) => ({ id: r.id, type: r.type, skill: r.skill, x: r.x, z: r.z, depleted: r.respawnTick !== undefined, distance: dist(r) })),
      npcs: [...this.npcGrid.near(p.x, p.z, radius)]
        .filter((n) => dist(n) <= radius && n.respawnTick === undefined)
        .map((n) => ({ id: n.id, npcId: n.def.id, name: n.def.name, x: n.x, z: n.z, combatLevel: n.def.combatLevel, health: n.health, distance: dist(n) })),
      groundItems: [...this.itemGrid.near(p.x, p.z, radius)]
        .filter((g) => dist(g) <= radius && this.canSeeGroundItem(p, g))
        .map((g) => ({ id: g.id, itemId: g.itemId, quantity: g.quantity, x: g.x, z: g.z, distance: dist(g) })),
    };
  }

  applyGoal(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): boolean {
    const p = this.players.get(characterId);
    if (!p) return false;
    p.goal = goal;
    p.goalsPaused = goalsPaused;
    if (goalsPaused) {
      p.path = [];
      this.moves.cancel(p.id);
      p.action = null;
    }
    p.progressDirty = true;
    p.sync();
    return true;
  }

  deliverPrivateMessage(characterId: string, from: { id?: string; name: string }, text: string): boolean {
    const p = this.players.get(characterId);
    if (!p?.connection) return false;
    p.send("chat:message", chatMessage("private", text, from.id, from.name));
    return true;
  }

  disconnect(characterId: string, code: number, reason: string): void {
    const p = this.players.get(characterId);
    if (!p) return;
    const conn = p.connection;
    conn?.close(code, reason);
    void this.leave(characterId, reason, undefined, true);
  }

  socialChanged(characterIds: string[]): void {
    this.deps.social?.invalidate?.(characterIds);
  }

  async flush(characterId: string): Promise<void> {
    const p = this.players.get(characterId);
    if (!p) return;
    await this.queues.run(p.id, () => this.savePlayer(p));
  }

  /** Test and tooling helper: a player by id. */
  player(id: string): Player | undefined {
    return this.players.get(id);
  }

  /** Ids of NPCs of a kind (tests, bots). */
  npcIdsOf(def: NpcDef["id"]): string[] {
    return [...this.npcs.values()].filter((n) => n.def.id === def).map((n) => n.id);
  }
}

/** Public fields of a player, as the schema and `world:update` carry them. */
export function playerView(p: Player): PlayerPublic {
  return {
    id: p.id,
    name: p.name,
    x: p.x,
    z: p.z,
    health: p.health,
    maxHealth: p.maxHealth,
    combatLevel: p.combatLevel,
    moving: p.path.length > 0,
    running: p.running,
    isAgent: p.isAgent,
    activity: p.dead ? "dead" : p.tradeId ? "trading" : (p.action?.kind ?? (p.path.length > 0 ? "walking" : "idle")),
    targetId: p.action?.kind === "attack" ? p.action.targetId : p.action?.kind === "gather" ? p.action.nodeId : "",
    weapon: p.equipment.weapon?.itemId ?? "",
  };
}

/** Build a `chat:message`. */
export function chatMessage(type: ChatMessage["type"], text: string, fromId?: string, fromName?: string): ChatMessage {
  return { id: randomUUID(), type, ...(fromId ? { fromId } : {}), ...(fromName ? { fromName } : {}), text, timestamp: new Date().toISOString() };
}

/** Sum quantities per item (no cap: callers that need stacks use `piles`). */
function tally(list: { itemId: string; quantity: number }[]) {
  const m = new Map<string, number>();
  for (const l of list) m.set(l.itemId, (m.get(l.itemId) ?? 0) + l.quantity);
  return [...m].map(([itemId, quantity]) => ({ itemId, quantity }));
}

/**
 * Sum quantities per item into piles of at most MAX_STACK each: a total past the cap (a worn stack
 * plus the same item in the inventory) becomes a second pile, never a loss (README "Death").
 */
export function piles(list: { itemId: string; quantity: number }[]) {
  const out: { itemId: string; quantity: number }[] = [];
  for (const { itemId, quantity } of tally(list)) {
    for (let left = quantity; left > 0; left -= MAX_STACK) out.push({ itemId, quantity: Math.min(left, MAX_STACK) });
  }
  return out;
}
