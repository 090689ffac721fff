/** The guards of a trade request (docs/trading.md#rules), before any trade exists. */
import { err, ok, type Result } from "../errors.js";
import { chebyshev } from "../movement.js";
import { TRADE_ERROR, type TradeErrorCode } from "./codes.js";
import type { Tile } from "../types.js";

/** Farthest apart (Chebyshev tiles) two players may be to start a trade. */
export const TRADE_REQUEST_RANGE = 2;
/** The same pair may not ask again within this many milliseconds. */
export const TRADE_REQUEST_COOLDOWN_MS = 3_000;

/** Input of `checkTradeRequest`: what the trade service knows when `tradeRequest` arrives. */
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
