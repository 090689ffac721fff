/**
 * Trade requests not answered yet (docs/trading.md#states, `pending`): `tradeRequest` is checked
 * and held here until the invited player answers, either player cancels, it times out, or either
 * player leaves, dies or moves. An accepted request goes back to `TradeService`, which opens it
 * as a `TradeSession` (session.ts); from then on the session owns the trade.
 */
import { randomUUID } from "node:crypto";
import type { TradeParams, Trade } from "../domain/trade/trade.js";
import { CANCEL_MESSAGES, TRADE_ERROR, type TradeCancelReason, type TradeErrorCode } from "../domain/trade/codes.js";
import { checkTradeRequest } from "../domain/trade/request.js";
import { cancelTrade, createTrade, respondToRequest, tickTrade } from "../domain/trade/transitions.js";
import type { Tile } from "../domain/types.js";
import type { Metrics } from "../metrics.js";
import type { Player } from "../world/player.js";
import type { SocialRelations, World } from "../world/world.js";
import type { Traders } from "./traders.js";

/** A pair's requests are forgotten this long after the last one (the cooldown is shorter). */
const PAIR_MEMORY_MS = 10_000;

export interface TradeRequestsDeps {
  world: World;
  social?: SocialRelations;
  params: TradeParams;
  metrics?: Metrics;
  /** The world's players as trades see them (events, marks), shared with the open trades. */
  traders: Traders;
  now(): number;
  /** Whether shutdown has begun: no new trade from then on. */
  closing(): boolean;
  /** Whether the player takes part in a trade that still exists (the service checks its marks). */
  inTrade(playerId: string): boolean;
}

export class TradeRequests {
  /** Requests not answered yet, by trade id. */
  private readonly pending = new Map<string, Trade>();
  /** Where both players of a pending request stood when it was made (a move cancels it). */
  private readonly tiles = new Map<string, { a: Tile; b: Tile }>();
  /** Last request time per unordered pair. */
  private readonly pairRequests = new Map<string, number>();

  constructor(private readonly deps: TradeRequestsDeps) {
    deps.world.events.on("playerRemoved", (playerId) => this.cancelAllOf(playerId));
  }

  /** The pending request `tradeId`, if it is one. */
  get(tradeId: string): Trade | undefined {
    return this.pending.get(tradeId);
  }

  /** `tradeRequest`: checked (`checkTradeRequest`), then held and announced to the target. */
  async request(player: Player, targetId: string): Promise<void> {
    const { deps } = this;
    if (this.refuseWhileClosing(player.id, undefined)) return;
    const target = deps.world.player(targetId);
    const now = deps.now();
    const pair = [player.id, targetId].sort().join("|");
    const ignored = target && deps.social ? await deps.social.isIgnoring(target.id, player.id) : false;
    if (this.refuseWhileClosing(player.id, undefined)) return; // shutdown began while the ignore list was read
    const check = checkTradeRequest({
      requesterId: player.id,
      targetId,
      targetOnline: !!target?.connection,
      requesterTile: player.tile,
      targetTile: target?.tile,
      requesterInTrade: deps.inTrade(player.id),
      targetInTrade: deps.inTrade(targetId),
      requesterDead: player.dead,
      targetDead: target?.dead ?? false,
      targetBusy: ignored || (target?.itemsLocked ?? false),
      lastPairRequestAt: this.pairRequests.get(pair),
      sameAccount: target !== undefined && target.accountId === player.accountId,
      now,
    });
    if (!check.ok) return this.error(player.id, undefined, check.error.code, check.error.message);
    this.pairRequests.set(pair, now);
    const created = createTrade({
      id: randomUUID(),
      a: { playerId: player.id, name: player.name, level: player.combatLevel },
      b: { playerId: target!.id, name: target!.name, level: target!.combatLevel },
      now,
    });
    if (!created.ok) return this.error(player.id, undefined, created.error.code, created.error.message);
    const trade = created.value;
    this.pending.set(trade.id, trade);
    this.tiles.set(trade.id, { a: player.tile, b: target!.tile });
    deps.traders.requested(player.id, trade.id);
    deps.traders.send(target!.id, "tradeIncoming", {
      tradeId: trade.id,
      fromPlayerId: player.id,
      fromPlayerName: player.name,
      fromPlayerLevel: player.combatLevel,
    });
  }

  /**
   * `tradeRequestRespond`. A decline ends the request; an accept returns the started trade for the
   * service to open, unless the requester has gone or died meanwhile (then it ends).
   */
  respond(player: Player, trade: Trade, accept: boolean): Trade | undefined {
    const { deps } = this;
    if (accept && this.refuseWhileClosing(player.id, trade.id)) return undefined;
    // Only the invited player answers (respondToRequest says INVALID_TRADE to anyone else).
    if (accept && player.id === trade.b.playerId && deps.inTrade(player.id)) {
      this.error(player.id, trade.id, TRADE_ERROR.ALREADY_IN_TRADE, "You are already trading.");
      return undefined;
    }
    const res = respondToRequest(trade, { playerId: player.id, accept }, deps.now());
    if (!res.ok) {
      this.error(player.id, trade.id, res.error.code, res.error.message);
      return undefined;
    }
    this.forget(trade);
    if (res.value.effect.kind === "cancelled") {
      this.notifyCancelled(res.value.trade);
      return undefined;
    }
    // Both must still be here and free.
    const a = deps.world.player(trade.a.playerId);
    if (!a?.connection || a.dead) {
      this.notifyCancelled({ ...res.value.trade, state: "cancelled", cancelReason: "disconnected" });
      return undefined;
    }
    return res.value.trade;
  }

  /** Ends a pending request (`tradeCancel` by `by`, or an interruption). */
  cancel(trade: Trade, reason: TradeCancelReason, by?: string): void {
    const res = cancelTrade(trade, { playerId: by, reason }, this.deps.now());
    if (!res.ok) {
      if (by) this.error(by, trade.id, res.error.code, res.error.message);
      return;
    }
    this.forget(trade);
    this.notifyCancelled(res.value.trade);
  }

  /**
   * Ends every pending request the player made or received, at once: it left the world (a leave,
   * a lost lease). Waiting for the next check would let a player who comes straight back find its
   * old request still pending (ALREADY_IN_TRADE).
   */
  cancelAllOf(playerId: string): void {
    for (const s of [...this.pending.values()]) if (s.a.playerId === playerId || s.b.playerId === playerId) this.cancel(s, "disconnected");
  }

  /** Ends every pending request the player received (it left, died or moved). */
  cancelReceived(playerId: string, reason: TradeCancelReason): void {
    for (const s of [...this.pending.values()]) if (s.b.playerId === playerId) this.cancel(s, reason);
  }

  /** Ends every pending request (shutdown). */
  cancelAll(reason: TradeCancelReason): void {
    for (const s of [...this.pending.values()]) this.cancel(s, reason);
  }

  /** `tradeCancelled` to both players of a request that did not become a trade (each knew of it). */
  notifyCancelled(trade: Trade): void {
    const reason = trade.cancelReason ?? "cancelled";
    this.deps.metrics?.trades.inc({ outcome: reason });
    for (const id of [trade.a.playerId, trade.b.playerId]) {
      this.deps.traders.send(id, "tradeCancelled", { tradeId: trade.id, reason, message: CANCEL_MESSAGES[reason] });
    }
  }

  /** Send `tradeError`. */
  private error(playerId: string, tradeId: string | undefined, code: TradeErrorCode, message: string): void {
    this.deps.traders.send(playerId, "tradeError", { ...(tradeId ? { tradeId } : {}), code, message });
  }

  /** Shutdown has begun: a trade started now would be ended at once (or missed by `cancelAll`). */
  private refuseWhileClosing(playerId: string, tradeId: string | undefined): boolean {
    const closing = this.deps.closing();
    if (closing) this.error(playerId, tradeId, TRADE_ERROR.TRADE_FAILED, "The server is shutting down.");
    return closing;
  }

  /** The request is no longer pending; its requester is free again (the target never was bound). */
  private forget(trade: Trade): void {
    this.pending.delete(trade.id);
    this.tiles.delete(trade.id);
    this.deps.traders.requestEnded(trade.a.playerId);
  }

  /**
   * The world reports moves, deaths and disconnects only for players on a trade screen, so a
   * pending request watches its two players itself: either one gone, dead or moved ends it.
   */
  private interruption(s: Trade): TradeCancelReason | undefined {
    const tiles = this.tiles.get(s.id);
    for (const [id, tile] of [
      [s.a.playerId, tiles?.a],
      [s.b.playerId, tiles?.b],
    ] as const) {
      const p = this.deps.world.player(id);
      if (!p?.connection) return "disconnected";
      if (p.dead) return "player_died";
      if (tile && (p.x !== tile.x || p.z !== tile.z)) return "moved_away";
    }
    return undefined;
  }

  /** Time-outs (`TRADE_REQUEST_TIMEOUT_MS`) and interruptions, at each tick of the service's clock. */
  expire(now: number): void {
    for (const s of [...this.pending.values()]) {
      const interrupted = this.interruption(s);
      if (interrupted) {
        this.cancel(s, interrupted);
        continue;
      }
      const res = tickTrade(s, now, this.deps.params);
      if (res.effect.kind === "cancelled") {
        this.forget(s);
        this.notifyCancelled(res.trade);
      }
    }
    for (const [pair, t] of this.pairRequests) if (now - t > PAIR_MEMORY_MS) this.pairRequests.delete(pair);
  }
}
