/**
 * A settlement facing a held row lock (lock timeout, retry, one clean outcome). Another connection
 * holds a trader's character row (`select … for update`) for longer than the lock timeout: the
 * settlement times out on the lock, retries, and ends in exactly one clean outcome — cancelled
 * (server_error) when the lock outlives every attempt, completed when the lock is released while it
 * retries — with items and coins conserved and one audit record.
 *
 * PostgreSQL only (TEST_DATABASE_URL): holding a row lock needs a second connection. The server
 * runs in-process on its own storage whose `lock_timeout` is 400 ms, so retries come quickly.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { openStorage, type Storage } from "../../../src/storage/orm.js";
import type { TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { postgresStorage, resetStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import { acceptTwice, audits, axeForCoins, count, holdCharacterLock, roomGone, totals, until } from "../../helpers/trade.js";

const SKIP_REASON = "needs PostgreSQL (TEST_DATABASE_URL): a held row lock needs a second connection";
const LOCK_TIMEOUT_MS = 400;

describe(`trade: a settlement facing a held row lock (${TEST_DATABASE_URL ? "postgresql" : `skipped: ${SKIP_REASON}`})`, function () {
  this.timeout(60_000);
  let pg: Storage;
  let storage: Storage;
  let server: GameServer;
  let players: TestPlayer[] = [];

  before(async function () {
    if (!TEST_DATABASE_URL) {
      console.log(`      skipped: ${SKIP_REASON}`);
      this.skip();
    }
    pg = await postgresStorage(); // builds the schema
    storage = await openStorage({ url: TEST_DATABASE_URL, migrate: false, lockTimeoutMs: LOCK_TIMEOUT_MS });
  });
  beforeEach(async function () {
    this.timeout(180_000); // a server start: slow on a loaded machine
    await resetStorage(pg);
    server = await startTestServer({ ADMIN_CODE: "test-admin-code" }, storage);
  });
  afterEach(async () => {
    await Promise.all(players.map((p) => p.close()));
    players = [];
    await server?.close();
  });
  after(async () => {
    await storage?.close();
  });

  /**
   * Every lock wait of this database seen while `until` polls (backend and statement start): one
   * per settlement attempt that waited for the held row.
   */
  function watchLockWaits() {
    const seen = new Set<string>();
    const poll = async () => {
      const rows = await pg.orm.em
        .fork()
        .getConnection()
        .execute(
          `select pid, query_start from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query ilike '%trade_lock_characters%'`,
        );
      for (const r of rows) seen.add(`${r.pid}@${new Date(r.query_start).toISOString()}`);
      return seen.size;
    };
    return { seen, poll };
  }

  /** a (SDK) offers its axe for b's 10 coins with a's row held by another connection; totals before, per player and together. */
  async function axeForCoinsOnHeldLock() {
    const { a, b, ids, before: both, tradeId, roomId, revision } = await axeForCoins(server, players);
    const before = { a: await totals(pg.orm, [a.id]), b: await totals(pg.orm, [b.id]), both };
    const lock = await holdCharacterLock(pg.orm, a.id);
    return { a, b, ids, before, tradeId, roomId, revision, lock, waits: watchLockWaits() };
  }

  it("the lock outlives every attempt: the settlement retries, then the trade is cancelled (server_error) once, nothing moves, one audit record", async () => {
    const { a, b, ids, before, tradeId, roomId, revision, lock, waits } = await axeForCoinsOnHeldLock();
    let released = false;
    try {
      const m = await acceptTwice(a, b, tradeId, revision);
      // Watch the attempts while the trade is still settling.
      let cancelled = false;
      void b.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: m, timeoutMs: 30_000 }).then(() => (cancelled = true));
      await until(async () => (await waits.poll(), cancelled), "the trade to end", 30_000);
      const [ca, cb] = await Promise.all([
        a.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: m }),
        b.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: m }),
      ]);
      assert.equal(ca.reason, "server_error");
      assert.equal(cb.reason, "server_error");
      assert.ok(waits.seen.size >= 2, `the settlement retried after a lock timeout (lock waits seen: ${waits.seen.size})`);
      await lock.release();
      released = true;
      await roomGone(roomId);
      for (const p of [a, b]) {
        assert.equal(
          count(p, "tradeCancelled", (d) => d.tradeId === tradeId, m),
          1,
          "one tradeCancelled each",
        );
        assert.equal(
          count(p, "tradeCompleted", (d) => d.tradeId === tradeId, m),
          0,
          "never completed",
        );
      }
      assert.deepEqual(await totals(pg.orm, [a.id]), before.a, "a holds what it held");
      assert.deepEqual(await totals(pg.orm, [b.id]), before.b, "b holds what it held");
      assert.deepEqual(
        (await audits(pg.orm, [tradeId])).map((r) => [r.outcome, r.reason]),
        [["cancelled", "server_error"]],
      );
      assert.deepEqual(await totals(pg.orm, ids), before.both);
    } finally {
      if (!released) await lock.release();
    }
  });

  it("the lock is released while the settlement retries: the trade completes once, items conserved, one audit record", async () => {
    const { a, b, ids, before, tradeId, roomId, revision, lock, waits } = await axeForCoinsOnHeldLock();
    let released = false;
    try {
      const m = await acceptTwice(a, b, tradeId, revision);
      // A first attempt timed out and a second one waits: release the lock now.
      await until(async () => (await waits.poll()) >= 2, "a retried attempt waiting for the lock", 30_000);
      await lock.release();
      released = true;
      const [da, db] = await Promise.all([
        a.next("tradeCompleted", (d) => d.tradeId === tradeId, { after: m }),
        b.next("tradeCompleted", (d) => d.tradeId === tradeId, { after: m }),
      ]);
      assert.deepEqual(da.receivedItems, [{ itemId: "coins", quantity: 10 }]);
      assert.deepEqual(db.receivedItems, [{ itemId: "bronze_axe", quantity: 1 }]);
      await roomGone(roomId);
      for (const p of [a, b]) {
        assert.equal(
          count(p, "tradeCompleted", (d) => d.tradeId === tradeId, m),
          1,
          "one tradeCompleted each",
        );
        assert.equal(
          count(p, "tradeCancelled", (d) => d.tradeId === tradeId, m),
          0,
          "never cancelled",
        );
      }
      assert.deepEqual(await totals(pg.orm, ids), before.both, "items and coins conserved");
      const [ta, tb] = [await totals(pg.orm, [a.id]), await totals(pg.orm, [b.id])];
      assert.equal(ta.bronze_axe ?? 0, (before.a.bronze_axe ?? 0) - 1);
      assert.equal(tb.bronze_axe ?? 0, (before.b.bronze_axe ?? 0) + 1);
      assert.equal(ta.coins, before.a.coins + 10);
      assert.equal(tb.coins, before.b.coins - 10);
      assert.deepEqual(
        (await audits(pg.orm, [tradeId])).map((r) => r.outcome),
        ["completed"],
      );
    } finally {
      if (!released) await lock.release();
    }
  });
});
