/**
 * `Player`: the live, in-memory state of one connected character (domain layer of the world). The
 * world mutates it on the tick; storage sees it through `snapshot()`; clients through `syncPayload()`
 * (private) and the schema (public).
 */
import { maxHealth, type AttackMode, type CombatStyle } from "../domain/combat.js";
import { maxPrayerPoints, type PrayerState } from "../domain/prayer.js";
import { emptyInventory, inventoryFromSlots, inventoryToSlots, type Inventory } from "../domain/inventory.js";
import { SKILLS, type EquipSlot, type SkillName, type Tile } from "../domain/types.js";
import { combatLevel, levelsOf, skillsFromXp, type SkillSet } from "../domain/xp.js";
import type { PlayerSync } from "../events.js";
import type { CharacterRecord, ProgressSnapshot, StoredGoal } from "./ports/character-store.js";
import type { LeaseFence } from "./ports/lease-fence.js";
import { ItemSafety } from "./item-safety.js";

/** The path of a player that is not walking (shared: a path is never changed in place). */
const NO_PATH: readonly Tile[] = Object.freeze([]);

/** What the player is doing across ticks. */
export type PlayerAction =
  { kind: "attack"; targetId: string } | { kind: "gather"; nodeId: string; nextAttemptTick: number } | { kind: "pickup"; groundItemId: string };

export type Equipment = Partial<Record<EquipSlot, { itemId: string; quantity: number }>>;

/** Everything a player holds. */
export interface HeldItems {
  inventory: Inventory;
  equipment: Equipment;
  coins: number;
  bank: ReadonlyMap<string, number>;
}

/** Sends events to whoever is connected as this player. */
export interface Connection {
  readonly id: string;
  readonly kind: "sdk" | "json";
  /** The client address (`clientAddress`), for limits that count by address. */
  readonly remoteAddress?: string;
  send(event: string, data: unknown): void;
  close(code: number, reason: string): void;
}

export class Player {
  readonly id: string;
  readonly accountId: string;
  name: string;
  isAgent: boolean;
  x: number;
  y: number;
  z: number;
  health: number;
  coins: number;
  skills: SkillSet;
  inventory: Inventory;
  equipment: Equipment;
  bank: Map<string, number>;
  goal: StoredGoal | null;
  goalsPaused: boolean;
  /** Prayer points and active prayers (docs/combat.md#prayers); saved with the progress. */
  prayer: PrayerState;
  /** The style its active prayers protect from (public); set with `prayer` by `Prayers`. */
  protection: "" | AttackMode = "";

  // In memory only (not stored).
  connection: Connection | undefined;
  loginId: string | undefined;
  admin = false;
  running = false;
  action: PlayerAction | null = null;
  /**
   * What the current chase path (an attack out of reach) was computed for: the attack action, the
   * target's tile and the chaser's own tile at that moment. The path is recomputed only when these
   * no longer hold (`Combat.stepAttack`).
   */
  chase: { action: PlayerAction; x: number; z: number; fromX: number; fromZ: number } | undefined;
  style: CombatStyle = "attack";
  nextAttackTick = 0;
  dead = false;
  tradeId: string | undefined;
  /** Item safety: locks, what changed since the last save, trust (its only writer). */
  readonly safety = new ItemSafety();
  /**
   * The lease this player was loaded under: every write of it commits only while the character's
   * lease is still this one (docs/cluster.md "The fence"). Undefined in a world without claims.
   */
  readonly fence: LeaseFence | undefined;
  /** Its lease was found lost (`World.dropLost`): final, nothing of it is written again. */
  leaseLost = false;
  /**
   * Until when (epoch ms) its lease is surely held (`LeaseFence.validUntil`, moved on by each
   * renewal). Past it the lease is in doubt (`leaseInDoubt`): the process may have been stalled or
   * cut off for longer than the lease lasts and another world may play the character now, so this
   * one neither acts for it nor tells its client anything until a renewal answers.
   */
  leaseValidUntil: number | undefined;
  /**
   * Set while the player lingers after its connection dropped: when (ms), which connection — the
   * only one that may reconnect (`World.reconnect`) — and whether that connection holds a
   * reconnection seat whose own timer ends the wait (`World.drop`).
   */
  dropped: { at: number; connectionId: string; seat: boolean } | undefined;
  /** When (ms) this player last dealt or took a hit; a player in combat can't leave at once (`World.leave`). */
  lastCombatAt: number | undefined;
  /** Set when the player left while in combat: the reason it leaves with once out of combat. */
  leaving: string | undefined;
  /** Who hit this player (players and NPCs), and when (ms): kept in its view a while (interest management). */
  readonly attackedBy = new Map<string, number>();
  /** Players it exchanged private messages with, and when (ms): kept in its view a while. */
  readonly chattedWith = new Map<string, number>();
  /**
   * What its client tracks, per collection, as of its last selection (the room's, every tick);
   * undefined until the first. Public chat and `combat:hit` reach only the clients that track the
   * speaker or a combatant (docs/interest.md "In a crowd").
   */
  tracking: Readonly<Record<"players" | "npcs" | "resources" | "groundItems", ReadonlySet<string>>> | undefined;
  /** Scratch of the players' interest tracker: the ring walk that found this player tracked by its viewer (`Placed.walkMark`). */
  walkMark = 0;

  constructor(record: CharacterRecord) {
    const c = record.character;
    this.id = c.id;
    this.accountId = c.accountId;
    this.name = c.name;
    this.isAgent = c.isAgent;
    this.x = Math.round(c.positionX);
    this.y = c.positionY;
    this.z = Math.round(c.positionZ);
    const xp: Partial<Record<SkillName, number>> = {};
    const row = c as unknown as Record<string, number>;
    for (const s of SKILLS) xp[s] = row[`${s}Xp`];
    this.skills = skillsFromXp(xp);
    this.health = Math.min(c.health, this.maxHealth);
    this.coins = c.coins;
    const inv = inventoryFromSlots(record.inventory);
    this.inventory = inv.ok ? inv.value : emptyInventory();
    this.equipment = record.equipment as Equipment;
    this.bank = new Map(record.bank.map((b) => [b.itemId, b.quantity]));
    this.goal = c.goal ?? null;
    this.goalsPaused = c.goalsPaused;
    this.fence = record.fence;
    this.leaseValidUntil = record.fence?.validUntil;
    const stored = c as { prayerPoints?: number; activePrayers?: string };
    this.prayer = {
      points: Math.min(stored.prayerPoints ?? this.skills.prayer.level, maxPrayerPoints(this.skills.prayer.level)),
      active: stored.activePrayers ? stored.activePrayers.split(",") : [],
    };
  }

  /** An immediate item transaction (bank, store, trade settlement, death) is running. */
  get itemsLocked(): boolean {
    return this.safety.locked;
  }
  /** Items or coins changed since the last save. */
  get itemsDirty(): boolean {
    return this.safety.itemsDirty;
  }
  /** The items and coins in memory may differ from storage: never written again (`ItemSafety`). */
  get itemsStale(): boolean {
    return this.safety.stale;
  }
  /** Position, health, XP or goal changed since the last save. */
  get progressDirty(): boolean {
    return this.safety.progressDirty;
  }

  get tile(): Tile {
    return { x: this.x, z: this.z };
  }

  /**
   * The tiles it still has to walk, the last one its destination. Read-only and replaced, never
   * changed in place: an array read here stays as it was whatever the player does next. The walk
   * moves a cursor along the array last set (`stepPath`) instead of slicing off the tiles walked
   * each tick (a slice per walking player per tick was most of what the tick's walk allocated);
   * they are sliced off only when the path is read, so the tick's own readers ask `pathLength`.
   */
  get path(): readonly Tile[] {
    if (this.pathAt > 0) {
      this.pathTiles = this.pathTiles.slice(this.pathAt);
      this.pathAt = 0;
    }
    return this.pathTiles;
  }
  set path(tiles: readonly Tile[]) {
    this.pathTiles = tiles;
    this.pathAt = 0;
  }
  /** Tiles left to walk (`path.length`, without slicing it). */
  get pathLength(): number {
    return this.pathTiles.length - this.pathAt;
  }
  /**
   * Walk `tiles` tiles of the path (fewer when fewer are left; a positive whole number, as
   * `stepAlong` takes it): the tile it stands on after them, or undefined when the path was empty.
   */
  stepPath(tiles: number): Tile | undefined {
    if (!Number.isInteger(tiles) || tiles < 1) throw new RangeError(`tiles must be a positive integer, got ${tiles}`);
    const left = this.pathTiles.length - this.pathAt;
    if (left === 0) return undefined;
    this.pathAt += Math.min(tiles, left);
    const at = this.pathTiles[this.pathAt - 1];
    // The end of the path: the array goes (nothing holds its tiles any longer).
    if (this.pathAt === this.pathTiles.length) this.path = NO_PATH;
    return at;
  }
  /** The path set last, and how many of its tiles were walked (`path`). */
  private pathTiles: readonly Tile[] = NO_PATH;
  private pathAt = 0;

  get maxHealth(): number {
    return maxHealth(this.skills.constitution.level);
  }

  get combatLevel(): number {
    // Read for every player every tick (its public view): computed again only when its skills were
    // replaced (an XP gain gives a new skill set).
    const cached = this.combatLevelOf;
    if (cached?.skills === this.skills) return cached.level;
    const level = combatLevel(levelsOf(this.skills));
    this.combatLevelOf = { skills: this.skills, level };
    return level;
  }
  private combatLevelOf: { skills: SkillSet; level: number } | undefined;

  /** Replace items and coins with committed rows (after a settlement or an immediate transaction). */
  loadItems(rows: { inventory: CharacterRecord["inventory"]; equipment: CharacterRecord["equipment"]; bank: CharacterRecord["bank"] }, coins: number) {
    const inv = inventoryFromSlots(rows.inventory);
    if (inv.ok) this.inventory = inv.value;
    this.equipment = rows.equipment as Equipment;
    this.bank = new Map(rows.bank.map((b) => [b.itemId, b.quantity]));
    this.coins = coins;
  }

  /** What a save writes: progress, and the items and coins when `includeItems` and they can be trusted. */
  snapshot(includeItems: boolean): ProgressSnapshot {
    return this.snapshotOf(includeItems && !this.itemsStale ? this : undefined);
  }

  /**
   * What a transaction about to give the player `items` writes (an immediate item change, a death),
   * optionally with another position and health (the respawn).
   */
  snapshotWith(items: HeldItems, at?: { x: number; z: number; health: number }): ProgressSnapshot {
    return { ...this.snapshotOf(items), ...(at ?? {}) };
  }

  /**
   * The skill set and the prayer state are shared, not copied: both are replaced, never changed in
   * place (a gain gives a frozen new `SkillSet`, a prayer switch a new `PrayerState`), so what a save
   * in flight writes stays what it was when taken. A batched save takes one of each dirty player
   * (docs/persistence.md "Batched saves"): copies were most of what it cost per player.
   */
  private snapshotOf(items: HeldItems | undefined): ProgressSnapshot {
    const s: ProgressSnapshot = {
      characterId: this.id,
      x: this.x,
      y: this.y,
      z: this.z,
      health: this.health,
      combatLevel: this.combatLevel,
      skills: this.skills,
      goal: this.goal,
      goalsPaused: this.goalsPaused,
      prayer: this.prayer,
    };
    if (this.fence) s.fence = this.fence;
    if (items) {
      s.coins = items.coins;
      s.items = {
        inventory: inventoryToSlots(items.inventory).map((slot) => ({ slot: slot.slot, itemId: slot.itemId, quantity: slot.quantity })),
        equipment: { ...items.equipment } as Record<string, { itemId: string; quantity: number }>,
        bank: [...items.bank].map(([itemId, quantity]) => ({ itemId, quantity })),
      };
    }
    return s;
  }

  /** The `player:sync` payload (docs/protocol.md#private-state). */
  syncPayload(): PlayerSync {
    const skills = {} as PlayerSync["skills"];
    for (const s of SKILLS) skills[s] = { level: this.skills[s].level, xp: this.skills[s].xp };
    return {
      id: this.id,
      accountId: this.accountId,
      name: this.name,
      isAgent: this.isAgent,
      position: { x: this.x, y: this.y, z: this.z },
      health: this.health,
      maxHealth: this.maxHealth,
      coins: this.coins,
      combatLevel: this.combatLevel,
      skills,
      inventory: inventoryToSlots(this.inventory),
      equipment: this.equipment,
      bank: [...this.bank].map(([itemId, quantity]) => ({ itemId, quantity })),
      goal: this.goal,
      goalsPaused: this.goalsPaused,
      inTrade: this.tradeId !== undefined,
      admin: this.admin,
      style: this.style,
      prayer: this.prayerView(),
    };
  }

  /** `player:sync`'s `prayer`: points rounded up to whole points, as a client shows them. */
  prayerView(): PlayerSync["prayer"] {
    return { points: Math.ceil(this.prayer.points - 1e-9), maxPoints: maxPrayerPoints(this.skills.prayer.level), active: [...this.prayer.active] };
  }

  /** Is its lease past the term its last grant or renewal assured (docs/cluster.md "The holder's own clock")? */
  leaseInDoubt(now?: number): boolean {
    const until = this.leaseValidUntil;
    // The clock is read only for a player with a lease: every message and every send asks.
    return until !== undefined && (now ?? Date.now()) >= until;
  }

  /** Send to its client; nothing while its lease is in doubt (what this world did may not be the character's any more). */
  send(event: string, data: unknown) {
    if (this.leaseInDoubt()) return;
    this.connection?.send(event, data);
  }

  sync() {
    this.send("player:sync", this.syncPayload());
  }
}
