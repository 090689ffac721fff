/**
 * The transitions of the trade state machine (`trade.ts`): one function per player action or
 * event, each `(trade, action, now, ctx?)` to a typed error or the next `TradeStep`.
 */
import { err, ok, type Err, type Result } from "../errors.js";
import { isValidSlot } from "../inventory.js";
import {
  DEFAULT_TRADE_PARAMS,
  isParty,
  isTerminal,
  partnerOf,
  step,
  unchanged,
  type TradeContext,
  type TradeParams,
  type TradeParty,
  type TradeResult,
  type Trade,
  type TradeStep,
} from "./trade.js";
import { SETTLEMENT_ERROR, TRADE_CANCEL_REASON, TRADE_ERROR, type TradeCancelReason, type TradeErrorCode } from "./codes.js";
import type { OfferLine, TradeOffer } from "./offer.js";
import { planSettlement, type SettlementSide } from "./settlement-plan.js";
import { MAX_STACK } from "../types.js";

type TradeErr = Err<TradeErrorCode>;

const EMPTY_OFFER: TradeOffer = Object.freeze({ items: Object.freeze([]), coins: 0, accepted: false });

/** Starts a request from `a` to `b` at `now`. SELF_TRADE when both are the same player. */
export function createTrade(input: {
  readonly id: string;
  readonly a: TradeParty;
  readonly b: TradeParty;
  readonly now: number;
}): Result<Trade, TradeErrorCode> {
  if (input.a.playerId === input.b.playerId) return err(TRADE_ERROR.SELF_TRADE, "You can't trade with yourself.");
  return ok({
    id: input.id,
    a: input.a,
    b: input.b,
    state: "pending",
    createdAt: input.now,
    lastActivityAt: input.now,
    revision: 0,
    offers: { [input.a.playerId]: EMPTY_OFFER, [input.b.playerId]: EMPTY_OFFER },
  });
}

/** Guard shared by player actions: the player is a party and the trade is still open. */
function guardOpen(trade: Trade, playerId: string): TradeErr | undefined {
  if (!isParty(trade, playerId)) return err(TRADE_ERROR.NOT_IN_TRADE, "You are not in this trade.");
  if (isTerminal(trade)) return err(TRADE_ERROR.INVALID_TRADE, "This trade has ended.");
  return undefined;
}

/** Guard of offer changes: only on the offer screen; frozen from the confirmation screen on. */
function guardOfferEditable(trade: Trade, playerId: string): TradeErr | undefined {
  const closed = guardOpen(trade, playerId);
  if (closed) return closed;
  if (trade.state === "pending") return err(TRADE_ERROR.INVALID_TRADE, "The trade has not started yet.");
  if (trade.state !== "offer") return err(TRADE_ERROR.OFFER_FROZEN, "Offers can't change on the confirmation screen.");
  return undefined;
}

/** The trade with one player's offer replaced: revision + 1, both acceptances cleared. */
function withOffer(trade: Trade, playerId: string, offer: Omit<TradeOffer, "accepted">, now: number): Trade {
  const partnerId = partnerOf(trade, playerId).playerId;
  return {
    ...trade,
    revision: trade.revision + 1,
    lastActivityAt: now,
    offers: {
      [playerId]: { items: offer.items, coins: offer.coins, accepted: false },
      [partnerId]: { ...trade.offers[partnerId]!, accepted: false },
    },
  };
}

function withAcceptance(trade: Trade, accepted: Readonly<Record<string, boolean>>): Trade {
  const offers: Record<string, TradeOffer> = {};
  for (const [id, offer] of Object.entries(trade.offers)) offers[id] = { ...offer, accepted: accepted[id] ?? offer.accepted };
  return { ...trade, offers };
}

function cancelled(trade: Trade, reason: TradeCancelReason, now: number, by?: string): TradeResult {
  const next: Trade = { ...trade, state: "cancelled", cancelReason: reason, endedAt: now, ...(by ? { cancelledBy: by } : {}) };
  return step(next, { kind: "cancelled", reason });
}

/**
 * `tradeRequestRespond`: only the invited player (b) answers, only while pending (else
 * INVALID_TRADE). Accept opens the offer screen (effect started); decline cancels ("declined").
 */
export function respondToRequest(trade: Trade, action: { readonly playerId: string; readonly accept: boolean }, now: number): TradeResult {
  const closed = guardOpen(trade, action.playerId);
  if (closed) return closed;
  if (trade.state !== "pending") return err(TRADE_ERROR.INVALID_TRADE, "This request has already been answered.");
  if (action.playerId !== trade.b.playerId) return err(TRADE_ERROR.INVALID_TRADE, "Only the invited player can answer.");
  if (!action.accept) return cancelled(trade, TRADE_CANCEL_REASON.DECLINED, now, action.playerId);
  return step({ ...trade, state: "offer", startedAt: now, lastActivityAt: now }, { kind: "started" });
}

/**
 * `tradeAddItem { inventorySlot, quantity }`: sets the offered quantity of one inventory slot
 * (replacing an earlier offer of that slot). Refused: OFFER_FROZEN after the offer screen,
 * INVALID_SLOT (not 0..27 or empty), INVALID_ITEM (unknown item), UNTRADEABLE_ITEM,
 * INVALID_QUANTITY (not an integer from 1 to what the slot holds). Setting the same value again
 * changes nothing (effect none).
 */
export function setOfferItem(
  trade: Trade,
  action: { readonly playerId: string; readonly slot: number; readonly quantity: number },
  now: number,
  ctx: TradeContext,
): TradeResult {
  const guard = guardOfferEditable(trade, action.playerId);
  if (guard) return guard;
  if (!isValidSlot(action.slot)) return err(TRADE_ERROR.INVALID_SLOT, "That inventory slot does not exist.");
  const held = ctx.holdingsOf(action.playerId).inventory[action.slot];
  if (!held) return err(TRADE_ERROR.INVALID_SLOT, "That inventory slot is empty.");
  const item = ctx.items(held.itemId);
  if (!item) return err(TRADE_ERROR.INVALID_ITEM, "That item does not exist.");
  if (!item.tradeable) return err(TRADE_ERROR.UNTRADEABLE_ITEM, `${item.name} can't be traded.`);
  if (!Number.isInteger(action.quantity) || action.quantity < 1 || action.quantity > held.quantity) {
    return err(TRADE_ERROR.INVALID_QUANTITY, `Offer between 1 and ${held.quantity}.`);
  }
  const offer = trade.offers[action.playerId]!;
  const existing = offer.items.find((l) => l.inventorySlot === action.slot);
  if (existing && existing.itemId === held.itemId && existing.quantity === action.quantity) return unchanged(trade);
  const line: OfferLine = { inventorySlot: action.slot, itemId: held.itemId, quantity: action.quantity };
  const items = [...offer.items.filter((l) => l.inventorySlot !== action.slot), line].sort((x, y) => x.inventorySlot - y.inventorySlot);
  return step(withOffer(trade, action.playerId, { items, coins: offer.coins }, now), { kind: "updated" });
}

/**
 * `tradeAddItem { coins }`: sets the offered coins (0 removes them). INVALID_QUANTITY unless an
 * integer from 0 to the coins the character holds; OFFER_FROZEN after the offer screen.
 */
export function setOfferCoins(trade: Trade, action: { readonly playerId: string; readonly coins: number }, now: number, ctx: TradeContext): TradeResult {
  const guard = guardOfferEditable(trade, action.playerId);
  if (guard) return guard;
  const held = Math.min(MAX_STACK, ctx.holdingsOf(action.playerId).coins);
  if (!Number.isInteger(action.coins) || action.coins < 0 || action.coins > held) {
    return err(TRADE_ERROR.INVALID_QUANTITY, `Offer between 0 and ${held} coins.`);
  }
  const offer = trade.offers[action.playerId]!;
  if (offer.coins === action.coins) return unchanged(trade);
  return step(withOffer(trade, action.playerId, { items: offer.items, coins: action.coins }, now), { kind: "updated" });
}

/**
 * `tradeRemoveItem { inventorySlot }`: withdraws that slot from the offer. INVALID_SLOT when the
 * slot is not a slot or not in the offer; OFFER_FROZEN after the offer screen.
 */
export function removeOfferItem(trade: Trade, action: { readonly playerId: string; readonly slot: number }, now: number): TradeResult {
  const guard = guardOfferEditable(trade, action.playerId);
  if (guard) return guard;
  if (!isValidSlot(action.slot)) return err(TRADE_ERROR.INVALID_SLOT, "That inventory slot does not exist.");
  const offer = trade.offers[action.playerId]!;
  if (!offer.items.some((l) => l.inventorySlot === action.slot)) {
    return err(TRADE_ERROR.INVALID_SLOT, "That slot is not in your offer.");
  }
  const items = offer.items.filter((l) => l.inventorySlot !== action.slot);
  return step(withOffer(trade, action.playerId, { items, coins: offer.coins }, now), { kind: "updated" });
}

/**
 * `tradeAccept { revision? }`. Outline:
 * 1. Guards: party, open, not pending (INVALID_TRADE); while settling every accept is ignored.
 * 2. STALE_OFFER when `revision` is given and is not the current one.
 * 3. Offer screen: mark accepted (updated). When both have accepted, check that each side can hold
 *    what it receives (`planSettlement` on current holdings). INVENTORY_FULL or a slot that no
 *    longer holds its item (INVALID_ITEM): both acceptances cleared, stay on offer, effect refused.
 *    Otherwise move to the confirmation screen with acceptances reset and the revision incremented
 *    (effect confirmScreen): an accept that quotes the offer-screen revision — a duplicate sent
 *    before its sender saw the confirmation screen — is STALE_OFFER there, so it can never complete
 *    a trade whose `values` its sender has not seen.
 * 4. Confirmation screen: mark accepted; when both have, move to settling (effect settle).
 * A player who has already accepted changes nothing (effect none). An accept without `revision`
 * (it may be omitted, docs/trading.md#rules) accepts whatever screen and offers are current when it arrives:
 * the server cannot know what such a client has seen, so only a client that quotes revisions is
 * protected against its own duplicate accepts.
 */
export function acceptTrade(trade: Trade, action: { readonly playerId: string; readonly revision?: number }, now: number, ctx: TradeContext): TradeResult {
  const closed = guardOpen(trade, action.playerId);
  if (closed) return closed;
  if (trade.state === "settling") return unchanged(trade);
  if (trade.state === "pending") return err(TRADE_ERROR.INVALID_TRADE, "The trade has not started yet.");
  if (action.revision !== undefined && action.revision !== trade.revision) {
    return err(TRADE_ERROR.STALE_OFFER, "The offer changed; check it again before accepting.");
  }
  const partnerId = partnerOf(trade, action.playerId).playerId;
  if (trade.offers[action.playerId]!.accepted) return unchanged(trade);
  const accepted = withAcceptance({ ...trade, lastActivityAt: now }, { [action.playerId]: true });
  if (!trade.offers[partnerId]!.accepted) return step(accepted, { kind: "updated" });

  if (trade.state === "confirm") return step({ ...accepted, state: "settling" }, { kind: "settle" });

  const plan = planSettlement(sideOf(trade, trade.a.playerId, ctx), sideOf(trade, trade.b.playerId, ctx), ctx.items);
  if (!plan.ok) {
    const cleared = withAcceptance(accepted, { [trade.a.playerId]: false, [trade.b.playerId]: false });
    const error =
      plan.error.code === SETTLEMENT_ERROR.INVENTORY_FULL
        ? { code: TRADE_ERROR.INVENTORY_FULL, message: plan.error.message }
        : { code: TRADE_ERROR.INVALID_ITEM, message: "An offered item is no longer in the inventory." };
    return step(cleared, { kind: "refused", error });
  }
  // A new screen is a new revision: accepts quoting the offer screen's revision are stale on it.
  const confirm = withAcceptance({ ...accepted, state: "confirm", revision: trade.revision + 1 }, { [trade.a.playerId]: false, [trade.b.playerId]: false });
  return step(confirm, { kind: "confirmScreen" });
}

function sideOf(trade: Trade, playerId: string, ctx: TradeContext): SettlementSide {
  const holdings = ctx.holdingsOf(playerId);
  const name = playerId === trade.a.playerId ? trade.a.name : trade.b.name;
  return { offer: trade.offers[playerId]!, inventory: holdings.inventory, coins: holdings.coins, name };
}

/**
 * Ends an open trade with `reason` (`tradeCancel` → "cancelled"; the session also uses
 * "disconnected", "player_died", "moved_away", "server_error"). `playerId`, when given, must be a
 * party (NOT_IN_TRADE). INVALID_TRADE when the trade has ended or is settling.
 */
export function cancelTrade(trade: Trade, action: { readonly playerId?: string; readonly reason: TradeCancelReason }, now: number): TradeResult {
  if (action.playerId !== undefined) {
    const closed = guardOpen(trade, action.playerId);
    if (closed) return closed;
  } else if (isTerminal(trade)) {
    return err(TRADE_ERROR.INVALID_TRADE, "This trade has ended.");
  }
  if (trade.state === "settling") return err(TRADE_ERROR.INVALID_TRADE, "The trade is already being completed.");
  return cancelled(trade, action.reason, now, action.playerId);
}

/**
 * Time-outs at `now`: a pending request after `pendingTimeoutMs` from creation, an offer or
 * confirmation screen after `inactivityTimeoutMs` without activity. Settling never times out here.
 */
export function tickTrade(trade: Trade, now: number, params: TradeParams = DEFAULT_TRADE_PARAMS): TradeStep {
  const expired =
    (trade.state === "pending" && now - trade.createdAt >= params.pendingTimeoutMs) ||
    ((trade.state === "offer" || trade.state === "confirm") && now - trade.lastActivityAt >= params.inactivityTimeoutMs);
  if (!expired) return { trade, effect: { kind: "none" } };
  return {
    trade: { ...trade, state: "cancelled", cancelReason: TRADE_CANCEL_REASON.TIMEOUT, endedAt: now },
    effect: { kind: "cancelled", reason: TRADE_CANCEL_REASON.TIMEOUT },
  };
}

/** The settlement transaction committed: settling → completed. INVALID_TRADE from any other state. */
export function completeTrade(trade: Trade, now: number): TradeResult {
  if (trade.state !== "settling") return err(TRADE_ERROR.INVALID_TRADE, "The trade is not being completed.");
  return step({ ...trade, state: "completed", endedAt: now }, { kind: "completed" });
}

/**
 * The settlement transaction failed: settling → cancelled with `reason` (usually "invalid_items"
 * after a failed re-check, "server_error" otherwise). INVALID_TRADE from any other state.
 */
export function failSettlement(trade: Trade, reason: TradeCancelReason, now: number): TradeResult {
  if (trade.state !== "settling") return err(TRADE_ERROR.INVALID_TRADE, "The trade is not being completed.");
  return cancelled(trade, reason, now);
}

/** Every player action as one value, for `applyTradeAction`. */
export type TradeAction =
  | { readonly type: "respond"; readonly playerId: string; readonly accept: boolean }
  | { readonly type: "setItem"; readonly playerId: string; readonly slot: number; readonly quantity: number }
  | { readonly type: "setCoins"; readonly playerId: string; readonly coins: number }
  | { readonly type: "removeItem"; readonly playerId: string; readonly slot: number }
  | { readonly type: "accept"; readonly playerId: string; readonly revision?: number }
  | { readonly type: "cancel"; readonly playerId?: string; readonly reason: TradeCancelReason };

/** Dispatches a player action to its transition. */
export function applyTradeAction(trade: Trade, action: TradeAction, now: number, ctx: TradeContext): TradeResult {
  switch (action.type) {
    case "respond":
      return respondToRequest(trade, action, now);
    case "setItem":
      return setOfferItem(trade, action, now, ctx);
    case "setCoins":
      return setOfferCoins(trade, action, now, ctx);
    case "removeItem":
      return removeOfferItem(trade, action, now);
    case "accept":
      return acceptTrade(trade, action, now, ctx);
    case "cancel":
      return cancelTrade(trade, action, now);
  }
}
