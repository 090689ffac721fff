import assert from "node:assert/strict";
import { startTestServer } from "../helpers/server.js";
import { sdkPlayer, jsonPlayer, type TestPlayer } from "../helpers/players.js";
import { resetStorage, pgliteStorage } from "../helpers/storage.js";
import type { GameServer } from "../../src/server.js";
import { Client } from "@colyseus/sdk";
import { TradeAuditEntity, InventoryItemEntity, CharacterEntity } from "../../entities/index.js";

/** Open a trade between a and b and return its id (both on the offer screen). */
export async function openTrade(a: TestPlayer, b: TestPlayer): Promise<string> {
  const ma = a.mark();
  const mb = b.mark();
  a.send("tradeRequest", { targetPlayerId: b.id });
  const incoming = await b.next("tradeIncoming", () => true, { after: mb });
  assert.equal(incoming.fromPlayerId, a.id);
  b.send("tradeRequestRespond", { tradeId: incoming.tradeId, accept: true });
  await a.next("tradeStarted", (d) => d.tradeId === incoming.tradeId, { after: ma });
  await b.next("tradeStarted", (d) => d.tradeId === incoming.tradeId, { after: mb });
  return incoming.tradeId;
}

describe("trade: happy paths", function () {
  let server: GameServer;
  before(async () => {
    await resetStorage(await pgliteStorage());
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  });
  after(async () => server?.close());

  for (const [name, makeB] of [
    ["two SDK clients", sdkPlayer],
    ["an SDK and a plain-WebSocket client", jsonPlayer],
  ] as const) {
    it(`completes a two-screen trade between ${name}`, async () => {
      const a = await sdkPlayer(server);
      const b = await makeB(server);
      try {
        const axeSlot = a.sync().inventory.find((s: any) => s.itemId === "bronze_axe").slot;
        const tradeId = await openTrade(a, b);
        let m = b.mark();
        a.send("tradeAddItem", { tradeId, inventorySlot: axeSlot, quantity: 1 });
        const upd = await b.next("tradeUpdated", (d) => d.theirOffer.items.length === 1, { after: m });
        assert.deepEqual(upd.theirOffer.items, [{ inventorySlot: axeSlot, itemId: "bronze_axe", quantity: 1 }]);
        m = a.mark();
        b.send("tradeAddItem", { tradeId, coins: 10 });
        const upd2 = await a.next("tradeUpdated", (d) => d.theirOffer.coins === 10, { after: m });
        const ma = a.mark();
        const mb = b.mark();
        a.send("tradeAccept", { tradeId, revision: upd2.revision });
        b.send("tradeAccept", { tradeId, revision: upd2.revision });
        const confA = await a.next("tradeConfirmScreen", () => true, { after: ma });
        await b.next("tradeConfirmScreen", () => true, { after: mb });
        assert.equal(confA.values.myOfferValue > 0, true);
        assert.equal(confA.values.theirOfferValue, 10);
        assert.equal(confA.values.wealthTransfer, confA.values.theirOfferValue - confA.values.myOfferValue);
        a.send("tradeAccept", { tradeId });
        b.send("tradeAccept", { tradeId });
        const doneA = await a.next("tradeCompleted", () => true, { after: ma });
        const doneB = await b.next("tradeCompleted", () => true, { after: mb });
        assert.deepEqual(doneA.receivedItems, [{ itemId: "coins", quantity: 10 }]);
        assert.deepEqual(doneB.receivedItems, [{ itemId: "bronze_axe", quantity: 1 }]);
        const syncA = await a.next("player:sync", (d) => d.coins === 35, { after: ma });
        assert.ok(!syncA.inventory.some((s: any) => s.itemId === "bronze_axe"));
        const syncB = await b.next("player:sync", (d) => d.coins === 15, { after: mb });
        assert.equal(syncB.inventory.filter((s: any) => s.itemId === "bronze_axe").length, 2);

        const em = server.storage.orm.em.fork();
        const audit = await em.findOneOrFail(TradeAuditEntity, { id: tradeId });
        assert.equal(audit.outcome, "completed");
        assert.equal(audit.offerB.coins, 10);
        const axes = await em.count(InventoryItemEntity, { characterId: b.id, itemId: "bronze_axe" });
        assert.equal(axes, 2);
        const ca = await em.findOneOrFail(CharacterEntity, { id: a.id });
        assert.equal(ca.coins, 35);
      } finally {
        await a.close();
        await b.close();
      }
    });
  }

  it("lists audit records to admins only, filtered by character and paginated", async () => {
    const a = await sdkPlayer(server);
    const b = await sdkPlayer(server);
    try {
      const tradeId = await openTrade(a, b);
      const m = a.mark();
      a.send("tradeCancel", { tradeId });
      await a.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: m });
      const url = `${server.url}/api/admin/trades?characterId=${a.id}`;
      assert.equal((await fetch(url)).status, 403);
      assert.equal((await fetch(url, { headers: { "x-admin-code": "wrong" } })).status, 403);
      assert.equal((await fetch(url, { headers: { authorization: `Bearer ${a.token}` } })).status, 403);
      let page: any;
      for (let i = 0; i < 50; i++) {
        page = await (await fetch(url, { headers: { "x-admin-code": "test-admin-code" } })).json();
        if (page.total > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.equal(page.total, 1);
      assert.equal(page.trades[0].id, tradeId);
      assert.equal(page.trades[0].outcome, "cancelled");
      assert.equal(page.trades[0].reason, "cancelled");
      const all = await (await fetch(`${server.url}/api/admin/trades?limit=1`, { headers: { "x-admin-code": "test-admin-code" } })).json();
      assert.equal(all.trades.length, 1);
      assert.ok(all.total >= 2);
      const bad = await fetch(`${server.url}/api/admin/trades?limit=0`, { headers: { "x-admin-code": "test-admin-code" } });
      assert.equal(bad.status, 400);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("lets the traders (and only them) watch the trade room as synchronised state", async () => {
    const a = await sdkPlayer(server);
    const b = await sdkPlayer(server);
    const c = await sdkPlayer(server);
    try {
      const m = a.mark();
      const tradeId = await openTrade(a, b);
      const started = await a.next("tradeStarted", (d) => d.tradeId === tradeId, { after: m });
      const watcher = new Client(`${server.url}/ws`);
      watcher.auth.token = a.token;
      const tradeRoom = await watcher.joinById(started.roomId, { characterId: a.id });
      const slot = a.sync().inventory[0].slot;
      a.send("tradeAddItem", { tradeId, inventorySlot: slot, quantity: 1 });
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("no state with the offer")), 10_000);
        const check = () => {
          const offer = tradeRoom.state.offers?.get(a.id);
          if (tradeRoom.state.revision === 1 && offer?.items.length === 1) {
            clearTimeout(t);
            resolve();
          }
        };
        tradeRoom.onStateChange(check);
        check();
      });
      assert.equal(tradeRoom.state.screen, "offer");
      const outsider = new Client(`${server.url}/ws`);
      outsider.auth.token = c.token;
      await assert.rejects(outsider.joinById(started.roomId, { characterId: c.id }));
      await tradeRoom.leave();
      a.send("tradeCancel", { tradeId });
      await b.next("tradeCancelled", (d) => d.tradeId === tradeId);
    } finally {
      await a.close();
      await b.close();
      await c.close();
    }
  });
});
