/**
 * The chaos run's PostgreSQL side (docs/chaos.md): a database of the run's own (created and dropped
 * over the project's storage layer, so no client tools are needed), the fault that cuts its
 * connections, and the counts the checks read once everything has stopped.
 */
import { openStorage, type Storage } from "../../src/storage/orm.js";

/** `url` with its database name replaced by `name`. */
export function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/** The database name in a URL. */
export const databaseOf = (url: string) => decodeURIComponent(new URL(url).pathname.slice(1));

async function onMaintenance<T>(serverUrl: string, fn: (s: Storage) => Promise<T>): Promise<T> {
  const s = await openStorage({ url: withDatabase(serverUrl, "postgres"), migrate: false, poolMax: 1, connectTimeoutMs: 5_000 });
  try {
    return await fn(s);
  } finally {
    await s.close().catch(() => undefined);
  }
}

const ident = (name: string) => {
  if (!/^[a-z0-9_]+$/.test(name)) throw new Error(`not a plain database name: ${name}`);
  return `"${name}"`;
};

/** Create database `name` on the server of `serverUrl` (dropping a leftover of the same name first). */
export async function createDatabase(serverUrl: string, name: string): Promise<string> {
  await onMaintenance(serverUrl, async (s) => {
    const c = s.orm.em.getConnection();
    await c.execute(`drop database if exists ${ident(name)} with (force)`);
    await c.execute(`create database ${ident(name)}`);
  });
  return withDatabase(serverUrl, name);
}

/** Drop database `name` (its connections are cut first). */
export async function dropDatabase(serverUrl: string, name: string): Promise<void> {
  await onMaintenance(serverUrl, (s) => s.orm.em.getConnection().execute(`drop database if exists ${ident(name)} with (force)`));
}

/** The fault: terminate every connection to the run's database; resolves with how many were cut. */
export async function terminateConnections(serverUrl: string, name: string): Promise<number> {
  return onMaintenance(serverUrl, async (s) => {
    const rows = await s.orm.em
      .getConnection()
      .execute<{ n: number }[]>(
        `select count(*)::int n from (select pg_terminate_backend(pid) from pg_stat_activity where datname = ? and pid <> pg_backend_pid()) t`,
        [name],
      );
    return rows[0]?.n ?? 0;
  });
}

/** Read-only access to the run's database (no migrations: the servers applied them). */
export async function withRunDatabase<T>(url: string, fn: (q: <R = any>(sql: string, params?: unknown[]) => Promise<R[]>) => Promise<T>): Promise<T> {
  const s = await openStorage({ url, migrate: false, poolMax: 2, connectTimeoutMs: 10_000 });
  try {
    return await fn((sql, params = []) => s.orm.em.fork().getConnection().execute(sql, params));
  } finally {
    await s.close().catch(() => undefined);
  }
}

export type Totals = Record<string, number>;

/** Every item id over every stored character: inventory, equipment, bank, and coins (as `coins`). */
export async function characterTotals(url: string): Promise<Totals> {
  return withRunDatabase(url, async (q) => {
    const rows = await q<{ item_id: string; total: string }>(
      `select item_id, sum(quantity)::bigint total from (
         select item_id, quantity from inventory_items
         union all select item_id, quantity from equipment_items
         union all select item_id, quantity from bank_items
         union all select 'coins', coins from characters) t
       group by item_id`,
    );
    return Object.fromEntries(rows.map((r) => [r.item_id, Number(r.total)]));
  });
}

/** Ids of the trades with a `completed` audit record. */
export async function completedAudits(url: string): Promise<Set<string>> {
  return withRunDatabase(url, async (q) => new Set((await q<{ id: string }>(`select id from trade_audits where outcome = 'completed'`)).map((r) => r.id)));
}

/** Open death locks (a death whose items are neither on the ground nor back): bots never fight, so any is a finding. */
export async function openDeaths(url: string): Promise<number> {
  return withRunDatabase(url, async (q) => (await q<{ n: number }>(`select count(*)::int n from player_deaths where resolved_at is null`))[0]?.n ?? 0);
}
