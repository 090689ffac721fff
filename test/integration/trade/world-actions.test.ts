/**
 * The world and an open trade, over real sockets through the real handlers.
 *
 * 1. While a player is on the offer or the confirmation screen, banking, equipping, eating,
 *    dropping, store purchases and sales, gathering and attacking are refused with a system
 *    `chat:message` and change nothing (memory, storage, the ground); the same actions at the same
 *    place work again once the trade has ended, so the refusals are the trade's doing.
 * 2. On real PostgreSQL: a bank deposit, a store sale or a drop of the offered slot sent at the
 *    same moment as the final accept, and a deposit, sale or drop already committing when the trade
 *    settles: exactly one of them happens, totals of every item id and of coins are what that one
 *    outcome implies, and memory agrees with storage.
 */
import assert from "node:assert/strict";
import type { Tile } from "../../../src/domain/types.js";
import type { GameServer } from "../../../src/server/server.js";
import type { Storage } from "../../../src/storage/orm.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { pgliteStorage, postgresStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import {
  audits,
  becomeAdmin,
  count,
  holdCharacterLock,
  lockWaiters,
  marker,
  freeTilesNear,
  offerAxeForCoins,
  openTrade,
  roomGone,
  slotOf,
  teleport,
  toConfirm,
  totals,
  until,
  useTradeServer,
} from "../../helpers/trade.js";

const WHILE_TRADING = /while trading/;

/** One server per describe block, with the players it joined closed after each test. */
function useServer(storage: () => Promise<Storage>) {
  const ctx = Object.assign(useTradeServer(storage), {
    async join(kind: "sdk" | "json") {
      return ctx.track(kind === "sdk" ? await sdkPlayer(ctx.server) : await jsonPlayer(ctx.server));
    },
    /** Two free tiles at most 2 apart, both within 3 tiles of `at` (a bank booth or a store). */
    spotNear: (at: Tile): [Tile, Tile] => freeTilesNear(ctx.server, at),
    /** A (plain WebSocket) and B (SDK), admins, standing at `spot`. */
    async pairAt(spot: [Tile, Tile], kinds: ["sdk" | "json", "sdk" | "json"] = ["json", "sdk"]) {
      const a = await ctx.join(kinds[0]);
      const b = await ctx.join(kinds[1]);
      await becomeAdmin(a);
      await becomeAdmin(b);
      await teleport(a, spot[0].x, spot[0].z);
      await teleport(b, spot[1].x, spot[1].z);
      return { a, b };
    },
    /** Everything of a player an interface action could change, in memory. */
    state(id: string) {
      const p = ctx.server.world.player(id)!;
      const ground = [...ctx.server.world.groundItems.values()].filter((g) => g.ownerId === id).map((g) => `${g.itemId}×${g.quantity}`);
      return {
        inventory: p.inventory.map((s) => (s ? `${s.itemId}×${s.quantity}` : null)),
        equipment: JSON.stringify(p.equipment),
        bank: [...p.bank].sort(),
        coins: p.coins,
        health: p.health,
        action: p.action,
        path: p.path.length,
        ground,
      };
    },
  });
  return ctx;
}

const station = (server: GameServer, type: string): Tile => server.content.stations.find((s) => s.type === type)!;
const store = (server: GameServer) => [...server.content.stores.values()].find((s) => s.buysAnything)!;

describe("trade: the world refuses interface actions during a trade", function () {
  this.timeout(60_000);
  const t = useServer(pgliteStorage);

  /**
   * Send each action; each answers with one system line saying the player is trading. Afterwards
   * nothing about the player changed and no `player:sync` was sent.
   */
  async function allRefused(p: TestPlayer, actions: [string, string, unknown][], screen: string) {
    const before = t.state(p.id);
    const m = p.mark();
    for (const [label, event, data] of actions) {
      const mk = p.mark();
      p.send(event, data);
      const line = await p.next("chat:message", (d) => d.type === "system", { after: mk });
      assert.match(line.text, WHILE_TRADING, `${label} on the ${screen}: "${line.text}"`);
    }
    await marker(p);
    await t.server.world.queues.drain();
    assert.deepEqual(t.state(p.id), before, `nothing changed on the ${screen}`);
    assert.equal(
      count(p, "player:sync", () => true, m),
      0,
      `no player:sync on the ${screen}`,
    );
  }

  it("at a bank: deposit, equip, eat, drop, gather and attack are refused on both screens, and work after the trade", async () => {
    const bank = station(t.server, "bank");
    const { a, b } = await t.pairAt(t.spotNear(bank));
    const tree = [...t.server.world.resources.values()].find((r) => r.node?.skill === "woodcutting")!;
    const npc = [...t.server.world.npcs.values()].find((n) => n.def.attackable)!;
    assert.ok(tree && npc, "a tree and an attackable NPC exist");
    const orm = t.server.storage.orm;
    const stored = await totals(orm, [a.id]);
    const axe = slotOf(a, "bronze_axe");
    const actions = (): [string, string, unknown][] => [
      ["bank:deposit of the offered slot", "bank:deposit", { slot: axe }],
      ["bank:deposit of another slot", "bank:deposit", { slot: slotOf(a, "shrimp"), quantity: 1 }],
      ["bank:withdraw", "bank:withdraw", { itemId: "shrimp", quantity: 1 }],
      ["equip (inventory:use of the axe)", "inventory:use", { slot: axe }],
      ["equip (inventory:use of the pickaxe)", "inventory:use", { slot: slotOf(a, "bronze_pickaxe") }],
      ["eat (inventory:use of shrimp)", "inventory:use", { slot: slotOf(a, "shrimp") }],
      ["drop of the offered slot", "inventory:use", { slot: axe, targetId: "drop" }],
      ["drop of another slot", "inventory:use", { slot: slotOf(a, "bread"), targetId: "drop" }],
      ["gather", "player:action", { action: "gather", targetId: tree.id }],
      ["attack", "player:action", { action: "attack", targetId: npc.id }],
    ];

    const { tradeId, roomId } = await openTrade(a, b);
    const revision = await offerAxeForCoins(a, b, tradeId);
    await allRefused(a, actions(), "offer screen");
    await toConfirm(a, b, tradeId, revision);
    await allRefused(a, actions(), "confirmation screen");
    assert.deepEqual(await totals(orm, [a.id]), stored, "storage unchanged");

    // The trade ends; the same place and the same items now work.
    a.send("tradeCancel", { tradeId });
    await a.next("tradeCancelled", (d) => d.tradeId === tradeId);
    await roomGone(roomId);
    let m = a.mark();
    a.send("bank:deposit", { slot: slotOf(a, "shrimp"), quantity: 1 });
    await a.next("player:sync", (d) => d.bank?.some((x: { itemId: string }) => x.itemId === "shrimp"), { after: m });
    m = a.mark();
    a.send("inventory:use", { slot: axe });
    await a.next("player:sync", (d) => d.equipment?.weapon?.itemId === "bronze_axe", { after: m });
    m = a.mark();
    a.send("inventory:use", { slot: slotOf(a, "bread"), targetId: "drop" });
    await a.next("player:sync", (d) => !d.inventory.some((s: { itemId: string }) => s.itemId === "bread"), { after: m });
    assert.deepEqual(t.state(a.id).ground, ["bread×1"]);
  });

  it("at a store: buying and selling are refused on both screens, and work after the trade", async () => {
    const shop = store(t.server);
    const { a, b } = await t.pairAt(t.spotNear(shop), ["sdk", "json"]);
    const actions = (): [string, string, unknown][] => [
      ["sell the offered item", "player:action", { action: "sell", targetId: shop.id, itemId: "bronze_axe", quantity: 1 }],
      ["sell another item", "player:action", { action: "sell", targetId: shop.id, itemId: "bronze_pickaxe", quantity: 1 }],
      ["buy", "player:action", { action: "buy", targetId: shop.id, itemId: "bread", quantity: 1 }],
    ];
    const { tradeId, roomId } = await openTrade(a, b);
    const revision = await offerAxeForCoins(a, b, tradeId);
    await allRefused(a, actions(), "offer screen");
    await toConfirm(a, b, tradeId, revision);
    await allRefused(a, actions(), "confirmation screen");

    b.send("tradeCancel", { tradeId });
    await a.next("tradeCancelled", (d) => d.tradeId === tradeId);
    await roomGone(roomId);
    const coins = t.state(a.id).coins;
    let m = a.mark();
    a.send("player:action", { action: "sell", targetId: shop.id, itemId: "bronze_pickaxe", quantity: 1 });
    await a.next("player:sync", (d) => d.coins > coins, { after: m });
    m = a.mark();
    a.send("player:action", { action: "buy", targetId: shop.id, itemId: "bread", quantity: 1 });
    await a.next("player:sync", (d) => d.inventory.filter((s: { itemId: string }) => s.itemId === "bread").length === 2, { after: m });
  });
});

describe("trade: item actions racing the settlement, through the real handlers (postgresql)", function () {
  this.timeout(120_000);
  before(function () {
    if (!TEST_DATABASE_URL) this.skip(); // PGlite serialises transactions: races prove nothing there.
  });
  const t = useServer(postgresStorage);
  const ROUNDS = 6;

  type Race = {
    name: string;
    at: (s: GameServer) => Tile;
    /** The action on A's offered axe. */
    send: (a: TestPlayer, axeSlot: number) => void;
    /** Whether storage or the world shows the action happened. */
    happened: (a: TestPlayer) => Promise<boolean>;
    /** What the action does to the totals of A and B when it happens. */
    effect: (s: GameServer) => Record<string, number>;
  };
  const sellPrice = (s: GameServer) => Math.floor(s.content.items.get("bronze_axe")!.value * store(s).sellMultiplier);
  const races: Race[] = [
    {
      name: "a bank deposit",
      at: (s) => station(s, "bank"),
      send: (a, slot) => a.send("bank:deposit", { slot }),
      happened: async (a) =>
        (await t.server.storage.orm.em.fork().getConnection().execute(`select 1 from bank_items where character_id = ? and item_id = 'bronze_axe'`, [a.id]))
          .length > 0,
      effect: () => ({}),
    },
    {
      name: "a store sale",
      at: (s) => store(s),
      send: (a) => a.send("player:action", { action: "sell", targetId: store(t.server).id, itemId: "bronze_axe", quantity: 1 }),
      happened: async (a) => a.received.some((r) => r.event === "chat:message" && /^You sell/.test(r.data.text)),
      effect: (s) => ({ bronze_axe: -1, coins: sellPrice(s) }),
    },
    {
      name: "a drop",
      at: (s) => station(s, "bank"),
      send: (a, slot) => a.send("inventory:use", { slot, targetId: "drop" }),
      happened: async (a) => [...t.server.world.groundItems.values()].some((g) => g.ownerId === a.id && g.itemId === "bronze_axe"),
      effect: () => ({ bronze_axe: -1 }),
    },
  ];
  const plus = (a: Record<string, number>, b: Record<string, number>) => {
    const out = { ...a };
    for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
    return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== 0));
  };

  /** After the trade ended: memory of both players equals storage (items and coins). */
  async function memoryMatchesStorage(ids: string[]) {
    await t.server.world.queues.drain();
    for (const id of ids) {
      const p = t.server.world.player(id)!;
      const mem: Record<string, number> = { coins: p.coins };
      for (const s of p.inventory) if (s) mem[s.itemId] = (mem[s.itemId] ?? 0) + s.quantity;
      for (const s of Object.values(p.equipment)) if (s) mem[s.itemId] = (mem[s.itemId] ?? 0) + s.quantity;
      for (const [itemId, q] of p.bank) mem[itemId] = (mem[itemId] ?? 0) + q;
      assert.deepEqual(await totals(t.server.storage.orm, [id]), Object.fromEntries(Object.entries(mem).filter(([, v]) => v !== 0)), `${id}: memory = storage`);
    }
  }

  for (const race of races) {
    it(`${race.name} of the offered slot sent with the final accept: exactly one happens (${ROUNDS} rounds, three orders)`, async () => {
      for (let round = 0; round < ROUNDS; round++) {
        const { a, b } = await t.pairAt(t.spotNear(race.at(t.server)), round % 2 ? ["sdk", "json"] : ["json", "sdk"]);
        const orm = t.server.storage.orm;
        const ids = [a.id, b.id];
        const before = await totals(orm, ids);
        const { tradeId, roomId } = await openTrade(a, b);
        const axe = slotOf(a, "bronze_axe");
        const conf = await toConfirm(a, b, tradeId, await offerAxeForCoins(a, b, tradeId));
        const accept = (p: TestPlayer) => p.send("tradeAccept", { tradeId, revision: conf });
        const order = (["action, then A's final accept", "A's final accept, then the action", "B's final accept with the action"] as const)[round % 3]!;
        if (order === "B's final accept with the action") {
          const m = b.mark();
          accept(a);
          await b.next("tradeUpdated", (d) => d.theirOffer.accepted === true && d.revision === conf, { after: m });
          // Same synchronous block: both frames leave at once, on two connections.
          accept(b);
          race.send(a, axe);
        } else {
          const m = a.mark();
          accept(b);
          await a.next("tradeUpdated", (d) => d.theirOffer.accepted === true && d.revision === conf, { after: m });
          if (order === "action, then A's final accept") {
            race.send(a, axe);
            accept(a);
          } else {
            accept(a);
            race.send(a, axe);
          }
        }
        const end = await Promise.race([
          a.next("tradeCompleted", (d) => d.tradeId === tradeId).then(() => "completed"),
          a.next("tradeCancelled", (d) => d.tradeId === tradeId).then(() => "cancelled"),
        ]);
        await roomGone(roomId);
        await marker(a);
        await marker(b);
        await t.server.world.queues.drain();
        const traded = end === "completed";
        const acted = await race.happened(a);
        assert.ok(traded !== acted, `round ${round} (${order}): exactly one of the trade (${end}) and ${race.name} (${acted})`);
        assert.deepEqual(await totals(orm, ids), traded ? before : plus(before, race.effect(t.server)), `round ${round} (${order}): totals`);
        assert.deepEqual(
          (await audits(orm, [tradeId])).map((r) => r.outcome),
          [traded ? "completed" : "cancelled"],
        );
        await memoryMatchesStorage(ids);
        await Promise.all([a.close(), b.close()]);
        t.players = [];
      }
    });
  }

  for (const race of races) {
    it(`${race.name} of the offered item still committing when the trade settles: the ${race.name.slice(2)} wins, the trade ends invalid_items (one tradeCancelled each)`, async () => {
      const { a, b } = await t.pairAt(t.spotNear(race.at(t.server)));
      const orm = t.server.storage.orm;
      const ids = [a.id, b.id];
      const before = await totals(orm, ids);
      const axe = slotOf(a, "bronze_axe");
      // A's row is held: the action's transaction waits on it with the axe still in A's memory.
      const lock = await holdCharacterLock(orm, a.id);
      let released = false;
      try {
        const base = await lockWaiters(orm);
        race.send(a, axe);
        await until(async () => (await lockWaiters(orm)) > base, `${race.name} to wait for A's row`);
        // Meanwhile a trade of that axe reaches settlement (it queues behind the action).
        const { tradeId, roomId } = await openTrade(a, b);
        const conf = await toConfirm(a, b, tradeId, await offerAxeForCoins(a, b, tradeId));
        const ma = a.mark();
        const mb = b.mark();
        a.send("tradeAccept", { tradeId, revision: conf });
        b.send("tradeAccept", { tradeId, revision: conf });
        await marker(a);
        await marker(b);
        assert.equal(count(a, "tradeCancelled", () => true, ma) + count(a, "tradeCompleted", () => true, ma), 0, "the trade waits for the action");
        released = true;
        await lock.release();

        await a.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: ma });
        await b.next("tradeCancelled", (d) => d.tradeId === tradeId, { after: mb });
        await roomGone(roomId);
        await marker(a);
        await marker(b);
        for (const [p, m] of [
          [a, ma],
          [b, mb],
        ] as const) {
          const got = p.received.filter((r) => r.seq >= m && r.event === "tradeCancelled").map((r) => r.data);
          assert.equal(got.length, 1, "exactly one tradeCancelled");
          assert.equal(got[0].reason, "invalid_items");
          assert.equal(
            count(p, "tradeCompleted", () => true, m),
            0,
          );
        }
        assert.ok(await race.happened(a), `${race.name} happened`);
        assert.deepEqual(await totals(orm, ids), plus(before, race.effect(t.server)));
        assert.deepEqual(await audits(orm, [tradeId]), [{ id: tradeId, outcome: "cancelled", reason: "invalid_items" }]);
        await memoryMatchesStorage(ids);
      } finally {
        if (!released) await lock.release();
      }
    });
  }
});
