/**
 * Storage bootstrap: embedded PostgreSQL (PGlite) under the world directory by default, a real
 * PostgreSQL server when a URL is given. Both run the same committed migrations at start-up.
 */
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { MikroORM as CoreOrm, Options } from "@mikro-orm/core";
import type { AbstractSqlDriver, SqlEntityManager } from "@mikro-orm/sql";
import { Migrator } from "@mikro-orm/migrations";
import { ALL_ENTITIES } from "../../entities/index.js";
import { MIGRATIONS } from "./migrations/index.js";
import { guardPool } from "./pool-guard.js";

/** The ORM type every layer uses: a SQL driver (PostgreSQL or PGlite). */
export type Orm = CoreOrm<AbstractSqlDriver, SqlEntityManager>;
/** Entity manager of that ORM. */
export type Em = SqlEntityManager;

/** The ORM plus the kind of database it is connected to. */
export interface Storage {
  orm: Orm;
  kind: "pglite" | "postgresql";
  close(): Promise<void>;
  /** Cheap liveness probe used by `/status`. Resolves false instead of throwing. */
  ping(timeoutMs?: number): Promise<boolean>;
}

export interface StorageOptions {
  /** PostgreSQL connection string; when absent PGlite is used. */
  url?: string;
  /** PGlite data directory (`memory://` for an in-memory cluster). */
  pgliteDir?: string;
  /** Run migrations on open (default true). */
  migrate?: boolean;
  /** Pool size for PostgreSQL (`DB_POOL_MAX`, default 20). */
  poolMax?: number;
  /**
   * How long a query waits for a connection — a free pool slot or a new connection — in ms
   * (`DB_POOL_ACQUIRE_TIMEOUT_MS`, default 5000). Past it the query fails with "timeout exceeded
   * when trying to connect", which joins and creations answer as 503 `SERVER_BUSY`
   * (src/storage/unavailable.ts).
   */
  connectTimeoutMs?: number;
  /** PostgreSQL `lock_timeout` of every pooled connection, in ms (default 5000; tests shorten it). */
  lockTimeoutMs?: number;
  /** Told each time a connection cut while checked out is given back to the pool (src/storage/pool-guard.ts). */
  onConnectionReclaimed?: () => void;
  debug?: boolean;
  /** Where ORM messages (migrations) go; silent by default. */
  log?: (message: string) => void;
}

/**
 * PostgreSQL pool defaults (the settings `DB_POOL_MAX` and `DB_POOL_ACQUIRE_TIMEOUT_MS`). The pool
 * must be larger than the database work the server runs at once: joins, creations and saves are
 * bounded below it (JOIN_CONCURRENCY + CREATE_CONCURRENCY + SAVE_CONCURRENCY,
 * docs/operations.md "When the server is busy"), so a burst waits in the admission queues, not for a pool connection.
 */
export const POOL_DEFAULTS = { max: 20, acquireTimeoutMs: 5_000, idleTimeoutMs: 30_000 } as const;

/** Options shared by both drivers. */
function baseOptions(log?: (message: string) => void): Partial<Options> {
  return {
    logger: log ?? (() => {}),
    entities: ALL_ENTITIES,
    extensions: [Migrator],
    migrations: {
      migrationsList: MIGRATIONS,
      path: "src/storage/migrations",
      pathTs: "src/storage/migrations",
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      emit: "ts",
    },
    allowGlobalContext: false,
    forceUtcTimezone: true,
    ensureDatabase: false,
    discovery: { warnWhenNoEntities: true },
  };
}

/**
 * Open storage and bring its schema up to date.
 * @throws when the database cannot be reached or a migration fails.
 */
export async function openStorage(opts: StorageOptions): Promise<Storage> {
  let orm: Orm;
  let kind: Storage["kind"];
  if (opts.url) {
    const { MikroORM } = await import("@mikro-orm/postgresql");
    kind = "postgresql";
    orm = (await MikroORM.init({
      ...baseOptions(opts.log),
      clientUrl: opts.url,
      pool: { min: 0, max: opts.poolMax ?? POOL_DEFAULTS.max, idleTimeoutMillis: POOL_DEFAULTS.idleTimeoutMs },
      driverOptions: {
        // A pool that waits forever for a free connection turns a database stall into a hang.
        connectionTimeoutMillis: opts.connectTimeoutMs ?? POOL_DEFAULTS.acquireTimeoutMs,
        statement_timeout: 15_000,
        lock_timeout: opts.lockTimeoutMs ?? 5_000,
        idle_in_transaction_session_timeout: 30_000,
        // A connection cut mid-transaction must go back to the pool (docs/persistence.md "Cut database connections").
        onPoolCreated: (pool: Parameters<typeof guardPool>[0]) => guardPool(pool, opts.onConnectionReclaimed),
      },
      debug: opts.debug ?? false,
    } as Options)) as unknown as Orm;
  } else {
    const { MikroORM } = await import("@mikro-orm/pglite");
    kind = "pglite";
    const dir = opts.pgliteDir ?? "memory://";
    if (!dir.startsWith("memory://")) mkdirSync(resolve(dir), { recursive: true });
    orm = (await MikroORM.init({
      ...baseOptions(opts.log),
      dbName: dir.startsWith("memory://") ? dir : resolve(dir),
      debug: opts.debug ?? false,
    } as Options)) as unknown as Orm;
  }
  if (opts.migrate !== false) {
    await orm.migrator.up();
  }
  // One probe at a time: while storage hangs, every /status shares the pending probe instead of
  // queueing another query (and taking another pool slot) behind it.
  let inflight: Promise<boolean> | undefined;
  const probe = (): Promise<boolean> =>
    (inflight ??= Promise.resolve()
      .then(() => orm.em.fork().getConnection().execute("select 1"))
      // Settles to a boolean either way: a probe that fails after the timeout already answered
      // must not surface as an unhandled rejection.
      .then(
        () => true,
        () => false,
      )
      .finally(() => {
        inflight = undefined;
      }));
  const ping = async (timeoutMs = 1_000): Promise<boolean> => {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((r) => (timer = setTimeout(() => r(false), timeoutMs)));
    try {
      return await Promise.race([probe(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    orm,
    kind,
    ping,
    close: () => orm.close(true),
  };
}

/**
 * The database pool's state for metrics: on PostgreSQL the `pg` pool under MikroORM's driver
 * (its size limit, connections checked out, queries waiting for one); PGlite is one connection that
 * serialises queries, so only its size (1) means something.
 */
export async function poolStats(storage: Storage): Promise<{ size: number; inUse?: number; waiting?: number }> {
  if (storage.kind === "pglite") return { size: 1 };
  const conn = storage.orm.em.getConnection() as unknown as { getNativeClient(): Promise<unknown> };
  const pool = (await conn.getNativeClient()) as { totalCount: number; idleCount: number; waitingCount: number; options?: { max?: number } };
  return { size: pool.options?.max ?? pool.totalCount, inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount };
}
