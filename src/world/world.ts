/**
 * The world: who is here, where everything is, and the fixed tick. This core owns the entity maps,
 * the spatial grids and membership (join, drop, reconnect, leave: `Connections`; a lost lease and
 * the shutdown: `Departures`); each system of the tick lives in `systems/` and gets what it needs
 * when the world builds it. Rules come from `src/domain/`, data from the content manifests. The
 * tick never waits on storage: saves are queued per player (`PlayerQueues`), immediate item
 * transactions run beside the loop.
 */
import type { CharacterRecord } from "./ports/character-store.js";
import type { GameContent } from "../content/load.js";
import type { MoveTickReport, Regions } from "../domain/pathing.js";
import { WorldClock } from "./clock.js";
import { Connections } from "./connections.js";
import { Departures } from "./departures.js";
import { LeaseDoubt } from "./lease-doubt.js";
import type { WorldDeps } from "./deps.js";
import type { GroundItem, Npc, PublicView, ResourceInstance, ViewFields } from "./objects.js";
import { SpatialGrid } from "./grid.js";
import { LocalAccess } from "./local-access.js";
import { OutOfWorldGate } from "./out-of-world.js";
import { PlayerQueues } from "./player-queues.js";
import type { Connection, Player } from "./player.js";
import { refuse, type Refusal, type RefusalCode } from "./refusals.js";
import { Combat, inCombat } from "./systems/combat.js";
import { Deaths } from "./systems/death.js";
import { Gathering } from "./systems/gathering.js";
import { Ground } from "./systems/ground.js";
import { Movement, newPlayerGrid, regionsOf } from "./systems/movement.js";
import { Npcs } from "./systems/npcs.js";
import { Prayers } from "./systems/prayers.js";
import { Progress } from "./systems/progress.js";
import { Saving, type ItemChange } from "./systems/saving.js";
import type { SelectionCadence } from "./systems/cadence.js";
import { Visibility, type VisibleSet } from "./systems/visibility.js";
import { WorldState } from "./systems/world-state.js";
import { WorldEvents, type InterruptReason } from "./world-events.js";

export { COMBAT_LOGOUT_SECONDS } from "./systems/combat.js";
export { GATHER_INTERVAL_TICKS } from "./systems/gathering.js";
export { GROUND_ITEM_LIFETIME_TICKS, GROUND_ITEM_PRIVATE_TICKS } from "./systems/ground.js";
export { VIEW_RADIUS, VIEW_LEAVE_MARGIN, RECENT_ATTACKER_SECONDS, RECENT_CHAT_SECONDS, playerView, type VisibleSet } from "./systems/visibility.js";
export { newCadence, type SelectionCadence } from "./systems/cadence.js";
export type { ViewFields } from "./objects.js";
export { REFUSAL, type RefusalCode } from "./refusals.js";
export { chatMessage } from "./messages.js";
export type { TradeHooks } from "./world-events.js";
export type { AdminCodeCheck, SocialRelations, WorldDeps } from "./deps.js";

/** Seconds a dropped connection's player stays in the world awaiting reconnection. */
export const RECONNECT_SECONDS = 20;
/** Players one shutdown transaction saves (`leaveAll`), and such transactions run at once. */
export const SHUTDOWN_SAVE_BATCH = 100;
export const SHUTDOWN_SAVE_PARALLEL = 4;

export class World {
  readonly content: GameContent;
  readonly players = new Map<string, Player>();
  readonly npcs = new Map<string, Npc>();
  readonly resources = new Map<string, ResourceInstance>();
  readonly groundItems = new Map<string, GroundItem>();
  readonly queues: PlayerQueues;
  readonly clock: WorldClock;
  /** Walkable regions of the static map: unreachable targets are refused before any search. */
  readonly regions: Regions;
  /** Seconds a dropped player waits for its client to reconnect (RECONNECT_SECONDS; tests shorten it). */
  reconnectSeconds = RECONNECT_SECONDS;
  closing = false; // set by `leaveAll` (shutdown): the world's room stops ticking
  /** What the world tells the trade service and the room (`tradeInterrupted`, `playerRemoved`). */
  readonly events = new WorldEvents();

  private readonly playerGrid = newPlayerGrid();
  private readonly npcGrid = new SpatialGrid<Npc>();
  private readonly resourceGrid = new SpatialGrid<ResourceInstance>();
  private readonly itemGrid = new SpatialGrid<GroundItem>();
  private readonly gate: OutOfWorldGate;
  private lastSaveAt: number;

  // The systems of the tick, built in dependency order.
  readonly progress: Progress;
  readonly movement: Movement;
  readonly visibility: Visibility;
  readonly ground: Ground;
  readonly saving: Saving;
  /** The world's modifications in storage: piles, depleted nodes, fires. */
  readonly worldState: WorldState;
  readonly deaths: Deaths;
  readonly npcAi: Npcs;
  readonly combat: Combat;
  readonly prayers: Prayers;
  readonly gathering: Gathering;
  /** What REST may ask of the live world. */
  readonly access: LocalAccess;
  /** Players leaving: removed, dropped for a lost lease, everyone at shutdown. */
  private readonly departures: Departures;
  /** Players joining, dropping, reconnecting and leaving one by one. */
  private readonly connections: Connections;
  private readonly leaseDoubt: LeaseDoubt; // (docs/cluster.md "The holder's own clock")

  constructor(readonly deps: WorldDeps) {
    const { content, characters, logger } = deps;
    this.content = content;
    this.regions = regionsOf(content);
    this.clock = new WorldClock(deps.now ?? Date.now, deps.rng ?? Math.random);
    this.queues = new PlayerQueues(
      logger,
      () => deps.metrics?.saveFailures.inc(),
      (id, e) => this.dropLost(id, "a write was refused by the lease fence", e.epochs[e.characterIds.indexOf(id)]),
      (e) => characters.isUnavailable(e),
    );
    this.gate = new OutOfWorldGate(this.queues, (id) => this.players.has(id));
    this.lastSaveAt = this.clock.now();
    const { players, npcs, resources, groundItems, playerGrid, npcGrid, resourceGrid, itemGrid, clock, queues } = this;
    const interrupt = (id: string, reason: InterruptReason) => this.events.emit("tradeInterrupted", id, reason);
    const progress = (this.progress = new Progress(clock.now));
    const movement = (this.movement = new Movement({ players, playerGrid, content, regions: this.regions, progress, interrupt }));
    const visibility = (this.visibility = new Visibility({
      players,
      npcs,
      resources,
      groundItems,
      playerGrid,
      npcGrid,
      resourceGrid,
      itemGrid,
      content,
      clock,
    }));
    const saving = (this.saving = new Saving({
      players,
      queues,
      characters,
      logger,
      backgroundWork: deps.backgroundWork,
      onBatchFailure: (n) => deps.metrics?.saveFailures.inc(n),
      leaseLost: (p, why) => {
        // A player that left (a leave group, the shutdown) is out of the world already: its drop is only the log line.
        if (!this.dropLost(p.id, why, p.fence?.epoch) && this.players.get(p.id) !== p) this.departures.logLost(p.id, why);
      },
    }));
    const state = (this.worldState = new WorldState({
      store: deps.worldStore,
      clock,
      tickMs: deps.tickMs ?? 600,
      resources,
      logger,
      backgroundWork: deps.backgroundWork,
    }));
    const ground = (this.ground = new Ground({
      groundItems,
      itemGrid,
      resources,
      resourceGrid,
      content,
      clock,
      movement,
      saving,
      state,
      logger,
      lifetimeTicks: deps.groundItemLifetimeTicks,
      despawned: deps.metrics?.groundPilesDespawned,
    }));
    const deaths = (this.deaths = new Deaths({ players, npcs, playerGrid, queues, characters, content, logger, clock, ground, state, interrupt }));
    const npcAi = (this.npcAi = new Npcs({ npcs, npcGrid, players, playerGrid, content, clock, visibility, deaths, ground, progress, queues, characters }));
    this.combat = new Combat({ players, npcs, content, clock, movement, visibility, progress, npcAi, deaths, saving, ground });
    this.prayers = new Prayers({ players, content, clock });
    this.gathering = new Gathering({ resources, resourceGrid, content, clock, movement, progress, changed: (x, z) => state.changed(x, z) });
    const { events } = this;
    this.leaseDoubt = new LeaseDoubt(logger, deps.leaseInDoubt);
    this.departures = new Departures({ players, playerGrid, events, movement, saving, queues, state, logger, worldNumber: deps.worldNumber ?? 1 });
    const { gate, prayers, departures } = this;
    this.connections = new Connections({ players, playerGrid, content, clock, events, gate, movement, prayers, saving, departures });
    const socialChanged = (ids: string[]) => deps.social?.invalidate?.(ids);
    this.access = new LocalAccess({ membership: this, players, npcs, resources, groundItems, queues, clock, movement, visibility, saving, socialChanged });
    npcAi.spawn();
    this.gathering.spawn();
  }

  get tick(): number {
    return this.clock.tick;
  }

  now(): number {
    return this.clock.now();
  }

  // ------------------------------------------------------------------ the tick

  /**
   * Advance the world by one tick. Never awaits. Outline: planned moves get their paths; players
   * leave (reconnection window over) or act and walk, unless their lease is in doubt (`LeaseDoubt`);
   * NPCs; nodes respawn; fires and ground items expire; death locks are retried. The periodic save
   * is `saveIfDue`, which the room runs after the patch.
   */
  step(): void {
    this.clock.tick++;
    const now = this.clock.now();
    this.leaseDoubt.begin();
    this.movement.plan();
    for (const p of this.players.values()) {
      if (p.dropped && !p.dropped.seat && (p.leaving || now - p.dropped.at > this.reconnectSeconds * 1000) && !this.inCombat(p)) {
        this.leave(p.id, p.leaving ?? "reconnect_timeout", undefined, true).catch(() => undefined); // a failed save is logged by its queue
        continue;
      }
      if (!this.leaseDoubt.holds(p) && !p.dead) this.stepPlayer(p);
    }
    this.leaseDoubt.end();
    this.npcAi.tick();
    this.prayers.tick();
    this.gathering.tick();
    this.ground.tick();
    this.deaths.tick();
    this.worldState.tick();
  }

  /** Start-up, before any player joins: load this world's stored piles, depleted nodes and fires. */
  async restore(): Promise<void> {
    this.ground.restore(await this.worldState.restore());
  }

  /**
   * Every `saveIntervalSeconds`, save what changed (the periodic save; its writes run in the
   * background). The room calls it once a tick, after the tick's patch has gone out: the batches'
   * snapshots take tens of milliseconds at 2,000 players.
   */
  saveIfDue(): void {
    const now = this.clock.now();
    if (now - this.lastSaveAt < this.deps.saveIntervalSeconds * 1000) return;
    this.lastSaveAt = now;
    this.saving.saveDirty();
  }

  /** One player's tick: its action (attack, gather, pickup), then its walk. */
  private stepPlayer(p: Player): void {
    const a = p.action;
    if (a?.kind === "attack") this.combat.stepAttack(p, a.targetId);
    else if (a?.kind === "gather") this.gathering.step(p, a);
    else if (a?.kind === "pickup") this.ground.stepPickup(p, a.groundItemId);
    this.movement.advance(p);
  }

  // ------------------------------------------------------------------ membership

  /** Put a character in the world, or hand the lingering player to the new connection (`Connections.join`). */
  join(record: CharacterRecord, connection: Connection, replacedCode: number): { player: Player; resumed: boolean } {
    return this.connections.join(record, connection, replacedCode);
  }

  /** The connection dropped: the player waits `reconnectSeconds`, or its seat's own timer (`Connections.drop`). */
  drop(playerId: string, connectionId: string, seat = false): void {
    this.connections.drop(playerId, connectionId, seat);
  }

  /** The very connection that dropped comes back (`Connections.reconnect`); undefined when refused. */
  reconnect(playerId: string, connection: Connection): Player | undefined {
    return this.connections.reconnect(playerId, connection);
  }

  /** The player if `connectionId` is still its live connection (`Connections.connectedPlayer`). */
  connectedPlayer(playerId: string, connectionId: string): Player | undefined {
    return this.connections.connectedPlayer(playerId, connectionId);
  }

  /**
   * Remove a player, saved; only `connectionId`'s when given; held while in combat unless `force`
   * (`Connections.leave`). Resolves when saved.
   */
  leave(playerId: string, reason: string, connectionId?: string, force = false): Promise<void> {
    return this.connections.leave(playerId, reason, connectionId, force);
  }

  /**
   * The player's lease is lost: removed without writing anything, one log line (`Departures.dropLost`,
   * docs/cluster.md "What a cluster guarantees"). Only the player loaded under `epoch`, when given.
   * @returns whether a player was dropped.
   */
  dropLost(characterId: string, why: string, epoch?: string): boolean {
    return this.departures.dropLost(characterId, why, epoch);
  }

  /**
   * Shutdown: every player leaves at once, saved in batches (`Departures.leaveAll`, docs/persistence.md
   * "Shutdown"); the world's room stops ticking.
   */
  async leaveAll(reason: string, batch = SHUTDOWN_SAVE_BATCH, parallel = SHUTDOWN_SAVE_PARALLEL): Promise<void> {
    this.closing = true;
    await this.departures.leaveAll(reason, batch, parallel);
  }

  /** Did the player deal or take a hit within the last COMBAT_LOGOUT_SECONDS? */
  inCombat(p: Player): boolean {
    return inCombat(p, this.clock.now());
  }

  /** See `OutOfWorldGate.run`: a change of a stored character that needs it out of the world. */
  whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    return this.gate.run(characterId, work);
  }

  /** Refuse a join (409) while an out-of-world change of the character is queued, running or newer than `record`. */
  assertMayJoin(characterId: string, record?: CharacterRecord): void {
    this.gate.assertMayJoin(characterId, record);
  }

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

  /** A player by id (tests, the trade service). */
  player(id: string): Player | undefined {
    return this.players.get(id);
  }

  // ---------------- shortcuts to the systems (for the rooms, the trade service and tests; the handlers and systems use the systems directly)

  /** What the last tick's move searches did (diagnostics and tests). */
  get lastMoveTick(): MoveTickReport {
    return this.movement.lastTick;
  }
  get moves() {
    return this.movement.moves;
  }
  hasPendingMove(playerId: string): boolean {
    return this.movement.moves.get(playerId) !== undefined;
  }
  killPlayer(p: Player, killerId: string): void {
    this.deaths.kill(p, killerId);
  }
  npcIdsOf(defId: string): string[] {
    return this.npcAi.idsOf(defId);
  }
  commitItems(p: Player, plan: () => ItemChange | Refusal, onCommitted?: () => void): Promise<boolean> {
    return this.saving.commitItems(p, plan, onCommitted);
  }
  holdItems(characterIds: readonly string[]): () => void {
    return this.saving.holdItems(characterIds);
  }
  itemsHeld(characterId: string): boolean {
    return this.saving.itemsHeld(characterId);
  }
  visibleFor(p: Player, out?: VisibleSet, previous?: VisibleSet, cadence?: SelectionCadence): VisibleSet {
    return this.visibility.visibleFor(p, out, previous, cadence);
  }
  /** Whether the player's client has a new priority within view it does not track yet (`Visibility.priorityWaiting`). */
  priorityWaiting(p: Player): boolean {
    return this.visibility.priorityWaiting(p);
  }
  publicView(kind: keyof VisibleSet, id: string): PublicView | undefined {
    return this.visibility.publicView(kind, id);
  }
  writeView(kind: keyof VisibleSet, id: string, into: ViewFields): boolean | undefined {
    return this.visibility.writeView(kind, id, into);
  }
  viewersOf(x: number, z: number): Generator<Player> {
    return this.visibility.viewersOf(x, z);
  }
  /** A system refusal with a stable code (docs/protocol.md "Refusal codes"); `text` defaults to the table's. */
  refuse(p: Player, code: RefusalCode, text?: string): void {
    refuse(p, code, text);
  }
}
