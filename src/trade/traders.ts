/**
 * The trade system's hold on the world's players (docs/trading.md "How a trade flows"): the one
 * place trades send their events to a player, mark a player as trading, and read what a player
 * holds. One per world, shared by its pending requests (`TradeRequests`) and its open trades
 * (`TradeSession`).
 */
import type { z } from "zod";
import { freeSlots } from "../domain/inventory.js";
import type { TradeHoldings } from "../domain/trade/trade.js";
import type { Logger } from "../logger.js";
import type { TRADE_SERVER_EVENTS } from "../protocol/trade.js";
import type { World } from "../world/world.js";

/** A server → client trade event (docs/trading.md#events). */
export type TradeServerEventName = keyof typeof TRADE_SERVER_EVENTS;

/** A value as read-only all the way down: the domain's read-only offers fit the payload schemas. */
type DeepReadonly<T> = T extends readonly (infer U)[] ? readonly DeepReadonly<U>[] : T extends object ? { readonly [K in keyof T]: DeepReadonly<T[K]> } : T;

/** The payload of a server → client trade event, as its schema describes it. */
export type TradeServerPayload<E extends TradeServerEventName> = DeepReadonly<z.output<(typeof TRADE_SERVER_EVENTS)[E]>>;

const EMPTY_HOLDINGS: TradeHoldings = Object.freeze({ inventory: Object.freeze(Array(28).fill(null)), coins: 0 });

export class Traders {
  /** Player id to the trade it takes part in: the requester of a pending request, or either trader of an open trade. */
  private readonly byPlayer = new Map<string, string>();

  constructor(
    private readonly world: World,
    private readonly logger: Logger,
  ) {}

  /** Send a trade event to a player in this world (nothing when it has gone). */
  send<E extends TradeServerEventName>(playerId: string, event: E, data: TradeServerPayload<E>): void {
    this.world.player(playerId)?.send(event, data);
  }

  /** Send the player's `player:sync` (after a completed trade). */
  sync(playerId: string): void {
    this.world.player(playerId)?.sync();
  }

  /** What the player holds now (nothing when it has gone). */
  holdings(playerId: string): TradeHoldings {
    const p = this.world.player(playerId);
    return p ? { inventory: p.inventory, coins: p.coins } : EMPTY_HOLDINGS;
  }

  /** Free inventory slots of the player (0 when it has gone). */
  freeSlots(playerId: string): number {
    const p = this.world.player(playerId);
    return p ? freeSlots(p.inventory) : 0;
  }

  /** The trade the player takes part in (pending or open). */
  tradeOf(playerId: string): string | undefined {
    return this.byPlayer.get(playerId);
  }

  /** The player made the request `tradeId` (only the requester is bound while a request is pending). */
  requested(playerId: string, tradeId: string): void {
    this.byPlayer.set(playerId, tradeId);
  }

  /** The player's request is no longer pending. */
  requestEnded(playerId: string): void {
    this.byPlayer.delete(playerId);
  }

  /**
   * Mark a player as trading in `tradeId` (interfaces are blocked: whatever it was doing stops), or
   * free it (`undefined`).
   */
  setTrading(playerId: string, tradeId: string | undefined): void {
    if (tradeId) this.byPlayer.set(playerId, tradeId);
    else this.byPlayer.delete(playerId);
    const p = this.world.player(playerId);
    if (!p) return;
    p.tradeId = tradeId;
    if (tradeId) {
      p.action = null;
      p.path = [];
    }
  }

  /**
   * Whether `playerId` takes part in a trade that still exists (`live`: a pending request or an
   * open trade; docs/trading.md "Cancellation"). A mark (here, or the player's `tradeId`) whose
   * trade is neither is a leftover whose end never reached it: it is dropped, logged, and never
   * refuses a request.
   */
  inLiveTrade(playerId: string, live: (tradeId: string) => boolean): boolean {
    const player = this.world.player(playerId);
    let inTrade = false;
    for (const id of [this.byPlayer.get(playerId), player?.tradeId]) {
      if (id === undefined) continue;
      if (live(id)) inTrade = true;
      else {
        this.logger.warn({ playerId, tradeId: id }, "trade: a player was still marked for a trade that had ended; mark cleared");
        if (this.byPlayer.get(playerId) === id) this.byPlayer.delete(playerId);
        if (player?.tradeId === id) player.tradeId = undefined;
      }
    }
    return inTrade;
  }
}
