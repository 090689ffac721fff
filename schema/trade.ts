/**
 * Synchronised state of one trade room, for SDK clients that watch a trade: the screen, the
 * revision and both offers. Only the two traders may join.
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

export const TradeRoomState = schema(
  {
    tradeId: t.string(),
    /** `offer`, `confirm`, `settling`, `completed` or `cancelled`. */
    screen: t.string(),
    revision: t.uint32(),
    offers: t.map(TradeOfferState),
  },
  "TradeRoomState",
);
export type TradeRoomState = SchemaType<typeof TradeRoomState>;
