/**
 * Trade coordination between the world and the per-trade rooms (docs/trading.md).
 *
 * - Requests (`tradeRequest`, `tradeRequestRespond`) are checked and held while pending by
 *   `TradeRequests` (requests.ts).
 * - An accepted request creates a `TradeRoom` in this process (`matchMaker.handleCreateRoom`: the
 *   room reads and changes this world's players in memory, so it lives where the world lives); from
 *   then on that room owns the trade, and every trade event the world receives is handed to it by
 *   `tradeId` with a direct call. The room registers itself (`TradeEnv.opened`) in `onCreate`,
 *   which `handleCreateRoom` calls synchronously, before it sends `tradeStarted`: no event or
 *   interruption can arrive for a trade that has no route yet.
 * - The world reports moves, deaths and disconnects (`TradeHooks`); the room is told to cancel.
 * - Settlement runs in the players' storage queues: both players' pending progress is saved, the
 *   settlement transaction commits (or not), and both players' items are reloaded from what was
 *   committed.
 * - Shutdown (`cancelAll`) refuses new requests and answers from then on, cancels every trade and
 *   waits until each has ended and is audited, within deadlines: a settlement that does not finish
 *   in time is abandoned, and shutdown goes on to save the players whatever a trade does.
 */
import { matchMaker } from "@colyseus/core";
import type { CharacterRepository } from "../../entities/character-repository.js";
import { freeSlots, type ItemLookup } from "../domain/inventory.js";
import type { TradeParams, Trade } from "../domain/trade.js";
import { TRADE_ERROR } from "../domain/trade-errors.js";
import type { ClientEventName } from "../events.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import { isLeaseLost } from "../storage/fence.js";
import type { Orm } from "../storage/orm.js";
import type { Player } from "../world/player.js";
import type { SocialRelations, TradeHooks, World } from "../world/world.js";
import { auditCancelled } from "./audit.js";
import { inLiveTrade, TradeRequests } from "./requests.js";
import type { SettleOutcome, TradeEnv, TradeRoomHandle } from "./room-api.js";
import { settleTrade, type SettlementResult } from "./settlement.js";

/** Close code of a connection whose player must reload from storage after a trade (see `evict`); not one of Colyseus's reconnect codes (4010 would make the SDK try to resume the stale connection). */
export const TRADE_RELOAD_CLOSE_CODE = 4012;

/**
 * How long shutdown waits for the trades (`cancelAll`): each trade gets `perTradeMs` to end after
 * it is cancelled, then its settlement, if one still runs, is abandoned and it gets `abandonMs`
 * more; all trades together never more than `overallMs`. After that shutdown goes on without them
 * (saving every player), whatever a trade room does. README "Shutdown".
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

export interface TradeServiceDeps {
  world: World;
  /** The world's number: its trade rooms are created with it, so they bind to this service (default 1). */
  worldNumber?: number;
  orm: Orm;
  characters: CharacterRepository;
  social?: SocialRelations;
  params: TradeParams;
  logger: Logger;
  tickMs: number;
  /** Prometheus metrics (README "Metrics"). */
  metrics?: Metrics;
}

export class TradeService implements TradeHooks {
  /** Requests not answered yet. */
  private readonly requests: TradeRequests;
  /** Trades whose room is being created right now (`TradeEnv.claim`): trade id to the trade. */
  private readonly creating = new Map<string, Trade>();
  /** Open trades (offer screen onwards): trade id to its room. */
  private readonly rooms = new Map<string, TradeRoomHandle>();
  /** Player id to the trade it takes part in (pending or open). */
  private readonly byPlayer = new Map<string, string>();
  /** Set once shutdown has begun (`cancelAll`): no new request or trade from then on. */
  private closing = false;
  readonly env: TradeEnv;

  constructor(private readonly deps: TradeServiceDeps) {
    const world = deps.world;
    const items: ItemLookup = (id) => world.content.items.get(id);
    this.env = {
      items,
      itemValue: (id) => world.content.items.get(id)?.value ?? 0,
      params: deps.params,
      now: () => world.now(),
      holdingsOf: (id) => {
        const p = world.player(id);
        return p ? { inventory: p.inventory, coins: p.coins } : { inventory: Array(28).fill(null), coins: 0 };
      },
      freeSlots: (id) => {
        const p = world.player(id);
        return p ? freeSlots(p.inventory) : 0;
      },
      send: (id, event, data) => world.player(id)?.send(event, data),
      sync: (id) => world.player(id)?.sync(),
      accountOf: async (id) => (await deps.characters.findById(id))?.accountId,
      setTrading: (id, tradeId) => {
        const p = world.player(id);
        if (tradeId) this.byPlayer.set(id, tradeId);
        else this.byPlayer.delete(id);
        if (!p) return;
        p.tradeId = tradeId;
        if (tradeId) {
          // Interfaces are blocked while trading: stop whatever the player was doing.
          p.action = null;
          p.path = [];
        }
      },
      settle: (trade, signal) => this.settle(trade, signal),
      evict: (trade, players, result) => this.evict(trade, players, result),
      auditCancelled: (trade) => {
        deps.metrics?.trades.inc({ outcome: trade.cancelReason ?? "cancelled" });
        return auditCancelled(deps.orm, trade, items);
      },
      claim: (tradeId) => {
        const trade = this.creating.get(tradeId);
        this.creating.delete(tradeId);
        return trade;
      },
      opened: (tradeId, room) => {
        if (this.rooms.has(tradeId)) return false;
        this.rooms.set(tradeId, room);
        return true;
      },
      closed: (tradeId, room) => {
        if (this.rooms.get(tradeId) === room) this.rooms.delete(tradeId);
      },
      logger: deps.logger,
    };
    this.requests = new TradeRequests({
      world,
      social: deps.social,
      params: deps.params,
      metrics: deps.metrics,
      tickMs: deps.tickMs,
      now: this.env.now,
      send: this.env.send,
      error: (playerId, tradeId, code, message) => this.error(playerId, tradeId, code, message),
      refuseWhileClosing: (playerId, tradeId) => this.refuseWhileClosing(playerId, tradeId),
      byPlayer: this.byPlayer,
      inTrade: (id) =>
        inLiveTrade(id, this.byPlayer, world.player(id), (t) => !!this.requests.get(t) || this.creating.has(t) || this.rooms.has(t), deps.logger),
    });
    world.events.on("tradeInterrupted", (playerId, reason) => this.playerInterrupted(playerId, reason));
  }

  /** Route a validated trade event from a player. */
  async handle(player: Player, event: ClientEventName, payload: unknown): Promise<void> {
    const data = payload as Record<string, unknown>;
    if (event === "tradeRequest") return this.requests.request(player, String(data.targetPlayerId));
    const tradeId = String(data.tradeId);
    const pending = this.requests.get(tradeId);
    if (pending) {
      if (event === "tradeRequestRespond") {
        const accepted = this.requests.respond(player, pending, data.accept === true);
        if (accepted) await this.open(accepted);
        return;
      }
      if (event === "tradeCancel") return this.requests.cancel(pending, "cancelled", player.id);
      return this.error(player.id, tradeId, TRADE_ERROR.INVALID_TRADE, "The trade has not started yet.");
    }
    const room = this.rooms.get(tradeId);
    if (!room) return this.error(player.id, tradeId, TRADE_ERROR.INVALID_TRADE, "There is no such trade.");
    if (this.byPlayer.get(player.id) !== tradeId) return this.error(player.id, tradeId, TRADE_ERROR.NOT_IN_TRADE, "You are not in this trade.");
    room.act(player.id, event, data);
  }

  private error(playerId: string, tradeId: string | undefined, code: string, message: string) {
    this.env.send(playerId, "tradeError", { ...(tradeId ? { tradeId } : {}), code, message });
  }

  /** Shutdown has begun: a trade started now would be ended at once (or missed by `cancelAll`). */
  private refuseWhileClosing(playerId: string, tradeId: string | undefined): boolean {
    if (this.closing) this.error(playerId, tradeId, TRADE_ERROR.TRADE_FAILED, "The server is shutting down.");
    return this.closing;
  }

  /**
   * Opens the room of an accepted request: both players are marked as trading, and the room is
   * created in this process, never another one (it works on this world's players, see `TradeEnv`).
   * `handleCreateRoom` runs `onCreate` synchronously, so the room is routed before this awaits; the
   * room takes its trade from `creating` by id (never from options: see `claim`).
   */
  private async open(trade: Trade): Promise<void> {
    for (const id of [trade.a.playerId, trade.b.playerId]) this.env.setTrading(id, trade.id);
    try {
      this.creating.set(trade.id, trade);
      await matchMaker.handleCreateRoom("trade", { tradeId: trade.id, world: this.deps.worldNumber ?? 1 });
    } catch (e) {
      this.deps.logger.error({ err: e, tradeId: trade.id }, "could not create trade room");
      const room = this.rooms.get(trade.id);
      if (room) return room.interrupt(undefined, "server_error"); // it started: it ends it (one tradeCancelled each)
      for (const id of [trade.a.playerId, trade.b.playerId]) this.env.setTrading(id, undefined);
      this.requests.notifyCancelled({ ...trade, state: "cancelled", cancelReason: "server_error" });
    } finally {
      this.creating.delete(trade.id);
    }
  }

  /** The world reports a move, death or disconnect. */
  playerInterrupted(playerId: string, reason: "moved_away" | "player_died" | "disconnected"): void {
    const tradeId = this.byPlayer.get(playerId);
    // A pending request the player received (as target) also ends.
    if (!tradeId) return this.requests.cancelReceived(playerId, reason);
    const pending = this.requests.get(tradeId);
    if (pending) return this.requests.cancel(pending, reason);
    this.rooms.get(tradeId)?.interrupt(playerId, reason);
  }

  /**
   * Cancel every open trade (shutdown): reason server_error. Resolves when every trade room has
   * ended and written its audit record, or when the deadlines have passed (`SHUTDOWN_TRADE_DEADLINES`):
   * a settlement already running is given `perTradeMs` to finish (it is atomic), then abandoned
   * (no more retries, its lock wait cancelled: nothing is written unless the write was already
   * sent) and given `abandonMs` more. Never waits longer than `overallMs` in all, whatever a room
   * does. From the first call on, requests and answers are refused (`TRADE_FAILED`), so no trade
   * opens while it waits.
   */
  async cancelAll(deadlines: { perTradeMs: number; abandonMs: number; overallMs: number } = SHUTDOWN_TRADE_DEADLINES): Promise<void> {
    this.closing = true;
    this.requests.cancelAll("server_error");
    const rooms = [...this.rooms.entries()];
    for (const [, room] of rooms) room.interrupt(undefined, "server_error");
    const each = Promise.all(
      rooms.map(async ([tradeId, room]) => {
        if (await within(room.ended, deadlines.perTradeMs)) return;
        this.deps.logger.warn({ tradeId, waitedMs: deadlines.perTradeMs }, "shutdown: trade still settling; abandoning its settlement");
        room.abandon();
        if (await within(room.ended, deadlines.abandonMs)) return;
        this.deps.logger.error({ tradeId }, "shutdown: trade did not end in time; going on without it");
      }),
    );
    if (!(await within(each, deadlines.overallMs))) {
      for (const [, room] of rooms) room.abandon();
      this.deps.logger.error({ trades: rooms.length, overallMs: deadlines.overallMs }, "shutdown: trades did not all end in time; going on without them");
    }
  }

  close() {
    this.requests.close();
  }

  /** Trade id a player takes part in. */
  tradeOf(playerId: string): string | undefined {
    return this.byPlayer.get(playerId);
  }

  /**
   * Settle in both players' storage queues: save their pending progress, run the transaction,
   * then replace both players' items and coins with what was committed (the holdings the
   * transaction wrote; after a failure, a reload from storage). Players whose items can't be
   * trusted afterwards are returned in `stale`, for the room to evict once it has told them.
   *
   * The Player objects are taken when the settlement is asked for: a player who leaves while it
   * runs is removed from the world at once, but the world saves that same object after this job
   * (its queue), so that object — and any newer one for the same character — must follow storage,
   * or the save would write the pre-trade items back.
   */
  private async settle(trade: Trade, signal?: AbortSignal): Promise<SettleOutcome> {
    const world = this.deps.world;
    const ids = [trade.a.playerId, trade.b.playerId];
    const taken = ids.map((id) => world.player(id));
    const live = () => {
      const all = new Set<Player>();
      ids.forEach((id, i) => {
        const t = taken[i];
        const now = world.player(id);
        if (t) all.add(t);
        if (now) all.add(now);
      });
      return [...all];
    };
    /** Players whose items in memory may not be what storage holds (see `evict`). */
    const stale = new Set<Player>();
    // From now until both players follow storage, their items are held: locked now, and a player
    // who rejoins meanwhile (a new Player built from rows that may predate the settlement) is
    // locked too, so nothing it does (a bank deposit, kill coins) is planned from pre-trade items.
    const release = world.holdItems(ids);
    try {
      return { result: await this.settleHeld(trade, ids, taken, live, stale, release, signal), stale: [...stale] };
    } finally {
      release();
    }
  }

  /** The settlement job of `settle`, run while the players' items are held (`release` ends it). */
  private async settleHeld(
    trade: Trade,
    ids: string[],
    taken: (Player | undefined)[],
    live: () => Player[],
    stale: Set<Player>,
    release: () => void,
    signal?: AbortSignal,
  ): Promise<SettlementResult> {
    const world = this.deps.world;
    return world.queues.runMany(ids, async (): Promise<SettlementResult> => {
      // Abandoned (shutdown) while waiting for the queues: nothing started, nothing to undo.
      if (signal?.aborted) {
        release();
        for (const q of live()) q.safety.unlock();
        return { ok: false, failure: "server_error", message: "The trade was cancelled by the server." };
      }
      for (const id of ids) {
        const p = world.player(id) ?? taken[ids.indexOf(id)];
        if (p && (p.itemsDirty || p.progressDirty)) {
          try {
            await world.saving.save(p);
          } catch (e) {
            // Its lease changed hands: dropped without writing (logged there), the trade fails.
            if (isLeaseLost(e)) world.dropLost(id, "a save before a settlement was refused by the lease fence", p.fence?.epoch);
            else this.deps.logger.error({ err: e, tradeId: trade.id, playerId: id }, "save before settlement failed");
            release();
            for (const q of live()) q.safety.unlock();
            return { ok: false, failure: "server_error", message: "The trade could not be completed." } as const;
          }
        }
      }
      const players = live();
      for (const p of players) p.safety.lock();
      try {
        const timer = this.deps.metrics?.settlementSeconds.startTimer();
        // Each side commits only under the lease its player was loaded under (docs/cluster.md "The fence").
        const fences = Object.fromEntries(ids.map((id, i) => [id, (world.player(id) ?? taken[i])?.fence]));
        const result = await settleTrade(this.deps.orm, trade, this.env.items, signal, fences);
        timer?.({ result: result.ok ? "ok" : result.failure });
        if (result.ok) this.deps.metrics?.trades.inc({ outcome: "completed" });
        // Whatever happened, memory now follows storage. After a commit the settlement returns the
        // inventories and coins it wrote (the trade changes nothing else), so no reload is needed.
        if (result.ok) {
          for (const p of live()) {
            const held = result.holdings[p.id];
            if (!held) continue;
            p.inventory = held.inventory;
            p.coins = held.coins;
          }
          return result;
        }
        if (result.failure === "unknown") {
          // Storage could not say whether the trade committed: neither memory state can be trusted.
          for (const p of live()) stale.add(p);
          this.deps.logger.error({ tradeId: trade.id }, "trade outcome unknown; both players will reload from storage");
          return result;
        }
        const lost = new Set(result.lost);
        for (const id of lost) world.dropLost(id, "a settlement was refused by the lease fence", fences[id]?.epoch);
        for (const id of ids) {
          if (lost.has(id)) continue;
          try {
            const record = await this.deps.characters.load(id);
            if (!record) continue;
            for (const p of live()) if (p.id === id) p.loadItems(record, record.character.coins);
          } catch (e) {
            for (const p of live()) if (p.id === id) stale.add(p);
            this.deps.logger.error({ err: e, tradeId: trade.id, playerId: id }, "reload after a failed settlement failed; the player will reload from storage");
          }
        }
        return result;
      } finally {
        // Synchronously with the unlock: a player joining after this reads the committed rows.
        release();
        for (const p of new Set([...players, ...live()])) {
          if (stale.has(p)) p.safety.markStale();
          else p.safety.unlock();
        }
      }
    });
  }

  /**
   * Players whose items in memory may differ from storage (the outcome of their settlement is
   * unknown, or the reload after a failed one failed): their items stay locked and are never
   * written again (`itemsStale`), they are told, removed from the world (progress is saved, items
   * are not) and disconnected, so the next join loads them from what storage holds. The room calls
   * this after it has sent `tradeCancelled` (a removed player can't be sent anything).
   */
  private evict(trade: Trade, players: readonly Player[], result: SettlementResult) {
    const message =
      !result.ok && result.failure === "unknown"
        ? "The trade's result could not be confirmed. Reconnect to see your items."
        : "Your items could not be reloaded after the trade. Reconnect to see them.";
    for (const p of players) {
      p.send("tradeError", { tradeId: trade.id, code: TRADE_ERROR.TRADE_FAILED, message });
      const connection = p.connection;
      void this.deps.world
        .leave(p.id, "trade_reload", undefined, true)
        .catch((e) => this.deps.logger.error({ err: e, playerId: p.id }, "leave after an unknown trade outcome failed"));
      connection?.close(TRADE_RELOAD_CLOSE_CODE, "reconnect to reload your items");
    }
  }
}
