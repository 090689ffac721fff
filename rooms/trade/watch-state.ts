/**
 * The synchronised state a trade room's watchers see (`schema/trade.ts`): each trader's view of the
 * trade, copied onto schema objects. The same `TraderView` (src/domain/trade/trade.ts) is what
 * `tradeUpdated` and `tradeConfirmScreen` send to that trader; the trade's session
 * (src/trade/session.ts) builds it.
 */
import type { TradeOffer } from "../../src/domain/trade/offer.js";
import { partnerOf, type Trade, type TraderView } from "../../src/domain/trade/trade.js";
import { TradeOfferLineState, TradeOfferState, TradeValuesState, TraderViewState, type TradeRoomState } from "../../schema/trade.js";

/**
 * Copy the trade onto the synchronised state, each trader's side from `viewOf`. Values, once shown,
 * stay: a trade cancelled on the confirmation screen keeps them, one cancelled on the offer screen
 * never had them.
 */
export function writeTradeState(s: TradeRoomState, trade: Trade, viewOf: (playerId: string) => TraderView) {
  s.tradeId = trade.id;
  s.screen = trade.state;
  s.revision = trade.revision;
  for (const me of [trade.a, trade.b]) {
    const partner = partnerOf(trade, me.playerId);
    let v = s.traders.get(me.playerId);
    if (!v) {
      v = new TraderViewState();
      v.playerId = me.playerId;
      v.partnerId = partner.playerId;
      v.myOffer = new TradeOfferState();
      v.theirOffer = new TradeOfferState();
      // `schema()` instantiates child schemas: values stay absent until a screen shows them.
      v.values = undefined as unknown as TradeValuesState;
      s.traders.set(me.playerId, v);
    }
    const view = viewOf(me.playerId);
    copyOffer(v.myOffer, me.playerId, me.name, view.myOffer);
    copyOffer(v.theirOffer, partner.playerId, partner.name, view.theirOffer);
    v.partnerFreeSlots = view.partnerFreeSlots;
    if (view.values) {
      v.values ??= new TradeValuesState();
      v.values.myOfferValue = view.values.myOfferValue;
      v.values.theirOfferValue = view.values.theirOfferValue;
      v.values.wealthTransfer = view.values.wealthTransfer;
    }
  }
}

/** Copy one offer onto its schema object (lines replaced only when they changed). */
function copyOffer(o: TradeOfferState, playerId: string, name: string, offer: TradeOffer) {
  o.playerId = playerId;
  o.name = name;
  o.coins = offer.coins;
  o.accepted = offer.accepted;
  const same =
    o.items.length === offer.items.length &&
    offer.items.every((l, i) => {
      const x = o.items[i]!;
      return x.inventorySlot === l.inventorySlot && x.itemId === l.itemId && x.quantity === l.quantity;
    });
  if (same) return;
  o.items.clear();
  for (const line of offer.items) {
    const l = new TradeOfferLineState();
    l.inventorySlot = line.inventorySlot;
    l.itemId = line.itemId;
    l.quantity = line.quantity;
    o.items.push(l);
  }
}
