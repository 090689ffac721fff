import assert from "node:assert/strict";
import { startTestServer } from "../../helpers/server.js";
import { sdkPlayer, jsonPlayer, type TestPlayer } from "../../helpers/clients.js";
import { resetStorage, pgliteStorage } from "../../helpers/storage.js";
import type { GameServer } from "../../../src/server/server.js";
import { Client } from "@colyseus/sdk";
import { TradeAuditEntity, InventoryItemEntity, CharacterEntity } from "../../../entities/index.js";

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
      // Without admin rights a bad query is still 403: rights are checked before the query.
      for (const q of ["limit=0", "offset=-1", "outcome=nope"]) {
        assert.equal((await fetch(`${server.url}/api/admin/trades?${q}`)).status, 403, q);
        assert.equal(
          (await fetch(`${server.url}/api/admin/trades?${q}`, { headers: { authorization: `Bearer ${a.token}` } })).status,
          403,
          `${q} with a player token`,
        );
      }
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("pages the audit log with limit and offset (newest first, no overlap, past the end empty)", async () => {
    const a = await sdkPlayer(server);
    const partners = [await sdkPlayer(server), await jsonPlayer(server), await sdkPlayer(server)];
    const admin = { headers: { "x-admin-code": "test-admin-code" } };
    try {
      const ids: string[] = [];
      for (const [i, b] of partners.entries()) {
        const tradeId = await openTrade(a, b);
        const m = a.mark();
        a.send("tradeCancel", { tradeId });
        await a.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: m });
        ids.push(tradeId);
        // Each audit record is written before the next trade starts (so end times are ordered).
        for (let tries = 0; ; tries++) {
          const page = await (await fetch(`${server.url}/api/admin/trades?characterId=${a.id}`, admin)).json();
          if (page.total === i + 1) break;
          if (tries > 500) throw new Error("audit not written");
          await new Promise((r) => setTimeout(r, 10));
        }
      }
      const pageAt = async (offset: number) => (await fetch(`${server.url}/api/admin/trades?characterId=${a.id}&limit=1&offset=${offset}`, admin)).json();
      const pages = [await pageAt(0), await pageAt(1), await pageAt(2), await pageAt(3)];
      assert.deepEqual(
        pages.map((p) => p.trades.map((t: any) => t.id)),
        [[ids[2]], [ids[1]], [ids[0]], []],
      );
      for (const [i, p] of pages.entries()) {
        assert.equal(p.total, 3);
        assert.equal(p.offset, i);
        assert.equal(p.limit, 1);
      }
      const two = await (await fetch(`${server.url}/api/admin/trades?characterId=${a.id}&limit=2&offset=1`, admin)).json();
      assert.deepEqual(
        two.trades.map((t: any) => t.id),
        [ids[1], ids[0]],
      );
      assert.equal((await fetch(`${server.url}/api/admin/trades?offset=-1`, admin)).status, 400);
      assert.equal((await fetch(`${server.url}/api/admin/trades?offset=1.5`, admin)).status, 400);
    } finally {
      await a.close();
      for (const b of partners) await b.close();
    }
  });

  it("lets both traders (and only them) watch the trade room, each seeing the trade from its own side", async () => {
    const a = await sdkPlayer(server);
    const b = await sdkPlayer(server);
    const c = await sdkPlayer(server);
    const watchers: { leave(): Promise<unknown> }[] = [];
    try {
      const m = a.mark();
      const tradeId = await openTrade(a, b);
      const started = await a.next("tradeStarted", (d) => d.tradeId === tradeId, { after: m });
      const watch = async (p: TestPlayer) => {
        const client = new Client(`${server.url}/ws`);
        client.auth.token = p.token;
        const room = await client.joinById<any>(started.roomId, { characterId: p.id });
        watchers.push(room);
        return room;
      };
      const wa = await watch(a);
      const wb = await watch(b);
      /** Resolves once `room`'s state satisfies `pred`. */
      const until = (room: any, pred: (s: any) => boolean, what: string) =>
        new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`no state with ${what}`)), 10_000);
          const check = () => {
            if (pred(room.state)) {
              clearTimeout(t);
              resolve();
            }
          };
          room.onStateChange(check);
          check();
        });
      const axe = a.sync().inventory.find((s: any) => s.itemId === "bronze_axe").slot;
      a.send("tradeAddItem", { tradeId, inventorySlot: axe, quantity: 1 });
      b.send("tradeAddItem", { tradeId, coins: 7 });
      const offered = (s: any) => s.revision === 2 && s.traders?.size === 1;
      await until(wa, (s) => offered(s) && s.traders.get(a.id)?.theirOffer.coins === 7 && s.traders.get(a.id)?.myOffer.items.length === 1, "A's side");
      await until(wb, (s) => offered(s) && s.traders.get(b.id)?.myOffer.coins === 7 && s.traders.get(b.id)?.theirOffer.items.length === 1, "B's side");

      // Each watcher holds only its own side: never the other trader's entry.
      assert.deepEqual([...wa.state.traders.keys()], [a.id]);
      assert.deepEqual([...wb.state.traders.keys()], [b.id]);
      const mine = wa.state.traders.get(a.id);
      const theirs = wb.state.traders.get(b.id);
      assert.equal(wa.state.screen, "offer");
      assert.equal(mine.partnerId, b.id);
      assert.equal(theirs.partnerId, a.id);
      assert.deepEqual(
        mine.myOffer.items.map((l: any) => [l.inventorySlot, l.itemId, l.quantity]),
        [[axe, "bronze_axe", 1]],
      );
      assert.deepEqual(
        theirs.theirOffer.items.map((l: any) => [l.inventorySlot, l.itemId, l.quantity]),
        [[axe, "bronze_axe", 1]],
      );
      assert.equal(mine.partnerFreeSlots, 28 - b.sync().inventory.length);
      assert.equal(theirs.partnerFreeSlots, 28 - a.sync().inventory.length);
      assert.equal(mine.values, undefined, "no values on the offer screen");

      // The confirmation screen: values from each side, as in tradeConfirmScreen.
      const mc = a.mark();
      a.send("tradeAccept", { tradeId, revision: 2 });
      b.send("tradeAccept", { tradeId, revision: 2 });
      const conf = await a.next("tradeConfirmScreen", () => true, { after: mc });
      const confB = await b.next("tradeConfirmScreen", (d) => d.tradeId === tradeId);
      await until(wa, (s) => s.screen === "confirm" && s.traders.get(a.id)?.values !== undefined, "A's values");
      await until(wb, (s) => s.screen === "confirm" && s.traders.get(b.id)?.values !== undefined, "B's values");
      const va = wa.state.traders.get(a.id).values;
      const vb = wb.state.traders.get(b.id).values;
      assert.deepEqual({ ...va.toJSON() }, conf.values);
      assert.deepEqual({ ...vb.toJSON() }, confB.values);
      assert.equal(va.wealthTransfer, -vb.wealthTransfer);
      assert.equal(wa.state.revision, conf.revision);

      const outsider = new Client(`${server.url}/ws`);
      outsider.auth.token = c.token;
      await assert.rejects(outsider.joinById(started.roomId, { characterId: c.id }));
      a.send("tradeCancel", { tradeId });
      await b.next("tradeCancelled", (d) => d.tradeId === tradeId);
    } finally {
      await Promise.all(watchers.map((w) => w.leave().catch(() => undefined)));
      await a.close();
      await b.close();
      await c.close();
    }
  });

  it("a watcher of a trade cancelled on the offer screen sees the final cancelled screen, still without values", async () => {
    const a = await sdkPlayer(server);
    const b = await jsonPlayer(server);
    let watcher: any;
    let left = false;
    try {
      const m = a.mark();
      const tradeId = await openTrade(a, b);
      const started = await a.next("tradeStarted", (d) => d.tradeId === tradeId, { after: m });
      const client = new Client(`${server.url}/ws`);
      client.auth.token = a.token;
      watcher = await client.joinById<any>(started.roomId, { characterId: a.id });
      const leave = new Promise<void>((resolve) => watcher.onLeave(() => resolve()));
      await new Promise<void>((resolve) => {
        const check = () => watcher.state?.traders?.get(a.id) && resolve();
        watcher.onStateChange(check);
        check();
      });
      assert.equal(watcher.state.screen, "offer");
      assert.equal(watcher.state.traders.get(a.id).values, undefined, "no values on the offer screen");
      a.send("tradeCancel", { tradeId });
      await leave; // the room closes once its final state has gone out
      left = true;
      assert.equal(watcher.state.screen, "cancelled", "the final screen reached the watcher");
      assert.equal(watcher.state.traders.get(a.id).values, undefined, "a trade cancelled on the offer screen never shows values");
    } finally {
      if (!left) await watcher?.leave().catch(() => undefined);
      await a.close();
      await b.close();
    }
  });
});
