/**
 * The settlement transaction: the only place where a trade moves items and coins.
 *
 * One transaction on a fresh entity manager:
 * 1. lock both character rows, in id order, with refreshed reads (no cached row is trusted);
 * 2. lock both characters' inventory rows, in the same order;
 * 3. re-check both offers against the locked rows and plan the move (`planSettlement`: slots,
 *    item ids, quantities, coins, 28 slots, 2,147,483,647 caps);
 * 4. write both inventories and coin totals and the audit record; commit.
 * Serialization failures and deadlocks are retried a bounded number of times, then it fails closed.
 */
import { LockMode } from "@mikro-orm/core";
import type { SqlEntityManager } from "@mikro-orm/sql";
import { CharacterEntity, InventoryItemEntity, TradeAuditEntity, type AuditedOffer } from "../../entities/index.js";
import { inventoryFromSlots, inventoryToSlots, type Inventory, type ItemLookup } from "../domain/inventory.js";
import { offerValue, planSettlement, type ReceivedItem, type TradeOffer, type TradeSession } from "../domain/trade.js";
import type { Orm } from "../storage/orm.js";

/** Why a settlement did not commit. */
export const SETTLEMENT_FAILURE = {
  INVALID_ITEMS: "invalid_items",
  INVENTORY_FULL: "inventory_full",
  SERVER_ERROR: "server_error",
} as const;
export type SettlementFailure = (typeof SETTLEMENT_FAILURE)[keyof typeof SETTLEMENT_FAILURE];

export type SettlementResult =
  | { ok: true; received: Record<string, readonly ReceivedItem[]>; holdings: Record<string, { inventory: Inventory; coins: number }> }
  | { ok: false; failure: SettlementFailure; message: string };

class PlanRejected extends Error {
  constructor(
    readonly failure: SettlementFailure,
    message: string,
  ) {
    super(message);
  }
}

const RETRYABLE = new Set(["40001", "40P01", "55P03"]);
const MAX_ATTEMPTS = 4;

/** Audit form of an offer. */
export function auditedOffer(offer: Pick<TradeOffer, "items" | "coins">, items: ItemLookup): AuditedOffer {
  return {
    items: offer.items.map((l) => ({ inventorySlot: l.inventorySlot, itemId: l.itemId, quantity: l.quantity })),
    coins: offer.coins,
    value: offerValue(offer, (id) => items(id)?.value ?? 0),
  };
}

/**
 * Settle a trade on the confirmation screen. Never throws: a failure is a value, and nothing is
 * written unless everything is.
 */
export async function settleTrade(orm: Orm, session: TradeSession, items: ItemLookup): Promise<SettlementResult> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await (orm.em.fork() as SqlEntityManager).transactional((em) => settleOnce(em, session, items));
    } catch (e) {
      if (e instanceof PlanRejected) return { ok: false, failure: e.failure, message: e.message };
      const code = (e as { code?: string }).code ?? (e as { cause?: { code?: string } }).cause?.code;
      if (code && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) continue;
      return { ok: false, failure: SETTLEMENT_FAILURE.SERVER_ERROR, message: "The trade could not be completed." };
    }
  }
}

async function settleOnce(em: SqlEntityManager, session: TradeSession, items: ItemLookup): Promise<SettlementResult> {
  const ids = [session.a.playerId, session.b.playerId].sort();
  const chars = new Map<string, { coins: number }>();
  for (const id of ids) {
    const c = await em.findOne(CharacterEntity, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!c) throw new PlanRejected(SETTLEMENT_FAILURE.INVALID_ITEMS, "A trader no longer exists.");
    chars.set(id, c);
  }
  const invs = new Map<string, Inventory>();
  for (const id of ids) {
    const rows = await em.find(InventoryItemEntity, { characterId: id }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true, orderBy: { slot: "asc" } });
    const inv = inventoryFromSlots(rows.map((r) => ({ slot: r.slot, itemId: r.itemId, quantity: r.quantity })));
    if (!inv.ok) throw new PlanRejected(SETTLEMENT_FAILURE.INVALID_ITEMS, "An inventory is in an invalid state.");
    invs.set(id, inv.value);
  }
  const side = (id: string, name: string) => ({ offer: session.offers[id]!, inventory: invs.get(id)!, coins: chars.get(id)!.coins, name });
  const plan = planSettlement(side(session.a.playerId, session.a.name), side(session.b.playerId, session.b.name), items);
  if (!plan.ok) {
    throw new PlanRejected(
      plan.error.code === "INVENTORY_FULL" ? SETTLEMENT_FAILURE.INVENTORY_FULL : SETTLEMENT_FAILURE.INVALID_ITEMS,
      plan.error.message,
    );
  }
  const outcome = { [session.a.playerId]: plan.value.a, [session.b.playerId]: plan.value.b };
  for (const id of ids) {
    const out = outcome[id]!;
    await em.nativeUpdate(CharacterEntity, { id }, { coins: out.coins });
    await writeInventory(em, id, invs.get(id)!, out.inventory);
  }
  await em.insert(TradeAuditEntity, {
    id: session.id,
    characterA: session.a.playerId,
    characterB: session.b.playerId,
    offerA: auditedOffer(session.offers[session.a.playerId]!, items),
    offerB: auditedOffer(session.offers[session.b.playerId]!, items),
    outcome: "completed",
    reason: null,
    startedAt: new Date(session.startedAt ?? session.createdAt),
    endedAt: new Date(),
  });
  return {
    ok: true,
    received: { [session.a.playerId]: plan.value.a.receivedItems, [session.b.playerId]: plan.value.b.receivedItems },
    holdings: {
      [session.a.playerId]: { inventory: plan.value.a.inventory, coins: plan.value.a.coins },
      [session.b.playerId]: { inventory: plan.value.b.inventory, coins: plan.value.b.coins },
    },
  };
}

/** Write only the slots that changed (delete emptied, update changed, insert new). */
async function writeInventory(em: SqlEntityManager, characterId: string, before: Inventory, after: Inventory) {
  const afterSlots = new Map(inventoryToSlots(after).map((s) => [s.slot, s]));
  for (const b of inventoryToSlots(before)) {
    const a = afterSlots.get(b.slot);
    if (!a) await em.nativeDelete(InventoryItemEntity, { characterId, slot: b.slot });
    else if (a.itemId !== b.itemId || a.quantity !== b.quantity) {
      await em.nativeUpdate(InventoryItemEntity, { characterId, slot: b.slot }, { itemId: a.itemId, quantity: a.quantity });
    }
    afterSlots.delete(b.slot);
  }
  if (afterSlots.size > 0) {
    await em.insertMany(
      InventoryItemEntity,
      [...afterSlots.values()].map((s) => ({ characterId, slot: s.slot, itemId: s.itemId, quantity: s.quantity })),
    );
  }
}

/** Record a trade that reached the offer screen and ended without completing. */
export async function auditCancelled(orm: Orm, session: TradeSession, items: ItemLookup): Promise<void> {
  await (orm.em.fork() as SqlEntityManager)
    .createQueryBuilder(TradeAuditEntity)
    .insert({
      id: session.id,
      characterA: session.a.playerId,
      characterB: session.b.playerId,
      offerA: auditedOffer(session.offers[session.a.playerId]!, items),
      offerB: auditedOffer(session.offers[session.b.playerId]!, items),
      outcome: "cancelled",
      reason: session.cancelReason ?? null,
      startedAt: new Date(session.startedAt ?? session.createdAt),
      endedAt: new Date(session.endedAt ?? Date.now()),
    })
    .onConflict("id")
    .ignore()
    .execute();
}
