/** The trade audit records (`trade_audits`): a completed trade's is written by the settlement's own
 * statement (`settlement.ts`), a cancelled one's here. */
import type { SqlEntityManager } from "@mikro-orm/sql";
import { TradeAuditEntity, type AuditedOffer } from "../../entities/trade.js";
import type { ItemLookup } from "../domain/inventory.js";
import type { TradeSession } from "../domain/trade.js";
import { offerValue, type TradeOffer } from "../domain/trade-offer.js";
import type { Orm } from "../storage/orm.js";

/** Audit form of an offer. */
export function auditedOffer(offer: Pick<TradeOffer, "items" | "coins">, items: ItemLookup): AuditedOffer {
  return {
    items: offer.items.map((l) => ({ inventorySlot: l.inventorySlot, itemId: l.itemId, quantity: l.quantity })),
    coins: offer.coins,
    value: offerValue(offer, (id) => items(id)?.value ?? 0),
  };
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
