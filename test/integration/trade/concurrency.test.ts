/**
 * Concurrency: exactly one outcome, never a duplicate.
 *
 * 1. On real PostgreSQL (skipped without TEST_DATABASE_URL; PGlite serialises transactions, so a
 *    race there proves nothing): `settleTrade` runs concurrently with itself and with other
 *    transactions that lock the character row as every item transaction must — the same item in
 *    two trades, a bank deposit, a store sale, a drop — and exactly one of them wins each time.
 *    Totals of every item id and of coins are compared before and after.
 * 2. Over the socket (every storage available): 10 repeated accepts, and accepts from both
 *    players in the same millisecond, give one confirmation screen and one completion.
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import { LockMode } from "@mikro-orm/core";
import type { SqlEntityManager } from "@mikro-orm/sql";
import { CharacterEntity, InventoryItemEntity } from "../../../entities/index.js";
import { syncItemDefinitions } from "../../../src/storage/item-definitions.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import type { ItemLookup } from "../../../src/domain/inventory.js";
import type { GameServer } from "../../../src/server/server.js";
import type { Orm, Storage } from "../../../src/storage/orm.js";
import { settleTrade, type SettlementResult } from "../../../src/trade/settlement.js";
import type { TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { postgresStorage, resetStorage, storageKinds, TEST_DATABASE_URL } from "../../helpers/storage.js";
import { audits, axeForCoins, count, holdings, insertCharacter, marker, roomGone, settlingTrade, totals, until, violations } from "../../helpers/trade.js";

const ROUNDS = 10;

/** One competing transaction: lock the character row first (as the world's item transactions do), then act. */
async function lockedTx<T>(orm: Orm, characterId: string, body: (em: SqlEntityManager) => Promise<T>): Promise<T> {
  return (orm.em.fork() as SqlEntityManager).transactional(async (em) => {
    const c = await em.findOne(CharacterEntity, { id: characterId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!c) throw new Error("no character");
    return body(em);
  });
}

/** Take the item out of a slot under the lock; undefined when it is no longer there. */
async function takeSlot(em: SqlEntityManager, characterId: string, slot: number, itemId: string) {
  const row = await em.findOne(InventoryItemEntity, { characterId, slot }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
  if (!row || row.itemId !== itemId) return undefined;
  await em.nativeDelete(InventoryItemEntity, { characterId, slot });
  return { itemId: row.itemId, quantity: row.quantity };
}

/** Bank deposit: the slot's stack moves to bank_items. */
const deposit = (orm: Orm, id: string, slot: number, itemId: string) =>
  lockedTx(orm, id, async (em) => {
    const taken = await takeSlot(em, id, slot, itemId);
    if (!taken) return false;
    await em.getConnection().execute(
      `insert into bank_items (character_id, item_id, quantity) values (?, ?, ?)
         on conflict (character_id, item_id) do update set quantity = bank_items.quantity + excluded.quantity`,
      [id, taken.itemId, taken.quantity],
      "run",
      em.getTransactionContext(),
    );
    return true;
  });

/** Store sale: the slot's stack leaves the game, its price arrives as coins. */
const sell = (orm: Orm, id: string, slot: number, itemId: string, price: number) =>
  lockedTx(orm, id, async (em) => {
    const taken = await takeSlot(em, id, slot, itemId);
    if (!taken) return false;
    await em.getConnection().execute(`update characters set coins = coins + ? where id = ?`, [price * taken.quantity, id], "run", em.getTransactionContext());
    return true;
  });

/** Drop: the slot's stack leaves storage for the ground. */
const drop = (orm: Orm, id: string, slot: number, itemId: string) => lockedTx(orm, id, async (em) => !!(await takeSlot(em, id, slot, itemId)));

/**
 * Hold character `id`'s row locked in one transaction, start each job in turn once the previous
 * one is waiting for that lock (PostgreSQL grants a row lock to its waiters in arrival order),
 * then release: the jobs reach the row in the given order.
 */
async function queuedBehindLock<T>(id: string, jobs: (() => Promise<T>)[]): Promise<T[]> {
  const orm = (await postgresStorage()).orm;
  const waiting = async () =>
    Number(
      (
        await orm.em
          .fork()
          .getConnection()
          .execute(`select count(*)::int n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`)
      )[0].n,
    );
  let release!: () => void;
  let held!: () => void;
  const isHeld = new Promise<void>((r) => (held = r));
  const holder = lockedTx(orm, id, () => {
    held();
    return new Promise<void>((r) => (release = r));
  });
  await isHeld;
  const base = await waiting();
  const running: Promise<T>[] = [];
  try {
    for (const job of jobs) {
      running.push(job());
      await until(async () => (await waiting()) >= base + running.length, "the job to wait for the row lock");
    }
  } finally {
    release();
  }
  await holder;
  return Promise.all(running);
}

const minus = (a: Record<string, number>, b: Record<string, number>) => {
  const out: Record<string, number> = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) - v;
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== 0));
};
const plus = (a: Record<string, number>, b: Record<string, number>) => minus(a, Object.fromEntries(Object.entries(b).map(([k, v]) => [k, -v])));

describe("trade: settlement races on real PostgreSQL", function () {
  this.timeout(60_000);
  let storage: Storage;
  let orm: Orm;
  let content: GameContent;
  let items: ItemLookup;

  before(async function () {
    if (!TEST_DATABASE_URL) return this.skip(); // PGlite serialises transactions: races prove nothing there.
    storage = await postgresStorage();
    orm = storage.orm;
    await resetStorage(storage);
    content = await loadContent("world/manifests");
    await syncItemDefinitions(orm as never, content);
    items = (id) => content.items.get(id);
  });

  /** A holds a bronze axe in slot 0 and 20 coins; B and C hold 10 coins each. */
  async function threePlayers() {
    const axe = [{ slot: 0, itemId: "bronze_axe", quantity: 1 }];
    const a = await insertCharacter(orm, { coins: 20, inventory: axe });
    const b = await insertCharacter(orm, { coins: 10 });
    const c = await insertCharacter(orm, { coins: 10 });
    return { a, b, c, aHold: holdings(20, axe), bHold: holdings(10, []), cHold: holdings(10, []) };
  }

  const outcomes = (results: SettlementResult[]) => results.map((r) => (r.ok ? "ok" : r.failure));

  it(`the same item offered in two trades settling at once: exactly one wins (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { a, b, c, aHold, bHold, cHold } = await threePlayers();
      const ids = [a, b, c];
      const before = await totals(orm, ids);
      const s1 = settlingTrade(`race1-${round}-ab`, { id: a, holdings: aHold, items: [{ slot: 0, quantity: 1 }] }, { id: b, holdings: bHold, coins: 5 }, items);
      const s2 = settlingTrade(`race1-${round}-ac`, { id: a, holdings: aHold, items: [{ slot: 0, quantity: 1 }] }, { id: c, holdings: cHold, coins: 5 }, items);
      const res = await Promise.all([settleTrade(orm, s1, items), settleTrade(orm, s2, items)]);
      assert.deepEqual(outcomes(res).sort(), ["invalid_items", "ok"], `round ${round}`);
      assert.deepEqual(await totals(orm, ids), before);
      assert.equal((await totals(orm, [a])).coins, 25);
      const done = await audits(orm, [s1.id, s2.id]);
      assert.equal(done.length, 1);
      assert.equal(done[0]!.id, res[0]!.ok ? s1.id : s2.id);
    }
  });

  it(`the same coins offered in two trades at once: exactly one wins (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const { a, b, c, aHold, bHold, cHold } = await threePlayers();
      const ids = [a, b, c];
      const before = await totals(orm, ids);
      const s1 = settlingTrade(`race2-${round}-ab`, { id: a, holdings: aHold, coins: 15 }, { id: b, holdings: bHold, coins: 1 }, items);
      const s2 = settlingTrade(`race2-${round}-ac`, { id: a, holdings: aHold, coins: 15 }, { id: c, holdings: cHold, coins: 1 }, items);
      const res = await Promise.all([settleTrade(orm, s2, items), settleTrade(orm, s1, items)]);
      assert.deepEqual(outcomes(res).sort(), ["invalid_items", "ok"], `round ${round}`);
      assert.deepEqual(await totals(orm, ids), before);
      assert.deepEqual(await violations(orm, items), []);
    }
  });

  for (const [name, compete, effect] of [
    ["a bank deposit", (id: string) => deposit(orm, id, 0, "bronze_axe"), () => ({})],
    ["a store sale", (id: string) => sell(orm, id, 0, "bronze_axe", 7), () => ({ bronze_axe: -1, coins: 7 })],
    ["a drop", (id: string) => drop(orm, id, 0, "bronze_axe"), () => ({ bronze_axe: -1 })],
  ] as const) {
    it(`a trade racing ${name} of the offered item: exactly one happens (${ROUNDS * 3} rounds: free races and both forced orders)`, async () => {
      const seen = new Set<string>();
      for (let round = 0; round < ROUNDS * 3; round++) {
        const { a, b, aHold, bHold } = await threePlayers();
        const ids = [a, b];
        const before = await totals(orm, ids);
        const s = settlingTrade(
          `race-${name}-${round}`,
          { id: a, holdings: aHold, items: [{ slot: 0, quantity: 1 }] },
          { id: b, holdings: bHold, coins: 5 },
          items,
        );
        const order = (["free", "trade first", `${name} first`] as const)[round % 3]!;
        let trade: SettlementResult;
        let other: boolean;
        if (order === "free") [trade, other] = await Promise.all([settleTrade(orm, s, items), compete(a)]);
        else {
          // Both queue behind a transaction holding A's row, in a chosen order; the first in line wins.
          const tradeFirst = order === "trade first";
          const jobs: (() => Promise<SettlementResult | boolean>)[] = [() => settleTrade(orm, s, items), () => compete(a)];
          const [x, y] = await queuedBehindLock(a, tradeFirst ? jobs : [...jobs].reverse());
          [trade, other] = (tradeFirst ? [x, y] : [y, x]) as [SettlementResult, boolean];
          assert.equal(trade.ok, tradeFirst, `round ${round} (${order}): ${outcomes([trade])}`);
        }
        assert.ok(trade.ok !== other, `round ${round} (${order}): exactly one of trade (${outcomes([trade])}) and ${name} (${other})`);
        if (!trade.ok) assert.equal(trade.failure, "invalid_items");
        seen.add(trade.ok ? "trade" : name);
        const expected = trade.ok ? before : plus(before, effect());
        assert.deepEqual(await totals(orm, ids), expected, `round ${round}`);
        const axes = await orm.em
          .fork()
          .getConnection()
          .execute(
            `select (select count(*) from inventory_items where item_id = 'bronze_axe' and character_id in (?, ?))
                  + (select coalesce(sum(quantity), 0) from bank_items where item_id = 'bronze_axe' and character_id in (?, ?)) as n`,
            [a, b, a, b],
          );
        assert.equal(Number(axes[0].n), trade.ok || name === "a bank deposit" ? 1 : 0);
        assert.equal((await audits(orm, [s.id])).length, trade.ok ? 1 : 0);
      }
      assert.equal(seen.size, 2, "both outcomes happened");
    });
  }

  it("three trades in a cycle (A↔B, B↔C, C↔A) settle at once without deadlock, each exactly once", async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const inv = (itemId: string) => [{ slot: 0, itemId, quantity: 1 }];
      const a = await insertCharacter(orm, { coins: 30, inventory: inv("bronze_axe") });
      const b = await insertCharacter(orm, { coins: 30, inventory: inv("bronze_pickaxe") });
      const c = await insertCharacter(orm, { coins: 30, inventory: inv("tinderbox") });
      const before = await totals(orm, [a, b, c]);
      const h = (itemId: string) => holdings(30, inv(itemId));
      const trades = [
        settlingTrade(
          `cyc-${round}-ab`,
          { id: a, holdings: h("bronze_axe"), items: [{ slot: 0, quantity: 1 }] },
          { id: b, holdings: h("bronze_pickaxe"), coins: 3 },
          items,
        ),
        settlingTrade(
          `cyc-${round}-bc`,
          { id: b, holdings: h("bronze_pickaxe"), items: [{ slot: 0, quantity: 1 }] },
          { id: c, holdings: h("tinderbox"), coins: 3 },
          items,
        ),
        settlingTrade(
          `cyc-${round}-ca`,
          { id: c, holdings: h("tinderbox"), items: [{ slot: 0, quantity: 1 }] },
          { id: a, holdings: h("bronze_axe"), coins: 3 },
          items,
        ),
      ];
      const res = await Promise.all(trades.map((s) => settleTrade(orm, s, items)));
      assert.deepEqual(outcomes(res), ["ok", "ok", "ok"]);
      assert.deepEqual(await totals(orm, [a, b, c]), before);
      assert.equal(
        (
          await audits(
            orm,
            trades.map((s) => s.id),
          )
        ).length,
        3,
      );
    }
  });

  it("a write that fails (the trade id is already audited) rolls everything back and leaves no connection in a transaction", async () => {
    const { a, b, aHold, bHold } = await threePlayers();
    const s = settlingTrade("dup-audit", { id: a, holdings: aHold, items: [{ slot: 0, quantity: 1 }] }, { id: b, holdings: bHold, coins: 5 }, items);
    await orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into trade_audits (id, character_a, character_b, offer_a, offer_b, outcome, started_at, ended_at)
         values (?, ?, ?, '{}'::jsonb, '{}'::jsonb, 'cancelled', now(), now())`,
        [s.id, a, b],
      );
    const before = await totals(orm, [a, b]);
    const res = await settleTrade(orm, s, items);
    assert.equal(res.ok, false);
    assert.equal(!res.ok && res.failure, "server_error");
    assert.deepEqual(await totals(orm, [a, b]), before);
    const stuck = await orm.em
      .fork()
      .getConnection()
      .execute(`select count(*)::int n from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`);
    assert.equal(stuck[0].n, 0);
    // And the next settlement of the same players goes through.
    const again = settlingTrade("dup-audit-2", { id: a, holdings: aHold, items: [{ slot: 0, quantity: 1 }] }, { id: b, holdings: bHold, coins: 5 }, items);
    assert.equal((await settleTrade(orm, again, items)).ok, true);
  });

  it("connections whose prepared statements were dropped (deallocate all) still settle, exactly once each", async () => {
    const pool = (await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<any> }).getNativeClient()) as {
      connect(): Promise<{ query(q: string): Promise<unknown>; release(): void }>;
    };
    for (let round = 0; round < 3; round++) {
      const { a, b, aHold, bHold } = await threePlayers();
      const before = await totals(orm, [a, b]);
      // Settle once (statements prepared on some connections), then drop them on every pooled connection.
      const first = settlingTrade(`dealloc-${round}-1`, { id: a, holdings: aHold, coins: 1 }, { id: b, holdings: bHold, coins: 1 }, items);
      assert.equal((await settleTrade(orm, first, items)).ok, true);
      const clients = await Promise.all(Array.from({ length: 8 }, () => pool.connect()));
      for (const c of clients) await c.query("deallocate all");
      for (const c of clients) c.release();
      const second = settlingTrade(
        `dealloc-${round}-2`,
        { id: a, holdings: aHold, items: [{ slot: 0, quantity: 1 }] },
        { id: b, holdings: bHold, coins: 5 },
        items,
      );
      const res = await settleTrade(orm, second, items);
      assert.equal(res.ok, true, `round ${round}: ${outcomes([res])}`);
      assert.deepEqual(await totals(orm, [a, b]), before);
      assert.deepEqual(
        (await audits(orm, [first.id, second.id])).map((r) => r.outcome),
        ["completed", "completed"],
      );
    }
  });

  it("a settlement of rows that changed since the offer fails closed (invalid_items), writing nothing", async () => {
    const { a, b, aHold, bHold } = await threePlayers();
    const s = settlingTrade("stale-rows", { id: a, holdings: aHold, items: [{ slot: 0, quantity: 1 }] }, { id: b, holdings: bHold, coins: 5 }, items);
    const before = await totals(orm, [a, b]);
    await orm.em.fork().getConnection().execute(`update inventory_items set item_id = 'bronze_pickaxe' where character_id = ?`, [a]);
    const res = await settleTrade(orm, s, items);
    assert.equal(res.ok, false);
    assert.equal(!res.ok && res.failure, "invalid_items");
    assert.deepEqual(await totals(orm, [a, b]), minus(plus(before, { bronze_pickaxe: 1 }), { bronze_axe: 1 }));
    assert.equal((await audits(orm, [s.id])).length, 0);
  });
});

for (const kind of storageKinds()) {
  describe(`trade: repeated and simultaneous accepts over the socket (${kind.name})`, function () {
    this.timeout(60_000);
    let server: GameServer;
    let players: TestPlayer[] = [];

    before(async () => {
      const storage = await kind.get();
      await resetStorage(storage);
      server = await startTestServer({ DISABLE_RATE_LIMIT: "true" }, storage);
    });
    after(async () => server?.close());
    afterEach(async () => {
      await Promise.all(players.map((p) => p.close()));
      players = [];
    });

    /** A and B with a trade on the offer screen where A offers its axe and B 10 coins. */
    const offered = () => axeForCoins(server, players);

    /** After the trade: one completion each, one audit, nothing cancelled, totals unchanged. */
    async function exactlyOnce(t: Awaited<ReturnType<typeof offered>>) {
      await t.a.next("tradeCompleted", (d) => d.tradeId === t.tradeId);
      await t.b.next("tradeCompleted", (d) => d.tradeId === t.tradeId);
      await roomGone(t.roomId);
      await marker(t.a);
      await marker(t.b);
      for (const p of [t.a, t.b]) {
        assert.equal(
          count(p, "tradeConfirmScreen", (d) => d.tradeId === t.tradeId),
          1,
          "one confirmation screen",
        );
        assert.equal(
          count(p, "tradeCompleted", (d) => d.tradeId === t.tradeId),
          1,
          "one completion",
        );
        assert.equal(
          count(p, "tradeCancelled", (d) => d.tradeId === t.tradeId),
          0,
          "nothing cancelled",
        );
      }
      const rows = await audits(server.storage.orm, [t.tradeId]);
      assert.deepEqual(
        rows.map((r) => r.outcome),
        ["completed"],
      );
      assert.deepEqual(await totals(server.storage.orm, t.ids), t.before);
      const stored = await server.storage.orm.em
        .fork()
        .getConnection()
        .execute(
          `select character_id, count(*)::int n from inventory_items where item_id = 'bronze_axe' and character_id in (?, ?) group by character_id`,
          t.ids,
        );
      assert.deepEqual(stored, [{ character_id: t.b.id, n: 2 }]);
      assert.equal(server.world.player(t.a.id)!.coins, 35);
      assert.equal(server.world.player(t.b.id)!.coins, 15);
    }

    it("10 repeated accepts from each player on both screens, revisions quoted: offer-screen accepts alone never complete; one confirmation screen, one completion", async () => {
      const t = await offered();
      const ma = t.a.mark();
      const mb = t.b.mark();
      const offerScreenAccepts = (p: TestPlayer) => {
        for (let i = 0; i < 10; i++) p.send("tradeAccept", { tradeId: t.tradeId, revision: t.revision });
      };
      // The order that would settle a trade nobody confirmed if the confirmation screen kept the
      // offer screen's revision: A accepts; B's first accept opens the confirmation screen and B's
      // next one accepts it; then A's accepts sent before A saw that screen arrive.
      offerScreenAccepts(t.a);
      await t.b.next("tradeUpdated", (d) => d.theirOffer.accepted === true, { after: mb });
      offerScreenAccepts(t.b);
      const conf = await t.a.next("tradeConfirmScreen", (d) => d.tradeId === t.tradeId);
      await t.b.next("tradeConfirmScreen", (d) => d.tradeId === t.tradeId);
      assert.equal(conf.revision, t.revision + 1, "the confirmation screen is a new revision");
      offerScreenAccepts(t.a);
      // Every accept has been handled once both connections answer a round trip, and a settlement
      // they might have started has finished once the storage queues are drained.
      await marker(t.a);
      await marker(t.b);
      await server.world.queues.drain();
      await marker(t.a);
      await marker(t.b);
      for (const [p, m] of [
        [t.a, ma],
        [t.b, mb],
      ] as const) {
        assert.equal(
          count(p, "tradeCompleted", () => true, m),
          0,
          "no completion from offer-screen accepts",
        );
        assert.equal(
          count(p, "tradeCancelled", () => true, m),
          0,
        );
        assert.equal(
          count(p, "tradeUpdated", (d) => d.revision === conf.revision, m),
          0,
          "nobody accepted the confirmation screen",
        );
      }
      // B's 9 accepts after the one that opened the screen, and A's 10 late ones: all refused.
      assert.equal(
        count(t.a, "tradeError", (d) => d.code === "STALE_OFFER", ma),
        10,
      );
      assert.equal(
        count(t.b, "tradeError", (d) => d.code === "STALE_OFFER", mb),
        9,
      );
      assert.equal(server.trades.tradeOf(t.a.id), t.tradeId, "the trade is still open on the confirmation screen");
      assert.ok(matchMaker.getLocalRoomById(t.roomId), "its room is still there");
      for (let i = 0; i < 10; i++) {
        t.a.send("tradeAccept", { tradeId: t.tradeId, revision: conf.revision });
        t.b.send("tradeAccept", { tradeId: t.tradeId, revision: conf.revision });
      }
      await exactlyOnce(t);
    });

    it("a trader who leaves the moment the settlement starts: storage holds exactly the trade's result", async () => {
      for (let round = 0; round < 5; round++) {
        const t = await offered();
        t.a.send("tradeAccept", { tradeId: t.tradeId, revision: t.revision });
        t.b.send("tradeAccept", { tradeId: t.tradeId, revision: t.revision });
        await t.a.next("tradeConfirmScreen", (d) => d.tradeId === t.tradeId);
        const m = t.a.mark();
        t.b.send("tradeAccept", { tradeId: t.tradeId });
        await t.a.next("tradeUpdated", (d) => d.theirOffer.accepted, { after: m });
        // A's accept and A's leave arrive together: the leave lands while the settlement runs.
        t.a.send("tradeAccept", { tradeId: t.tradeId });
        await t.a.close();
        players = players.filter((p) => p !== t.a);
        const end = await Promise.race([
          t.b.next("tradeCompleted", (d) => d.tradeId === t.tradeId).then(() => "completed"),
          t.b.next("tradeCancelled", (d) => d.tradeId === t.tradeId).then(() => "cancelled"),
        ]);
        // A's leave has saved A (its login is closed) before storage is checked.
        await until(async () => {
          const rows = await server.storage.orm.em
            .fork()
            .getConnection()
            .execute(`select 1 from player_logins where character_id = ? and ended_at is null`, [t.a.id]);
          return rows.length === 0 && !server.world.player(t.a.id);
        }, "A saved and gone");
        await server.world.queues.drain();
        assert.deepEqual(await totals(server.storage.orm, t.ids), t.before, `round ${round} (${end})`);
        const axes = await server.storage.orm.em
          .fork()
          .getConnection()
          .execute(`select character_id from inventory_items where item_id = 'bronze_axe' and character_id = ?`, [t.a.id]);
        assert.equal(axes.length, end === "completed" ? 0 : 1, `round ${round}: A's axe after ${end}`);
        await t.b.close();
        players = players.filter((p) => p !== t.b);
      }
    });

    it("accepts from both players in the same millisecond: one confirmation screen, one completion", async () => {
      const t = await offered();
      // Back to back in one synchronous block: the two frames leave within the same millisecond.
      const both = (data: unknown) => {
        t.a.send("tradeAccept", data);
        t.b.send("tradeAccept", data);
      };
      both({ tradeId: t.tradeId, revision: t.revision });
      await t.a.next("tradeConfirmScreen", (d) => d.tradeId === t.tradeId);
      await t.b.next("tradeConfirmScreen", (d) => d.tradeId === t.tradeId);
      both({ tradeId: t.tradeId });
      await exactlyOnce(t);
    });
  });
}
