/**
 * The trade audit records (`trade_audits`, docs/trading.md): a completed trade's is written by the
 * settlement's own statement (src/trade/settlement-sql.ts); a cancelled one's here, once (a second
 * write of the same trade id is ignored).
 */
import { TradeAuditEntity, type AuditedOffer } from "../../entities/trade.js";
import type { Orm } from "./orm.js";

export interface CancelledAudit {
  id: string;
  characterA: string;
  characterB: string;
  offerA: AuditedOffer;
  offerB: AuditedOffer;
  reason: string | null;
  startedAt: Date;
  endedAt: Date;
}

/** Record a trade that reached the offer screen and ended without completing (at most once per trade id). */
export async function insertCancelledAudit(orm: Orm, a: CancelledAudit): Promise<void> {
  await orm.em
    .fork()
    .createQueryBuilder(TradeAuditEntity)
    .insert({ ...a, outcome: "cancelled" })
    .onConflict("id")
    .ignore()
    .execute();
}
