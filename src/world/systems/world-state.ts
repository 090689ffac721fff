/**
 * The world's modifications in storage (docs/persistence.md "World state"). Ground piles are rows
 * written by steps of the item transactions that make and take them (`putStep`, `takeStep`); an
 * NPC's loot (new items) is stored on its own (`storeLoot`). Depleted nodes and fires are written
 * in batches, per chunk, every WORLD_STATE_FLUSH_SECONDS (`tick`), and at shutdown (`flush`).
 * `restore` loads it all at start-up. Without a store (tests of the simulation) nothing persists.
 * Times are stored as wall-clock instants and turned back into ticks of the new process at load.
 */
import type { TransactionStep } from "../ports/character-store.js";
import type { ChunkData, ChunkRow, PileRow, WorldStateStore } from "../ports/world-state-store.js";
import type { Logger } from "../../logger.js";
import type { WorldClock } from "../clock.js";
import type { GroundItem, ResourceInstance } from "../objects.js";

/** Side of a chunk of world state, in tiles. */
export const CHUNK_TILES = 32;
/** Most seconds between a node's depletion or a fire and its write: what a crash can lose of them. */
export const WORLD_STATE_FLUSH_SECONDS = 5;

export interface WorldStateDeps {
  store?: WorldStateStore;
  clock: WorldClock;
  /** Milliseconds per tick (ticks to wall-clock instants and back). */
  tickMs: number;
  resources: ReadonlyMap<string, ResourceInstance>;
  logger: Logger;
  /** Background database work (WorldDeps.backgroundWork). */
  backgroundWork?: <T>(work: () => Promise<T>) => Promise<T>;
}

/** What `restore` hands back to the systems that own the objects. */
export interface RestoredState {
  piles: (PileRow & { publicTick: number; expiresTick: number })[];
  fires: { x: number; z: number; lifetimeTicks: number }[];
}

const chunkKey = (x: number, z: number) => `${Math.floor(x / CHUNK_TILES)},${Math.floor(z / CHUNK_TILES)}`;

export class WorldState {
  /** Chunks whose nodes or fires changed since the last flush. */
  private dirty = new Set<string>();
  /** Despawned piles to delete at the next flush. */
  private despawned: string[] = [];
  /** Loot inserts in flight. */
  private readonly inFlight = new Set<Promise<void>>();
  private lastFlushAt: number;
  private flushing: Promise<void> | undefined;

  constructor(private readonly d: WorldStateDeps) {
    this.lastFlushAt = d.clock.now();
  }

  /** Does this world store its modifications? */
  get persists(): boolean {
    return this.d.store !== undefined;
  }

  private at(tick: number): Date {
    return new Date(this.d.clock.now() + (tick - this.d.clock.tick) * this.d.tickMs);
  }

  private tickOf(at: Date | number): number {
    return this.d.clock.tick + Math.ceil((Number(at) - this.d.clock.now()) / this.d.tickMs);
  }

  /** A pile's row, its times counted from now (as `Ground.place` will count them). */
  private row(g: GroundItem): PileRow {
    const shift = this.d.clock.tick - g.sinceTick;
    const { id, itemId, quantity, x, z, ownerId } = g;
    return { id, itemId, quantity, x, z, ownerId, publicAt: this.at(g.publicTick + shift), expiresAt: this.at(g.expiresTick + shift) };
  }

  /** The step that stores new piles inside the transaction that takes their items out of storage. */
  putStep(piles: readonly GroundItem[]): TransactionStep | undefined {
    const store = this.d.store;
    // Rows made when the step runs (the pile's times count from its commit).
    return store && ((em) => store.putPiles(piles.map((g) => this.row(g)))(em));
  }

  /** The step that deletes a stored pile inside the pickup's transaction (none: the pile has no row). */
  takeStep(g: GroundItem): TransactionStep | undefined {
    return g.stored ? this.d.store?.takePile(g.id) : undefined;
  }

  /** Is this pile stored now? (Without storage of the world: as `stored` says.) */
  async isStored(g: GroundItem): Promise<boolean> {
    const store = this.d.store;
    if (!store) return g.stored;
    return (await store.storedPiles([g.id])).has(g.id);
  }

  /**
   * Store a pile of new items (an NPC's loot) in a transaction of its own. A pickup waits while it
   * runs (`storing`); if it fails the pile stays unstored, lost to a crash, never duplicated.
   */
  storeLoot(g: GroundItem): void {
    const store = this.d.store;
    if (!store) return;
    g.storing = true;
    const job = store.insertPiles([this.row(g)]).then(
      () => {
        g.stored = true;
      },
      (e: unknown) => this.d.logger.error({ err: e, pileId: g.id }, "ground pile not stored; a crash would lose it"),
    );
    const done = job.finally(() => {
      g.storing = false;
      this.inFlight.delete(done);
    });
    this.inFlight.add(done);
  }

  /** A pile despawned: its row goes at the next flush (a crash first leaves an expired row that `restore` deletes). */
  pileDespawned(g: GroundItem): void {
    if (this.d.store && (g.stored || g.storing)) this.despawned.push(g.id);
  }

  /** A node depleted, regrew or changed its count, or a fire was lit or went out, on this tile. */
  changed(x: number, z: number): void {
    if (this.d.store) this.dirty.add(chunkKey(x, z));
  }

  /** Flush in the background when WORLD_STATE_FLUSH_SECONDS have passed (run every tick). */
  tick(): void {
    if (!this.d.store || this.flushing) return;
    if (this.d.clock.now() - this.lastFlushAt < WORLD_STATE_FLUSH_SECONDS * 1000) return;
    this.lastFlushAt = this.d.clock.now();
    if (this.dirty.size === 0 && this.despawned.length === 0) return;
    const work = () => this.write();
    this.flushing = (this.d.backgroundWork ? this.d.backgroundWork(work) : work())
      .catch((e: unknown) => this.d.logger.error({ err: e }, "world state not saved; trying again"))
      .finally(() => (this.flushing = undefined));
  }

  /** Write everything now (shutdown): loot inserts in flight, despawned piles, changed chunks. */
  async flush(): Promise<void> {
    if (!this.d.store) return;
    await this.flushing;
    await Promise.allSettled([...this.inFlight]);
    await this.write();
  }

  /** One write of the changed chunks and despawned piles; on failure both are kept for the next one. */
  private async write(): Promise<void> {
    const store = this.d.store!;
    const keys = this.dirty;
    const gone = this.despawned;
    this.dirty = new Set();
    this.despawned = [];
    try {
      await store.deletePiles(gone);
      await store.saveChunks(this.chunks(keys));
      this.d.logger.debug({ chunks: keys.size, despawnedPiles: gone.length }, "world state saved");
    } catch (e) {
      for (const k of keys) this.dirty.add(k);
      this.despawned.push(...gone);
      throw e;
    }
  }

  /** The data of the chunks `keys` as memory holds it now. */
  private chunks(keys: ReadonlySet<string>): ChunkRow[] {
    const data = new Map<string, ChunkData>([...keys].map((k) => [k, {}]));
    const tick = this.d.clock.tick;
    for (const r of this.d.resources.values()) {
      const c = data.get(chunkKey(r.x, r.z));
      if (!c) continue;
      if (r.type === "fire") {
        if (r.expiresTick !== undefined && r.expiresTick > tick) (c.fires ??= []).push({ x: r.x, z: r.z, expiresAt: +this.at(r.expiresTick) });
      } else if (r.node) {
        const depleted = r.respawnTick !== undefined && r.respawnTick > tick;
        const partial = r.remaining !== undefined && r.remaining !== r.node.resourcesPerNode;
        if (depleted || partial)
          (c.nodes ??= []).push({ id: r.id, respawnAt: depleted ? +this.at(r.respawnTick!) : undefined, remaining: partial ? r.remaining : undefined });
      }
    }
    return [...data].map(([k, d]) => {
      const [chunkX, chunkZ] = k.split(",").map(Number) as [number, number];
      return { chunkX, chunkZ, data: d };
    });
  }

  /**
   * Load this world's stored state (start-up, before any player joins): nodes are depleted or
   * counted down as stored (those whose respawn time passed are full again); the live piles and
   * fires are handed back for `Ground` to place, their times turned into this process's ticks.
   */
  async restore(): Promise<RestoredState> {
    const store = this.d.store;
    if (!store) return { piles: [], fires: [] };
    const tick = this.d.clock.tick;
    const now = this.d.clock.now();
    const piles = (await store.loadPiles(new Date(now))).map((r) => ({
      ...r,
      publicTick: this.tickOf(r.publicAt),
      expiresTick: Math.max(tick + 1, this.tickOf(r.expiresAt)),
    }));
    const fires: RestoredState["fires"] = [];
    for (const chunk of await store.loadChunks()) {
      for (const n of chunk.data.nodes ?? []) {
        const r = this.d.resources.get(n.id);
        if (!r?.node) continue;
        if (n.respawnAt !== undefined) {
          if (n.respawnAt <= now) continue;
          r.respawnTick = this.tickOf(n.respawnAt);
        }
        if (n.remaining !== undefined) r.remaining = n.remaining;
      }
      for (const f of chunk.data.fires ?? []) if (f.expiresAt > now) fires.push({ x: f.x, z: f.z, lifetimeTicks: this.tickOf(f.expiresAt) - tick });
    }
    return { piles, fires };
  }
}
