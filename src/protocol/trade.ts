/**
 * Trade events, both directions (docs/trading.md#events). A client payload that fails its schema is
 * refused with a `tradeError` whose code names the field that failed (`TRADE_FIELD_ERRORS`): a bad
 * slot is `INVALID_SLOT`, a bad quantity or coin amount `INVALID_QUANTITY`, anything else
 * `INVALID_REQUEST` (docs/trading.md#error-codes). What the schema cannot know (an empty slot, more
 * than the slot holds) the trade rules refuse with the same codes.
 */
import { z } from "zod";
import { TRADE_CANCEL_REASON, TRADE_ERROR, type TradeErrorCode } from "../domain/trade/codes.js";

const int = z.int();
const id = z.string().min(1).max(128);
const MAX_AMOUNT = 2_147_483_647;

/** A whole number in [min, max], refused with one text whatever is wrong with it. */
const whole = (min: number, max: number, error: string) => z.int({ error }).min(min, { error }).max(max, { error });
const slot = whole(0, 27, "must be a whole number from 0 to 27").describe("inventory slot");
const quantity = whole(1, MAX_AMOUNT, "must be a whole number from 1 to what the slot holds");
const coins = whole(0, MAX_AMOUNT, "must be a whole number of 0 or more");

/** Trade fields whose schema failure has its own trade error code. */
export const TRADE_FIELD_ERRORS: Readonly<Record<string, TradeErrorCode>> = {
  inventorySlot: TRADE_ERROR.INVALID_SLOT,
  quantity: TRADE_ERROR.INVALID_QUANTITY,
  coins: TRADE_ERROR.INVALID_QUANTITY,
};

/** Client → server trade events. */
export const TRADE_CLIENT_EVENTS = {
  tradeRequest: z.object({ targetPlayerId: id }),
  tradeRequestRespond: z.object({ tradeId: id, accept: z.boolean() }),
  /** An item line (`inventorySlot` and `quantity`) or the offered coins (`coins`; 0 removes them). */
  tradeAddItem: z
    .object({ tradeId: id, coins: coins.optional(), inventorySlot: slot.optional(), quantity: quantity.optional() })
    .superRefine((d, ctx) => {
      if (d.coins !== undefined) return;
      if (d.inventorySlot === undefined) ctx.addIssue({ code: "custom", path: ["inventorySlot"], message: "is required without coins" });
      else if (d.quantity === undefined) ctx.addIssue({ code: "custom", path: ["quantity"], message: "is required with inventorySlot" });
    })
    .describe("an item line (inventorySlot and quantity), or the offered coins (coins)"),
  tradeRemoveItem: z.object({ tradeId: id, inventorySlot: slot }),
  tradeAccept: z.object({ tradeId: id, revision: int.min(0).optional().describe("the screen's revision this accept is for") }),
  tradeCancel: z.object({ tradeId: id }),
} as const;

const OfferSchema = z.object({
  items: z.array(z.object({ inventorySlot: int, itemId: z.string(), quantity: int })),
  coins: int,
  accepted: z.boolean(),
});
const ValuesSchema = z.object({ myOfferValue: z.number(), theirOfferValue: z.number(), wealthTransfer: z.number() });

/** Server → client trade events. */
export const TRADE_SERVER_EVENTS = {
  tradeIncoming: z.object({ tradeId: z.string(), fromPlayerId: z.string(), fromPlayerName: z.string(), fromPlayerLevel: int }),
  tradeStarted: z.object({
    tradeId: z.string(),
    partnerId: z.string(),
    partnerName: z.string(),
    partnerLevel: int,
    partnerFreeSlots: int,
    roomId: z.string().describe("the trade room, which the two traders may watch"),
  }),
  tradeUpdated: z.object({ tradeId: z.string(), revision: int, myOffer: OfferSchema, theirOffer: OfferSchema, partnerFreeSlots: int }),
  tradeConfirmScreen: z.object({ tradeId: z.string(), revision: int, myOffer: OfferSchema, theirOffer: OfferSchema, values: ValuesSchema }),
  tradeCompleted: z.object({
    tradeId: z.string(),
    receivedItems: z.array(z.object({ itemId: z.string(), quantity: int })).describe('coins as itemId "coins"'),
  }),
  tradeCancelled: z.object({ tradeId: z.string(), reason: z.enum(TRADE_CANCEL_REASON), message: z.string() }),
  tradeError: z.object({ tradeId: z.string().optional(), code: z.enum(TRADE_ERROR), message: z.string() }),
} as const;
