/**
 * Storage of one world's modifications (docs/persistence.md "World state"), the world's
 * `WorldStateStore` (src/world/ports/world-state-store.ts): ground piles, one row
 * each, written and deleted inside the transactions of the item moves that make and take them
 * (`putPiles`, `takePile` are steps of those transactions); and the batched state of resource nodes
 * and fires, one `world_chunks` row per chunk with a JSON payload. Several worlds share a database:
 * every query is scoped to `world`.
 */
import type { SqlEntityManager } from "@mikro-orm/sql";
import type { StoreTransaction, TransactionStep } from "../world/ports/character-store.js";
import { PileGoneError, type ChunkData, type ChunkRow, type PileRow, type WorldStateStore } from "../world/ports/world-state-store.js";
import type { Orm } from "./orm.js";

export { PileGoneError, type ChunkData, type ChunkRow, type PileRow, type TransactionStep };

/** Transactions a step may run in: storage's own, opened by `runStep`. */
const openTransactions = new WeakMap<StoreTransaction, SqlEntityManager>();

/** Run `step` (made by a `WorldRepository`) inside the open transaction of `em`. */
export async function runStep(step: TransactionStep, em: SqlEntityManager): Promise<void> {
  openTransactions.set(em, em);
  await step(em);
}

/** The entity manager of the transaction a step runs in (`runStep`); anything else is a bug. */
function inTransaction(tx: StoreTransaction): SqlEntityManager {
  const em = openTransactions.get(tx);
  if (!em) throw new TypeError("a transaction step runs only inside a storage transaction (runStep)");
  return em;
}

const PILE_COLUMNS = "id, world, item_id, quantity, x, z, owner_id, public_at, expires_at";

export class WorldRepository implements WorldStateStore {
  constructor(
    private readonly orm: Orm,
    /** The world number every row belongs to. */
    readonly world: number,
  ) {}

  private run<T extends object[] = object[]>(em: SqlEntityManager, sql: string, params: unknown[]): Promise<T> {
    return em.getConnection().execute<T>(sql, params, "all", em.getTransactionContext());
  }

  /** A transaction step that stores new piles (the drop, the resolved death, the recovery that made them). */
  putPiles(piles: readonly PileRow[]): TransactionStep {
    return async (tx) => {
      const em = inTransaction(tx);
      if (piles.length === 0) return;
      const params: unknown[] = [];
      for (const g of piles)
        params.push(g.id, this.world, g.itemId, g.quantity, g.x, g.z, g.ownerId ?? null, g.publicAt.toISOString(), g.expiresAt.toISOString());
      const tuples = piles.map(() => "(?, ?, ?, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz)").join(", ");
      await this.run(em, `insert into ground_piles (${PILE_COLUMNS}) values ${tuples}`, params);
    };
  }

  /** A transaction step that deletes the pile a pickup takes; throws `PileGoneError` (rolling back) when it is not stored. */
  takePile(id: string): TransactionStep {
    return async (tx) => {
      const em = inTransaction(tx);
      const rows = await this.run<{ id: string }[]>(em, `delete from ground_piles where id = ? and world = ? returning id`, [id, this.world]);
      if (rows.length !== 1) throw new PileGoneError(id);
    };
  }

  /** Which of these piles are stored (a drop's or pickup's outcome read back). */
  async storedPiles(ids: readonly string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = await this.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string }[]>(`select id from ground_piles where world = ? and id = any(?::text[])`, [
        this.world,
        `{${ids.map((i) => `"${i}"`).join(",")}}`,
      ]);
    return new Set(rows.map((r) => r.id));
  }

  /** Store piles in a transaction of their own (new items that were in nobody's storage: an NPC's loot). */
  async insertPiles(piles: readonly PileRow[]): Promise<void> {
    await this.orm.em.fork().transactional((em) => runStep(this.putPiles(piles), em));
  }

  /** Delete piles that despawned (one statement). */
  async deletePiles(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.orm.em
      .fork()
      .getConnection()
      .execute(`delete from ground_piles where world = ? and id = any(?::text[])`, [this.world, `{${ids.map((i) => `"${i}"`).join(",")}}`]);
  }

  /** The piles of this world still alive at `now`; the expired ones are deleted. */
  async loadPiles(now: Date): Promise<PileRow[]> {
    const conn = this.orm.em.fork().getConnection();
    await conn.execute(`delete from ground_piles where world = ? and expires_at <= ?::timestamptz`, [this.world, now.toISOString()]);
    const rows = await conn.execute<
      { id: string; item_id: string; quantity: number; x: number; z: number; owner_id: string | null; public_at: Date | string; expires_at: Date | string }[]
    >(`select ${PILE_COLUMNS} from ground_piles where world = ? order by id`, [this.world]);
    return rows.map((r) => ({
      id: r.id,
      itemId: r.item_id,
      quantity: Number(r.quantity),
      x: Number(r.x),
      z: Number(r.z),
      ownerId: r.owner_id ?? undefined,
      publicAt: new Date(r.public_at),
      expiresAt: new Date(r.expires_at),
    }));
  }

  /** Write chunks in one transaction: each non-empty one upserted (one statement), each empty one deleted. */
  async saveChunks(chunks: readonly ChunkRow[]): Promise<void> {
    if (chunks.length === 0) return;
    const full = chunks.filter((c) => (c.data.nodes?.length ?? 0) + (c.data.fires?.length ?? 0) > 0);
    const empty = chunks.filter((c) => !full.includes(c));
    await this.orm.em.fork().transactional(async (tx) => {
      const em = tx as SqlEntityManager;
      if (full.length) {
        const params = full.flatMap((c) => [this.world, c.chunkX, c.chunkZ, JSON.stringify(c.data)]);
        await this.run(
          em,
          `insert into world_chunks (world, chunk_x, chunk_z, data, updated_at) values ${full.map(() => "(?, ?, ?, ?::jsonb, now())").join(", ")}
           on conflict (world, chunk_x, chunk_z) do update set data = excluded.data, updated_at = excluded.updated_at`,
          params,
        );
      }
      for (const c of empty) await this.run(em, `delete from world_chunks where world = ? and chunk_x = ? and chunk_z = ?`, [this.world, c.chunkX, c.chunkZ]);
    });
  }

  /** Every stored chunk of this world. */
  async loadChunks(): Promise<ChunkRow[]> {
    const rows = await this.orm.em
      .fork()
      .getConnection()
      .execute<{ chunk_x: number; chunk_z: number; data: ChunkData | string }[]>(`select chunk_x, chunk_z, data from world_chunks where world = ?`, [
        this.world,
      ]);
    return rows.map((r) => ({
      chunkX: Number(r.chunk_x),
      chunkZ: Number(r.chunk_z),
      data: typeof r.data === "string" ? (JSON.parse(r.data) as ChunkData) : r.data,
    }));
  }
}
