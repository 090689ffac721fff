/**
 * A trade as a pure state machine (docs/trading.md#states): its state and the queries
 * on it here, its transitions in `transitions.ts`.
 *
 * States:
 *   pending ──respond(accept)──▶ offer ──both accept (capacity ok)──▶ confirm ──both accept──▶ settling
 *   settling ──completeTrade──▶ completed          settling ──failSettlement──▶ cancelled
 *   pending / offer / confirm ──decline, cancel, timeout──▶ cancelled
 * `settling` is internal: the database transaction is running; clients still see the confirmation
 * screen until `tradeCompleted` or `tradeCancelled`. Repeated accepts while settling are ignored
 * and cancellations are refused (the transaction decides the outcome).
 *
 * Every transition takes `(trade, action, now, ctx?)` and returns either a typed error (nothing
 * changed: send `tradeError`) or a `TradeStep`: the next trade and one `effect` telling the session
 * what to send. Items never move here; `planSettlement` (`settlement-plan.ts`) computes the move for
 * storage.
 */
import { ok, type DomainError, type Result } from "../errors.js";
import type { Inventory, ItemLookup } from "../inventory.js";
import type { TradeCancelReason, TradeErrorCode } from "./codes.js";
import type { TradeOffer, TradeValues } from "./offer.js";

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

/** A trade between requester `a` and target `b`. */
export interface Trade {
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
 * What the trade's session (src/trade/session.ts) should do after a successful transition.
 * - none: nothing changed (repeat, no-op, or nothing due); send nothing.
 * - started: `tradeStarted` to both.
 * - updated: `tradeUpdated` to both (an offer or an acceptance changed).
 * - refused: the transition changed the trade (acceptances cleared) but failed: `tradeError`
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
  readonly trade: Trade;
  readonly effect: TradeEffect;
}

/** What a transition returns: the next step, or a typed error (nothing changed). */
export type TradeResult = Result<TradeStep, TradeErrorCode>;

/** A successful transition to `trade`, telling the session to do `effect`. */
export function step(trade: Trade, effect: TradeEffect): TradeResult {
  return ok({ trade, effect });
}

/** A successful transition that changed nothing. */
export function unchanged(trade: Trade): TradeResult {
  return step(trade, { kind: "none" });
}

/** The other participant. Throws a RangeError when `playerId` is not in the trade. */
export function partnerOf(trade: Trade, playerId: string): TradeParty {
  if (playerId === trade.a.playerId) return trade.b;
  if (playerId === trade.b.playerId) return trade.a;
  throw new RangeError(`${playerId} is not part of trade ${trade.id}`);
}

/** Whether the player takes part in the trade. */
export function isParty(trade: Trade, playerId: string): boolean {
  return playerId === trade.a.playerId || playerId === trade.b.playerId;
}

/** Whether the trade has ended (completed or cancelled). */
export function isTerminal(trade: Trade): boolean {
  return trade.state === "completed" || trade.state === "cancelled";
}

/** Both offers from one player's point of view (the `tradeUpdated` / `tradeConfirmScreen` fields). */
export interface TradeView {
  readonly myOffer: TradeOffer;
  readonly theirOffer: TradeOffer;
}

/** `{ myOffer, theirOffer }` for `playerId`. Throws a RangeError when the player is not a party. */
export function viewFor(trade: Trade, playerId: string): TradeView {
  const partner = partnerOf(trade, playerId);
  return { myOffer: trade.offers[playerId]!, theirOffer: trade.offers[partner.playerId]! };
}

/**
 * The trade from one trader's side: what `tradeUpdated` and `tradeConfirmScreen` send to that
 * player and what its watcher's synchronised state holds. `values` from the confirmation screen on.
 */
export interface TraderView extends TradeView {
  readonly revision: number;
  readonly partnerFreeSlots: number;
  readonly values?: TradeValues;
}

/** Screens that show the offers' values: the confirmation screen and what follows it when completing. */
export function showsValues(state: TradeState): boolean {
  return state === "confirm" || state === "settling" || state === "completed";
}
