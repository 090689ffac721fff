/** Part 1 of bench:trade: `settleTrade` on trades built with the domain transitions, without any protocol, at 1, 8, 16 and 32 concurrent workers. */
import type { Trade } from "../../src/domain/trade/trade.js";
import { inventoryFromSlots, type ItemLookup } from "../../src/domain/inventory.js";
import { acceptTrade, createTrade, respondToRequest, setOfferCoins, setOfferItem } from "../../src/domain/trade/transitions.js";
import type { Storage } from "../../src/storage/orm.js";
import { CharacterRepository } from "../../src/storage/characters/repository.js";
import { settleTrade } from "../../src/trade/settlement.js";
import { cpuSnapshot, pgDelta } from "./cpu.js";
import { log, ms, pctOf as pct, SETTLE_SECONDS, totals } from "./options.js";

export interface SettleLevel {
  concurrency: number;
  settlements: number;
  perSecond: number;
  p50: number;
  p99: number;
  failed: number;
  /** CPU seconds other processes used meanwhile (contention from outside the benchmark). */
  others: number;
  /** CPU milliseconds per settlement: this process (client side) and PostgreSQL. */
  clientMs: number;
  postgresMs: number;
}

/** A trade in state `settling` where `from` gives one feather (slot 0) and `to` gives one coin. */
export function settlingTrade(id: string, from: string, to: string, items: ItemLookup, feathers: number, coins: number): Trade {
  const inv = inventoryFromSlots([{ slot: 0, itemId: "feather", quantity: feathers }]);
  if (!inv.ok) throw new Error(inv.error.message);
  const held = { inventory: inv.value, coins };
  const ctx = { items, holdingsOf: () => held };
  const must = <T>(r: { ok: boolean; value?: T; error?: { message: string } }): T => {
    if (!r.ok) throw new Error(r.error!.message);
    return r.value!;
  };
  const now = Date.now();
  let s = must(createTrade({ id, a: { playerId: from, name: "A", level: 3 }, b: { playerId: to, name: "B", level: 3 }, now }));
  s = must(respondToRequest(s, { playerId: to, accept: true }, now)).trade;
  s = must(setOfferItem(s, { playerId: from, slot: 0, quantity: 1 }, now, ctx)).trade;
  s = must(setOfferCoins(s, { playerId: to, coins: 1 }, now, ctx)).trade;
  for (let i = 0; i < 2; i++) {
    s = must(acceptTrade(s, { playerId: from }, now, ctx)).trade;
    s = must(acceptTrade(s, { playerId: to }, now, ctx)).trade;
  }
  return s;
}

export async function benchSettlement(storage: Storage, items: ItemLookup): Promise<SettleLevel[]> {
  const repo = new CharacterRepository(storage.orm as never);
  const pairs: [string, string][] = [];
  for (let i = 0; i < 32; i++) {
    const mk = async () =>
      (
        await repo.create({
          accountId: `bench-settle-${i}-${Math.random()}`,
          coins: 1_000_000,
          inventory: [{ slot: 0, itemId: "feather", quantity: 1_000_000 }],
        })
      ).id;
    pairs.push([await mk(), await mk()]);
  }
  const before = await totals(storage);
  const levels: SettleLevel[] = [];
  let seq = 0;
  for (const concurrency of [1, 8, 16, 32]) {
    const lat: number[] = [];
    let failed = 0;
    const until = performance.now() + SETTLE_SECONDS * 1000;
    const t0 = performance.now();
    const cpu0 = cpuSnapshot(0);
    await Promise.all(
      pairs.slice(0, concurrency).map(async ([x, y]) => {
        // Holdings only need to cover the offer (the transaction re-checks the real rows); the
        // trades are built once per direction and copied with a new id, so the timing is the settlement's.
        const templates = [settlingTrade("t", x, y, items, 1, 1), settlingTrade("t", y, x, items, 1, 1)];
        for (let n = 0; performance.now() < until; n++) {
          const s = { ...templates[n % 2]!, id: `settle-${seq++}` };
          const t = performance.now();
          const r = await settleTrade(storage.orm, s, items);
          lat.push(performance.now() - t);
          if (!r.ok) failed++;
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const cpu1 = cpuSnapshot(0);
    const others = cpu1.all - cpu0.all - (cpu1.bots - cpu0.bots) - pgDelta(cpu0, cpu1);
    const level = {
      concurrency,
      settlements: lat.length,
      perSecond: lat.length / elapsed,
      p50: pct(lat, 50),
      p99: pct(lat, 99),
      failed,
      others,
      clientMs: ((cpu1.bots - cpu0.bots) * 1000) / lat.length,
      postgresMs: (pgDelta(cpu0, cpu1) * 1000) / lat.length,
    };
    levels.push(level);
    log(
      `  settleTrade ×${concurrency}: ${level.perSecond.toFixed(0)}/s, p50 ${ms(level.p50)}, p99 ${ms(level.p99)}, failed ${failed}; ` +
        `CPU: this process ${(cpu1.bots - cpu0.bots).toFixed(1)} s, PostgreSQL ${pgDelta(cpu0, cpu1).toFixed(1)} s, others ${others.toFixed(1)} s of ${(2 * elapsed).toFixed(0)}`,
    );
  }
  const after = await totals(storage);
  if (JSON.stringify(before) !== JSON.stringify(after)) throw new Error(`bare settlement changed totals: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
  return levels;
}
