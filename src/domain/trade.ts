/**
 * The trade session as a pure state machine (docs/trading.md#states),
 * plus the settlement plan the storage transaction applies.
 *
 * States:
 *   pending ──respond(accept)──▶ offer ──both accept (capacity ok)──▶ confirm ──both accept──▶ settling
 *   settling ──completeTrade──▶ completed          settling ──failSettlement──▶ cancelled
 *   pending / offer / confirm ──decline, cancel, timeout──▶ cancelled
 * `settling` is internal: the database transaction is running; clients still see the confirmation
 * screen until `tradeCompleted` or `tradeCancelled`. Repeated accepts while settling are ignored
 * and cancellations are refused (the transaction decides the outcome).
 *
 * Every transition takes `(session, action, now, ctx?)` and returns either a typed error (nothing
 * changed: send `tradeError`) or a `TradeStep`: the next session and one `effect` telling the room
 * what to send. Items never move here; `planSettlement` computes the move for storage.
 */
import { err, ok, type DomainError, type Err, type Result } from "./errors.js";
import { applyChanges, INVENTORY_ERROR, isValidSlot, type Inventory, type ItemLookup, type SlotRemoval, type Addition } from "./inventory.js";
import { chebyshev } from "./movement.js";
import { COINS_ITEM_ID, MAX_STACK, type Tile } from "./types.js";

/** `tradeError` codes (docs/trading.md#error-codes), exactly. */
export const TRADE_ERROR = {
  INVALID_REQUEST: "INVALID_REQUEST",
  PLAYER_OFFLINE: "PLAYER_OFFLINE",
  SELF_TRADE: "SELF_TRADE",
  TOO_FAR: "TOO_FAR",
  ALREADY_IN_TRADE: "ALREADY_IN_TRADE",
  PLAYER_BUSY: "PLAYER_BUSY",
  RATE_LIMITED: "RATE_LIMITED",
  INVALID_TRADE: "INVALID_TRADE",
  NOT_IN_TRADE: "NOT_IN_TRADE",
  INVALID_SLOT: "INVALID_SLOT",
  INVALID_ITEM: "INVALID_ITEM",
  INVALID_QUANTITY: "INVALID_QUANTITY",
  UNTRADEABLE_ITEM: "UNTRADEABLE_ITEM",
  STALE_OFFER: "STALE_OFFER",
  OFFER_FROZEN: "OFFER_FROZEN",
  INVENTORY_FULL: "INVENTORY_FULL",
  PLAYER_DEAD: "PLAYER_DEAD",
  TRADE_FAILED: "TRADE_FAILED",
} as const;
export type TradeErrorCode = (typeof TRADE_ERROR)[keyof typeof TRADE_ERROR];

/** `tradeCancelled.reason` values (docs/trading.md#cancellation), exactly. */
export const TRADE_CANCEL_REASON = {
  DECLINED: "declined",
  CANCELLED: "cancelled",
  TIMEOUT: "timeout",
  DISCONNECTED: "disconnected",
  PLAYER_DIED: "player_died",
  MOVED_AWAY: "moved_away",
  INVALID_ITEMS: "invalid_items",
  SERVER_ERROR: "server_error",
} as const;
export type TradeCancelReason = (typeof TRADE_CANCEL_REASON)[keyof typeof TRADE_CANCEL_REASON];

/** Errors of `planSettlement`: the re-check under the lock failed, or a side cannot hold its share. */
export const SETTLEMENT_ERROR = {
  INVALID_ITEMS: "INVALID_ITEMS",
  INVENTORY_FULL: "INVENTORY_FULL",
} as const;
export type SettlementErrorCode = (typeof SETTLEMENT_ERROR)[keyof typeof SETTLEMENT_ERROR];

/** Farthest apart (Chebyshev tiles) two players may be to start a trade. */
export const TRADE_REQUEST_RANGE = 2;
/** The same pair may not ask again within this many milliseconds. */
export const TRADE_REQUEST_COOLDOWN_MS = 3_000;

/** Time limits; tests pass short ones. */
export interface TradeParams {
  /** A request nobody answers expires after this long. */
  readonly pendingTimeoutMs: number;
  /** An open trade without any accepted action for this long is cancelled. */
  readonly inactivityTimeoutMs: number;
}
export const DEFAULT_TRADE_PARAMS: TradeParams = Object.freeze({
  pendingTimeoutMs: 30_000,
  inactivityTimeoutMs: 5 * 60_000,
});

export type TradeState = "pending" | "offer" | "confirm" | "settling" | "completed" | "cancelled";

/** One participant; `level` is the combat level. */
export interface TradeParty {
  readonly playerId: string;
  readonly name: string;
  readonly level: number;
}

/** One offered inventory slot. `itemId` records what the slot held when offered. */
export interface OfferLine {
  readonly inventorySlot: number;
  readonly itemId: string;
  readonly quantity: number;
}

/** One side's offer: lines keyed by (unique) inventory slot, sorted by slot. CONTRACT shape. */
export interface TradeOffer {
  readonly items: readonly OfferLine[];
  readonly coins: number;
  readonly accepted: boolean;
}

/** A trade between requester `a` and target `b`. */
export interface TradeSession {
  readonly id: string;
  readonly a: TradeParty;
  readonly b: TradeParty;
  readonly state: TradeState;
  /** When the request was made (ms). */
  readonly createdAt: number;
  /** When the offer screen opened; set once the request is accepted (for the audit record). */
  readonly startedAt?: number;
  /** Last accepted action of either player (ms); drives the inactivity timeout. */
  readonly lastActivityAt: number;
  /** Incremented by every offer change and by entering the confirmation screen. */
  readonly revision: number;
  /** Keyed by player id (a and b). */
  readonly offers: Readonly<Record<string, TradeOffer>>;
  readonly cancelReason?: TradeCancelReason;
  /** Who cancelled, when a player did. */
  readonly cancelledBy?: string;
  /** When the trade completed or was cancelled. */
  readonly endedAt?: number;
}

/** What a player holds, as the trade checks it: the inventory and the character's coins. */
export interface TradeHoldings {
  readonly inventory: Inventory;
  readonly coins: number;
}

/** What transitions may look up: item definitions and each player's current holdings. */
export interface TradeContext {
  readonly items: ItemLookup;
  readonly holdingsOf: (playerId: string) => TradeHoldings;
}

/**
 * What the room should do after a successful transition.
 * - none: nothing changed (repeat, no-op, or nothing due); send nothing.
 * - started: `tradeStarted` to both.
 * - updated: `tradeUpdated` to both (an offer or an acceptance changed).
 * - refused: the transition changed the session (acceptances cleared) but failed: `tradeError`
 *   with `error` to both, then `tradeUpdated`.
 * - confirmScreen: `tradeConfirmScreen` to both.
 * - settle: run the settlement transaction, then `completeTrade` or `failSettlement`.
 * - completed: `tradeCompleted` to both.
 * - cancelled: `tradeCancelled { reason }` to both.
 */
export type TradeEffect =
  | { readonly kind: "none" }
  | { readonly kind: "started" }
  | { readonly kind: "updated" }
  | { readonly kind: "refused"; readonly error: DomainError<TradeErrorCode> }
  | { readonly kind: "confirmScreen" }
  | { readonly kind: "settle" }
  | { readonly kind: "completed" }
  | { readonly kind: "cancelled"; readonly reason: TradeCancelReason };

export interface TradeStep {
  readonly session: TradeSession;
  readonly effect: TradeEffect;
}

type TradeResult = Result<TradeStep, TradeErrorCode>;
type TradeErr = Err<TradeErrorCode>;

const EMPTY_OFFER: TradeOffer = Object.freeze({ items: Object.freeze([]), coins: 0, accepted: false });

function step(session: TradeSession, effect: TradeEffect): TradeResult {
  return ok({ session, effect });
}

function unchanged(session: TradeSession): TradeResult {
  return step(session, { kind: "none" });
}

/** The other participant. Throws a RangeError when `playerId` is not in the trade. */
export function partnerOf(session: TradeSession, playerId: string): TradeParty {
  if (playerId === session.a.playerId) return session.b;
  if (playerId === session.b.playerId) return session.a;
  throw new RangeError(`${playerId} is not part of trade ${session.id}`);
}

/** Whether the player takes part in the trade. */
export function isParty(session: TradeSession, playerId: string): boolean {
  return playerId === session.a.playerId || playerId === session.b.playerId;
}

/** Whether the trade has ended (completed or cancelled). */
export function isTerminal(session: TradeSession): boolean {
  return session.state === "completed" || session.state === "cancelled";
}

/** Input of `checkTradeRequest`: what the room knows when `tradeRequest` arrives. */
export interface TradeRequestCheck {
  readonly requesterId: string;
  readonly targetId: string;
  readonly targetOnline: boolean;
  readonly requesterTile: Tile;
  /** The target's tile; ignored when the target is offline. */
  readonly targetTile?: Tile;
  readonly requesterInTrade: boolean;
  readonly targetInTrade: boolean;
  readonly requesterDead: boolean;
  readonly targetDead: boolean;
  /** The target is busy otherwise (e.g. ignores the requester, in a blocking interface). */
  readonly targetBusy?: boolean;
  /** When this pair last asked (either direction), if ever. */
  readonly lastPairRequestAt?: number;
  /** Both characters belong to the same account (two characters of one owner never trade). */
  readonly sameAccount?: boolean;
  readonly now: number;
}

/**
 * The guards of `tradeRequest`, in order: SELF_TRADE (the same character, or two characters of one
 * account: no counterparty, only an owner moving items between its own characters), PLAYER_OFFLINE, PLAYER_DEAD (either),
 * ALREADY_IN_TRADE (requester), PLAYER_BUSY (target trading or busy), TOO_FAR (more than 2 tiles),
 * RATE_LIMITED (same pair within 3 s).
 */
export function checkTradeRequest(input: TradeRequestCheck): Result<true, TradeErrorCode> {
  if (input.requesterId === input.targetId) return err(TRADE_ERROR.SELF_TRADE, "You can't trade with yourself.");
  if (input.sameAccount) return err(TRADE_ERROR.SELF_TRADE, "You can't trade with your own characters.");
  if (!input.targetOnline || !input.targetTile) return err(TRADE_ERROR.PLAYER_OFFLINE, "That player is not online.");
  if (input.requesterDead || input.targetDead) return err(TRADE_ERROR.PLAYER_DEAD, "Dead players can't trade.");
  if (input.requesterInTrade) return err(TRADE_ERROR.ALREADY_IN_TRADE, "You are already trading.");
  if (input.targetInTrade || input.targetBusy) return err(TRADE_ERROR.PLAYER_BUSY, "That player is busy.");
  if (chebyshev(input.requesterTile, input.targetTile) > TRADE_REQUEST_RANGE) {
    return err(TRADE_ERROR.TOO_FAR, "You need to be closer to trade.");
  }
  if (input.lastPairRequestAt !== undefined && input.now - input.lastPairRequestAt < TRADE_REQUEST_COOLDOWN_MS) {
    return err(TRADE_ERROR.RATE_LIMITED, "Please wait a moment before asking again.");
  }
  return ok(true);
}

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

/** Both offers from one player's point of view (the `tradeUpdated` / `tradeConfirmScreen` fields). */
export interface TradeView {
  readonly myOffer: TradeOffer;
  readonly theirOffer: TradeOffer;
}

/** `{ myOffer, theirOffer }` for `playerId`. Throws a RangeError when the player is not a party. */
export function viewFor(session: TradeSession, playerId: string): TradeView {
  const partner = partnerOf(session, playerId);
  return { myOffer: session.offers[playerId]!, theirOffer: session.offers[partner.playerId]! };
}

/** The `values` of `tradeConfirmScreen`. */
export interface TradeValues {
  readonly myOfferValue: number;
  readonly theirOfferValue: number;
  /** theirOfferValue − myOfferValue: positive when this player gains. */
  readonly wealthTransfer: number;
}

/** Value of an offer: item value × quantity for each line, plus coins at 1 each. */
export function offerValue(offer: Pick<TradeOffer, "items" | "coins">, itemValue: (itemId: string) => number): number {
  let total = offer.coins;
  for (const line of offer.items) total += itemValue(line.itemId) * line.quantity;
  return total;
}

/** Values from the point of view of the owner of `myOffer`. */
export function computeValues(
  myOffer: Pick<TradeOffer, "items" | "coins">,
  theirOffer: Pick<TradeOffer, "items" | "coins">,
  itemValue: (itemId: string) => number,
): TradeValues {
  const myOfferValue = offerValue(myOffer, itemValue);
  const theirOfferValue = offerValue(theirOffer, itemValue);
  return { myOfferValue, theirOfferValue, wealthTransfer: theirOfferValue - myOfferValue };
}

/** One side as read under the lock: its offer, its inventory and its coins. */
export interface SettlementSide {
  readonly offer: Pick<TradeOffer, "items" | "coins">;
  readonly inventory: Inventory;
  readonly coins: number;
  /** Player name for error messages. */
  readonly name?: string;
}

/** An item (or coins, as itemId "coins") a side receives. */
export interface ReceivedItem {
  readonly itemId: string;
  readonly quantity: number;
}

/** What one side holds after the trade. */
export interface SettlementOutcome {
  readonly inventory: Inventory;
  readonly coins: number;
  /** The `tradeCompleted.receivedItems` of this side, one entry per item id, coins last. */
  readonly receivedItems: readonly ReceivedItem[];
}

export interface SettlementPlan {
  readonly a: SettlementOutcome;
  readonly b: SettlementOutcome;
}

type SettleErr = Err<SettlementErrorCode>;

/** Re-check of one side's offer against what it holds now. */
function verifyOffer(side: SettlementSide, items: ItemLookup, who: string): SettleErr | undefined {
  const seen = new Set<number>();
  for (const line of side.offer.items) {
    if (!isValidSlot(line.inventorySlot) || seen.has(line.inventorySlot)) {
      return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offer names an invalid slot.`);
    }
    seen.add(line.inventorySlot);
    const held = side.inventory[line.inventorySlot];
    if (!held || held.itemId !== line.itemId || held.quantity < line.quantity || !Number.isInteger(line.quantity) || line.quantity < 1) {
      return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offered items are no longer there.`);
    }
    const def = items(line.itemId);
    if (!def || !def.tradeable) return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offer holds an item that can't be traded.`);
  }
  const coins = side.offer.coins;
  if (!Number.isInteger(coins) || coins < 0 || coins > side.coins) {
    return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offered coins are no longer there.`);
  }
  return undefined;
}

/** One side's outcome: its own lines leave first, then the partner's lines arrive. */
function settleSide(own: SettlementSide, partner: SettlementSide, items: ItemLookup, who: string): Result<SettlementOutcome, SettlementErrorCode> {
  const remove: SlotRemoval[] = own.offer.items.map((l) => ({ slot: l.inventorySlot, quantity: l.quantity, itemId: l.itemId }));
  const add: Addition[] = partner.offer.items.map((l) => ({ item: items(l.itemId)!, quantity: l.quantity }));
  const inventory = applyChanges(own.inventory, { remove, add });
  if (!inventory.ok) {
    const full = inventory.error.code === INVENTORY_ERROR.INVENTORY_FULL || inventory.error.code === INVENTORY_ERROR.STACK_OVERFLOW;
    return full
      ? err(SETTLEMENT_ERROR.INVENTORY_FULL, `${who} inventory can't hold the items.`)
      : err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offered items are no longer there.`);
  }
  const coins = own.coins - own.offer.coins + partner.offer.coins;
  if (coins > MAX_STACK) return err(SETTLEMENT_ERROR.INVENTORY_FULL, `${who} coins would exceed ${MAX_STACK}.`);

  const received = new Map<string, number>();
  for (const line of partner.offer.items) received.set(line.itemId, (received.get(line.itemId) ?? 0) + line.quantity);
  const receivedItems: ReceivedItem[] = [...received].map(([itemId, quantity]) => ({ itemId, quantity }));
  if (partner.offer.coins > 0) receivedItems.push({ itemId: COINS_ITEM_ID, quantity: partner.offer.coins });
  return ok({ inventory: inventory.value, coins, receivedItems });
}

/**
 * The pure core of the settlement transaction, run on rows read under the lock:
 * 1. re-check both offers: every offered slot still holds the recorded item in at least the
 *    offered quantity, the item is known and tradeable, the coins are there (else INVALID_ITEMS);
 * 2. for each side remove its own offer, then add the partner's (stackables merge into the existing
 *    stack, others take the lowest free slots, so emptied slots count);
 * 3. enforce the 28-slot and MAX_STACK caps on items and coins (else INVENTORY_FULL).
 * Returns both new inventories and coin totals and what each side received.
 */
export function planSettlement(a: SettlementSide, b: SettlementSide, items: ItemLookup): Result<SettlementPlan, SettlementErrorCode> {
  const whoA = a.name ? `${a.name}'s` : "A player's";
  const whoB = b.name ? `${b.name}'s` : "A player's";
  const invalid = verifyOffer(a, items, whoA) ?? verifyOffer(b, items, whoB);
  if (invalid) return invalid;
  const outA = settleSide(a, b, items, whoA);
  if (!outA.ok) return outA;
  const outB = settleSide(b, a, items, whoB);
  if (!outB.ok) return outB;
  return ok({ a: outA.value, b: outB.value });
}
