/**
 * Crash test: the real server process (`src/main.ts`) runs a burst of trades from socket bots and
 * is killed with SIGKILL in the middle of it; then storage is checked and the server restarted.
 *
 * Storage is PostgreSQL (DATABASE_URL = TEST_DATABASE_URL) when configured, otherwise PGlite in a
 * temporary world directory (PGlite is single-process, so it is opened here only while no server
 * process runs). Checks after the kill:
 * - the total of every item id and of coins is what it was before the burst;
 * - every character holds exactly its holdings before the burst plus the effect of the completed
 *   trades recorded in the audit log (so a swap and its audit record are all or nothing);
 * - every trade a client saw completed has its `completed` audit record, and at most the trades in
 *   flight at the kill completed unseen;
 * - slot and stack bounds hold; a restarted server serves every character what storage holds.
 */
import assert from "node:assert/strict";
import { Bot } from "../../../loadtest/trade/bot.js";
import { tradeOnce, type TradeResult } from "../../../loadtest/trade/trade-once.js";
import type { Storage } from "../../../src/storage/orm.js";
import { loadContent } from "../../../src/content/load.js";
import { tokenFor } from "../../helpers/clients.js";
import { useServerProcess } from "../../helpers/server-process.js";
import { TEST_DATABASE_URL } from "../../helpers/storage.js";
import { ADMIN_CODE, totals, until, violations } from "../../helpers/trade.js";

const BOTS = 12;
/** Kill when at least this many trades are in flight (or after a while anyway). */
const IN_FLIGHT_AT_KILL = 3;
const KILL_AFTER_COMPLETED = 15;

describe(`trade: SIGKILL during a burst of trades (${TEST_DATABASE_URL ? "postgresql" : "pglite"})`, function () {
  this.timeout(240_000);
  const t = useServerProcess({ TICK_MS: "100" });
  const { start, withStorage } = t;

  type PerCharacter = Record<string, Record<string, number>>;
  const perCharacter = async (s: Storage, ids: string[]): Promise<PerCharacter> => {
    const out: PerCharacter = {};
    for (const id of ids) out[id] = await totals(s.orm, [id]);
    return out;
  };

  it("storage holds exactly the committed trades, each with its audit record; the restarted server agrees", async () => {
    const tokens = Array.from({ length: BOTS }, () => tokenFor().token);

    // 1. Set-up on a first process, stopped gracefully so everything is saved.
    let url = await start();
    let bots: Bot[] = [];
    for (const [i, token] of tokens.entries()) {
      const bot = await Bot.connect({ url, token });
      await bot.command(`/admin ${ADMIN_CODE}`, /Admin mode enabled/);
      await bot.command(`/give feather ${200 + i}`, /^Gave/);
      await bot.command(`/give logs 2`, /^Gave/);
      await bot.command(`/coins ${1000 + i}`, /Coins set/);
      bots.push(bot);
    }
    const ids = bots.map((b) => b.id);
    await Promise.all(bots.map((b) => b.close()));
    assert.equal((await t.child!.stop("SIGTERM")).code, 0, t.child!.output());

    const before = await withStorage(async (s) => ({ all: await totals(s.orm), each: await perCharacter(s, ids) }));

    // 2. A burst of trades on a second process, killed with SIGKILL once enough completed.
    url = await start();
    bots = await Promise.all(tokens.map((token) => Bot.connect({ url, token })));
    const results: TradeResult[] = [];
    const seenCompleted = new Set<string>();
    let inFlight = 0;
    let maxInFlightAtKill = 0;
    let finishedAtKill = 0;
    let seenAtKill = 0;
    let killed = false;
    const lastPair = new Map<string, number>();
    const busy = new Set<Bot>();
    const killedAt = new Promise<void>((resolve) => {
      const loop = async () => {
        const running: Promise<void>[] = [];
        let armed = false;
        while (!killed) {
          const idle = bots.filter((b) => !busy.has(b));
          const now = Date.now();
          let pair: [Bot, Bot] | undefined;
          for (let i = 0; i < idle.length && !pair; i++)
            for (let j = i + 1; j < idle.length && !pair; j++) {
              const key = [idle[i]!.id, idle[j]!.id].sort().join();
              if (now - (lastPair.get(key) ?? 0) > 3_300) pair = [idle[i]!, idle[j]!];
            }
          if (!pair) {
            await new Promise((r) => setTimeout(r, 10));
            continue;
          }
          const [a, b] = pair;
          lastPair.set([a.id, b.id].sort().join(), now);
          busy.add(a);
          busy.add(b);
          inFlight++;
          const fa = a.inventory.find((s) => s.itemId === "feather");
          running.push(
            tradeOnce(a, b, {
              offerA: () => ({ items: fa ? [{ inventorySlot: fa.slot, quantity: 1 + (results.length % 5) }] : [], coins: 0 }),
              offerB: () => ({ items: [], coins: 1 + (results.length % 7) }),
              timeoutMs: 20_000,
            }).then((r) => {
              inFlight--;
              results.push(r);
              if (r.outcome === "completed" && r.tradeId) seenCompleted.add(r.tradeId);
              busy.delete(a);
              busy.delete(b);
            }),
          );
          if (!armed && seenCompleted.size >= KILL_AFTER_COMPLETED) {
            armed = true;
            // Mid-burst: as soon as several trades are in flight (or after 10 s regardless).
            const deadline = Date.now() + 10_000;
            const timer = setInterval(() => {
              if (inFlight < IN_FLIGHT_AT_KILL && Date.now() < deadline) return;
              clearInterval(timer);
              killed = true;
              maxInFlightAtKill = inFlight;
              finishedAtKill = results.length;
              seenAtKill = seenCompleted.size;
              t.child!.proc.kill("SIGKILL");
              resolve();
            }, 1);
          }
        }
        await Promise.allSettled(running);
      };
      void loop();
    });
    await killedAt;
    const exit = await t.child!.exited;
    assert.equal(exit.signal, "SIGKILL");
    await Promise.all(bots.map((b) => b.close().catch(() => undefined)));
    // Trades still in flight at the kill end (their sockets are gone); count them as unknown.
    await until(() => inFlight === 0, "bots to notice the kill", 30_000);

    // 3. Storage after the crash.
    const content = await loadContent(`${t.world}/manifests`);
    const after = await withStorage(async (s) => {
      const rows: { id: string; character_a: string; character_b: string; offer_a: any; offer_b: any }[] = await s.orm.em
        .fork()
        .getConnection()
        .execute(`select id, character_a, character_b, offer_a, offer_b from trade_audits where outcome = 'completed'`);
      return {
        all: await totals(s.orm),
        each: await perCharacter(s, ids),
        completed: rows.map((r) => ({
          ...r,
          offer_a: typeof r.offer_a === "string" ? JSON.parse(r.offer_a) : r.offer_a,
          offer_b: typeof r.offer_b === "string" ? JSON.parse(r.offer_b) : r.offer_b,
        })),
        bad: await violations(s.orm, (id) => content.items.get(id)),
        cancelledAudits: (await s.orm.em.fork().getConnection().execute(`select count(*)::int n from trade_audits where outcome = 'cancelled'`))[0].n,
      };
    });
    console.log(
      `      ${finishedAtKill} trades finished before the kill (${seenAtKill} seen completed), ${maxInFlightAtKill} in flight at the kill, ` +
        `${after.completed.length} completed in storage, ${after.cancelledAudits} cancelled audits`,
    );
    assert.deepEqual(after.all, before.all, "every item id and coins conserved");
    assert.deepEqual(after.bad, []);
    const completedIds = new Set(after.completed.map((r) => r.id));
    for (const id of seenCompleted) assert.ok(completedIds.has(id), `completed trade ${id} has its audit record`);
    assert.ok(after.completed.length - seenCompleted.size <= maxInFlightAtKill, "only trades in flight at the kill completed unseen");
    // Each character: its holdings before plus exactly the audited completed trades.
    const expected: PerCharacter = structuredClone(before.each);
    const add = (id: string, itemId: string, q: number) => {
      const m = (expected[id] ??= {});
      m[itemId] = (m[itemId] ?? 0) + q;
      if (m[itemId] === 0) delete m[itemId];
    };
    for (const r of after.completed) {
      for (const [from, to, offer] of [
        [r.character_a, r.character_b, r.offer_a],
        [r.character_b, r.character_a, r.offer_b],
      ] as const) {
        for (const line of offer.items) {
          add(from, line.itemId, -line.quantity);
          add(to, line.itemId, line.quantity);
        }
        if (offer.coins) {
          add(from, "coins", -offer.coins);
          add(to, "coins", offer.coins);
        }
      }
    }
    assert.deepEqual(after.each, expected, "storage = holdings before + the audited completed trades");

    // 4. Restart: the server comes back and serves what storage holds.
    url = await start();
    for (const token of tokens) {
      const bot = await Bot.connect({ url, token });
      const held: Record<string, number> = {};
      for (const s of bot.inventory) held[s.itemId] = (held[s.itemId] ?? 0) + s.quantity;
      for (const b of bot.state.bank ?? []) held[b.itemId] = (held[b.itemId] ?? 0) + b.quantity;
      for (const e of Object.values(bot.state.equipment ?? {}) as { itemId: string; quantity: number }[]) held[e.itemId] = (held[e.itemId] ?? 0) + e.quantity;
      if (bot.coins) held.coins = bot.coins;
      assert.deepEqual(held, after.each[bot.id], `${bot.name} after restart`);
      await bot.close();
    }
    assert.equal((await t.child!.stop("SIGTERM")).code, 0);
    t.child = undefined;
  });
});
