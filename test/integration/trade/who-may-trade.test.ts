/**
 * Trading rules around who trades and when (docs/trading.md "Trading"), over real sockets:
 *
 * - an agent character trades like any player;
 * - two characters of the same account never trade with each other (`SELF_TRADE`);
 * - on PostgreSQL: a player who leaves and joins again while its trade settles comes back with its
 *   items locked until the settlement has ended; a bank deposit sent meanwhile is refused and no
 *   item is duplicated (before the fix the new player's deposit, planned from the pre-trade items,
 *   was written after the settlement: the traded axe ended in both the partner's inventory and the
 *   bank).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import type { GameServer } from "../../../src/server/server.js";
import { STARTER } from "../../helpers/records.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { pgliteStorage, postgresStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import {
  audits,
  becomeAdmin,
  freeTilesNear,
  holdCharacterLock,
  lockWaiters,
  marker,
  nextError,
  offerAxeForCoins,
  openTrade,
  roomGone,
  slotOf,
  systemLine,
  teleport,
  toConfirm,
  totals,
  until,
  useTradeServer,
} from "../../helpers/trade.js";

/** Two free tiles at most 2 apart, within 3 tiles of the first bank booth. */
const nearBank = (server: GameServer) =>
  freeTilesNear(
    server,
    server.content.stations.find((s) => s.type === "bank")!,
  );

/** A offers its axe, B 10 coins; both accept twice (offer and confirmation screens) but the last accept is left to the caller. */
const toFinalAccept = async (a: TestPlayer, b: TestPlayer, tradeId: string) => toConfirm(a, b, tradeId, await offerAxeForCoins(a, b, tradeId));

describe("trade: who may trade (agents, one account's characters)", function () {
  this.timeout(60_000);
  const t = useTradeServer(pgliteStorage);

  it("an agent character trades like any player: the trade completes and is audited", async () => {
    const accountId = `acc-${randomUUID()}`;
    const repo = new CharacterRepository(t.server.storage.orm);
    const agent = await repo.create({ accountId, isAgent: true, coins: 25, inventory: STARTER });
    const a = t.track(await sdkPlayer(t.server, { accountId, characterId: agent.id }));
    assert.equal(a.sync().isAgent, true);
    const b = t.track(await jsonPlayer(t.server));
    await becomeAdmin(a);
    await becomeAdmin(b);
    const [ta, tb] = nearBank(t.server);
    await teleport(a, ta.x, ta.z);
    await teleport(b, tb.x, tb.z);
    const { tradeId, roomId } = await openTrade(a, b);
    const conf = await toFinalAccept(a, b, tradeId);
    a.send("tradeAccept", { tradeId, revision: conf });
    b.send("tradeAccept", { tradeId, revision: conf });
    await a.next("tradeCompleted", (d) => d.tradeId === tradeId);
    await b.next("tradeCompleted", (d) => d.tradeId === tradeId);
    await roomGone(roomId);
    assert.deepEqual(
      (await audits(t.server.storage.orm, [tradeId])).map((r) => r.outcome),
      ["completed"],
    );
    assert.ok(b.sync().inventory.some((s: { itemId: string }) => s.itemId === "bronze_axe"));
  });

  it("two characters of one account may not trade with each other: SELF_TRADE, nothing opens", async () => {
    const accountId = `acc-${randomUUID()}`;
    const a = t.track(await sdkPlayer(t.server, { accountId }));
    const repo = new CharacterRepository(t.server.storage.orm);
    const second = await repo.create({ accountId, coins: 25, inventory: STARTER });
    const b = t.track(await jsonPlayer(t.server, { accountId, characterId: second.id }));
    assert.notEqual(a.id, b.id);
    await becomeAdmin(a);
    await becomeAdmin(b);
    const [ta, tb] = nearBank(t.server);
    await teleport(a, ta.x, ta.z);
    await teleport(b, tb.x, tb.z);
    for (const [from, to] of [
      [a, b],
      [b, a],
    ] as const) {
      const m = from.mark();
      const mt = to.mark();
      from.send("tradeRequest", { targetPlayerId: to.id });
      const e = await nextError(from, "SELF_TRADE", m);
      assert.match(e.message, /own characters/);
      await marker(to);
      assert.equal(to.received.filter((r) => r.seq >= mt && r.event === "tradeIncoming").length, 0, "no request reached the other character");
    }
    assert.equal(t.server.world.player(a.id)!.tradeId, undefined);
    assert.equal(t.server.world.player(b.id)!.tradeId, undefined);
  });
});

(TEST_DATABASE_URL ? describe : describe.skip)("trade: a player who rejoins while its trade settles (PostgreSQL)", function () {
  this.timeout(60_000);
  const t = useTradeServer(postgresStorage);

  it("the new player's items stay locked until the settlement ended: a bank deposit meanwhile is refused and nothing is duplicated", async () => {
    const world = t.server.world;
    const orm = t.server.storage.orm;
    const accounts = [`acc-${randomUUID()}`, `acc-${randomUUID()}`];
    const first = t.track(await sdkPlayer(t.server, { accountId: accounts[0] }));
    const second = t.track(await sdkPlayer(t.server, { accountId: accounts[1] }));
    // The settlement takes the two players' storage queues in id order; the one taken second (the
    // larger id) rejoins while the settlement waits for the first.
    const [x, r] = first.id < second.id ? [first, second] : [second, first];
    const rAccount = r === first ? accounts[0]! : accounts[1]!;
    await becomeAdmin(x);
    await becomeAdmin(r);
    const [tx, tr] = nearBank(t.server);
    await teleport(x, tx.x, tx.z);
    await teleport(r, tr.x, tr.z);
    await world.access.flush(r.id);
    const ids = [x.id, r.id];
    const before = await totals(orm, ids);

    // R gives its axe for 10 of X's coins.
    const { tradeId, roomId } = await openTrade(r, x);
    const conf = await toFinalAccept(r, x, tradeId);
    let openGate!: () => void;
    const gate = new Promise<void>((res) => (openGate = res));
    void world.queues.run(x.id, () => gate);
    let lock: { release: () => Promise<void> } | undefined;
    try {
      r.send("tradeAccept", { tradeId, revision: conf });
      x.send("tradeAccept", { tradeId, revision: conf });
      await marker(r);
      await marker(x);
      // R leaves (consented) and joins again while the settlement waits for X's queue.
      await r.close();
      t.players.splice(t.players.indexOf(r), 1); // closed: a second leave would wait forever
      await until(() => !world.player(r.id), "R to leave the world");
      const r2 = t.track(await sdkPlayer(t.server, { accountId: rAccount, characterId: r.id }));
      assert.ok(
        r2.sync().inventory.some((s: { itemId: string }) => s.itemId === "bronze_axe"),
        "joined from the pre-trade rows",
      );
      // The settlement transaction will wait on X's row: its job holds R's queue from then on.
      lock = await holdCharacterLock(orm, x.id);
      const base = await lockWaiters(orm);
      openGate();
      await until(async () => (await lockWaiters(orm)) > base, "the settlement to wait for X's row");
      const m = r2.mark();
      r2.send("bank:deposit", { slot: slotOf(r2, "bronze_axe"), quantity: 1 });
      await marker(r2); // the deposit has been handled (refused, or queued behind the settlement)
      await lock.release();
      lock = undefined;
      await x.next("tradeCompleted", (d) => d.tradeId === tradeId);
      await roomGone(roomId);
      await marker(r2);
      await world.queues.drain();
      assert.deepEqual(await totals(orm, ids), before, "no item or coin created or lost");
      await systemLine(r2, /Please wait a moment/, m);
      const p = world.player(r.id)!;
      assert.equal(p.itemsLocked, false, "unlocked once the settlement ended");
      assert.ok(!p.inventory.some((s) => s?.itemId === "bronze_axe"), "memory follows the committed trade");
      assert.equal(p.bank.get("bronze_axe"), undefined);
      const stored = (await new CharacterRepository(orm).load(r.id))!;
      assert.ok(!stored.bank.some((b) => b.itemId === "bronze_axe"), "the traded axe is not in R's bank");
      assert.equal(stored.character.coins, p.coins);
    } finally {
      openGate();
      await lock?.release();
    }
  });
});
