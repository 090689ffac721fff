/**
 * The settings of `npm run bench:trade` (environment: see the top of loadtest/trade/bench.ts) and the
 * database helpers its three parts share.
 */
import type { ItemLookup } from "../../src/domain/inventory.js";
import { openStorage, type Storage } from "../../src/storage/orm.js";
import { pct } from "../lib/report.js";

// Never DATABASE_URL: the benchmark drops the schema. TEST_DATABASE_URL is disposable by convention (the tests drop it too).
export const DB_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
export const BOTS = Number(process.env.BENCH_BOTS ?? 100);
export const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
export const WARMUP_SECONDS = 3;
export const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 4);
export const TICK_MS = process.env.BENCH_TICK_MS ?? "600";
export const PROFILE = process.env.BENCH_PROFILE === "1";
export const PAIR_COOLDOWN_MS = 3_000 + 50;

if (!DB_URL) {
  console.error("bench:trade needs a disposable PostgreSQL database: set BENCH_DATABASE_URL (its public schema is dropped and rebuilt).");
  process.exit(1);
}

export const log = (...a: unknown[]) => console.log(...a);
/** The `p`th percentile of unsorted numbers (nearest rank). */
export const pctOf = (xs: number[], p: number) =>
  pct(
    [...xs].sort((a, b) => a - b),
    p,
  );
export const ms = (x: number) => `${x.toFixed(1)} ms`;

export async function freshSchema(): Promise<Storage> {
  const boot = await openStorage({ url: DB_URL, migrate: false, poolMax: 2 });
  await boot.orm.em.getConnection().execute("drop schema if exists public cascade; create schema public;");
  await boot.close();
  return openStorage({ url: DB_URL, poolMax: 40 });
}

export async function sql<T = any>(s: Storage, q: string, params: unknown[] = []): Promise<T[]> {
  return s.orm.em.fork().getConnection().execute<T[]>(q, params);
}

export async function totals(s: Storage): Promise<Record<string, number>> {
  const rows = await sql<{ item_id: string; total: string }>(
    s,
    `select item_id, sum(quantity)::bigint total from (
       select item_id, quantity from inventory_items union all select item_id, quantity from equipment_items
       union all select item_id, quantity from bank_items union all select 'coins', coins from characters) t
     group by item_id order by item_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.item_id, Number(r.total)]));
}

export async function violations(s: Storage, items: ItemLookup): Promise<string[]> {
  const out: string[] = [];
  for (const r of await sql(s, `select character_id, count(*)::int n from inventory_items group by character_id having count(*) > 28`))
    out.push(`${r.character_id}: ${r.n} slots`);
  for (const r of await sql(
    s,
    `select character_id, slot, item_id, quantity from inventory_items where slot < 0 or slot > 27 or quantity < 1 or quantity > 2147483647`,
  ))
    out.push(`${r.character_id} slot ${r.slot}: ${r.quantity}`);
  for (const r of await sql(s, `select id, coins from characters where coins < 0 or coins > 2147483647`)) out.push(`${r.id}: coins ${r.coins}`);
  for (const r of await sql(s, `select character_id, slot, item_id, quantity from inventory_items where quantity > 1`))
    if (!items(r.item_id)?.stackable) out.push(`${r.character_id} slot ${r.slot}: ${r.quantity} × ${r.item_id}`);
  return out;
}
