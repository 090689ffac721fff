/**
 * How trades change and end, over a real socket: every offer change clears both acceptances, and
 * every way a trade ends without completing — decline, cancel (pending, offer, confirmation
 * screen), time-outs, disconnects, death, moving — sends exactly ONE `tradeCancelled` to each
 * player who knew of it and is still connected, and leaves one audit record when the trade had
 * reached the offer screen. Counts are taken after the trade room is gone and after a round trip
 * through each player's connection, so a late duplicate would be counted.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { pgliteStorage, postgresStorage, resetStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import { audits, count, holdCharacterLock, lockWaiters, marker, openTrade, requestTrade, roomGone, slotOf, until } from "../../helpers/trade.js";

/** Shared set-up of one server per describe block. */
function useServer(env: NodeJS.ProcessEnv = {}) {
  const ctx = {
    server: undefined as unknown as GameServer,
    players: [] as TestPlayer[],
    async join(kind: "sdk" | "json" = "sdk") {
      const p = kind === "sdk" ? await sdkPlayer(ctx.server) : await jsonPlayer(ctx.server);
      ctx.players.push(p);
      return p;
    },
    async leave(p: TestPlayer) {
      ctx.players = ctx.players.filter((x) => x !== p);
      await p.close();
    },
    /**
     * The trade has ended with `reason`: its room (if any) is gone, each connected player got
     * exactly one `tradeCancelled` for it, and the audit says so when the offer screen was reached.
     */
    async ended(tradeId: string, reason: string, opts: { roomId?: string; connected: TestPlayer[]; audited: boolean }) {
      for (const p of opts.connected) await p.next("tradeCancelled", (d) => d.tradeId === tradeId);
      if (opts.roomId) await roomGone(opts.roomId);
      for (const p of opts.connected) await marker(p);
      for (const p of opts.connected) {
        const got = p.received.filter((r) => r.event === "tradeCancelled" && r.data.tradeId === tradeId).map((r) => r.data);
        assert.equal(got.length, 1, `${p.id} got ${got.length} tradeCancelled for ${tradeId}`);
        assert.equal(got[0].reason, reason);
        assert.equal(typeof got[0].message, "string");
        assert.ok(got[0].message.length > 0);
      }
      const rows = await audits(ctx.server.storage.orm, [tradeId]);
      if (opts.audited) {
        assert.equal(rows.length, 1, "one audit record");
        assert.equal(rows[0]!.outcome, "cancelled");
        assert.equal(rows[0]!.reason, reason);
      } else assert.equal(rows.length, 0, "no audit record for a request that never opened");
      for (const p of opts.connected) {
        assert.equal(ctx.server.world.player(p.id)?.tradeId, undefined, "the player is free again");
        assert.equal(ctx.server.trades.tradeOf(p.id), undefined);
      }
    },
  };
  before(async () => {
    await resetStorage(await pgliteStorage());
    ctx.server = await startTestServer({ DISABLE_RATE_LIMIT: "true", ...env });
  });
  after(async () => ctx.server?.close());
  afterEach(async () => {
    await Promise.all(ctx.players.map((p) => p.close()));
    ctx.players = [];
  });
  return ctx;
}

/** Put a trade on the confirmation screen (A offers its axe). */
async function toConfirm(a: TestPlayer, b: TestPlayer, tradeId: string) {
  const m = a.mark();
  a.send("tradeAddItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe"), quantity: 1 });
  const upd = await a.next("tradeUpdated", () => true, { after: m });
  a.send("tradeAccept", { tradeId, revision: upd.revision });
  b.send("tradeAccept", { tradeId, revision: upd.revision });
  await a.next("tradeConfirmScreen", () => true, { after: m });
  await b.next("tradeConfirmScreen", (d) => d.tradeId === tradeId);
}

describe("trade: offer changes clear both acceptances", function () {
  this.timeout(30_000);
  const t = useServer();

  it("any change by either player — add, replace, remove, coins — clears both and bumps the revision; a repeat changes nothing", async () => {
    const a = await t.join();
    const b = await t.join("json");
    const { tradeId } = await openTrade(a, b);
    const axe = slotOf(a, "bronze_axe");
    const shrimpSlot = slotOf(b, "shrimp");
    let revision = 0;

    /** `who` accepts; then `change` happens; both see revision + 1 and nobody accepted. */
    const acceptThenChange = async (who: TestPlayer, change: () => void, label: string) => {
      const other = who === a ? b : a;
      const mw = who.mark();
      const mo = other.mark();
      who.send("tradeAccept", { tradeId, revision });
      // Both connections have delivered the acceptance before the change is made.
      await who.next("tradeUpdated", (d) => d.myOffer.accepted === true, { after: mw });
      await other.next("tradeUpdated", (d) => d.theirOffer.accepted === true, { after: mo });
      const ma = a.mark();
      const mb = b.mark();
      change();
      for (const [p, mk] of [
        [a, ma],
        [b, mb],
      ] as const) {
        const upd = await p.next("tradeUpdated", () => true, { after: mk });
        assert.equal(upd.revision, revision + 1, `${label}: revision`);
        assert.equal(upd.myOffer.accepted, false, `${label}: my acceptance cleared`);
        assert.equal(upd.theirOffer.accepted, false, `${label}: their acceptance cleared`);
      }
      revision++;
    };

    await acceptThenChange(a, () => a.send("tradeAddItem", { tradeId, inventorySlot: axe, quantity: 1 }), "A adds, A had accepted");
    await acceptThenChange(a, () => b.send("tradeAddItem", { tradeId, coins: 5 }), "B adds coins, A had accepted");
    await acceptThenChange(b, () => b.send("tradeAddItem", { tradeId, inventorySlot: shrimpSlot, quantity: 1 }), "B adds, B had accepted");
    await acceptThenChange(b, () => a.send("tradeRemoveItem", { tradeId, inventorySlot: axe }), "A removes, B had accepted");
    await acceptThenChange(a, () => b.send("tradeAddItem", { tradeId, coins: 0 }), "B removes coins, A had accepted");
    await acceptThenChange(b, () => b.send("tradeRemoveItem", { tradeId, inventorySlot: shrimpSlot }), "B removes, B had accepted");

    // Setting an offer to what it already is changes nothing.
    const m = a.mark();
    b.send("tradeAddItem", { tradeId, coins: 0 });
    await marker(b);
    await marker(a);
    assert.equal(
      count(a, "tradeUpdated", () => true, m),
      0,
    );

    // Both accepting now reaches the confirmation screen with empty offers cleared for re-acceptance.
    a.send("tradeAccept", { tradeId, revision });
    b.send("tradeAccept", { tradeId, revision });
    const conf = await a.next("tradeConfirmScreen", () => true, { after: m });
    assert.equal(conf.revision, revision + 1, "the confirmation screen is a new revision");
    assert.equal(conf.myOffer.accepted, false);
    assert.equal(conf.theirOffer.accepted, false);
  });
});

describe("trade: every ending sends exactly one tradeCancelled per player", function () {
  this.timeout(30_000);
  const t = useServer();

  it("declined (pending): both told once, no audit", async () => {
    const a = await t.join();
    const b = await t.join();
    const tradeId = await requestTrade(a, b);
    b.send("tradeRequestRespond", { tradeId, accept: false });
    await t.ended(tradeId, "declined", { connected: [a, b], audited: false });
  });

  it("cancelled while pending, by the requester and by the target", async () => {
    const a = await t.join();
    const b = await t.join();
    const c = await t.join();
    const t1 = await requestTrade(a, b);
    a.send("tradeCancel", { tradeId: t1 });
    await t.ended(t1, "cancelled", { connected: [a, b], audited: false });
    const t2 = await requestTrade(a, c);
    c.send("tradeCancel", { tradeId: t2 });
    await t.ended(t2, "cancelled", { connected: [a, c], audited: false });
  });

  it("cancelled on the offer screen (repeated cancels change nothing)", async () => {
    const a = await t.join();
    const b = await t.join();
    const { tradeId, roomId } = await openTrade(a, b);
    a.send("tradeAddItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe"), quantity: 1 });
    await b.next("tradeUpdated", (d) => d.theirOffer.items.length === 1);
    a.send("tradeCancel", { tradeId });
    a.send("tradeCancel", { tradeId });
    b.send("tradeCancel", { tradeId });
    await t.ended(tradeId, "cancelled", { roomId, connected: [a, b], audited: true });
    const [row] = await t.server.storage.orm.em.fork().getConnection().execute("select offer_a, offer_b from trade_audits where id = ?", [tradeId]);
    const offerA = typeof row.offer_a === "string" ? JSON.parse(row.offer_a) : row.offer_a;
    assert.deepEqual(
      offerA.items.map((l: any) => l.itemId),
      ["bronze_axe"],
    );
  });

  it("cancelled on the confirmation screen", async () => {
    const a = await t.join();
    const b = await t.join();
    const { tradeId, roomId } = await openTrade(a, b);
    await toConfirm(a, b, tradeId);
    b.send("tradeCancel", { tradeId });
    await t.ended(tradeId, "cancelled", { roomId, connected: [a, b], audited: true });
  });

  it("disconnected: a plain-WebSocket player's socket closes on the offer screen", async () => {
    const a = await t.join();
    const b = await t.join("json");
    const { tradeId, roomId } = await openTrade(a, b);
    await t.leave(b);
    await t.ended(tradeId, "disconnected", { roomId, connected: [a], audited: true });
  });

  it("disconnected: an SDK player leaves on the confirmation screen", async () => {
    const a = await t.join();
    const b = await t.join();
    const { tradeId, roomId } = await openTrade(a, b);
    await toConfirm(a, b, tradeId);
    await t.leave(a);
    await t.ended(tradeId, "disconnected", { roomId, connected: [b], audited: true });
  });

  it("disconnected: the target of a pending request leaves", async () => {
    const a = await t.join();
    const b = await t.join();
    const tradeId = await requestTrade(a, b);
    await t.leave(b);
    await t.ended(tradeId, "disconnected", { connected: [a], audited: false });
  });

  it("player_died: a trader dies on the offer screen (both told, the dead one too)", async () => {
    const a = await t.join();
    const b = await t.join();
    const { tradeId, roomId } = await openTrade(a, b);
    const m = b.mark();
    t.server.world.killPlayer(t.server.world.player(b.id)!, "test");
    await t.ended(tradeId, "player_died", { roomId, connected: [a, b], audited: true });
    await b.next("chat:message", (d) => /you are dead/i.test(d.text), { after: m });
  });

  it("invalid_items: the re-check under the lock fails (storage changed behind the trade); memory follows storage", async () => {
    const a = await t.join();
    const b = await t.join("json");
    const { tradeId, roomId } = await openTrade(a, b);
    const slot = slotOf(a, "bronze_axe");
    await toConfirm(a, b, tradeId);
    // Storage no longer holds the offered axe (as after an operator's fix-up): only the settlement sees it.
    await t.server.storage.orm.em
      .fork()
      .getConnection()
      .execute(`update inventory_items set item_id = 'bronze_pickaxe' where character_id = ? and slot = ?`, [a.id, slot]);
    const conf = a.received.filter((r) => r.event === "tradeConfirmScreen" && r.data.tradeId === tradeId).at(-1)!.data;
    a.send("tradeAccept", { tradeId, revision: conf.revision });
    b.send("tradeAccept", { tradeId, revision: conf.revision });
    await t.ended(tradeId, "invalid_items", { roomId, connected: [a, b], audited: true });
    for (const p of [a, b])
      assert.equal(
        count(p, "tradeCompleted", (d) => d.tradeId === tradeId),
        0,
      );
    const held = t.server.world.player(a.id)!.inventory[slot];
    assert.equal(held?.itemId, "bronze_pickaxe", "A's memory was reloaded from storage");
  });

  it("events sent right after accepting the request reach the new trade (routed before tradeStarted goes out)", async () => {
    const a = await t.join();
    const b = await t.join("json");
    const tradeId = await requestTrade(a, b);
    const mb = b.mark();
    // One burst: the answer and the first offer leave together.
    b.send("tradeRequestRespond", { tradeId, accept: true });
    b.send("tradeAddItem", { tradeId, coins: 5 });
    const upd = await a.next("tradeUpdated", (d) => d.tradeId === tradeId && d.theirOffer.coins === 5);
    assert.equal(upd.revision, 1);
    await marker(b);
    assert.equal(
      count(b, "tradeError", () => true, mb),
      0,
      "no spurious INVALID_TRADE",
    );
  });

  it("disconnected: the target leaves right after accepting the request (the trade ends at once, not after 5 minutes)", async () => {
    const a = await t.join();
    const b = await t.join("json");
    const tradeId = await requestTrade(a, b);
    const ma = a.mark();
    b.send("tradeRequestRespond", { tradeId, accept: true });
    await t.leave(b);
    const started = await a.next("tradeStarted", (d) => d.tradeId === tradeId, { after: ma });
    await t.ended(tradeId, "disconnected", { roomId: started.roomId, connected: [a], audited: true });
  });

  it("moved_away: a trader walks on the offer screen", async () => {
    const a = await t.join();
    const b = await t.join();
    const { tradeId, roomId } = await openTrade(a, b);
    const s = t.server.content.spawn;
    const to = [
      [1, 0],
      [0, 1],
      [-1, 0],
      [0, -1],
    ]
      .map(([dx, dz]) => ({ x: s.x + dx!, z: s.z + dz! }))
      .find((p) => !t.server.content.isBlocked(p.x, p.z))!;
    a.send("player:move", to);
    await t.ended(tradeId, "moved_away", { roomId, connected: [a, b], audited: true });
  });

  it("moved_away: the requester walks while the request is pending", async () => {
    const a = await t.join();
    const b = await t.join();
    const tradeId = await requestTrade(a, b);
    const s = t.server.content.spawn;
    const to = [
      [1, 1],
      [-1, -1],
      [1, -1],
      [-1, 1],
    ]
      .map(([dx, dz]) => ({ x: s.x + dx!, z: s.z + dz! }))
      .find((p) => !t.server.content.isBlocked(p.x, p.z))!;
    a.send("player:move", to);
    await t.ended(tradeId, "moved_away", { connected: [a, b], audited: false });
  });
});

describe("trade: time-outs (short TRADE_REQUEST_TIMEOUT_MS)", function () {
  this.timeout(30_000);
  const t = useServer({ TRADE_REQUEST_TIMEOUT_MS: "300" });

  it("a pending request nobody answers times out: both told once", async () => {
    const a = await t.join();
    const b = await t.join();
    const tradeId = await requestTrade(a, b);
    await t.ended(tradeId, "timeout", { connected: [a, b], audited: false });
    // An answer after the time-out is refused.
    const m = b.mark();
    b.send("tradeRequestRespond", { tradeId, accept: true });
    const e = await b.next("tradeError", () => true, { after: m });
    assert.equal(e.code, "INVALID_TRADE");
  });
});

describe("trade: time-outs (short TRADE_INACTIVITY_TIMEOUT_MS)", function () {
  this.timeout(30_000);
  const t = useServer({ TRADE_INACTIVITY_TIMEOUT_MS: "1000" });

  it("an open trade without activity times out on the offer screen", async () => {
    const a = await t.join();
    const b = await t.join();
    const { tradeId, roomId } = await openTrade(a, b);
    await t.ended(tradeId, "timeout", { roomId, connected: [a, b], audited: true });
  });

  it("and on the confirmation screen", async () => {
    const a = await t.join();
    const b = await t.join();
    const { tradeId, roomId } = await openTrade(a, b);
    await toConfirm(a, b, tradeId);
    await t.ended(tradeId, "timeout", { roomId, connected: [a, b], audited: true });
  });
});

describe("trade: shutdown cancels every open trade (server_error)", function () {
  this.timeout(30_000);

  it("each player of an open trade (offer or confirmation screen) and of a pending request gets exactly one tradeCancelled server_error; open trades are audited", async () => {
    const storage = await pgliteStorage();
    await resetStorage(storage);
    const server = await startTestServer({ DISABLE_RATE_LIMIT: "true" }, storage);
    let closed = false;
    try {
      const [a, b, c, d, e, f] = [
        await sdkPlayer(server),
        await jsonPlayer(server),
        await jsonPlayer(server),
        await jsonPlayer(server),
        await jsonPlayer(server),
        await jsonPlayer(server),
      ] as TestPlayer[];
      const offer = await openTrade(a!, b!);
      const confirm = await openTrade(c!, d!);
      await toConfirm(c!, d!, confirm.tradeId);
      const pending = await requestTrade(e!, f!);
      // Everything sent before a connection closed has arrived once its close is seen.
      const gone = [a, b, c, d, e, f].map((p) =>
        p!.kind === "sdk" ? new Promise<void>((r) => p!.room!.onLeave(() => r())) : new Promise<void>((r) => p!.ws!.once("close", () => r())),
      );
      await server.close();
      closed = true;
      await Promise.all(gone);
      for (const [p, tradeId] of [
        [a, offer.tradeId],
        [b, offer.tradeId],
        [c, confirm.tradeId],
        [d, confirm.tradeId],
        [e, pending],
        [f, pending],
      ] as const) {
        const got = p!.received.filter((r) => r.event === "tradeCancelled" && r.data.tradeId === tradeId).map((r) => r.data);
        assert.equal(got.length, 1, `${p!.id}: one tradeCancelled for ${tradeId}`);
        assert.equal(got[0].reason, "server_error");
      }
      const rows = await audits(storage.orm, [offer.tradeId, confirm.tradeId, pending]);
      assert.deepEqual(
        rows.map((r) => [r.id, r.outcome, r.reason]).sort(),
        [
          [offer.tradeId, "cancelled", "server_error"],
          [confirm.tradeId, "cancelled", "server_error"],
        ].sort(),
        "the open trades are audited before shutdown completes; the request that never opened is not",
      );
    } finally {
      if (!closed) await server.close();
    }
  });
});

describe("trade: the room always ends, whatever fails after the settlement", function () {
  const t = useServer();

  it("a player:sync that throws after the commit: both still get tradeCompleted, are freed, and the room closes", async () => {
    const a = await t.join("sdk");
    const b = await t.join("json");
    const { tradeId, roomId } = await openTrade(a, b);
    await toConfirm(a, b, tradeId);
    // Fault injection: B's next player:sync throws (the last thing the room does after a commit).
    const pb = t.server.world.player(b.id)!;
    const sync = pb.sync;
    let thrown = 0;
    pb.sync = () => {
      pb.sync = sync;
      thrown++;
      throw new Error("player:sync failed (injected by the test)");
    };
    a.send("tradeAccept", { tradeId });
    b.send("tradeAccept", { tradeId });
    for (const p of [a, b]) await p.next("tradeCompleted", (d) => d.tradeId === tradeId);
    await roomGone(roomId);
    assert.equal(thrown, 1, "the injected failure happened");
    for (const p of [a, b]) {
      assert.equal(t.server.world.player(p.id)?.tradeId, undefined, "the player is free again");
      assert.equal(t.server.trades.tradeOf(p.id), undefined);
    }
    assert.deepEqual(
      (await audits(t.server.storage.orm, [tradeId])).map((r) => r.outcome),
      ["completed"],
    );
  });
});

describe("trade: shutdown while a settlement runs (postgresql)", function () {
  this.timeout(60_000);

  it("requests during shutdown are refused (TRADE_FAILED) and start nothing; shutdown waits for the settlement, whose trade is the only one audited", async function () {
    if (!TEST_DATABASE_URL) return this.skip(); // A settlement held on a row lock needs PostgreSQL's own connections.
    const storage = await postgresStorage();
    await resetStorage(storage);
    const server = await startTestServer({ DISABLE_RATE_LIMIT: "true" }, storage);
    let closing: Promise<void> | undefined;
    let lock: { release: () => Promise<void> } | undefined;
    try {
      const [a, b, c, d] = [await sdkPlayer(server), await jsonPlayer(server), await jsonPlayer(server), await jsonPlayer(server)] as TestPlayer[];
      const { tradeId } = await openTrade(a!, b!);
      await toConfirm(a!, b!, tradeId);
      // A's character row is held: the settlement waits for it, and shutdown waits for the settlement.
      lock = await holdCharacterLock(storage.orm, a!.id);
      const base = await lockWaiters(storage.orm);
      a!.send("tradeAccept", { tradeId });
      b!.send("tradeAccept", { tradeId });
      await until(async () => (await lockWaiters(storage.orm)) > base, "the settlement to wait for A's row");
      closing = server.close();
      const mc = c!.mark();
      const md = d!.mark();
      c!.send("tradeRequest", { targetPlayerId: d!.id });
      const answer = await Promise.race([
        c!.next("tradeError", () => true, { after: mc }).then((e) => `tradeError ${e.code} ${e.message}`),
        d!.next("tradeIncoming", () => true, { after: md }).then(() => "tradeIncoming"),
      ]);
      assert.equal(answer, "tradeError TRADE_FAILED The server is shutting down.");
      await marker(d!);
      assert.equal(
        count(d!, "tradeIncoming", () => true, md),
        0,
        "the target heard of no request",
      );
      await lock.release();
      lock = undefined;
      await closing;
      for (const p of [a!, b!]) {
        assert.equal(
          count(p, "tradeCompleted", (x) => x.tradeId === tradeId),
          1,
          "the settling trade completed",
        );
        assert.equal(
          count(p, "tradeCancelled", (x) => x.tradeId === tradeId),
          0,
        );
      }
      for (const p of [c!, d!]) {
        assert.equal(count(p, "tradeStarted"), 0);
        assert.equal(count(p, "tradeCancelled"), 0);
      }
      assert.deepEqual(
        (await audits(storage.orm)).map((r) => [r.id, r.outcome]),
        [[tradeId, "completed"]],
        "only the settled trade is audited",
      );
    } finally {
      await lock?.release();
      await (closing ?? server.close());
    }
  });
});
