/**
 * Trade coordination between the world and the per-trade rooms (docs/trading.md).
 *
 * - Requests (`tradeRequest`, `tradeRequestRespond`) are checked and held here while pending.
 * - An accepted request creates a `TradeRoom` in this process (`matchMaker.handleCreateRoom`: the
 *   room reads and changes this world's players in memory, so it lives where the world lives); from
 *   then on that room owns the session, and every trade event the world receives is handed to it by
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
import { randomUUID } from "node:crypto";
import { matchMaker } from "@colyseus/core";
import type { CharacterRepository } from "../../entities/character-repository.js";
import { freeSlots, type ItemLookup } from "../domain/inventory.js";
import {
  cancelTrade,
  checkTradeRequest,
  createTrade,
  respondToRequest,
  tickTrade,
  TRADE_ERROR,
  type TradeCancelReason,
  type TradeHoldings,
  type TradeParams,
  type TradeSession,
} from "../domain/trade.js";
import type { Tile } from "../domain/types.js";
import type { ClientEventName } from "../events.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { Orm } from "../storage/orm.js";
import type { Player } from "../world/player.js";
import type { TradeEventHandler } from "../world/runtime.js";
import type { SocialPort, TradeHooks, World } from "../world/world.js";
import { auditCancelled, settleTrade, type SettlementResult } from "./settlement.js";

/** Close code of a connection whose player must reload from storage after a trade (see `evict`); not one of Colyseus's reconnect codes (4010 would make the SDK try to resume the stale session). */
export const TRADE_RELOAD_CLOSE_CODE = 4012;

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

/** What a TradeRoom needs from the process it lives in. */
export interface TradeEnv {
  items: ItemLookup;
  itemValue(itemId: string): number;
  params: TradeParams;
  now(): number;
  holdingsOf(playerId: string): TradeHoldings;
  freeSlots(playerId: string): number;
  send(playerId: string, event: string, data: unknown): void;
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
  settle(session: TradeSession, signal?: AbortSignal): Promise<SettleOutcome>;
  /**
   * Remove players whose items in memory may differ from storage: tell them (`tradeError
   * TRADE_FAILED`), remove them from the world and disconnect them, so they reload from storage.
   */
  evict(session: TradeSession, players: readonly Player[], result: SettlementResult): void;
  /** Audit a trade that ended without completing. */
  auditCancelled(session: TradeSession): Promise<void>;
  /**
   * The session of a trade whose room the service is creating right now, taken once (the room's
   * `onCreate` asks with the trade id it was given); undefined for anything the service is not
   * creating — so a client's options can never make a trade room.
   */
  claim(tradeId: string): TradeSession | undefined;
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
  orm: Orm;
  characters: CharacterRepository;
  social?: SocialPort;
  params: TradeParams;
  logger: Logger;
  tickMs: number;
  /** Prometheus metrics (README "Metrics"). */
  metrics?: Metrics;
}

export class TradeService implements TradeEventHandler, TradeHooks {
  /** Requests not answered yet. */
  private readonly pending = new Map<string, TradeSession>();
  /** Where both players of a pending request stood when it was made (a move cancels it). */
  private readonly pendingTiles = new Map<string, { a: Tile; b: Tile }>();
  /** Trades whose room is being created right now (`TradeEnv.claim`): trade id to its session. */
  private readonly creating = new Map<string, TradeSession>();
  /** Open trades (offer screen onwards): trade id to its room. */
  private readonly rooms = new Map<string, TradeRoomHandle>();
  /** Player id to the trade it takes part in (pending or open). */
  private readonly byPlayer = new Map<string, string>();
  /** Last request time per unordered pair. */
  private readonly pairRequests = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
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
      settle: (session, signal) => this.settle(session, signal),
      evict: (session, players, result) => this.evict(session, players, result),
      auditCancelled: (session) => {
        deps.metrics?.trades.inc({ outcome: session.cancelReason ?? "cancelled" });
        return auditCancelled(deps.orm, session, items);
      },
      claim: (tradeId) => {
        const session = this.creating.get(tradeId);
        this.creating.delete(tradeId);
        return session;
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
    world.events.on("tradeInterrupted", (playerId, reason) => this.playerInterrupted(playerId, reason));
    this.timer = setInterval(() => this.expirePending(), Math.max(50, Math.min(1000, deps.tickMs)));
    this.timer.unref();
  }

  /** Route a validated trade event from a player. */
  async handle(player: Player, event: ClientEventName, payload: unknown): Promise<void> {
    const data = payload as Record<string, unknown>;
    if (event === "tradeRequest") return this.request(player, String(data.targetPlayerId));
    const tradeId = String(data.tradeId);
    const pending = this.pending.get(tradeId);
    if (pending) {
      if (event === "tradeRequestRespond") return this.respond(player, pending, data.accept === true);
      if (event === "tradeCancel") return this.cancelPending(pending, "cancelled", player.id);
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

  private async request(player: Player, targetId: string) {
    if (this.refuseWhileClosing(player.id, undefined)) return;
    const world = this.deps.world;
    const target = world.player(targetId);
    const now = this.env.now();
    const pair = [player.id, targetId].sort().join("|");
    const ignored = target && this.deps.social ? await this.deps.social.isIgnoring(target.id, player.id) : false;
    if (this.refuseWhileClosing(player.id, undefined)) return; // shutdown began while the ignore list was read
    const check = checkTradeRequest({
      requesterId: player.id,
      targetId,
      targetOnline: !!target?.connection,
      requesterTile: player.tile,
      targetTile: target?.tile,
      requesterInTrade: this.byPlayer.has(player.id) || player.tradeId !== undefined,
      targetInTrade: this.byPlayer.has(targetId) || target?.tradeId !== undefined,
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
    const session = created.value;
    this.pending.set(session.id, session);
    this.pendingTiles.set(session.id, { a: player.tile, b: target!.tile });
    this.byPlayer.set(player.id, session.id);
    this.env.send(target!.id, "tradeIncoming", {
      tradeId: session.id,
      fromPlayerId: player.id,
      fromPlayerName: player.name,
      fromPlayerLevel: player.combatLevel,
    });
  }

  private async respond(player: Player, session: TradeSession, accept: boolean) {
    if (accept && this.refuseWhileClosing(player.id, session.id)) return;
    // Only the invited player answers (respondToRequest says INVALID_TRADE to anyone else).
    if (accept && player.id === session.b.playerId && (this.byPlayer.has(player.id) || player.tradeId)) {
      return this.error(player.id, session.id, TRADE_ERROR.ALREADY_IN_TRADE, "You are already trading.");
    }
    const now = this.env.now();
    const res = respondToRequest(session, { playerId: player.id, accept }, now);
    if (!res.ok) return this.error(player.id, session.id, res.error.code, res.error.message);
    this.pending.delete(session.id);
    this.pendingTiles.delete(session.id);
    if (res.value.effect.kind === "cancelled") {
      this.byPlayer.delete(session.a.playerId);
      this.notifyCancelled(res.value.session);
      return;
    }
    // Both must still be here and free.
    const a = this.deps.world.player(session.a.playerId);
    if (!a?.connection || a.dead) {
      this.byPlayer.delete(session.a.playerId);
      return this.notifyCancelled({ ...res.value.session, state: "cancelled", cancelReason: "disconnected" });
    }
    this.env.setTrading(session.a.playerId, session.id);
    this.env.setTrading(session.b.playerId, session.id);
    try {
      // In this process, never another one: the room works on this world's players (TradeEnv).
      // `handleCreateRoom` runs `onCreate` synchronously, so the room is routed before this awaits.
      // The room takes its session from `creating` by id (never from options: see `claim`).
      this.creating.set(session.id, res.value.session);
      await matchMaker.handleCreateRoom("trade", { tradeId: session.id });
    } catch (e) {
      this.deps.logger.error({ err: e, tradeId: session.id }, "could not create trade room");
      const room = this.rooms.get(session.id);
      if (room) return room.interrupt(undefined, "server_error"); // it started: it ends it (one tradeCancelled each)
      this.env.setTrading(session.a.playerId, undefined);
      this.env.setTrading(session.b.playerId, undefined);
      this.notifyCancelled({ ...res.value.session, state: "cancelled", cancelReason: "server_error" });
    } finally {
      this.creating.delete(session.id);
    }
  }

  private cancelPending(session: TradeSession, reason: TradeCancelReason, by?: string) {
    const res = cancelTrade(session, { playerId: by, reason }, this.env.now());
    if (!res.ok) return by ? this.error(by, session.id, res.error.code, res.error.message) : undefined;
    this.pending.delete(session.id);
    this.pendingTiles.delete(session.id);
    this.byPlayer.delete(session.a.playerId);
    this.notifyCancelled(res.value.session);
  }

  /** `tradeCancelled` to both players of a pending request (each knew of it). */
  private notifyCancelled(session: TradeSession) {
    const reason = session.cancelReason ?? "cancelled";
    this.deps.metrics?.trades.inc({ outcome: reason });
    for (const id of [session.a.playerId, session.b.playerId]) {
      this.env.send(id, "tradeCancelled", { tradeId: session.id, reason, message: CANCEL_MESSAGES[reason] });
    }
  }

  /**
   * The world reports moves, deaths and disconnects only for players on a trade screen, so a
   * pending request watches its two players itself: either one gone, dead or moved ends it.
   */
  private pendingInterruption(s: TradeSession): TradeCancelReason | undefined {
    const tiles = this.pendingTiles.get(s.id);
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

  private expirePending() {
    const now = this.env.now();
    for (const s of [...this.pending.values()]) {
      const interrupted = this.pendingInterruption(s);
      if (interrupted) {
        this.cancelPending(s, interrupted);
        continue;
      }
      const res = tickTrade(s, now, this.deps.params);
      if (res.effect.kind === "cancelled") {
        this.pending.delete(s.id);
        this.pendingTiles.delete(s.id);
        this.byPlayer.delete(s.a.playerId);
        this.notifyCancelled(res.session);
      }
    }
    for (const [pair, t] of this.pairRequests) if (now - t > 10_000) this.pairRequests.delete(pair);
  }

  /** The world reports a move, death or disconnect. */
  playerInterrupted(playerId: string, reason: "moved_away" | "player_died" | "disconnected"): void {
    const tradeId = this.byPlayer.get(playerId);
    if (!tradeId) {
      // A pending request the player received (as target) also ends.
      for (const s of this.pending.values()) if (s.b.playerId === playerId) this.cancelPending(s, reason);
      return;
    }
    const pending = this.pending.get(tradeId);
    if (pending) return this.cancelPending(pending, reason);
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
    for (const s of [...this.pending.values()]) this.cancelPending(s, "server_error");
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
    clearInterval(this.timer);
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
  private async settle(session: TradeSession, signal?: AbortSignal): Promise<SettleOutcome> {
    const world = this.deps.world;
    const ids = [session.a.playerId, session.b.playerId];
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
      return { result: await this.settleHeld(session, ids, taken, live, stale, release, signal), stale: [...stale] };
    } finally {
      release();
    }
  }

  /** The settlement job of `settle`, run while the players' items are held (`release` ends it). */
  private async settleHeld(
    session: TradeSession,
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
            this.deps.logger.error({ err: e, tradeId: session.id, playerId: id }, "save before settlement failed");
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
        const result = await settleTrade(this.deps.orm, session, this.env.items, signal);
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
          this.deps.logger.error({ tradeId: session.id }, "trade outcome unknown; both players will reload from storage");
          return result;
        }
        for (const id of ids) {
          try {
            const record = await this.deps.characters.load(id);
            if (!record) continue;
            for (const p of live()) if (p.id === id) p.loadItems(record, record.character.coins);
          } catch (e) {
            for (const p of live()) if (p.id === id) stale.add(p);
            this.deps.logger.error({ err: e, tradeId: session.id, playerId: id }, "reload after a failed settlement failed; the player will reload from storage");
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
  private evict(session: TradeSession, players: readonly Player[], result: SettlementResult) {
    const message =
      !result.ok && result.failure === "unknown"
        ? "The trade's result could not be confirmed. Reconnect to see your items."
        : "Your items could not be reloaded after the trade. Reconnect to see them.";
    for (const p of players) {
      p.send("tradeError", { tradeId: session.id, code: TRADE_ERROR.TRADE_FAILED, message });
      const connection = p.connection;
      void this.deps.world.leave(p.id, "trade_reload", undefined, true).catch((e) => this.deps.logger.error({ err: e, playerId: p.id }, "leave after an unknown trade outcome failed"));
      connection?.close(TRADE_RELOAD_CLOSE_CODE, "reconnect to reload your items");
    }
  }
}
