/**
 * The two-screen trade as the client sees it (docs/trading.md "Events"): pure transitions from the
 * server's trade events, and the wealth-transfer indicator of the confirmation screen.
 */
import type { ServerEventPayload, TradeOffer, TradeValues } from "../protocol.js";

export interface IncomingRequest {
  tradeId: string;
  fromPlayerId: string;
  fromPlayerName: string;
  fromPlayerLevel: number;
}

export interface OpenTrade {
  tradeId: string;
  partnerId: string;
  partnerName: string;
  partnerLevel: number;
  partnerFreeSlots: number;
  screen: "offer" | "confirm";
  revision: number;
  myOffer: TradeOffer;
  theirOffer: TradeOffer;
  values?: TradeValues;
}

export type TradeState =
  | { phase: "none"; incoming: IncomingRequest[]; last?: string }
  | { phase: "requested"; targetId: string; incoming: IncomingRequest[]; last?: string }
  | ({ phase: "open"; incoming: IncomingRequest[]; last?: string } & OpenTrade);

const emptyOffer = (): TradeOffer => ({ items: [], coins: 0, accepted: false });

type TradeEvent =
  | { event: "tradeIncoming"; data: ServerEventPayload<"tradeIncoming"> }
  | { event: "tradeStarted"; data: ServerEventPayload<"tradeStarted"> }
  | { event: "tradeUpdated"; data: ServerEventPayload<"tradeUpdated"> }
  | { event: "tradeConfirmScreen"; data: ServerEventPayload<"tradeConfirmScreen"> }
  | { event: "tradeCompleted"; data: ServerEventPayload<"tradeCompleted"> }
  | { event: "tradeCancelled"; data: ServerEventPayload<"tradeCancelled"> };

/** The next trade state after a server trade event; `last` says how the latest trade ended. */
export function applyTradeEvent(t: TradeState, e: TradeEvent): TradeState {
  switch (e.event) {
    case "tradeIncoming":
      return { ...t, incoming: [...t.incoming.filter((r) => r.tradeId !== e.data.tradeId), { ...e.data }] };
    case "tradeStarted":
      return {
        phase: "open",
        incoming: t.incoming.filter((r) => r.tradeId !== e.data.tradeId),
        tradeId: e.data.tradeId,
        partnerId: e.data.partnerId,
        partnerName: e.data.partnerName,
        partnerLevel: e.data.partnerLevel,
        partnerFreeSlots: e.data.partnerFreeSlots,
        screen: "offer",
        revision: 0,
        myOffer: emptyOffer(),
        theirOffer: emptyOffer(),
      };
    case "tradeUpdated":
      if (t.phase !== "open" || t.tradeId !== e.data.tradeId) return t;
      return { ...t, revision: e.data.revision, myOffer: e.data.myOffer, theirOffer: e.data.theirOffer, partnerFreeSlots: e.data.partnerFreeSlots };
    case "tradeConfirmScreen":
      if (t.phase !== "open" || t.tradeId !== e.data.tradeId) return t;
      return { ...t, screen: "confirm", revision: e.data.revision, myOffer: e.data.myOffer, theirOffer: e.data.theirOffer, values: e.data.values };
    case "tradeCompleted": {
      const got = e.data.receivedItems.map((i) => `${i.quantity} × ${i.itemId}`).join(", ") || "nothing";
      return ended(t, e.data.tradeId, `Trade completed. You received ${got}.`);
    }
    case "tradeCancelled":
      return ended(t, e.data.tradeId, `Trade cancelled: ${e.data.message}`);
  }
}

function ended(t: TradeState, tradeId: string, last: string): TradeState {
  const incoming = t.incoming.filter((r) => r.tradeId !== tradeId);
  if (t.phase === "open" && t.tradeId !== tradeId) return { ...t, incoming };
  return { phase: "none", incoming, last };
}

/** The client asked someone to trade (shown as "waiting for …" until the trade starts or ends). */
export function requested(t: TradeState, targetId: string): TradeState {
  return t.phase === "open" ? t : { phase: "requested", targetId, incoming: t.incoming };
}

/**
 * The confirmation screen's wealth-transfer line: who gains how much value, and whether it looks
 * lopsided (more than 10 times one way, or something for nothing).
 */
export function wealthIndicator(v: TradeValues): { text: string; level: "even" | "gain" | "loss"; warning: boolean } {
  const diff = v.wealthTransfer;
  const warning = (v.myOfferValue > 0 && v.theirOfferValue === 0) || (v.myOfferValue > 0 && v.theirOfferValue * 10 < v.myOfferValue);
  if (diff === 0) return { text: `Even trade: both sides worth ${v.myOfferValue} coins.`, level: "even", warning };
  if (diff > 0) return { text: `You gain ${diff} coins of value (you give ${v.myOfferValue}, you get ${v.theirOfferValue}).`, level: "gain", warning };
  return { text: `You lose ${-diff} coins of value (you give ${v.myOfferValue}, you get ${v.theirOfferValue}).`, level: "loss", warning };
}
