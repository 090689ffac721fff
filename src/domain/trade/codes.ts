/** The error codes and cancel reasons of trading (docs/trading.md), as `as const` objects. */

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

/** Human-readable text for each cancel reason (the `message` of `tradeCancelled`). */
export const CANCEL_MESSAGES: Readonly<Record<TradeCancelReason, string>> = {
  declined: "The trade request was declined.",
  cancelled: "The trade was cancelled.",
  timeout: "The trade timed out.",
  disconnected: "The other player disconnected.",
  player_died: "A trader died.",
  moved_away: "A trader moved away.",
  invalid_items: "The offered items changed; the trade was cancelled.",
  server_error: "The trade was cancelled by the server.",
};
