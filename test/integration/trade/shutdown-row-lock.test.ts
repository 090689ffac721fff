/**
 * Shutdown always saves (docs/persistence.md "Shutdown"): a settlement held on a row lock by another connection
 * does not hold the shutdown hostage. SIGTERM to the real server process: it exits 0 within 10 s,
 * the players' progress is in storage, and the trade did not half-complete.
 *
 * PostgreSQL only (TEST_DATABASE_URL): holding a row lock needs a second connection, which PGlite
 * does not have.
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import type { GameServer } from "../../../src/server/server.js";
import type { Storage } from "../../../src/storage/orm.js";
import { tempWorld, type Child } from "../../helpers/process.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startServerProcess } from "../../helpers/server-process.js";
import { postgresStorage, resetStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import { audits, becomeAdmin, holdCharacterLock, lockWaiters, openTrade, slotOf, teleport, totals, until } from "../../helpers/trade.js";

const SKIP_REASON = "needs PostgreSQL (TEST_DATABASE_URL): a held row lock needs a second connection";

describe(`shutdown with a settlement held on a row lock (${TEST_DATABASE_URL ? "postgresql" : `skipped: ${SKIP_REASON}`})`, function () {
  this.timeout(120_000);
  let pg: Storage;
  let world: string;
  let child: Child | undefined;
  let players: TestPlayer[] = [];

  before(async function () {
    if (!TEST_DATABASE_URL) {
      console.log(`      skipped: ${SKIP_REASON}`);
      this.skip();
    }
    pg = await postgresStorage();
  });
  beforeEach(async () => {
    await resetStorage(pg);
    world = tempWorld();
  });
  afterEach(async () => {
    // The server is gone (or killed now): drop the sockets, no leave handshake to wait for.
    child?.proc.kill("SIGKILL");
    for (const p of players) {
      if (p.room) p.room.connection.close();
      else p.ws?.terminate();
    }
    players = [];
    child = undefined;
    rmSync(world, { recursive: true, force: true });
  });

  /** The real server process on the test database; batched saves far away (only shutdown saves). */
  async function start(): Promise<GameServer> {
    const server = await startServerProcess(world, { TICK_MS: "50", SAVE_INTERVAL: "300" });
    child = server.child;
    return { url: server.url } as GameServer;
  }

  /**
   * a (SDK) and b (plain WebSocket) trade a's axe for 10 coins with a's row locked by another
   * connection, so the settlement waits for the lock; c (not trading) moved, which only memory
   * holds. Resolves once the settlement is waiting for the lock.
   */
  async function heldSettlement(server: GameServer) {
    const a = await sdkPlayer(server);
    const b = await jsonPlayer(server);
    const c = await jsonPlayer(server);
    players.push(a, b, c);
    await becomeAdmin(c);
    await teleport(c, 4, 1);
    const before = await totals(pg.orm, [a.id, b.id]);
    const lock = await holdCharacterLock(pg.orm, a.id);
    const { tradeId } = await openTrade(a, b);
    const m = a.mark();
    a.send("tradeAddItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe"), quantity: 1 });
    b.send("tradeAddItem", { tradeId, coins: 10 });
    const upd = await a.next("tradeUpdated", (d) => d.myOffer.items.length === 1 && d.theirOffer.coins === 10, { after: m });
    await b.next("tradeUpdated", (d) => d.revision === upd.revision, { after: m });
    a.send("tradeAccept", { tradeId, revision: upd.revision });
    b.send("tradeAccept", { tradeId, revision: upd.revision });
    const conf = await a.next("tradeConfirmScreen", (d) => d.tradeId === tradeId, { after: m });
    const mb = b.mark();
    a.send("tradeAccept", { tradeId, revision: conf.revision });
    b.send("tradeAccept", { tradeId, revision: conf.revision });
    await until(async () => (await lockWaiters(pg.orm)) >= 1, "the settlement waiting for a's row lock");
    return { a, b, c, before, lock, tradeId, mb };
  }

  /** SIGTERM; resolves with the exit and how long it took. */
  async function sigterm(): Promise<{ code: number | null; ms: number }> {
    const t0 = performance.now();
    const { code } = await child!.stop("SIGTERM");
    return { code, ms: performance.now() - t0 };
  }

  async function positionOf(id: string) {
    const rows = await pg.orm.em.fork().getConnection().execute(`select position_x, position_z from characters where id = ?`, [id]);
    return { x: Number(rows[0].position_x), z: Number(rows[0].position_z) };
  }

  it("the lock is released once shutdown has ended the trade: exit 0 within 10 s, every player saved, the trade cancelled and audited once", async () => {
    const server = await start();
    const { a, b, c, before, lock, tradeId, mb } = await heldSettlement(server);
    const exit = sigterm();
    // Shutdown abandons the held settlement: the trade ends (server_error) while the lock is held.
    const cancelled = await b.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: mb, timeoutMs: 10_000 });
    assert.equal(cancelled.reason, "server_error");
    await lock.release();
    const { code, ms } = await exit;
    assert.equal(code, 0, child!.output());
    assert.ok(ms < 10_000, `exited after ${Math.round(ms)} ms`);
    console.log(`      exited 0 after ${Math.round(ms)} ms`);
    assert.match(child!.output(), /abandoning its settlement/);
    assert.deepEqual(await positionOf(c.id), { x: 4, z: 1 }, "c's move, held only in memory, was saved at shutdown");
    assert.deepEqual(await totals(pg.orm, [a.id, b.id]), before, "nothing moved: the trade did not complete, not even half");
    assert.deepEqual(
      (await audits(pg.orm, [tradeId])).map((r) => [r.outcome, r.reason]),
      [["cancelled", "server_error"]],
      "one audit record",
    );
    const open = await pg.orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int n from player_logins where character_id in (?, ?, ?) and ended_at is null`, [a.id, b.id, c.id]);
    assert.equal(open[0].n, 0, "every login closed");
  });

  it("the lock is held until after the process exits: still exit 0 within 10 s, the other players saved, the trade not completed", async () => {
    const server = await start();
    const { a, b, c, before, lock, tradeId } = await heldSettlement(server);
    try {
      const { code, ms } = await sigterm();
      assert.equal(code, 0, child!.output());
      assert.ok(ms < 10_000, `exited after ${Math.round(ms)} ms`);
      console.log(`      exited 0 after ${Math.round(ms)} ms`);
    } finally {
      await lock.release();
    }
    assert.deepEqual(await positionOf(c.id), { x: 4, z: 1 }, "c's move was saved at shutdown");
    assert.deepEqual(await totals(pg.orm, [a.id, b.id]), before, "nothing moved");
    const rows = await audits(pg.orm, [tradeId]);
    assert.ok(
      rows.every((r) => r.outcome === "cancelled"),
      `never completed: ${JSON.stringify(rows)}`,
    );
  });
});
