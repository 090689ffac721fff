/**
 * The database pool after cut connections (docs/persistence.md "Cut database connections"), on real
 * PostgreSQL: transactions idle or mid-statement and plain idle connections, every backend of the
 * database terminated; the pool must come back to 0 in use and serve new work within seconds.
 */
import assert from "node:assert/strict";
import { openStorage, poolStats, type Storage } from "../../../src/storage/orm.js";
import { TEST_DATABASE_URL } from "../../helpers/storage.js";

const POOL_MAX = 6;

/** Resolves once `cond()` holds, polling every 20 ms, or fails after `ms`. */
async function within(ms: number, what: string, cond: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await cond().catch(() => false)) return;
    if (Date.now() > deadline) assert.fail(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

(TEST_DATABASE_URL ? describe : describe.skip)("database pool after pg_terminate_backend (PostgreSQL)", function () {
  this.timeout(60_000);
  let storage: Storage;
  let admin: Storage;
  let reclaimed = 0;

  before(async () => {
    storage = await openStorage({
      url: TEST_DATABASE_URL,
      migrate: false,
      poolMax: POOL_MAX,
      connectTimeoutMs: 1_000,
      onConnectionReclaimed: () => reclaimed++,
    });
    // A storage of its own terminates the others' backends (its own is spared by `pg_backend_pid()`).
    admin = await openStorage({ url: TEST_DATABASE_URL, migrate: false, poolMax: 1 });
  });
  after(async () => {
    await storage?.close();
    await admin?.close();
  });

  const sql = <T>(query: string) => admin.orm.em.getConnection().execute<T[]>(query);
  const backends = async () =>
    Number((await sql<{ n: string }>("select count(*) as n from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()"))[0]!.n);

  it("gives back every connection cut mid-transaction or idle, and serves new work", async () => {
    const conn = storage.orm.em.fork().getConnection();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let begun = 0;
    // Idle in transaction: the backend dies between two statements.
    const idle = [1, 2, 3].map(() =>
      conn.transactional(async (trx) => {
        await conn.execute("select 1", [], "all", trx);
        begun++;
        await gate;
        await conn.execute("select 2", [], "all", trx);
      }),
    );
    // Mid-statement: the backend dies while a statement runs.
    const busy = [1, 2].map(() =>
      conn.transactional(async (trx) => {
        begun++;
        await conn.execute("select pg_sleep(30)", [], "all", trx);
      }),
    );
    const outcomes = Promise.allSettled([...idle, ...busy]);
    await within(10_000, "five transactions open", async () => begun === 5 && (await backends()) >= 5);
    assert.equal((await poolStats(storage)).inUse, 5);

    await sql("select pg_terminate_backend(pid) from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()");
    await within(10_000, "no backend left", async () => (await backends()) === 0);
    release();
    const settled = await outcomes;
    assert.ok(
      settled.every((s) => s.status === "rejected"),
      "every cut transaction fails",
    );

    await within(5_000, "the pool has no connection in use", async () => (await poolStats(storage)).inUse === 0);
    assert.ok(reclaimed >= 5, `cut connections given back: ${reclaimed}`);
    // More work than the pool has connections, all served.
    const rows = await Promise.all(
      Array.from({ length: POOL_MAX * 2 }, (_, i) => conn.transactional((trx) => conn.execute<{ n: number }[]>(`select ${i} as n`, [], "all", trx))),
    );
    assert.deepEqual(
      rows.map((r) => r[0]!.n),
      Array.from({ length: POOL_MAX * 2 }, (_, i) => i),
    );
    assert.equal(await storage.ping(5_000), true);
  });
});
