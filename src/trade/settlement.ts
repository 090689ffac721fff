/**
 * The settlement transaction: the only place where a trade moves items and coins.
 *
 * One transaction, in plain SQL (no identity map: nothing cached is trusted):
 * 0. hold both traders' lease rows (`FOR SHARE`) and check each is still the lease its player was
 *    loaded under (the fence, docs/cluster.md): a trader whose lease changed hands is `lease_lost`;
 * 1. lock both character rows, in id order, reading their committed values;
 * 2. lock both characters' inventory rows, in the same order, in a later statement (so its snapshot
 *    is taken after the character locks: anything that changed an inventory under that lock is seen);
 * 3. re-check both offers against the locked rows and plan the move (`planSettlement`: slots,
 *    item ids, quantities, coins, 28 slots, 2,147,483,647 caps);
 * 4. write both inventories and coin totals and the audit record in one statement; commit.
 * On PostgreSQL the three statements are prepared once per pooled connection.
 * Serialization failures, deadlocks, lock time-outs and prepared-statement mismatches are retried
 * (at most `MAX_ATTEMPTS` attempts in all), then it fails closed. On PostgreSQL it runs on a connection of the ORM's own pool in 2 round trips;
 * on PGlite through the ORM's connection.
 *
 * A failure after the write was sent (a lost connection while `write; commit` ran) does not say
 * whether PostgreSQL committed. The audit record is written by the same statement, so the outcome
 * is read back from it on another connection, after waiting for the character row locks (so a
 * commit still finishing is seen): a `completed` record means it committed. When even that read
 * fails, the result is `unknown` and the caller must not trust the players' items in memory.
 */
import { inventoryFromSlots, inventoryToSlots, type Inventory, type ItemLookup } from "../domain/inventory.js";
import type { Trade } from "../domain/trade/trade.js";
import { planSettlement, type ReceivedItem } from "../domain/trade/settlement-plan.js";
import type { Orm } from "../storage/orm.js";
import { auditedOffer } from "./audit.js";
import type { LeaseFence } from "../storage/fence.js";
import {
  nativePool,
  prepared,
  PREPARE_ALL,
  SQL,
  type CharacterRow,
  type InventoryRow,
  type LeaseRow,
  type PgPool,
  type StatementName,
} from "./settlement-sql.js";

/** Why a settlement did not commit. */
export const SETTLEMENT_FAILURE = {
  INVALID_ITEMS: "invalid_items",
  INVENTORY_FULL: "inventory_full",
  /** Nothing was committed (known). */
  SERVER_ERROR: "server_error",
  /** The write was sent and storage could not say afterwards whether it committed. */
  UNKNOWN: "unknown",
  /** A trader's lease changed hands (the fence, `lost`): nothing was committed. */
  LEASE_LOST: "lease_lost",
} as const;
export type SettlementFailure = (typeof SETTLEMENT_FAILURE)[keyof typeof SETTLEMENT_FAILURE];

/** A committed settlement: what each side received and the holdings the transaction wrote. */
export type SettledOk = { ok: true; received: Record<string, readonly ReceivedItem[]>; holdings: Record<string, { inventory: Inventory; coins: number }> };
export type SettlementResult = SettledOk | { ok: false; failure: SettlementFailure; message: string; lost?: string[] };
/** Each trader's lease fence (the lease its player was loaded under); a trader without one is not checked. */
export type TraderFences = Readonly<Record<string, LeaseFence | undefined>>;

/** The settlement was abandoned (shutdown) before its write was sent: nothing was committed. */
class Abandoned extends Error {}

class PlanRejected extends Error {
  constructor(
    readonly failure: SettlementFailure,
    message: string,
    readonly lost?: string[],
  ) {
    super(message);
  }
}

/** Prepared statement missing (26000) or already there (42P05). */
const PREPARED_MISMATCH = new Set(["26000", "42P05"]);
/** Serialization failure, deadlock, lock time-out, a connection without the prepared statements: try again. */
const RETRYABLE = new Set(["40001", "40P01", "55P03", ...PREPARED_MISMATCH]);
/** Attempts in all: the first and at most 3 retries. */
const MAX_ATTEMPTS = 4;

const ABANDONED: SettlementResult = { ok: false, failure: "server_error", message: "The trade was cancelled by the server." };

/**
 * Settle a trade on the confirmation screen. Never throws: a failure is a value, and nothing is
 * written unless everything is.
 *
 * `signal` abandons it (shutdown): no attempt starts after it fires, and an attempt still waiting
 * for its row locks is cancelled on the server (`pg_cancel_backend`), so a settlement held by
 * another transaction's lock ends at once as `server_error` with nothing written. Once the write
 * has been sent it is not interrupted: its outcome is read as usual.
 */
export async function settleTrade(orm: Orm, trade: Trade, items: ItemLookup, signal?: AbortSignal, fences: TraderFences = {}): Promise<SettlementResult> {
  const pool = await nativePool(orm);
  // Prepared statements, unless a connection turned out not to hold them (then plain statements).
  let usePrepared = true;
  for (let attempt = 1; ; attempt++) {
    if (signal?.aborted) return ABANDONED;
    // Set once the plan is made, just before the write is sent: from then on it may commit.
    const sent: { result?: SettledOk } = {};
    try {
      if (pool) return await settleOnPool(pool, orm, trade, items, sent, usePrepared, fences, signal);
      const conn = orm.em.getConnection();
      return await conn.transactional((trx) => settleOnce(ormChannel(conn, trx), trade, items, sent, fences, signal));
    } catch (e) {
      if (e instanceof PlanRejected) return { ok: false, failure: e.failure, message: e.message, ...(e.lost ? { lost: e.lost } : {}) };
      if (e instanceof Abandoned || (!sent.result && signal?.aborted)) return ABANDONED;
      if (sent.result) {
        // The write went out: whether it committed is in the audit record it writes.
        const outcome = await committedOutcome(orm, pool, trade).catch(() => "unreadable" as const);
        if (outcome === "completed") return sent.result;
        if (outcome === "unreadable") return { ok: false, failure: SETTLEMENT_FAILURE.UNKNOWN, message: "The trade's result could not be confirmed." };
      }
      const code = (e as { code?: string }).code ?? (e as { cause?: { code?: string } }).cause?.code;
      if (code && PREPARED_MISMATCH.has(code)) usePrepared = false;
      if (code && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) continue;
      return { ok: false, failure: SETTLEMENT_FAILURE.SERVER_ERROR, message: "The trade could not be completed." };
    }
  }
}

/**
 * What storage says about the trade after a failed attempt: "completed" when its settlement
 * committed, "cancelled" when it is audited as cancelled, "absent" otherwise. On PostgreSQL, on a
 * connection of its own that first waits for both character row locks (bounded by the pool's
 * `lock_timeout`), so a transaction still holding them — one whose commit is still finishing — has
 * ended before the record is read (read committed: the later statement sees it). Throws when
 * storage can't answer.
 */
async function committedOutcome(orm: Orm, pool: PgPool | undefined, trade: Trade): Promise<"completed" | "cancelled" | "absent"> {
  const ids = [trade.a.playerId, trade.b.playerId].sort();
  const platform = orm.em.getPlatform();
  let rows: { outcome: string }[];
  if (pool) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      const res = (await client.query(
        `begin; ${platform.formatQuery(SQL.lockCharacters.plain, ids)}; ${platform.formatQuery(`select outcome from trade_audits where id = ?`, [trade.id])}; rollback`,
      )) as { rows: unknown[] }[];
      rows = res[2]!.rows as { outcome: string }[];
    } catch (e) {
      broken = e as Error;
      throw e;
    } finally {
      client.release(broken);
    }
  } else {
    rows = await orm.em.getConnection().execute<{ outcome: string }[]>(`select outcome from trade_audits where id = ?`, [trade.id]);
  }
  const outcome = rows[0]?.outcome;
  return outcome === "completed" ? "completed" : outcome === "cancelled" ? "cancelled" : "absent";
}

/** How one attempt talks to the database. */
interface SettlementChannel {
  /** Open the transaction, hold both leases, lock both characters (id order), then both inventories (later statements: fresh snapshots). */
  lockAndRead(ids: string[]): Promise<{ leases: LeaseRow[]; chars: CharacterRow[]; inventory: InventoryRow[] }>;
  /** Run the write statement with its parameters and commit. */
  writeAndCommit(params: unknown[]): Promise<void>;
}

/**
 * Through the ORM's connection (PGlite, where the connection is shared and the ORM serialises its
 * use): 5 round trips — begin, the two locking reads, the write, commit.
 */
function ormChannel(
  conn: ReturnType<Orm["em"]["getConnection"]>,
  trx: Parameters<Parameters<ReturnType<Orm["em"]["getConnection"]>["transactional"]>[0]>[0],
): SettlementChannel {
  return {
    async lockAndRead(ids) {
      const leases = await conn.execute<LeaseRow[]>(SQL.lockLeases.plain, ids, "all", trx);
      const chars = await conn.execute<CharacterRow[]>(SQL.lockCharacters.plain, ids, "all", trx);
      const inventory = await conn.execute<InventoryRow[]>(SQL.lockInventories.plain, ids, "all", trx);
      return { leases, chars, inventory };
    },
    async writeAndCommit(params) {
      await conn.execute(SQL.write.plain, params, "run", trx); // transactional() commits when the attempt returns
    },
  };
}

/**
 * On PostgreSQL, one pooled connection of the ORM's own pool and 2 round trips: `begin; execute
 * lock characters; execute lock inventories` as one simple query (its statements run in order,
 * each with a fresh snapshot), then `execute write; commit`. The statements are prepared on the
 * connection the first time it settles (in the first round trip). Values are inlined by the ORM's
 * own formatter, as on every ORM query. Whatever goes wrong, the transaction is rolled back before
 * the connection goes back to the pool.
 */
async function settleOnPool(
  pool: PgPool,
  orm: Orm,
  trade: Trade,
  items: ItemLookup,
  sent: { result?: SettledOk },
  usePrepared: boolean,
  fences: TraderFences,
  signal?: AbortSignal,
): Promise<SettlementResult> {
  const platform = orm.em.getPlatform();
  const sql = (q: string, params: unknown[]) => platform.formatQuery(q, params);
  const run = (key: StatementName) => (usePrepared ? SQL[key].execute : SQL[key].plain);
  const client = await pool.connect();
  let broken: Error | undefined;
  // Abandoned while waiting for the row locks: cancel that wait on the server (another connection),
  // so the attempt fails now (57014, rolled back) instead of at the lock timeout. Never once the
  // write is on its way (`sent`): its outcome must be read, not interrupted.
  let locking = false;
  let cancelSent = false;
  const cancelLockWait = () => {
    const pid = client.processID;
    if (!locking || sent.result || !pid) return;
    cancelSent = true;
    void pool
      .connect()
      .then(async (other) => {
        try {
          await other.query(`select pg_cancel_backend(${Number(pid)})`);
        } finally {
          other.release();
        }
      })
      .catch(() => undefined); // then the lock timeout ends the wait
  };
  signal?.addEventListener("abort", cancelLockWait, { once: true });
  try {
    return await settleOnce(
      {
        async lockAndRead(ids) {
          // Prepared statements are not transactional: once sent, they exist on this connection.
          const prepare = !usePrepared || prepared.has(client) ? "" : `${PREPARE_ALL}; `;
          if (usePrepared) prepared.add(client);
          locking = true;
          if (signal?.aborted) throw new Abandoned();
          try {
            const res = (await client.query(
              `${prepare}begin; ${sql(run("lockLeases"), ids)}; ${sql(run("lockCharacters"), ids)}; ${sql(run("lockInventories"), ids)}`,
            )) as {
              rows: unknown[];
            }[];
            return { leases: res.at(-3)!.rows as LeaseRow[], chars: res.at(-2)!.rows as CharacterRow[], inventory: res.at(-1)!.rows as InventoryRow[] };
          } finally {
            locking = false;
          }
        },
        async writeAndCommit(params) {
          await client.query(`${sql(run("write"), params)}; commit`);
        },
      },
      trade,
      items,
      sent,
      fences,
      signal,
    );
  } catch (e) {
    // A refused plan leaves the transaction open, a failed statement leaves it aborted: end it.
    await client.query("rollback").catch((err: Error) => (broken = err));
    // A connection whose prepared statements are not what this module thinks (someone deallocated
    // them, or a transaction-pooling proxy switched connections): drop it (a new one starts with
    // none); the settlement is retried with plain statements.
    if (PREPARED_MISMATCH.has((e as { code?: string }).code ?? "")) broken ??= e as Error;
    throw e;
  } finally {
    signal?.removeEventListener("abort", cancelLockWait);
    // A connection a cancel was sent to is not reused: the cancel might land on its next query.
    client.release(broken ?? (cancelSent ? new Error("settlement abandoned") : undefined));
  }
}

/**
 * One attempt, in plain SQL (the ORM's entity machinery cost about 10 ms of CPU per settlement,
 * the dominant cost of a trade), over either channel:
 * 1. `select … from characters where id in (a, b) order by id for update`: both rows locked, in id
 *    order (the lock is taken above the sort), with their current committed values;
 * 2. both inventories locked the same way (`order by character_id, slot`);
 * 3. the plan; 4. coins, changed slots (delete / update / insert) and the audit record, as one
 *    statement (data-modifying CTEs all run, whatever the main query reads).
 */
async function settleOnce(
  channel: SettlementChannel,
  trade: Trade,
  items: ItemLookup,
  sent: { result?: SettledOk },
  fences: TraderFences,
  signal?: AbortSignal,
): Promise<SettledOk> {
  const ids = [trade.a.playerId, trade.b.playerId].sort();
  const { leases, chars: charRows, inventory: invRows } = await channel.lockAndRead(ids);
  // The fence: each trader's lease still the one its player was loaded under, held until commit.
  const lost = ids.filter((id) => {
    const fence = fences[id];
    const row = leases.find((l) => l.character_id === id);
    return fence !== undefined && (row?.owner !== fence.owner || String(row.epoch) !== fence.epoch);
  });
  if (lost.length > 0) throw new PlanRejected(SETTLEMENT_FAILURE.LEASE_LOST, "The trade could not be completed.", lost);
  const chars = new Map(charRows.map((c) => [c.id, { coins: Number(c.coins) }]));
  if (ids.some((id) => !chars.has(id))) throw new PlanRejected(SETTLEMENT_FAILURE.INVALID_ITEMS, "A trader no longer exists.");
  const invs = new Map<string, Inventory>();
  for (const id of ids) {
    const rows = invRows.filter((r) => r.character_id === id).map((r) => ({ slot: Number(r.slot), itemId: r.item_id, quantity: Number(r.quantity) }));
    const inv = inventoryFromSlots(rows);
    if (!inv.ok) throw new PlanRejected(SETTLEMENT_FAILURE.INVALID_ITEMS, "An inventory is in an invalid state.");
    invs.set(id, inv.value);
  }
  const side = (id: string, name: string) => ({ offer: trade.offers[id]!, inventory: invs.get(id)!, coins: chars.get(id)!.coins, name });
  const plan = planSettlement(side(trade.a.playerId, trade.a.name), side(trade.b.playerId, trade.b.name), items);
  if (!plan.ok) {
    throw new PlanRejected(plan.error.code === "INVENTORY_FULL" ? SETTLEMENT_FAILURE.INVENTORY_FULL : SETTLEMENT_FAILURE.INVALID_ITEMS, plan.error.message);
  }
  const outcome = { [trade.a.playerId]: plan.value.a, [trade.b.playerId]: plan.value.b };
  const result: SettledOk = {
    ok: true,
    received: { [trade.a.playerId]: plan.value.a.receivedItems, [trade.b.playerId]: plan.value.b.receivedItems },
    holdings: {
      [trade.a.playerId]: { inventory: plan.value.a.inventory, coins: plan.value.a.coins },
      [trade.b.playerId]: { inventory: plan.value.b.inventory, coins: plan.value.b.coins },
    },
  };
  // Every write in one statement (one round trip): coins, changed slots, the audit record.
  const slots = inventoryWrites(ids.map((id) => ({ characterId: id, before: invs.get(id)!, after: outcome[id]!.inventory })));
  if (signal?.aborted) throw new Abandoned(); // abandoned while locking: write nothing
  sent.result = result;
  await channel.writeAndCommit([
    ids,
    ids.map((id) => outcome[id]!.coins),
    slots.emptied.map((x) => x.characterId),
    slots.emptied.map((x) => x.slot),
    slots.changed.map((x) => x.characterId),
    slots.changed.map((x) => x.slot),
    slots.changed.map((x) => x.itemId),
    slots.changed.map((x) => x.quantity),
    slots.filled.map((x) => x.characterId),
    slots.filled.map((x) => x.slot),
    slots.filled.map((x) => x.itemId),
    slots.filled.map((x) => x.quantity),
    trade.id,
    trade.a.playerId,
    trade.b.playerId,
    JSON.stringify(auditedOffer(trade.offers[trade.a.playerId]!, items)),
    JSON.stringify(auditedOffer(trade.offers[trade.b.playerId]!, items)),
    new Date(trade.startedAt ?? trade.createdAt),
    new Date(),
  ]);
  return result;
}

type SlotWrite = { characterId: string; slot: number; itemId: string; quantity: number };

/**
 * The slots that changed, for both characters: emptied (delete), changed (update) and newly filled
 * (insert). No slot is in two lists, so the write can do all three in one statement.
 */
function inventoryWrites(changes: { characterId: string; before: Inventory; after: Inventory }[]): {
  emptied: SlotWrite[];
  changed: SlotWrite[];
  filled: SlotWrite[];
} {
  const emptied: SlotWrite[] = [];
  const changed: SlotWrite[] = [];
  const filled: SlotWrite[] = [];
  for (const { characterId, before, after } of changes) {
    const afterSlots = new Map(inventoryToSlots(after).map((s) => [s.slot, s]));
    for (const b of inventoryToSlots(before)) {
      const a = afterSlots.get(b.slot);
      if (!a) emptied.push({ characterId, ...b });
      else if (a.itemId !== b.itemId || a.quantity !== b.quantity) changed.push({ characterId, ...a });
      afterSlots.delete(b.slot);
    }
    for (const a of afterSlots.values()) filled.push({ characterId, ...a });
  }
  return { emptied, changed, filled };
}
