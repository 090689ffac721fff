/**
 * One open trade and its one owner (docs/trading.md "How a trade flows"): a `TradeSession` holds
 * the trade as the domain state machine last left it, applies every action and time-out to it,
 * sends the trade events to both players, calls the settlement, and ends the trade (both freed,
 * the audit written). Nothing else changes the trade.
 *
 * The `trade` room (rooms/TradeRoom.ts) is only a window onto a session: the session attaches it
 * (`attach`, once) and shows it each change; the room decides who may watch by asking the session
 * (`admits`) and closes when the session tells it to.
 */
import { randomUUID } from "node:crypto";
import type { ItemLookup } from "../domain/inventory.js";
import { CANCEL_MESSAGES, TRADE_ERROR, type TradeCancelReason, type TradeErrorCode } from "../domain/trade/codes.js";
import { computeValues } from "../domain/trade/offer.js";
import { isParty, partnerOf, showsValues, viewFor, type Trade, type TradeParams, type TraderView, type TradeStep } from "../domain/trade/trade.js";
import { applyTradeAction, cancelTrade, completeTrade, failSettlement, tickTrade, type TradeAction } from "../domain/trade/transitions.js";
import { auditCancelled } from "./audit.js";
import { evictStale, settleForPlayers, type SettleDeps, type SettleOutcome } from "./settle-players.js";
import type { Traders } from "./traders.js";

/** Why a trade is interrupted from outside: the world (a move, a death, a disconnect) or the server stopping. */
export type TradeInterruption = "moved_away" | "player_died" | "disconnected" | "server_error";

/** Each trader's view of the trade (built once per change for the events and the watchers). */
export type ViewOf = (playerId: string) => TraderView;

/** What a trade room does for its session: show the trade to whoever watches, and close at the end. */
export interface TradeWatchRoom {
  readonly roomId: string;
  /** The trade changed: copy it onto the watched state (only while someone watches). */
  show(trade: Trade, viewOf: ViewOf): void;
  /** The trade has ended: watchers see the final state, then the room closes. */
  close(): void;
}

/** Who may sign in to watch: an account, and the character its token is bound to, if any. */
export interface Watcher {
  readonly accountId: string;
  readonly characterId?: string;
}

/** What a session works with: its world's players, the rules' time limits, and what settling needs. */
export interface TradeSessionDeps extends SettleDeps {
  traders: Traders;
  params: TradeParams;
  now(): number;
}

export class TradeSession {
  /** The trade as the domain state machine last left it. */
  private trade: Trade;
  private room: TradeWatchRoom | undefined;
  private finished = false;
  /** Fires when the server abandons a settlement still running (`abandon`, shutdown). */
  private readonly abandoning = new AbortController();
  private markEnded!: () => void;
  /** Resolves once the trade has ended and its audit record is written. */
  readonly ended = new Promise<void>((resolve) => (this.markEnded = resolve));
  private readonly items: ItemLookup;

  /** `trade` is an accepted request (the offer screen); both players are marked as trading in it. */
  constructor(
    trade: Trade,
    private readonly deps: TradeSessionDeps,
  ) {
    this.trade = trade;
    this.items = deps.items;
    for (const id of this.ids()) deps.traders.setTrading(id, trade.id);
  }

  get id(): string {
    return this.trade.id;
  }

  /** Whether the trade has ended (its events are no longer taken). */
  get over(): boolean {
    return this.finished;
  }

  /** Whether the players have been told the trade started (`tradeStarted`, once its room exists). */
  get started(): boolean {
    return this.room !== undefined;
  }

  /**
   * The trade's room exists: keep it as the trade's window and tell both players the trade started
   * (`tradeStarted` with its `roomId`). False (nothing changed) when the trade already has a room
   * or has ended.
   */
  attach(room: TradeWatchRoom): boolean {
    if (this.room || this.finished) return false;
    this.room = room;
    this.show();
    const { a, b } = this.trade;
    for (const [me, partner] of [
      [a, b],
      [b, a],
    ] as const) {
      this.deps.traders.send(me.playerId, "tradeStarted", {
        tradeId: this.trade.id,
        partnerId: partner.playerId,
        partnerName: partner.name,
        partnerLevel: partner.level,
        partnerFreeSlots: this.deps.traders.freeSlots(partner.playerId),
        roomId: room.roomId,
      });
    }
    return true;
  }

  /**
   * Whether `watcher` may watch this trade: it plays one of the two traders (the character its
   * token is bound to, else the one it names), and that character belongs to its account.
   */
  async admits(watcher: Watcher, requested: unknown): Promise<boolean> {
    const characterId = watcher.characterId ?? (typeof requested === "string" ? requested : undefined);
    if (!characterId || !isParty(this.trade, characterId)) return false;
    return (await this.deps.characters.findById(characterId))?.accountId === watcher.accountId;
  }

  /** The trade now, each trader's side built on demand (the first full state of a new watcher). */
  current(): { trade: Trade; viewOf: ViewOf } {
    return { trade: this.trade, viewOf: (id) => this.traderView(id) };
  }

  /** A player's action (its event validated by the event table, routed by `tradeId`). */
  act(playerId: string, action: TradeAction): void {
    if (this.finished) return;
    if (!isParty(this.trade, playerId)) return this.refuse(playerId, TRADE_ERROR.NOT_IN_TRADE, "You are not in this trade.");
    if (action.type === "respond") return this.refuse(playerId, TRADE_ERROR.INVALID_TRADE, "That request is not valid in an open trade.");
    if (!this.started) return this.refuse(playerId, TRADE_ERROR.INVALID_TRADE, "The trade has not started yet.");
    const res = applyTradeAction(this.trade, action, this.deps.now(), { items: this.items, holdingsOf: (id) => this.deps.traders.holdings(id) });
    if (!res.ok) return this.refuse(playerId, res.error.code, res.error.message);
    this.apply(res.value);
  }

  /** Time-outs: the world's clock ticked (`TRADE_INACTIVITY_TIMEOUT_MS`). */
  tick(now: number): void {
    if (this.finished) return;
    this.apply(tickTrade(this.trade, now, this.deps.params));
  }

  /** A move, death or disconnect of `playerId` (or the server stopping, no player). */
  interrupt(reason: TradeInterruption): void {
    if (this.finished) return;
    const res = cancelTrade(this.trade, { reason }, this.deps.now());
    if (res.ok) this.apply(res.value);
  }

  /**
   * Shutdown could not wait for this trade any longer: a settlement still running stops retrying
   * and stops waiting for row locks (it ends as `server_error` unless its write was already sent,
   * whose outcome it still reads), then the trade ends as usual.
   */
  abandon(): void {
    this.abandoning.abort();
  }

  /**
   * The trade could not open (its room could not be created): told to both as `server_error`.
   * Once the players were told it started, it ends like any open trade (audited); before that it
   * ends as a request that never opened (counted, not audited).
   */
  failToOpen(): void {
    if (this.finished) return;
    if (this.started) return this.interrupt("server_error");
    this.finished = true;
    for (const id of this.ids()) this.deps.traders.setTrading(id, undefined);
    this.deps.metrics?.trades.inc({ outcome: "server_error" });
    for (const id of this.ids()) this.sendCancelled(id, "server_error");
    this.markEnded();
  }

  private refuse(playerId: string, code: TradeErrorCode, message: string) {
    this.deps.traders.send(playerId, "tradeError", { tradeId: this.trade.id, code, message });
  }

  private sendCancelled(playerId: string, reason: TradeCancelReason) {
    this.deps.traders.send(playerId, "tradeCancelled", { tradeId: this.trade.id, reason, message: CANCEL_MESSAGES[reason] });
  }

  private apply(step: TradeStep) {
    this.trade = step.trade;
    const effect = step.effect;
    switch (effect.kind) {
      case "none":
      case "started":
      case "completed":
        return;
      case "updated":
        return this.sendUpdated(this.publish());
      case "refused": {
        const views = this.publish();
        for (const id of this.ids()) this.refuse(id, effect.error.code, effect.error.message);
        return this.sendUpdated(views);
      }
      case "confirmScreen": {
        const views = this.publish();
        for (const id of this.ids()) {
          const { revision, myOffer, theirOffer, values } = views.get(id)!;
          this.deps.traders.send(id, "tradeConfirmScreen", { tradeId: this.trade.id, revision, myOffer, theirOffer, values: values! });
        }
        return;
      }
      case "settle":
        this.show();
        void this.settle();
        return;
      case "cancelled":
        this.show();
        for (const id of this.ids()) this.sendCancelled(id, effect.reason);
        void this.finish();
        return;
    }
  }

  /**
   * Run the settlement, then end the trade:
   * 1. committed: `tradeCompleted` to both, both freed, `player:sync` to both;
   * 2. not committed: `tradeCancelled` (invalid_items, or server_error) to both;
   * 3. players whose items in memory can't be trusted are evicted — only now, so they were told;
   * 4. the trade finishes (audit, `ended`, its room closed) whatever threw before.
   */
  private async settle() {
    const { deps } = this;
    let outcome: SettleOutcome;
    try {
      outcome = await settleForPlayers(deps, this.trade, this.abandoning.signal);
    } catch (e) {
      // Nothing was committed (the settlement itself never throws): end the trade, never leave it settling.
      deps.logger.error({ err: e, tradeId: this.trade.id }, "settlement failed");
      outcome = { result: { ok: false, failure: "server_error", message: "The trade could not be completed." }, stale: [] };
    }
    const { result, stale } = outcome;
    try {
      const now = deps.now();
      if (result.ok) {
        const done = completeTrade(this.trade, now);
        if (done.ok) this.trade = done.value.trade;
        this.show();
        for (const id of this.ids()) {
          deps.traders.send(id, "tradeCompleted", { tradeId: this.trade.id, receivedItems: result.received[id] ?? [] });
        }
        for (const id of this.ids()) deps.traders.setTrading(id, undefined);
        for (const id of this.ids()) deps.traders.sync(id);
      } else {
        // The re-check failed: invalid_items. Anything else (nothing committed, or an outcome storage
        // could not confirm): server_error.
        const reason = result.failure === "invalid_items" || result.failure === "inventory_full" ? "invalid_items" : "server_error";
        const failed = failSettlement(this.trade, reason, now);
        if (failed.ok) this.apply(failed.value);
      }
    } catch (e) {
      deps.logger.error({ err: e, tradeId: this.trade.id }, "ending a settled trade failed");
    } finally {
      try {
        if (stale.length > 0) evictStale(deps, this.trade, stale, result);
      } catch (e) {
        deps.logger.error({ err: e, tradeId: this.trade.id }, "evicting players after a trade failed");
      }
      await this.finish();
    }
  }

  private sendUpdated(views: Map<string, TraderView>) {
    for (const id of this.ids()) {
      const { revision, myOffer, theirOffer, partnerFreeSlots } = views.get(id)!;
      this.deps.traders.send(id, "tradeUpdated", { tradeId: this.trade.id, revision, myOffer, theirOffer, partnerFreeSlots });
    }
  }

  private ids() {
    return [this.trade.a.playerId, this.trade.b.playerId];
  }

  /** The trade from `id`'s side, built once per change for the event and the watched state. */
  private traderView(id: string): TraderView {
    const { myOffer, theirOffer } = viewFor(this.trade, id);
    const view = { revision: this.trade.revision, myOffer, theirOffer, partnerFreeSlots: this.deps.traders.freeSlots(partnerOf(this.trade, id).playerId) };
    if (!showsValues(this.trade.state)) return view;
    return { ...view, values: computeValues(myOffer, theirOffer, (itemId) => this.items(itemId)?.value ?? 0) };
  }

  /** Both traders' views, for the events, also shown to the room's watchers. */
  private publish(): Map<string, TraderView> {
    const views = new Map(this.ids().map((id) => [id, this.traderView(id)] as const));
    this.show(views);
    return views;
  }

  /**
   * Show the trade to the room's watchers: the room copies it only while someone watches, each
   * side from `views` when the caller has built them, else built then.
   */
  private show(views?: Map<string, TraderView>) {
    this.room?.show(this.trade, (id) => views?.get(id) ?? this.traderView(id));
  }

  /**
   * End of the trade: free both players, audit a cancelled trade, resolve `ended` and close the
   * room (its watchers see the final state first). Never throws: `ended` always resolves.
   */
  private async finish() {
    if (this.finished) return;
    this.finished = true;
    const { deps } = this;
    try {
      for (const id of this.ids()) deps.traders.setTrading(id, undefined);
      if (this.trade.state === "cancelled") {
        deps.metrics?.trades.inc({ outcome: this.trade.cancelReason ?? "cancelled" });
        await auditCancelled(deps.orm, this.trade, this.items).catch((e) => deps.logger.error({ err: e }, "trade audit failed"));
      }
    } catch (e) {
      deps.logger.error({ err: e, tradeId: this.trade.id }, "ending the trade failed");
    } finally {
      this.markEnded();
      try {
        this.room?.close();
      } catch (e) {
        deps.logger.error({ err: e, tradeId: this.trade.id }, "closing the trade room failed");
      }
    }
  }
}

/** Unused permits to create a trade's room, each for the session it shows (see `permitTradeRoom`). */
const roomPermits = new Map<string, TradeSession>();

/**
 * A one-time permit to create the room of `session`, for the service's own
 * `matchMaker.handleCreateRoom("trade", { permit })`: the room takes its session from the permit
 * (`takeTradeRoomPermit`), never from client options, so only the server creates trade rooms.
 */
export function permitTradeRoom(session: TradeSession): string {
  const permit = randomUUID();
  roomPermits.set(permit, session);
  return permit;
}

/** The session a permit was issued for, taken once; undefined for anything else. */
export function takeTradeRoomPermit(permit: unknown): TradeSession | undefined {
  if (typeof permit !== "string") return undefined;
  const session = roomPermits.get(permit);
  roomPermits.delete(permit);
  return session;
}

/** A permit the room never took (its creation failed before `onCreate`): forgotten. */
export function dropTradeRoomPermit(permit: string): void {
  roomPermits.delete(permit);
}
