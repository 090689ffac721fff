/** Storage: the trade audit log. One record per trade that reached the offer screen. */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

/** One side's offer as audited. */
export interface AuditedOffer {
  items: { inventorySlot: number; itemId: string; quantity: number }[];
  coins: number;
  value: number;
}

export const TradeAuditEntity = defineEntity({
  name: "TradeAudit",
  tableName: "trade_audits",
  properties: {
    id: p.string().primary(),
    characterA: p.string().index(),
    characterB: p.string().index(),
    offerA: p.json<AuditedOffer>(),
    offerB: p.json<AuditedOffer>(),
    outcome: p.string(),
    reason: p.string().nullable(),
    startedAt: p.datetime(),
    endedAt: p.datetime().onCreate(() => new Date()),
  },
  checks: [{ name: "trade_audits_outcome_check", expression: "outcome in ('completed', 'cancelled')" }],
});
export type TradeAudit = InferEntity<typeof TradeAuditEntity>;
