/**
 * Shared test storage: one PGlite cluster per test process (initdb is slow), and one PostgreSQL
 * connection when TEST_DATABASE_URL is set. `resetStorage` empties every table between tests.
 */
import { openStorage, type Storage } from "../../src/storage/orm.js";

let pglite: Promise<Storage> | undefined;
let postgres: Promise<Storage> | undefined;

/** The per-process PGlite storage, migrated. */
export function pgliteStorage(): Promise<Storage> {
  pglite ??= openStorage({ pgliteDir: "memory://" });
  return pglite;
}

/** The URL of the real PostgreSQL server for tests, if configured. */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined;

/**
 * The per-process PostgreSQL storage. The schema is dropped and rebuilt from the migrations once
 * per process, so tests start from what a fresh deployment would have.
 */
export function postgresStorage(): Promise<Storage> {
  if (!TEST_DATABASE_URL) throw new Error("TEST_DATABASE_URL is not set");
  postgres ??= (async () => {
    const bootstrap = await openStorage({ url: TEST_DATABASE_URL, migrate: false, poolMax: 2 });
    await bootstrap.orm.em.getConnection().execute("drop schema if exists public cascade; create schema public;");
    await bootstrap.close();
    return openStorage({ url: TEST_DATABASE_URL, poolMax: 20 });
  })();
  return postgres;
}

/** Every storage kind available in this run: PGlite always, PostgreSQL when configured. */
export function storageKinds(): { name: string; get: () => Promise<Storage> }[] {
  const kinds = [{ name: "pglite", get: pgliteStorage }];
  if (TEST_DATABASE_URL) kinds.push({ name: "postgresql", get: postgresStorage });
  return kinds;
}

/** Delete every row of every table (keeps the schema and migration records). */
export async function resetStorage(storage: Storage): Promise<void> {
  const tables = [...storage.orm.getMetadata().getAll().values()].map((m) => m.tableName).filter(Boolean);
  const list = [...new Set(tables)].map((t) => `"${t}"`).join(", ");
  // A save still finishing from the previous test can deadlock with the truncate: retry.
  for (let attempt = 1; ; attempt++) {
    try {
      await storage.orm.em.getConnection().execute(`truncate table ${list} restart identity cascade`);
      return;
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (attempt >= 5 || (code !== "40P01" && code !== "55P03")) throw e;
    }
  }
}

/** Close shared storages at the end of the run. */
export async function closeSharedStorage(): Promise<void> {
  const all = [pglite, postgres].filter(Boolean) as Promise<Storage>[];
  pglite = postgres = undefined;
  for (const s of all) await (await s).close();
}
