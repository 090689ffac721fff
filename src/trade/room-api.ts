/**
 * What `TradeService` and a `TradeRoom` (rooms/TradeRoom.ts) ask of each other: the room's
 * environment (`TradeEnv`), the handle the service routes events through, and the texts of
 * `tradeCancelled`.
 */
import type { ItemLookup } from "../domain/inventory.js";
import type { TradeHoldings, TradeParams, Trade } from "../domain/trade/trade.js";
import type { TradeCancelReason } from "../domain/trade/codes.js";
import type { Logger } from "../logger.js";
import type { Player } from "../world/player.js";
import type { SettlementResult } from "./settlement.js";

/** Human-readable text for each cancel reason (the `message` of `tradeCancelled`). */
export const CANCEL_MESSAGES: Record<TradeCancelReason, string> = {
  declined: "The trade request was declined.",
  cancelled: "The trade was cancelled.",
  timeout: "The trade timed out.",
  disconnected: "The other player disconnected.",
  player_died: "A trader died.",
  moved_away: "A trader moved away.",
  invalid_items: "The offered items changed; the trade was cancelled.",
  server_error: "The trade was cancelled by the server.",
};

/**
 * What a TradeRoom needs from the process it lives in. `now` and `send` are plain functions (no
 * `this`): the service hands them on to its request handling.
 */
export interface TradeEnv {
  items: ItemLookup;
  itemValue(itemId: string): number;
  params: TradeParams;
  now: () => number;
  holdingsOf(playerId: string): TradeHoldings;
  freeSlots(playerId: string): number;
  send: (playerId: string, event: string, data: unknown) => void;
  /** Send the player's `player:sync` (after a completed trade). */
  sync(playerId: string): void;
  /** The account owning a character, if it exists (who may watch a trade). */
  accountOf(characterId: string): Promise<string | undefined>;
  /** Mark a player as trading (blocks interfaces) or free. */
  setTrading(playerId: string, tradeId: string | undefined): void;
  /**
   * Run the settlement transaction and refresh both players from what committed. Players whose
   * items in memory can't be trusted afterwards come back in `stale`: the room tells them the
   * trade ended, then removes them (`evict`).
   */
  settle(trade: Trade, signal?: AbortSignal): Promise<SettleOutcome>;
  /**
   * Remove players whose items in memory may differ from storage: tell them (`tradeError
   * TRADE_FAILED`), remove them from the world and disconnect them, so they reload from storage.
   */
  evict(trade: Trade, players: readonly Player[], result: SettlementResult): void;
  /** Audit a trade that ended without completing. */
  auditCancelled(trade: Trade): Promise<void>;
  /**
   * The trade whose room the service is creating right now, taken once (the room's
   * `onCreate` asks with the trade id it was given); undefined for anything the service is not
   * creating — so a client's options can never make a trade room.
   */
  claim(tradeId: string): Trade | undefined;
  /**
   * The room of `tradeId` exists: route its trade's events and interruptions to it from now on.
   * Called from `onCreate`, before `tradeStarted` goes out. False (nothing changed) when the trade
   * already has a room: a route is never replaced.
   */
  opened(tradeId: string, room: TradeRoomHandle): boolean;
  /** The room is gone; forget its routing (only if the route is this room's). */
  closed(tradeId: string, room: TradeRoomHandle): void;
  logger: Logger;
}

/** What `TradeEnv.settle` reports: the settlement's result and the players to evict after it. */
export interface SettleOutcome {
  result: SettlementResult;
  /** Players whose items in memory may differ from storage (the outcome is unknown, or a reload failed). */
  stale: readonly Player[];
}

/** Why the world interrupts a trade. */
export type TradeInterruption = "moved_away" | "player_died" | "disconnected" | "server_error";

/** What the service calls on a trade room (in this process). */
export interface TradeRoomHandle {
  /** Resolves once the trade has ended and its audit record is written. */
  readonly ended: Promise<void>;
  act(playerId: string, event: string, data: Record<string, unknown>): void;
  interrupt(playerId: string | undefined, reason: TradeInterruption): void;
  /** Stop a settlement still running (shutdown): see `TradeRoom.abandon`. */
  abandon(): void;
}
