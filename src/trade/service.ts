/**
 * The trades of one world (docs/trading.md "How a trade flows").
 *
 * - Requests (`tradeRequest`, `tradeRequestRespond`) are checked and held while pending by
 *   `TradeRequests` (requests.ts).
 * - An accepted request becomes a `TradeSession` (session.ts), which owns the trade from then on;
 *   every trade event the world receives is handed to it by `tradeId`, already turned into a
 *   domain action. The service then creates the trade's `trade` room in this process, only as a
 *   window for its two traders to watch: the room attaches itself to the session (one-time
 *   permit), and the session sends `tradeStarted` with the room's id.
 * - The world reports moves, deaths and disconnects (`TradeHooks`); the session is told to cancel.
 * - One clock drives the time-outs of requests and sessions (`TradeClock`; the world's time).
 * - Shutdown (`cancelAll`) refuses new requests and answers from then on, cancels every trade and
 *   waits until each has ended and is audited, within deadlines: a settlement that does not finish
 *   in time is abandoned, and shutdown goes on to save the players whatever a trade does.
 */
import { matchMaker } from "@colyseus/core";
import type { CharacterRepository } from "../storage/characters/repository.js";
import type { ItemLookup } from "../domain/inventory.js";
import type { TradeParams, Trade } from "../domain/trade/trade.js";
import { TRADE_ERROR, type TradeErrorCode } from "../domain/trade/codes.js";
import type { TradeAction } from "../domain/trade/transitions.js";
import type { ClientEventPayload, TradeEventName } from "../events.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { Orm } from "../storage/orm.js";
import type { Player } from "../world/player.js";
import type { SocialRelations, TradeHooks, World } from "../world/world.js";
import { TradeRequests } from "./requests.js";
import { dropTradeRoomPermit, permitTradeRoom, TradeSession, type TradeSessionDeps } from "./session.js";
import { Traders } from "./traders.js";

/**
 * How long shutdown waits for the trades (`cancelAll`): each trade gets `perTradeMs` to end after
 * it is cancelled, then its settlement, if one still runs, is abandoned and it gets `abandonMs`
 * more; all trades together never more than `overallMs`. After that shutdown goes on without them
 * (saving every player), whatever a trade does. docs/persistence.md "Shutdown".
 */
export const SHUTDOWN_TRADE_DEADLINES = { perTradeMs: 1_500, abandonMs: 1_000, overallMs: 3_000 } as const;

/** Resolves true when `p` settles within `ms`, false otherwise (never rejects). */
function within(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    p.then(
      () => true,
      () => true,
    ),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms))),
  ]).finally(() => clearTimeout(timer));
}

/** The time trades go by, and what ticks their time-outs. */
export interface TradeClock {
  now(): number;
  /** Call `tick` every `ms` until the returned function is called. */
  every(ms: number, tick: () => void): () => void;
}

/** The world's time, ticked by a timer that never keeps the process alive. */
function worldClock(world: World): TradeClock {
  return {
    now: () => world.now(),
    every(ms, tick) {
      const timer = setInterval(tick, ms);
      timer.unref();
      return () => clearInterval(timer);
    },
  };
}

/**
 * Handles the trade events, one method per event with its validated payload (the event table,
 * rooms/world/event-table.ts, calls them): requests are answered here, everything else goes to the
 * trade's session as a domain action.
 */
export type TradeEventHandler = { [E in TradeEventName]: (player: Player, payload: ClientEventPayload<E>) => Promise<void> | void };

export interface TradeServiceDeps {
  world: World;
  orm: Orm;
  characters: CharacterRepository;
  social?: SocialRelations;
  params: TradeParams;
  logger: Logger;
  tickMs: number;
  /** Prometheus metrics (docs/operations.md "Metrics"). */
  metrics?: Metrics;
  /** Default: the world's time and a timer (tests may drive it themselves). */
  clock?: TradeClock;
}

export class TradeService implements TradeHooks, TradeEventHandler {
  /** The world's players as trades see them: events, marks, holdings. */
  readonly traders: Traders;
  /** Requests not answered yet. */
  private readonly requests: TradeRequests;
  /** Open trades (offer screen onwards), by trade id; an ended one is dropped once its audit is written. */
  private readonly sessions = new Map<string, TradeSession>();
  private readonly sessionDeps: TradeSessionDeps;
  /** Set once shutdown has begun (`cancelAll`): no new request or trade from then on. */
  private closing = false;
  private readonly stopClock: () => void;
  private readonly logger: Logger;

  constructor(deps: TradeServiceDeps) {
    this.logger = deps.logger;
    const world = deps.world;
    const clock = deps.clock ?? worldClock(world);
    const items: ItemLookup = (id) => world.content.items.get(id);
    this.traders = new Traders(world, deps.logger);
    this.sessionDeps = {
      world,
      orm: deps.orm,
      characters: deps.characters,
      items,
      logger: deps.logger,
      metrics: deps.metrics,
      traders: this.traders,
      params: deps.params,
      now: () => clock.now(),
    };
    this.requests = new TradeRequests({
      world,
      social: deps.social,
      params: deps.params,
      metrics: deps.metrics,
      traders: this.traders,
      now: () => clock.now(),
      closing: () => this.closing,
      inTrade: (id) => this.traders.inLiveTrade(id, (t) => !!this.requests.get(t) || this.sessions.get(t)?.over === false),
    });
    world.events.on("tradeInterrupted", (playerId, reason) => this.playerInterrupted(playerId, reason));
    // Requests and open trades are checked every 250 ms (at the world's tick when faster, never more often than every 50 ms).
    this.stopClock = clock.every(Math.max(50, Math.min(250, deps.tickMs)), () => this.tick(clock.now()));
  }

  /** `tradeRequest`: checked and held until the invited player answers. */
  tradeRequest(player: Player, { targetPlayerId }: ClientEventPayload<"tradeRequest">): Promise<void> {
    return this.requests.request(player, targetPlayerId);
  }

  /** `tradeRequestRespond`: an accepted request opens as a session. */
  async tradeRequestRespond(player: Player, { tradeId, accept }: ClientEventPayload<"tradeRequestRespond">): Promise<void> {
    const pending = this.requests.get(tradeId);
    if (!pending) return this.open(player, tradeId)?.act(player.id, { type: "respond", playerId: player.id, accept });
    const accepted = this.requests.respond(player, pending, accept);
    if (accepted) await this.start(accepted);
  }

  /** `tradeAddItem`: an item line, or the offered coins. */
  tradeAddItem(player: Player, data: ClientEventPayload<"tradeAddItem">): void {
    const playerId = player.id;
    // The schema requires `inventorySlot` and `quantity` when `coins` is absent.
    const action: TradeAction =
      data.coins !== undefined
        ? { type: "setCoins", playerId, coins: data.coins }
        : { type: "setItem", playerId, slot: data.inventorySlot!, quantity: data.quantity! };
    this.open(player, data.tradeId)?.act(playerId, action);
  }

  /** `tradeRemoveItem`. */
  tradeRemoveItem(player: Player, { tradeId, inventorySlot }: ClientEventPayload<"tradeRemoveItem">): void {
    this.open(player, tradeId)?.act(player.id, { type: "removeItem", playerId: player.id, slot: inventorySlot });
  }

  /** `tradeAccept` of the current screen (its revision, when quoted). */
  tradeAccept(player: Player, { tradeId, revision }: ClientEventPayload<"tradeAccept">): void {
    this.open(player, tradeId)?.act(player.id, { type: "accept", playerId: player.id, revision });
  }

  /** `tradeCancel`, of a pending request or an open trade. */
  tradeCancel(player: Player, { tradeId }: ClientEventPayload<"tradeCancel">): void {
    const pending = this.requests.get(tradeId);
    if (pending) return this.requests.cancel(pending, "cancelled", player.id);
    this.open(player, tradeId)?.act(player.id, { type: "cancel", playerId: player.id, reason: "cancelled" });
  }

  /** The open trade `tradeId` of `player`, or undefined (and the player told why). */
  private open(player: Player, tradeId: string): TradeSession | undefined {
    if (this.requests.get(tradeId)) return this.refuse(player.id, tradeId, TRADE_ERROR.INVALID_TRADE, "The trade has not started yet.");
    const session = this.sessions.get(tradeId);
    if (!session || session.over) return this.refuse(player.id, tradeId, TRADE_ERROR.INVALID_TRADE, "There is no such trade.");
    if (this.traders.tradeOf(player.id) !== tradeId) return this.refuse(player.id, tradeId, TRADE_ERROR.NOT_IN_TRADE, "You are not in this trade.");
    return session;
  }

  /** `tradeError` to a player whose event names no trade of its own. */
  private refuse(playerId: string, tradeId: string, code: TradeErrorCode, message: string): undefined {
    this.traders.send(playerId, "tradeError", { tradeId, code, message });
    return undefined;
  }

  /**
   * Opens an accepted request: its session owns the trade (both players marked as trading, routed
   * from now on), then its room is created in this process. `handleCreateRoom` runs the room's
   * `onCreate` synchronously, which attaches the room to the session, which sends `tradeStarted`:
   * nothing can reach the trade in between.
   */
  private async start(trade: Trade): Promise<void> {
    const session = new TradeSession(trade, this.sessionDeps);
    this.sessions.set(trade.id, session);
    void session.ended.then(() => {
      if (this.sessions.get(trade.id) === session) this.sessions.delete(trade.id);
    });
    const permit = permitTradeRoom(session);
    try {
      await matchMaker.handleCreateRoom("trade", { permit });
      if (!session.started) throw new Error("the trade room did not attach to its trade");
    } catch (e) {
      this.logger.error({ err: e, tradeId: trade.id }, "could not create trade room");
      session.failToOpen(); // started: it ends like any trade (one tradeCancelled each); else as a request
    } finally {
      dropTradeRoomPermit(permit);
    }
  }

  /** The world reports a move, death or disconnect. */
  playerInterrupted(playerId: string, reason: "moved_away" | "player_died" | "disconnected"): void {
    const tradeId = this.traders.tradeOf(playerId);
    // A pending request the player received (as target) also ends.
    if (!tradeId) return this.requests.cancelReceived(playerId, reason);
    const pending = this.requests.get(tradeId);
    if (pending) return this.requests.cancel(pending, reason);
    this.sessions.get(tradeId)?.interrupt(reason);
  }

  /** A tick of the clock: requests and open trades time out. */
  private tick(now: number): void {
    this.requests.expire(now);
    for (const session of this.sessions.values()) session.tick(now);
  }

  /**
   * Cancel every open trade (shutdown): reason server_error. Resolves when every trade has ended
   * and written its audit record, or when the deadlines have passed (`SHUTDOWN_TRADE_DEADLINES`):
   * a settlement already running is given `perTradeMs` to finish (it is atomic), then abandoned
   * (no more retries, its lock wait cancelled: nothing is written unless the write was already
   * sent) and given `abandonMs` more. Never waits longer than `overallMs` in all, whatever a trade
   * does. From the first call on, requests and answers are refused (`TRADE_FAILED`), so no trade
   * opens while it waits.
   */
  async cancelAll(deadlines: { perTradeMs: number; abandonMs: number; overallMs: number } = SHUTDOWN_TRADE_DEADLINES): Promise<void> {
    this.closing = true;
    this.requests.cancelAll("server_error");
    const sessions = [...this.sessions.values()];
    for (const session of sessions) session.interrupt("server_error");
    const each = Promise.all(
      sessions.map(async (session) => {
        if (await within(session.ended, deadlines.perTradeMs)) return;
        this.logger.warn({ tradeId: session.id, waitedMs: deadlines.perTradeMs }, "shutdown: trade still settling; abandoning its settlement");
        session.abandon();
        if (await within(session.ended, deadlines.abandonMs)) return;
        this.logger.error({ tradeId: session.id }, "shutdown: trade did not end in time; going on without it");
      }),
    );
    if (!(await within(each, deadlines.overallMs))) {
      for (const session of sessions) session.abandon();
      this.logger.error({ trades: sessions.length, overallMs: deadlines.overallMs }, "shutdown: trades did not all end in time; going on without them");
    }
  }

  /** Stop the clock (after `cancelAll`). */
  close() {
    this.stopClock();
  }

  /** Trade id a player takes part in. */
  tradeOf(playerId: string): string | undefined {
    return this.traders.tradeOf(playerId);
  }
}
