/**
 * Synchronised state of one trade room, for SDK clients of the two traders that watch the trade.
 *
 * Shared by both watchers: the trade id, the screen and the revision. Per watcher (a view-tagged
 * map; each client's `StateView` holds only its own character's entry): the trade from that
 * trader's side — `myOffer`, `theirOffer`, `partnerFreeSlots`, and on the confirmation screen the
 * `values` — the same fields `tradeUpdated` and `tradeConfirmScreen` send to that player.
 */
import { schema, t, type SchemaType } from "@colyseus/schema";

export const TradeOfferLineState = schema(
  {
    inventorySlot: t.uint8(),
    itemId: t.string(),
    quantity: t.uint32(),
  },
  "TradeOfferLineState",
);
export type TradeOfferLineState = SchemaType<typeof TradeOfferLineState>;

export const TradeOfferState = schema(
  {
    playerId: t.string(),
    name: t.string(),
    coins: t.uint32(),
    accepted: t.boolean(),
    items: t.array(TradeOfferLineState),
  },
  "TradeOfferState",
);
export type TradeOfferState = SchemaType<typeof TradeOfferState>;

/** `tradeConfirmScreen.values` from one trader's side. */
export const TradeValuesState = schema(
  {
    myOfferValue: t.float64(),
    theirOfferValue: t.float64(),
    wealthTransfer: t.float64(),
  },
  "TradeValuesState",
);
export type TradeValuesState = SchemaType<typeof TradeValuesState>;

/** The trade as one trader sees it. */
export const TraderViewState = schema(
  {
    playerId: t.string(),
    partnerId: t.string(),
    myOffer: TradeOfferState,
    theirOffer: TradeOfferState,
    /** Empty slots in the partner's inventory. */
    partnerFreeSlots: t.uint8(),
    /** Set from the confirmation screen on; absent on the offer screen. */
    values: TradeValuesState,
  },
  "TraderViewState",
);
export type TraderViewState = SchemaType<typeof TraderViewState>;

export const TradeRoomState = schema(
  {
    tradeId: t.string(),
    /** `offer`, `confirm`, `settling`, `completed` or `cancelled`. */
    screen: t.string(),
    revision: t.uint32(),
    /** By character id; each watcher's view holds only its own entry. */
    traders: t.map(TraderViewState).view(),
  },
  "TradeRoomState",
);
export type TradeRoomState = SchemaType<typeof TradeRoomState>;
