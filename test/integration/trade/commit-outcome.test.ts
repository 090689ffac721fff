/**
 * When the settlement's `write; commit` fails, what did PostgreSQL do? Real failures injected into
 * the ORM's own `pg` pool, at the settlement's write (PostgreSQL only: that path runs there):
 *
 * 1. The backend is terminated (pg_terminate_backend) before the write reaches it: nothing was
 *    committed; both players get one `tradeCancelled` server_error and keep their items.
 * 2. The write commits and the connection is lost before the answer (the backend is terminated
 *    right after the commit): the audit record says it committed, so both players get
 *    `tradeCompleted`, never `tradeCancelled`, and memory holds the committed items.
 * 3. The same, and the outcome can't be read back either: both players are told (one
 *    `tradeCancelled` server_error each, then `tradeError TRADE_FAILED`), removed and disconnected
 *    without their in-memory items ever being written (storage works again for their leave saves),
 *    and their next join shows what storage holds — no duplicate.
 * 4. Nothing committed, and the reload of the players fails (storage goes away): the same eviction.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import type { Orm } from "../../../src/storage/orm.js";
import { TRADE_RELOAD_CLOSE_CODE } from "../../../src/trade/settle-players.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { postgresStorage, resetStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import { audits, axeForCoins, count, marker, roomGone, totals, until } from "../../helpers/trade.js";

type PgClient = { processID: number; query: (...args: any[]) => Promise<any>; release: (e?: unknown) => void };
type PgPool = { connect: (...args: any[]) => Promise<PgClient> };

/**
 * Hooks into the real `pg` pool behind the ORM: `atWrite` runs in place of the next settlement
 * write (`execute trade_write(…); commit`), `atCheck` in place of the next
 * read-back of a trade's outcome, each with the real query; `down` makes every new connection fail
 * while set. `reset()` clears them, `uninstall()` puts the pool back.
 */
async function interceptPool(orm: Orm) {
  const pool = (await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<PgPool> }).getNativeClient()) as PgPool;
  const connect = pool.connect;
  const state = {
    down: false,
    atWrite: undefined as undefined | ((client: PgClient, run: () => Promise<any>) => Promise<any>),
    /** Runs in place of the next read-back of a trade's outcome. */
    atCheck: undefined as undefined | ((run: () => Promise<any>) => Promise<any>),
    /** A connection that bypasses the interception (to terminate a backend). */
    async admin<T>(q: string, params: unknown[] = []): Promise<T[]> {
      const c = await connect.call(pool);
      try {
        return (await c.query(q, params)).rows;
      } finally {
        c.release();
      }
    },
    /** How many times `atWrite` ran. */
    hits: 0,
    reset() {
      state.atWrite = undefined;
      state.atCheck = undefined;
      state.down = false;
    },
    uninstall() {
      state.reset();
      pool.connect = connect;
    },
  };
  pool.connect = async function (...args: any[]) {
    if (args.length) return connect.apply(pool, args as []);
    if (state.down) throw new Error("connect ECONNREFUSED (storage down in this test)");
    const client = await connect.call(pool);
    const marked = client as PgClient & { __intercepted?: boolean };
    if (!marked.__intercepted) {
      marked.__intercepted = true;
      const query = client.query;
      client.query = function (this: PgClient, ...qa: any[]) {
        const text = typeof qa[0] === "string" ? qa[0] : "";
        const hook = state.atWrite;
        if (hook && text.includes("execute trade_write(")) {
          state.atWrite = undefined;
          state.hits++;
          return hook(client, () => query.apply(client, qa));
        }
        const check = state.atCheck;
        if (check && text.includes("select outcome from trade_audits")) {
          state.atCheck = undefined;
          return check(() => query.apply(client, qa));
        }
        return query.apply(client, qa);
      } as PgClient["query"];
    }
    return client;
  };
  /** Terminate the client's backend and wait until it is gone. */
  const terminate = async (client: PgClient) => {
    await state.admin(`select pg_terminate_backend($1)`, [client.processID]);
    await until(async () => (await state.admin(`select 1 from pg_stat_activity where pid = $1`, [client.processID])).length === 0, "the backend to exit");
  };
  return Object.assign(state, { terminate });
}

describe("trade: a settlement whose commit outcome is not reported (postgresql)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let players: TestPlayer[] = [];
  let pool: Awaited<ReturnType<typeof interceptPool>>;

  before(async function () {
    if (!TEST_DATABASE_URL) return this.skip(); // The pooled-connection path of the settlement runs on PostgreSQL.
    const storage = await postgresStorage();
    await resetStorage(storage);
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" }, storage);
    pool = await interceptPool(storage.orm);
  });
  after(async () => {
    pool?.uninstall();
    await server?.close();
  });
  afterEach(async () => {
    pool?.reset();
    await Promise.all(players.map((p) => p.close()));
    players = [];
  });

  /** A (SDK) offers its axe, B (plain WebSocket) 10 coins; on the confirmation screen A has accepted, `settle` sends B's accept. */
  async function onConfirm() {
    const { a, b, ids, before, tradeId, roomId, revision } = await axeForCoins(server, players);
    let m = a.mark();
    a.send("tradeAccept", { tradeId, revision });
    b.send("tradeAccept", { tradeId, revision });
    const conf = await a.next("tradeConfirmScreen", () => true, { after: m });
    await b.next("tradeConfirmScreen", (d) => d.tradeId === tradeId);
    m = a.mark();
    a.send("tradeAccept", { tradeId, revision: conf.revision });
    await b.next("tradeUpdated", (d) => d.theirOffer.accepted === true && d.revision === conf.revision);
    const hits = pool.hits;
    const settle = () => b.send("tradeAccept", { tradeId, revision: conf.revision });
    /** The failure was injected at this settlement's write. */
    const injected = () => assert.equal(pool.hits, hits + 1, "the failure was injected at the settlement's write");
    return { a, b, ids, before, tradeId, roomId, settle, injected, mark: m };
  }

  /**
   * The player got exactly one `tradeCancelled` server_error for the trade, and it came before the
   * `tradeError TRADE_FAILED` telling it to reconnect. Called once its connection has closed, so
   * everything sent before the close has arrived.
   */
  function cancelledOnceBeforeEviction(p: TestPlayer, tradeId: string) {
    const got = p.received.filter((r) => r.event === "tradeCancelled" && r.data.tradeId === tradeId);
    assert.equal(got.length, 1, `${p.id}: one tradeCancelled before the connection closed`);
    assert.equal(got[0]!.data.reason, "server_error");
    const failed = p.received.find((r) => r.event === "tradeError" && r.data.tradeId === tradeId && r.data.code === "TRADE_FAILED");
    assert.ok(failed && got[0]!.seq < failed.seq, "tradeCancelled, then tradeError TRADE_FAILED");
  }

  /** Items and coins of a player in memory, as totals. */
  function memory(id: string) {
    const p = server.world.player(id)!;
    const out: Record<string, number> = { coins: p.coins };
    for (const s of p.inventory) if (s) out[s.itemId] = (out[s.itemId] ?? 0) + s.quantity;
    for (const s of Object.values(p.equipment)) if (s) out[s.itemId] = (out[s.itemId] ?? 0) + s.quantity;
    for (const [itemId, q] of p.bank) out[itemId] = (out[itemId] ?? 0) + q;
    return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== 0));
  }

  it("the connection dies before the write reaches PostgreSQL: nothing committed, one tradeCancelled server_error each", async () => {
    const t = await onConfirm();
    pool.atWrite = async (client, run) => {
      await pool.terminate(client);
      return run(); // fails: the backend is gone
    };
    t.settle();
    for (const p of [t.a, t.b]) await p.next("tradeCancelled", (d) => d.tradeId === t.tradeId);
    t.injected();
    await roomGone(t.roomId);
    await marker(t.a);
    await marker(t.b);
    for (const p of [t.a, t.b]) {
      const got = p.received.filter((r) => r.event === "tradeCancelled" && r.data.tradeId === t.tradeId);
      assert.equal(got.length, 1);
      assert.equal(got[0]!.data.reason, "server_error");
      assert.equal(count(p, "tradeCompleted"), 0);
    }
    assert.deepEqual(await totals(server.storage.orm, t.ids), t.before);
    assert.deepEqual(
      (await audits(server.storage.orm, [t.tradeId])).map((r) => [r.outcome, r.reason]),
      [["cancelled", "server_error"]],
    );
    assert.equal(
      server.world.player(t.a.id)!.inventory.some((s) => s?.itemId === "bronze_axe"),
      true,
      "A keeps its axe",
    );
  });

  it("the commit happens and its answer is lost: the audit record says completed, both get tradeCompleted", async () => {
    const t = await onConfirm();
    pool.atWrite = async (client, run) => {
      await run(); // committed
      await pool.terminate(client); // the answer never arrives
      throw new Error("Connection terminated unexpectedly");
    };
    t.settle();
    const done = await Promise.race([
      t.a.next("tradeCompleted", (d) => d.tradeId === t.tradeId).then(() => "completed"),
      t.a.next("tradeCancelled", (d) => d.tradeId === t.tradeId).then((d) => `cancelled (${d.reason})`),
    ]);
    t.injected();
    assert.equal(done, "completed");
    const recv = await t.b.next("tradeCompleted", (d) => d.tradeId === t.tradeId);
    assert.deepEqual(recv.receivedItems, [{ itemId: "bronze_axe", quantity: 1 }]);
    await roomGone(t.roomId);
    await marker(t.a);
    await marker(t.b);
    for (const p of [t.a, t.b])
      assert.equal(
        count(p, "tradeCancelled", (d) => d.tradeId === t.tradeId),
        0,
      );
    await t.a.next("player:sync", (d) => d.coins === 35, { after: t.mark });
    assert.deepEqual(await totals(server.storage.orm, t.ids), t.before);
    assert.deepEqual(
      (await audits(server.storage.orm, [t.tradeId])).map((r) => r.outcome),
      ["completed"],
    );
    await server.world.queues.drain();
    for (const id of t.ids) assert.deepEqual(memory(id), await totals(server.storage.orm, [id]), "memory = storage");
  });

  it("the commit happens, its answer is lost and the outcome can't be read back: both players get one tradeCancelled, are told to reload, removed without writing their items, and reload what storage holds", async () => {
    const t = await onConfirm();
    pool.atWrite = async (client, run) => {
      await run(); // committed
      await pool.terminate(client); // the answer never arrives
      throw new Error("Connection terminated unexpectedly");
    };
    pool.atCheck = async () => {
      throw new Error("Connection terminated unexpectedly"); // and storage can't say what happened
    };
    const closedB = new Promise<number>((resolve) => t.b.ws!.once("close", (code) => resolve(code)));
    const closedA = new Promise<number>((resolve) => t.a.room!.onLeave((code) => resolve(code)));
    t.settle();
    for (const p of [t.a, t.b]) {
      const e = await p.next("tradeError", (d) => d.tradeId === t.tradeId, { after: t.mark });
      assert.equal(e.code, "TRADE_FAILED");
    }
    t.injected();
    assert.equal(await closedB, TRADE_RELOAD_CLOSE_CODE, "B's socket closed with the reload code");
    assert.equal(await closedA, TRADE_RELOAD_CLOSE_CODE, "A's room left with the reload code");
    for (const p of [t.a, t.b]) cancelledOnceBeforeEviction(p, t.tradeId);
    players = players.filter((p) => p !== t.a && p !== t.b); // the server closed both
    await until(() => !server.world.player(t.a.id) && !server.world.player(t.b.id), "both players removed from the world");
    for (const p of [t.a, t.b]) assert.equal(count(p, "tradeCompleted"), 0);
    // Their leave saves (storage works again) have run: progress only, never the items in memory.
    await server.world.queues.drain();
    await roomGone(t.roomId);
    const logins = await server.storage.orm.em
      .fork()
      .getConnection()
      .execute(`select 1 from player_logins where character_id in (?, ?) and ended_at is null`, t.ids);
    assert.equal(logins.length, 0, "both logins closed by the leave");
    assert.deepEqual(await totals(server.storage.orm, t.ids), t.before, "no duplicate");
    assert.deepEqual(
      (await audits(server.storage.orm, [t.tradeId])).map((r) => r.outcome),
      ["completed"],
    );
    const axes = await server.storage.orm.em
      .fork()
      .getConnection()
      .execute(`select character_id from inventory_items where item_id = 'bronze_axe' and character_id = ?`, [t.a.id]);
    assert.equal(axes.length, 0, "A's axe is gone from storage");
    // The next join shows what storage holds.
    const a2 = await sdkPlayer(server, { accountId: t.a.accountId, token: t.a.token, characterId: t.a.id });
    players.push(a2);
    assert.equal(a2.sync().coins, 35);
    assert.equal(
      a2.sync().inventory.some((s: { itemId: string }) => s.itemId === "bronze_axe"),
      false,
    );
  });

  it("nothing committed and storage then unreachable, so the reload fails: both players get one tradeCancelled, are told to reload, disconnected, and reload on their next join", async () => {
    const t = await onConfirm();
    pool.atWrite = async (client, run) => {
      await pool.terminate(client);
      return run(); // fails: nothing committed
    };
    pool.atCheck = async (run) => {
      const rows = await run(); // says: not committed
      pool.down = true; // then storage goes away: the reload of both players fails
      return rows;
    };
    const closedB = new Promise<number>((resolve) => t.b.ws!.once("close", (code) => resolve(code)));
    const closedA = new Promise<number>((resolve) => t.a.room!.onLeave((code) => resolve(code)));
    t.settle();
    for (const p of [t.a, t.b]) {
      const e = await p.next("tradeError", (d) => d.tradeId === t.tradeId, { after: t.mark });
      assert.equal(e.code, "TRADE_FAILED");
    }
    t.injected();
    assert.equal(await closedB, TRADE_RELOAD_CLOSE_CODE);
    assert.equal(await closedA, TRADE_RELOAD_CLOSE_CODE);
    for (const p of [t.a, t.b]) cancelledOnceBeforeEviction(p, t.tradeId);
    await until(() => !server.world.player(t.a.id) && !server.world.player(t.b.id), "both players removed from the world");
    players = players.filter((p) => p !== t.a && p !== t.b);
    pool.down = false;
    await server.world.queues.drain();
    await roomGone(t.roomId);
    assert.deepEqual(await totals(server.storage.orm, t.ids), t.before);
    const a2 = await jsonPlayer(server, { accountId: t.a.accountId, token: t.a.token, characterId: t.a.id });
    players.push(a2);
    assert.equal(a2.sync().coins, 25);
    assert.ok(
      a2.sync().inventory.some((s: { itemId: string }) => s.itemId === "bronze_axe"),
      "A still has its axe",
    );
  });
});
