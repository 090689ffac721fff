/** The trade audit records (`trade_audits`): a completed trade's is written by the settlement's own
 * statement (`settlement.ts`), a cancelled one's by `insertCancelledAudit` (src/storage). */
import type { AuditedOffer } from "../../entities/trade.js";
import type { ItemLookup } from "../domain/inventory.js";
import type { Trade } from "../domain/trade/trade.js";
import { offerValue, type TradeOffer } from "../domain/trade/offer.js";
import type { Orm } from "../storage/orm.js";
import { insertCancelledAudit } from "../storage/trade-audits.js";

/** Audit form of an offer. */
export function auditedOffer(offer: Pick<TradeOffer, "items" | "coins">, items: ItemLookup): AuditedOffer {
  return {
    items: offer.items.map((l) => ({ inventorySlot: l.inventorySlot, itemId: l.itemId, quantity: l.quantity })),
    coins: offer.coins,
    value: offerValue(offer, (id) => items(id)?.value ?? 0),
  };
}

/** Record a trade that reached the offer screen and ended without completing. */
export async function auditCancelled(orm: Orm, trade: Trade, items: ItemLookup): Promise<void> {
  await insertCancelledAudit(orm, {
    id: trade.id,
    characterA: trade.a.playerId,
    characterB: trade.b.playerId,
    offerA: auditedOffer(trade.offers[trade.a.playerId]!, items),
    offerB: auditedOffer(trade.offers[trade.b.playerId]!, items),
    reason: trade.cancelReason ?? null,
    startedAt: new Date(trade.startedAt ?? trade.createdAt),
    endedAt: new Date(trade.endedAt ?? Date.now()),
  });
}
