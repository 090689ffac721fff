/**
 * The transitions of the trade state machine (`trade.ts`): one function per player action or
 * event, each `(session, action, now, ctx?)` to a typed error or the next `TradeStep`.
 */
import { err, ok, type Err, type Result } from "./errors.js";
import { isValidSlot } from "./inventory.js";
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
  type TradeSession,
  type TradeStep,
} from "./trade.js";
import { SETTLEMENT_ERROR, TRADE_CANCEL_REASON, TRADE_ERROR, type TradeCancelReason, type TradeErrorCode } from "./trade-errors.js";
import type { OfferLine, TradeOffer } from "./trade-offer.js";
import { planSettlement, type SettlementSide } from "./trade-settlement.js";
import { MAX_STACK } from "./types.js";

type TradeErr = Err<TradeErrorCode>;

const EMPTY_OFFER: TradeOffer = Object.freeze({ items: Object.freeze([]), coins: 0, accepted: false });

/** Starts a request from `a` to `b` at `now`. SELF_TRADE when both are the same player. */
export function createTrade(input: {
  readonly id: string;
  readonly a: TradeParty;
  readonly b: TradeParty;
  readonly now: number;
}): Result<TradeSession, TradeErrorCode> {
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
function guardOpen(session: TradeSession, playerId: string): TradeErr | undefined {
  if (!isParty(session, playerId)) return err(TRADE_ERROR.NOT_IN_TRADE, "You are not in this trade.");
  if (isTerminal(session)) return err(TRADE_ERROR.INVALID_TRADE, "This trade has ended.");
  return undefined;
}

/** Guard of offer changes: only on the offer screen; frozen from the confirmation screen on. */
function guardOfferEditable(session: TradeSession, playerId: string): TradeErr | undefined {
  const closed = guardOpen(session, playerId);
  if (closed) return closed;
  if (session.state === "pending") return err(TRADE_ERROR.INVALID_TRADE, "The trade has not started yet.");
  if (session.state !== "offer") return err(TRADE_ERROR.OFFER_FROZEN, "Offers can't change on the confirmation screen.");
  return undefined;
}

/** The session with one player's offer replaced: revision + 1, both acceptances cleared. */
function withOffer(session: TradeSession, playerId: string, offer: Omit<TradeOffer, "accepted">, now: number): TradeSession {
  const partnerId = partnerOf(session, playerId).playerId;
  return {
    ...session,
    revision: session.revision + 1,
    lastActivityAt: now,
    offers: {
      [playerId]: { items: offer.items, coins: offer.coins, accepted: false },
      [partnerId]: { ...session.offers[partnerId]!, accepted: false },
    },
  };
}

function withAcceptance(session: TradeSession, accepted: Readonly<Record<string, boolean>>): TradeSession {
  const offers: Record<string, TradeOffer> = {};
  for (const [id, offer] of Object.entries(session.offers)) offers[id] = { ...offer, accepted: accepted[id] ?? offer.accepted };
  return { ...session, offers };
}

function cancelled(session: TradeSession, reason: TradeCancelReason, now: number, by?: string): TradeResult {
  const next: TradeSession = { ...session, state: "cancelled", cancelReason: reason, endedAt: now, ...(by ? { cancelledBy: by } : {}) };
  return step(next, { kind: "cancelled", reason });
}

/**
 * `tradeRequestRespond`: only the invited player (b) answers, only while pending (else
 * INVALID_TRADE). Accept opens the offer screen (effect started); decline cancels ("declined").
 */
export function respondToRequest(
  session: TradeSession,
  action: { readonly playerId: string; readonly accept: boolean },
  now: number,
): TradeResult {
  const closed = guardOpen(session, action.playerId);
  if (closed) return closed;
  if (session.state !== "pending") return err(TRADE_ERROR.INVALID_TRADE, "This request has already been answered.");
  if (action.playerId !== session.b.playerId) return err(TRADE_ERROR.INVALID_TRADE, "Only the invited player can answer.");
  if (!action.accept) return cancelled(session, TRADE_CANCEL_REASON.DECLINED, now, action.playerId);
  return step({ ...session, state: "offer", startedAt: now, lastActivityAt: now }, { kind: "started" });
}

/**
 * `tradeAddItem { inventorySlot, quantity }`: sets the offered quantity of one inventory slot
 * (replacing an earlier offer of that slot). Refused: OFFER_FROZEN after the offer screen,
 * INVALID_SLOT (not 0..27 or empty), INVALID_ITEM (unknown item), UNTRADEABLE_ITEM,
 * INVALID_QUANTITY (not an integer from 1 to what the slot holds). Setting the same value again
 * changes nothing (effect none).
 */
export function setOfferItem(
  session: TradeSession,
  action: { readonly playerId: string; readonly slot: number; readonly quantity: number },
  now: number,
  ctx: TradeContext,
): TradeResult {
  const guard = guardOfferEditable(session, action.playerId);
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
  const offer = session.offers[action.playerId]!;
  const existing = offer.items.find((l) => l.inventorySlot === action.slot);
  if (existing && existing.itemId === held.itemId && existing.quantity === action.quantity) return unchanged(session);
  const line: OfferLine = { inventorySlot: action.slot, itemId: held.itemId, quantity: action.quantity };
  const items = [...offer.items.filter((l) => l.inventorySlot !== action.slot), line].sort((x, y) => x.inventorySlot - y.inventorySlot);
  return step(withOffer(session, action.playerId, { items, coins: offer.coins }, now), { kind: "updated" });
}

/**
 * `tradeAddItem { coins }`: sets the offered coins (0 removes them). INVALID_QUANTITY unless an
 * integer from 0 to the coins the character holds; OFFER_FROZEN after the offer screen.
 */
export function setOfferCoins(
  session: TradeSession,
  action: { readonly playerId: string; readonly coins: number },
  now: number,
  ctx: TradeContext,
): TradeResult {
  const guard = guardOfferEditable(session, action.playerId);
  if (guard) return guard;
  const held = Math.min(MAX_STACK, ctx.holdingsOf(action.playerId).coins);
  if (!Number.isInteger(action.coins) || action.coins < 0 || action.coins > held) {
    return err(TRADE_ERROR.INVALID_QUANTITY, `Offer between 0 and ${held} coins.`);
  }
  const offer = session.offers[action.playerId]!;
  if (offer.coins === action.coins) return unchanged(session);
  return step(withOffer(session, action.playerId, { items: offer.items, coins: action.coins }, now), { kind: "updated" });
}

/**
 * `tradeRemoveItem { inventorySlot }`: withdraws that slot from the offer. INVALID_SLOT when the
 * slot is not a slot or not in the offer; OFFER_FROZEN after the offer screen.
 */
export function removeOfferItem(
  session: TradeSession,
  action: { readonly playerId: string; readonly slot: number },
  now: number,
): TradeResult {
  const guard = guardOfferEditable(session, action.playerId);
  if (guard) return guard;
  if (!isValidSlot(action.slot)) return err(TRADE_ERROR.INVALID_SLOT, "That inventory slot does not exist.");
  const offer = session.offers[action.playerId]!;
  if (!offer.items.some((l) => l.inventorySlot === action.slot)) {
    return err(TRADE_ERROR.INVALID_SLOT, "That slot is not in your offer.");
  }
  const items = offer.items.filter((l) => l.inventorySlot !== action.slot);
  return step(withOffer(session, action.playerId, { items, coins: offer.coins }, now), { kind: "updated" });
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
export function acceptTrade(
  session: TradeSession,
  action: { readonly playerId: string; readonly revision?: number },
  now: number,
  ctx: TradeContext,
): TradeResult {
  const closed = guardOpen(session, action.playerId);
  if (closed) return closed;
  if (session.state === "settling") return unchanged(session);
  if (session.state === "pending") return err(TRADE_ERROR.INVALID_TRADE, "The trade has not started yet.");
  if (action.revision !== undefined && action.revision !== session.revision) {
    return err(TRADE_ERROR.STALE_OFFER, "The offer changed; check it again before accepting.");
  }
  const partnerId = partnerOf(session, action.playerId).playerId;
  if (session.offers[action.playerId]!.accepted) return unchanged(session);
  const accepted = withAcceptance({ ...session, lastActivityAt: now }, { [action.playerId]: true });
  if (!session.offers[partnerId]!.accepted) return step(accepted, { kind: "updated" });

  if (session.state === "confirm") return step({ ...accepted, state: "settling" }, { kind: "settle" });

  const plan = planSettlement(sideOf(session, session.a.playerId, ctx), sideOf(session, session.b.playerId, ctx), ctx.items);
  if (!plan.ok) {
    const cleared = withAcceptance(accepted, { [session.a.playerId]: false, [session.b.playerId]: false });
    const error =
      plan.error.code === SETTLEMENT_ERROR.INVENTORY_FULL
        ? { code: TRADE_ERROR.INVENTORY_FULL, message: plan.error.message }
        : { code: TRADE_ERROR.INVALID_ITEM, message: "An offered item is no longer in the inventory." };
    return step(cleared, { kind: "refused", error });
  }
  // A new screen is a new revision: accepts quoting the offer screen's revision are stale on it.
  const confirm = withAcceptance(
    { ...accepted, state: "confirm", revision: session.revision + 1 },
    { [session.a.playerId]: false, [session.b.playerId]: false },
  );
  return step(confirm, { kind: "confirmScreen" });
}

function sideOf(session: TradeSession, playerId: string, ctx: TradeContext): SettlementSide {
  const holdings = ctx.holdingsOf(playerId);
  const name = playerId === session.a.playerId ? session.a.name : session.b.name;
  return { offer: session.offers[playerId]!, inventory: holdings.inventory, coins: holdings.coins, name };
}

/**
 * Ends an open trade with `reason` (`tradeCancel` → "cancelled"; the room also uses
 * "disconnected", "player_died", "moved_away", "server_error"). `playerId`, when given, must be a
 * party (NOT_IN_TRADE). INVALID_TRADE when the trade has ended or is settling.
 */
export function cancelTrade(
  session: TradeSession,
  action: { readonly playerId?: string; readonly reason: TradeCancelReason },
  now: number,
): TradeResult {
  if (action.playerId !== undefined) {
    const closed = guardOpen(session, action.playerId);
    if (closed) return closed;
  } else if (isTerminal(session)) {
    return err(TRADE_ERROR.INVALID_TRADE, "This trade has ended.");
  }
  if (session.state === "settling") return err(TRADE_ERROR.INVALID_TRADE, "The trade is already being completed.");
  return cancelled(session, action.reason, now, action.playerId);
}

/**
 * Time-outs at `now`: a pending request after `pendingTimeoutMs` from creation, an offer or
 * confirmation screen after `inactivityTimeoutMs` without activity. Settling never times out here.
 */
export function tickTrade(session: TradeSession, now: number, params: TradeParams = DEFAULT_TRADE_PARAMS): TradeStep {
  const expired =
    (session.state === "pending" && now - session.createdAt >= params.pendingTimeoutMs) ||
    ((session.state === "offer" || session.state === "confirm") && now - session.lastActivityAt >= params.inactivityTimeoutMs);
  if (!expired) return { session, effect: { kind: "none" } };
  return {
    session: { ...session, state: "cancelled", cancelReason: TRADE_CANCEL_REASON.TIMEOUT, endedAt: now },
    effect: { kind: "cancelled", reason: TRADE_CANCEL_REASON.TIMEOUT },
  };
}

/** The settlement transaction committed: settling → completed. INVALID_TRADE from any other state. */
export function completeTrade(session: TradeSession, now: number): TradeResult {
  if (session.state !== "settling") return err(TRADE_ERROR.INVALID_TRADE, "The trade is not being completed.");
  return step({ ...session, state: "completed", endedAt: now }, { kind: "completed" });
}

/**
 * The settlement transaction failed: settling → cancelled with `reason` (usually "invalid_items"
 * after a failed re-check, "server_error" otherwise). INVALID_TRADE from any other state.
 */
export function failSettlement(session: TradeSession, reason: TradeCancelReason, now: number): TradeResult {
  if (session.state !== "settling") return err(TRADE_ERROR.INVALID_TRADE, "The trade is not being completed.");
  return cancelled(session, reason, now);
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
export function applyTradeAction(session: TradeSession, action: TradeAction, now: number, ctx: TradeContext): TradeResult {
  switch (action.type) {
    case "respond":
      return respondToRequest(session, action, now);
    case "setItem":
      return setOfferItem(session, action, now, ctx);
    case "setCoins":
      return setOfferCoins(session, action, now, ctx);
    case "removeItem":
      return removeOfferItem(session, action, now);
    case "accept":
      return acceptTrade(session, action, now, ctx);
    case "cancel":
      return cancelTrade(session, action, now);
  }
}
