/**
 * Every refusal of docs/trading.md#error-codes over a real socket (SDK clients, and the plain-WebSocket
 * adapter where JSON matters): requests (too far, self, offline, dead, busy, already trading,
 * ignored, cooldown) and offers (untradeable, bad or empty slot, every bad quantity, coins, frozen
 * offers, stale revisions, INVENTORY_FULL on the offer screen). Each waits for the answering event.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { pgliteStorage, resetStorage } from "../../helpers/storage.js";
import { becomeAdmin, count, emptySlot, expectError, give, marker, openTrade, requestTrade, setCoins, slotOf, teleport, until } from "../../helpers/trade.js";

describe("trade: refusals (docs/trading.md)", function () {
  this.timeout(30_000);
  let server: GameServer;
  let players: TestPlayer[] = [];

  before(async () => {
    await resetStorage(await pgliteStorage());
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  });
  after(async () => server?.close());
  afterEach(async () => {
    await Promise.all(players.map((p) => p.close()));
    players = [];
  });

  const join = async (kind: "sdk" | "json" = "sdk") => {
    const p = kind === "sdk" ? await sdkPlayer(server) : await jsonPlayer(server);
    players.push(p);
    return p;
  };
  const leave = async (p: TestPlayer) => {
    players = players.filter((x) => x !== p);
    await p.close();
  };
  /** A free tile `d` tiles (Chebyshev) from the spawn. */
  const tileAt = (d: number) => {
    const s = server.content.spawn;
    for (const [dx, dz] of [
      [d, 0],
      [-d, 0],
      [0, d],
      [0, -d],
      [d, d],
      [-d, -d],
    ]) {
      const x = s.x + dx!;
      const z = s.z + dz!;
      if (server.content.inBounds(x, z) && !server.content.isBlocked(x, z)) return { x, z };
    }
    throw new Error(`no free tile ${d} from the spawn`);
  };

  describe("tradeRequest", () => {
    it("TOO_FAR at 3 tiles (Chebyshev), allowed at 2", async () => {
      const a = await join();
      const b = await join();
      await becomeAdmin(a);
      const far = tileAt(3);
      await teleport(a, far.x, far.z);
      await expectError(a, "tradeRequest", { targetPlayerId: b.id }, "TOO_FAR");
      assert.equal(count(b, "tradeIncoming"), 0);
      const near = tileAt(2);
      await teleport(a, near.x, near.z);
      const tradeId = await requestTrade(a, b);
      assert.ok(tradeId);
    });

    it("SELF_TRADE", async () => {
      const a = await join();
      await expectError(a, "tradeRequest", { targetPlayerId: a.id }, "SELF_TRADE");
    });

    it("PLAYER_OFFLINE for an unknown id and for a player who left", async () => {
      const a = await join();
      const b = await join();
      await expectError(a, "tradeRequest", { targetPlayerId: "no-such-character" }, "PLAYER_OFFLINE");
      await leave(b);
      await until(() => !server.world.isOnline(b.id), "b offline");
      await expectError(a, "tradeRequest", { targetPlayerId: b.id }, "PLAYER_OFFLINE");
    });

    it("PLAYER_DEAD when either player is dead", async () => {
      const a = await join();
      const b = await join();
      const pb = server.world.player(b.id)!;
      // The world's flag, held for the duration of the check (a real death resolves within ms).
      pb.dead = true;
      try {
        await expectError(a, "tradeRequest", { targetPlayerId: b.id }, "PLAYER_DEAD");
        await expectError(b, "tradeRequest", { targetPlayerId: a.id }, "PLAYER_DEAD");
      } finally {
        pb.dead = false;
      }
    });

    it("busy: PLAYER_BUSY for a target already trading or asking, ALREADY_IN_TRADE for a requester already trading", async () => {
      const a = await join();
      const b = await join();
      const c = await join();
      const d = await join();
      // A pending request counts for its requester.
      const pending = await requestTrade(c, d);
      await expectError(a, "tradeRequest", { targetPlayerId: c.id }, "PLAYER_BUSY");
      await expectError(c, "tradeRequest", { targetPlayerId: a.id }, "ALREADY_IN_TRADE");
      c.send("tradeCancel", { tradeId: pending });
      await c.next("tradeCancelled", (x) => x.tradeId === pending);
      // An open trade counts for both.
      await openTrade(a, b);
      await expectError(c, "tradeRequest", { targetPlayerId: a.id }, "PLAYER_BUSY");
      await expectError(c, "tradeRequest", { targetPlayerId: b.id }, "PLAYER_BUSY");
      await expectError(a, "tradeRequest", { targetPlayerId: c.id }, "ALREADY_IN_TRADE");
      await expectError(b, "tradeRequest", { targetPlayerId: d.id }, "ALREADY_IN_TRADE");
    });

    it("only one request at a time even when two are sent in the same breath", async () => {
      const a = await join();
      const b = await join();
      const c = await join();
      const m = a.mark();
      a.send("tradeRequest", { targetPlayerId: b.id });
      a.send("tradeRequest", { targetPlayerId: c.id });
      await a.next("tradeError", (e) => e.code === "ALREADY_IN_TRADE", { after: m });
      await marker(b);
      await marker(c);
      assert.equal(count(b, "tradeIncoming") + count(c, "tradeIncoming"), 1);
    });

    it("ignored: the requester is told PLAYER_BUSY and the target receives nothing", async () => {
      const a = await join();
      const b = await join();
      await server.storage.orm.em
        .fork()
        .getConnection()
        .execute("insert into ignore_entries (account_id, ignored_character_id, created_at) values (?, ?, now())", [b.accountId, a.id]);
      assert.ok(server.world.deps.social, "the world's social port is wired");
      server.world.access.socialChanged([b.id, a.id]);
      await expectError(a, "tradeRequest", { targetPlayerId: b.id }, "PLAYER_BUSY");
      await marker(b);
      assert.equal(count(b, "tradeIncoming"), 0);
      // The other direction is not ignored.
      const tradeId = await requestTrade(b, a);
      assert.ok(tradeId);
    });

    it("RATE_LIMITED when the same pair asks again within 3 s (either direction)", async () => {
      const a = await join();
      const b = await join();
      const tradeId = await requestTrade(a, b);
      b.send("tradeRequestRespond", { tradeId, accept: false });
      await a.next("tradeCancelled", (d) => d.tradeId === tradeId && d.reason === "declined");
      await expectError(a, "tradeRequest", { targetPlayerId: b.id }, "RATE_LIMITED");
      await expectError(b, "tradeRequest", { targetPlayerId: a.id }, "RATE_LIMITED");
      // Another pair is not limited.
      const c = await join();
      assert.ok(await requestTrade(a, c));
    });

    it("INVALID_REQUEST for a payload without a target; INVALID_TRADE for unknown trades and answers by the requester", async () => {
      const a = await join("json");
      const b = await join();
      await expectError(a, "tradeRequest", {}, "INVALID_REQUEST");
      await expectError(a, "tradeAccept", { tradeId: "nope" }, "INVALID_TRADE");
      const tradeId = await requestTrade(a, b);
      await expectError(a, "tradeRequestRespond", { tradeId, accept: true }, "INVALID_TRADE");
      await expectError(b, "tradeAddItem", { tradeId, coins: 1 }, "INVALID_TRADE");
    });
  });

  describe("offers", () => {
    it("UNTRADEABLE_ITEM for untradeable items (single and stackable)", async () => {
      const a = await join();
      const b = await join();
      await becomeAdmin(a);
      await give(a, "mysterious_letter");
      await give(a, "ridge_token", 5);
      const { tradeId } = await openTrade(a, b);
      await expectError(a, "tradeAddItem", { tradeId, inventorySlot: slotOf(a, "mysterious_letter"), quantity: 1 }, "UNTRADEABLE_ITEM");
      await expectError(a, "tradeAddItem", { tradeId, inventorySlot: slotOf(a, "ridge_token"), quantity: 2 }, "UNTRADEABLE_ITEM");
    });

    it("INVALID_SLOT for a slot outside 0..27, a non-integer slot, an empty slot, and removing a slot not offered", async () => {
      const a = await join();
      const b = await join();
      const { tradeId } = await openTrade(a, b);
      for (const inventorySlot of [28, -1, 1.5, "0", null]) await expectError(a, "tradeAddItem", { tradeId, inventorySlot, quantity: 1 }, "INVALID_SLOT");
      await expectError(a, "tradeAddItem", { tradeId, inventorySlot: emptySlot(a), quantity: 1 }, "INVALID_SLOT");
      await expectError(a, "tradeRemoveItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe") }, "INVALID_SLOT");
      await expectError(a, "tradeRemoveItem", { tradeId, inventorySlot: 99 }, "INVALID_SLOT");
    });

    it("INVALID_QUANTITY for 0, negative, fractional, more than held, NaN, Infinity, string, missing (SDK)", async () => {
      const a = await join();
      const b = await join();
      await becomeAdmin(a);
      await give(a, "feather", 10);
      const { tradeId } = await openTrade(a, b);
      const axe = slotOf(a, "bronze_axe");
      const feathers = slotOf(a, "feather");
      for (const quantity of [0, -1, 0.5, 1.5, 2, Number.NaN, Number.POSITIVE_INFINITY, "1", null, undefined])
        await expectError(a, "tradeAddItem", { tradeId, inventorySlot: axe, quantity }, "INVALID_QUANTITY");
      await expectError(a, "tradeAddItem", { tradeId, inventorySlot: feathers, quantity: 11 }, "INVALID_QUANTITY");
      await expectError(a, "tradeAddItem", { tradeId, inventorySlot: feathers, quantity: 2.5 }, "INVALID_QUANTITY");
      // Nothing was offered by any of that.
      assert.equal(count(b, "tradeUpdated"), 0);
      // The whole stack is fine.
      const m = b.mark();
      a.send("tradeAddItem", { tradeId, inventorySlot: feathers, quantity: 10 });
      const upd = await b.next("tradeUpdated", () => true, { after: m });
      assert.deepEqual(upd.theirOffer.items, [{ inventorySlot: feathers, itemId: "feather", quantity: 10 }]);
    });

    it("INVALID_QUANTITY over the plain WebSocket: null for NaN, strings, and bad coins", async () => {
      const a = await join("json");
      const b = await join();
      const { tradeId } = await openTrade(a, b);
      const axe = slotOf(a, "bronze_axe");
      // eslint-disable-next-line no-loss-of-precision -- the literal is meant to overflow to Infinity
      for (const quantity of [null, "NaN", "1", 0, -3, 1.25, 2, 1e400])
        await expectError(a, "tradeAddItem", { tradeId, inventorySlot: axe, quantity }, "INVALID_QUANTITY");
      // Starter coins are 25.
      for (const coins of [26, -1, 0.5, "5", null, 2147483648]) await expectError(a, "tradeAddItem", { tradeId, coins }, "INVALID_QUANTITY");
      const m = b.mark();
      a.send("tradeAddItem", { tradeId, coins: 25 });
      const upd = await b.next("tradeUpdated", () => true, { after: m });
      assert.equal(upd.theirOffer.coins, 25);
    });

    it("STALE_OFFER for an accept naming an old revision", async () => {
      const a = await join();
      const b = await join();
      const { tradeId } = await openTrade(a, b);
      const m = b.mark();
      a.send("tradeAddItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe"), quantity: 1 });
      const upd = await b.next("tradeUpdated", () => true, { after: m });
      assert.equal(upd.revision, 1);
      await expectError(b, "tradeAccept", { tradeId, revision: 0 }, "STALE_OFFER");
      await expectError(b, "tradeAccept", { tradeId, revision: 7 }, "STALE_OFFER");
      const ma = a.mark();
      b.send("tradeAccept", { tradeId, revision: 1 });
      const acc = await a.next("tradeUpdated", (d) => d.theirOffer.accepted === true, { after: ma });
      assert.equal(acc.revision, 1);
    });

    it("OFFER_FROZEN for every offer change on the confirmation screen", async () => {
      const a = await join();
      const b = await join();
      const { tradeId } = await openTrade(a, b);
      const axe = slotOf(a, "bronze_axe");
      let m = b.mark();
      a.send("tradeAddItem", { tradeId, inventorySlot: axe, quantity: 1 });
      const upd = await b.next("tradeUpdated", () => true, { after: m });
      m = a.mark();
      a.send("tradeAccept", { tradeId, revision: upd.revision });
      b.send("tradeAccept", { tradeId, revision: upd.revision });
      await a.next("tradeConfirmScreen", () => true, { after: m });
      m = a.mark();
      await expectError(a, "tradeAddItem", { tradeId, inventorySlot: slotOf(a, "tinderbox"), quantity: 1 }, "OFFER_FROZEN");
      await expectError(a, "tradeAddItem", { tradeId, inventorySlot: axe, quantity: 1 }, "OFFER_FROZEN");
      await expectError(a, "tradeAddItem", { tradeId, coins: 5 }, "OFFER_FROZEN");
      await expectError(a, "tradeRemoveItem", { tradeId, inventorySlot: axe }, "OFFER_FROZEN");
      await expectError(b, "tradeAddItem", { tradeId, coins: 1 }, "OFFER_FROZEN");
      await marker(a);
      assert.equal(
        count(a, "tradeUpdated", () => true, m),
        0,
      );
    });

    it("NOT_IN_TRADE for a player outside the trade", async () => {
      const a = await join();
      const b = await join();
      const c = await join();
      const { tradeId } = await openTrade(a, b);
      await expectError(c, "tradeAddItem", { tradeId, coins: 1 }, "NOT_IN_TRADE");
      await expectError(c, "tradeAccept", { tradeId }, "NOT_IN_TRADE");
      await expectError(c, "tradeCancel", { tradeId }, "NOT_IN_TRADE");
    });

    it("INVENTORY_FULL on the offer screen goes to both and keeps the offer screen; slots the offer empties count", async () => {
      const a = await join();
      const b = await join();
      await becomeAdmin(b);
      await give(b, "logs", 21); // 7 starter slots + 21 = 28
      assert.equal(b.sync().inventory.length, 28);
      const { tradeId } = await openTrade(a, b);
      let m = b.mark();
      a.send("tradeAddItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe"), quantity: 1 });
      let upd = await b.next("tradeUpdated", () => true, { after: m });
      const ma = a.mark();
      const mb = b.mark();
      a.send("tradeAccept", { tradeId, revision: upd.revision });
      b.send("tradeAccept", { tradeId, revision: upd.revision });
      const ea = await a.next("tradeError", () => true, { after: ma });
      const eb = await b.next("tradeError", () => true, { after: mb });
      assert.equal(ea.code, "INVENTORY_FULL");
      assert.equal(eb.code, "INVENTORY_FULL");
      // Still on the offer screen with both acceptances cleared.
      const cleared = await a.next("tradeUpdated", (d) => !d.myOffer.accepted && !d.theirOffer.accepted, { after: ma });
      assert.equal(cleared.revision, upd.revision);
      assert.equal(
        count(a, "tradeConfirmScreen", () => true, ma),
        0,
      );
      // B offering one of its logs frees the slot the axe needs.
      m = a.mark();
      b.send("tradeAddItem", { tradeId, inventorySlot: slotOf(b, "logs"), quantity: 1 });
      upd = await a.next("tradeUpdated", (d) => d.theirOffer.items.length === 1, { after: m });
      a.send("tradeAccept", { tradeId, revision: upd.revision });
      b.send("tradeAccept", { tradeId, revision: upd.revision });
      await a.next("tradeConfirmScreen", () => true, { after: m });
      a.send("tradeAccept", { tradeId });
      b.send("tradeAccept", { tradeId });
      const done = await b.next("tradeCompleted", () => true, { after: m });
      assert.deepEqual(done.receivedItems, [{ itemId: "bronze_axe", quantity: 1 }]);
    });

    it("INVENTORY_FULL at the coin cap", async () => {
      const a = await join();
      const b = await join();
      await becomeAdmin(b);
      await setCoins(b, 2147483647);
      const { tradeId } = await openTrade(a, b);
      const m = a.mark();
      a.send("tradeAddItem", { tradeId, coins: 1 });
      const upd = await a.next("tradeUpdated", () => true, { after: m });
      a.send("tradeAccept", { tradeId, revision: upd.revision });
      b.send("tradeAccept", { tradeId, revision: upd.revision });
      const e = await a.next("tradeError", () => true, { after: m });
      assert.equal(e.code, "INVENTORY_FULL");
      await b.next("tradeError", (d) => d.code === "INVENTORY_FULL", { after: m });
    });
  });
});
