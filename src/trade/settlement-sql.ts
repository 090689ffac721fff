/**
 * The SQL of the settlement transaction (`settlement.ts`): its three statements, in plain form and
 * as calls of statements prepared once per pooled connection, and the `pg` pool behind the ORM.
 */
import type { Orm } from "../storage/orm.js";

/**
 * The four statements of a settlement, each of a fixed shape (the write takes arrays, empty where
 * there is nothing to do), so on PostgreSQL each is planned once per connection (`prepare`) and run
 * with `execute`: planning the write afresh every time cost about a fifth of PostgreSQL's CPU per
 * settlement (loadtest/trade/RESULTS.md). `$n` are typed by `params`.
 */
const STATEMENTS = {
  // The lease fence of both traders (docs/cluster.md "The fence"), held until commit, before anything else.
  lockLeases: {
    name: "trade_lock_leases",
    params: ["text", "text"],
    body: `select character_id, owner, epoch::text as epoch from character_leases where character_id in ($1, $2) order by character_id for share`,
  },
  lockCharacters: {
    name: "trade_lock_characters",
    params: ["text", "text"],
    body: `select id, coins from characters where id in ($1, $2) order by id for update`,
  },
  lockInventories: {
    name: "trade_lock_inventories",
    params: ["text", "text"],
    body: `select character_id, slot, item_id, quantity from inventory_items where character_id in ($1, $2) order by character_id, slot for update`,
  },
  write: {
    name: "trade_write",
    params: [
      "text[]",
      "int[]",
      "text[]",
      "int[]",
      "text[]",
      "int[]",
      "text[]",
      "int[]",
      "text[]",
      "int[]",
      "text[]",
      "int[]",
      "text",
      "text",
      "text",
      "jsonb",
      "jsonb",
      "timestamptz",
      "timestamptz",
    ],
    // Coins of both characters; emptied, changed and newly filled slots (never the same slot twice,
    // so the parts can share one statement); the audit record. Data-modifying CTEs always run.
    body: `with coins as (update characters as t set coins = v.coins from unnest($1, $2) as v(id, coins) where t.id = v.id),
      emptied as (delete from inventory_items as t using unnest($3, $4) as v(character_id, slot) where t.character_id = v.character_id and t.slot = v.slot),
      changed as (update inventory_items as t set item_id = v.item_id, quantity = v.quantity
                    from unnest($5, $6, $7, $8) as v(character_id, slot, item_id, quantity) where t.character_id = v.character_id and t.slot = v.slot),
      filled as (insert into inventory_items (character_id, slot, item_id, quantity) select * from unnest($9, $10, $11, $12))
    insert into trade_audits (id, character_a, character_b, offer_a, offer_b, outcome, reason, started_at, ended_at)
    values ($13, $14, $15, $16, $17, 'completed', null, $18, $19)`,
  },
} as const;
export type StatementName = keyof typeof STATEMENTS;

/** A `?` placeholder for a parameter of `type` (arrays as `array[…]`, so they are typed even when empty). */
const placeholder = (type: string, cast: boolean) => (type.endsWith("[]") ? `array[?]::${type}` : cast ? `?::${type}` : "?");
/**
 * Each statement in both forms, built once: `plain`, the body with `?` placeholders cast to their
 * types (each `$n` appears once, in order), and `execute`, a call of the prepared statement.
 */
export const SQL = Object.fromEntries(
  Object.entries(STATEMENTS).map(([key, st]) => [
    key,
    {
      plain: st.body.replace(/\$(\d+)/g, (_, n: string) => placeholder(st.params[Number(n) - 1]!, true)),
      execute: `execute ${st.name}(${st.params.map((t) => placeholder(t, false)).join(", ")})`,
    },
  ]),
) as Record<StatementName, { plain: string; execute: string }>;
export const PREPARE_ALL = Object.values(STATEMENTS)
  .map((st) => `prepare ${st.name}(${st.params.join(", ")}) as ${st.body}`)
  .join("; ");

export type LeaseRow = { character_id: string; owner: string; epoch: string };
export type CharacterRow = { id: string; coins: number | string };
export type InventoryRow = { character_id: string; slot: number; item_id: string; quantity: number | string };

/** The parts of a `pg` pool and client this module uses. */
export interface PgPool {
  connect(): Promise<PgClient>;
  readonly idleCount: number;
}
interface PgClient {
  query(sql: string): Promise<unknown>;
  release(err?: Error | boolean): void;
  /** The server process of this connection (what `pg_cancel_backend` takes). */
  readonly processID?: number | null;
}

const pools = new WeakMap<object, Promise<PgPool | undefined>>();

/** The `pg` pool behind the ORM when storage is PostgreSQL (undefined for PGlite). */
export function nativePool(orm: Orm): Promise<PgPool | undefined> {
  let found = pools.get(orm);
  if (!found) {
    const conn = orm.em.getConnection() as unknown as { getNativeClient?: () => Promise<unknown> };
    found = (async () => {
      const native = (await conn.getNativeClient?.().catch(() => undefined)) as Partial<PgPool> | undefined;
      return native && typeof native.connect === "function" && typeof native.idleCount === "number" ? (native as PgPool) : undefined;
    })();
    pools.set(orm, found);
  }
  return found;
}

/** Pooled connections on which the settlement statements are prepared. */
export const prepared = new WeakSet<object>();
