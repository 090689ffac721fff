/**
 * Invariant test: hundreds of random trades between many players over the socket (plain
 * WebSocket and SDK bots), with random cancels, declines, disconnects and reconnects, moves, and
 * inventory actions (bank deposits and withdrawals, equipping) racing the trades. Runs on
 * PostgreSQL when TEST_DATABASE_URL is set, else on PGlite with fewer players and trades.
 *
 * Afterwards, with the server closed (every player saved): the total of every item id and of
 * coins over inventory + equipment + bank of every character is unchanged; no inventory holds more
 * than 28 slots or a bad stack; every trade that reached the offer screen has exactly one audit
 * record, `completed` exactly for the trades the server reported completed.
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import { Bot } from "../../../loadtest/trade/bot.js";
import { tradeOnce, type Offer, type TradeResult } from "../../../loadtest/trade/trade-once.js";
import type { GameServer } from "../../../src/server/server.js";
import type { Storage } from "../../../src/storage/orm.js";
import { tokenFor } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { pgliteStorage, postgresStorage, resetStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import { ADMIN_CODE, audits, totals, until, violations } from "../../helpers/trade.js";

const ON_POSTGRES = !!TEST_DATABASE_URL;
const PLAYERS = ON_POSTGRES ? 16 : 8;
const TRADES = ON_POSTGRES ? 400 : 150;
const CONCURRENT = PLAYERS / 2;
const PAIR_COOLDOWN_MS = 3_300; // the server's is 3 s from when it handled the request

/** Seeded PRNG (mulberry32) so a failing run can be replayed with TRADE_SEED. */
function rng(seed: number) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe(`trade: invariants over hundreds of random trades (${ON_POSTGRES ? "postgresql" : "pglite"})`, function () {
  this.timeout(300_000);
  let storage: Storage;
  let server: GameServer;

  before(async () => {
    storage = ON_POSTGRES ? await postgresStorage() : await pgliteStorage();
    await resetStorage(storage);
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true", TRADE_INACTIVITY_TIMEOUT_MS: "4000", TRADE_REQUEST_TIMEOUT_MS: "3000" }, storage);
  });
  after(async () => server?.close());

  it(`${TRADES} trades between ${PLAYERS} players with chaos: totals unchanged, bounds hold, one audit per opened trade`, async () => {
    const seed = Number(process.env.TRADE_SEED ?? Date.now() % 1_000_000);
    const random = rng(seed);
    const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
    const chance = (p: number) => random() < p;

    // What the server did, seen from inside (the bots may be disconnected when it happens).
    const opened = new Set<string>();
    const completed = new Set<string>();
    const traders = server.trades.traders;
    const send = traders.send.bind(traders);
    traders.send = (id, event, data) => {
      const tradeId = (data as { tradeId?: string })?.tradeId;
      if (event === "tradeStarted" && tradeId) opened.add(tradeId);
      if (event === "tradeCompleted" && tradeId) completed.add(tradeId);
      send(id, event, data);
    };

    // A 3×3 block of free tiles next to the bank: everyone is within 2 tiles of everyone.
    const c = server.content;
    const bank = c.stations.find((s) => s.type === "bank")!;
    let centre: { x: number; z: number } | undefined;
    for (let dx = -3; dx <= 3 && !centre; dx++)
      for (let dz = -3; dz <= 3 && !centre; dz++) {
        const x = bank.x + dx;
        const z = bank.z + dz;
        let ok = true;
        for (let i = -1; i <= 1; i++)
          for (let j = -1; j <= 1; j++) ok &&= c.inBounds(x + i, z + j) && !c.isBlocked(x + i, z + j) && !!c.stationNear("bank", x + i, z + j, 3);
        if (ok) centre = { x, z };
      }
    assert.ok(centre, "a free 3×3 block next to the bank");
    const cluster: { x: number; z: number }[] = [];
    for (let i = -1; i <= 1; i++) for (let j = -1; j <= 1; j++) cluster.push({ x: centre.x + i, z: centre.z + j });

    const bots: Bot[] = [];
    for (let i = 0; i < PLAYERS; i++) {
      const bot = await Bot.connect({ url: server.url, token: tokenFor().token, transport: i % 2 === 0 ? "json" : "sdk" });
      await bot.command(`/admin ${ADMIN_CODE}`, /Admin mode enabled/);
      await bot.command(`/tp ${centre.x} ${centre.z}`, /Teleported/);
      await bot.command(`/give feather ${100 + i * 10}`, /^Gave/);
      await bot.command(`/give bronze_arrow ${50 + i}`, /^Gave/);
      await bot.command(`/give logs ${1 + (i % 4)}`, /^Gave/);
      await bot.command(`/give ridge_token 3`, /^Gave/);
      await bot.command(`/coins ${500 + i * 37}`, /Coins set/);
      bots.push(bot);
    }
    await server.world.queues.drain();
    const before = await totals(storage.orm);
    assert.ok(before.coins! > 0 && before.feather! > 0);

    const busy = new Set<Bot>();
    const away = new Set<Bot>(); // disconnected for now
    const current = new Map<Bot, string>();
    const lastPair = new Map<string, number>();
    const results: TradeResult[] = [];
    const chaosCount: Record<string, number> = {};
    const count = (k: string) => (chaosCount[k] = (chaosCount[k] ?? 0) + 1);

    const randomOffer = (bot: Bot): Offer => {
      const tradeable = bot.inventory.filter((s) => s.itemId !== "ridge_token" || chance(0.05)); // sometimes try an untradeable one
      const items: Offer["items"] = [];
      const n = Math.floor(random() * 3);
      for (let k = 0; k < n && tradeable.length; k++) {
        const s = pick(tradeable);
        if (items.some((l) => l.inventorySlot === s.slot)) continue;
        items.push({ inventorySlot: s.slot, quantity: 1 + Math.floor(random() * s.quantity) });
      }
      const coins = chance(0.5) ? Math.floor(random() * Math.min(bot.coins, 200)) : 0;
      return { items, coins };
    };

    const disconnect = async (bot: Bot) => {
      if (away.has(bot)) return;
      away.add(bot);
      count(`disconnect:${bot.transport}`);
      await bot.close();
      await bot.reconnect();
      away.delete(bot);
    };

    const chaos = (bot: Bot) => {
      const r = random();
      if (r < 0.08) return void disconnect(bot);
      if (!bot.connected) return;
      if (r < 0.25) {
        const t = current.get(bot);
        if (t) {
          count("cancel");
          bot.send("tradeCancel", { tradeId: t });
        }
      } else if (r < 0.35) {
        count("move");
        bot.send("player:move", pick(cluster));
      } else if (r < 0.65 && bot.inventory.length) {
        count("deposit");
        const s = pick(bot.inventory);
        bot.send("bank:deposit", { slot: s.slot, quantity: 1 + Math.floor(random() * s.quantity) });
      } else if (r < 0.9) {
        const bankItems = (bot.state?.bank ?? []) as { itemId: string; quantity: number }[];
        if (bankItems.length) {
          count("withdraw");
          const b = pick(bankItems);
          bot.send("bank:withdraw", { itemId: b.itemId, quantity: 1 + Math.floor(random() * b.quantity) });
        }
      } else {
        const tool = bot.inventory.find((s) => /axe|pickaxe/.test(s.itemId));
        if (tool) {
          count("equip");
          bot.send("inventory:use", { slot: tool.slot });
        }
      }
    };

    const runOne = async (a: Bot, b: Bot) => {
      busy.add(a);
      busy.add(b);
      lastPair.set([a.id, b.id].sort().join(), Date.now());
      // Sometimes an inventory action is already in flight as the trade starts.
      if (chance(0.15)) chaos(a);
      const res = await tradeOnce(a, b, {
        offerA: randomOffer,
        offerB: randomOffer,
        decline: chance(0.05),
        timeoutMs: 12_000,
        onStarted: (tradeId) => {
          current.set(a, tradeId);
          current.set(b, tradeId);
          if (chance(0.3)) chaos(chance(0.5) ? a : b);
        },
      });
      current.delete(a);
      current.delete(b);
      results.push(res);
      busy.delete(a);
      busy.delete(b);
    };

    const inFlight = new Set<Promise<void>>();
    let started = 0;
    const chaosTimer = setInterval(() => {
      if (chance(0.5)) chaos(pick(bots));
    }, 25);
    try {
      while (started < TRADES) {
        const idle = bots.filter((b) => !busy.has(b) && !away.has(b) && b.connected);
        let pair: [Bot, Bot] | undefined;
        const now = Date.now();
        for (let tries = 0; tries < 20 && !pair && idle.length >= 2 && inFlight.size < CONCURRENT; tries++) {
          const a = pick(idle);
          const b = pick(idle);
          if (a === b) continue;
          if (now - (lastPair.get([a.id, b.id].sort().join()) ?? 0) < PAIR_COOLDOWN_MS) continue;
          pair = [a, b];
        }
        if (!pair) {
          await Promise.race([...inFlight, new Promise((r) => setTimeout(r, 20))]);
          continue;
        }
        started++;
        const p = runOne(...pair).finally(() => inFlight.delete(p));
        inFlight.add(p);
      }
      await Promise.all(inFlight);
    } finally {
      clearInterval(chaosTimer);
    }
    // Everyone back online, every trade room gone, then the server closes (saving everyone).
    await until(() => away.size === 0, "reconnections", 30_000);
    await until(async () => (await matchMaker.query({ name: "trade" })).length === 0, "trade rooms closed", 30_000);
    await Promise.all(bots.map((b) => b.close()));
    await server.close();

    const byOutcome: Record<string, number> = {};
    for (const r of results) {
      const k = r.outcome === "cancelled" || r.outcome === "refused" ? `${r.outcome}:${r.reason}` : r.outcome;
      byOutcome[k] = (byOutcome[k] ?? 0) + 1;
    }
    console.log(
      `      seed ${seed}; outcomes ${JSON.stringify(byOutcome)}; chaos ${JSON.stringify(chaosCount)}; opened ${opened.size}, completed ${completed.size}`,
    );

    assert.deepEqual(await totals(storage.orm), before, "every item id and coins conserved");
    assert.deepEqual(await violations(storage.orm, (id) => server.content.items.get(id)), []);
    const rows = await audits(storage.orm);
    const ids = new Set(rows.map((r) => r.id));
    assert.equal(ids.size, rows.length);
    assert.deepEqual([...ids].sort(), [...opened].sort(), "one audit record per trade that reached the offer screen");
    assert.deepEqual(
      rows
        .filter((r) => r.outcome === "completed")
        .map((r) => r.id)
        .sort(),
      [...completed].sort(),
      "completed audit records are exactly the completed trades",
    );
    assert.ok(completed.size >= TRADES / 5, `enough trades completed (${completed.size})`);
  });
});
