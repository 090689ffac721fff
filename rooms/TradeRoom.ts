/**
 * `TradeRoom` (room name `trade`): owns one trade from the offer screen to its end — offers,
 * revisions, acceptances and timers — and sends the trade events to both players through their
 * world connections. Trade events reach it from the world by `tradeId` (`act`, `interrupt`), their
 * payloads already validated by the event table. SDK clients of the two traders may also join it
 * to watch the trade as synchronised state.
 *
 * The server defines the room type with `tradeRoomType(deps)`, a subclass closing over the trade
 * service's environment (`TradeEnv`): nothing is assigned to the class after the fact.
 */
import { Room, ServerError, type AuthContext, type Client } from "@colyseus/core";
import type { Principal } from "../src/auth/service.js";
import { isParty, partnerOf, viewFor, type Trade, type TradeStep } from "../src/domain/trade/trade.js";
import { applyTradeAction, cancelTrade, completeTrade, failSettlement, tickTrade, type TradeAction } from "../src/domain/trade/transitions.js";
import { computeValues } from "../src/domain/trade/offer.js";
import { TRADE_ERROR } from "../src/domain/trade/codes.js";
import { CANCEL_MESSAGES, type SettleOutcome, type TradeEnv, type TradeInterruption, type TradeRoomHandle } from "../src/trade/room-api.js";
import { StateView } from "@colyseus/schema";
import { TradeRoomState } from "../schema/trade.js";
import type { ClientEventPayload, TradeEventName } from "../src/events.js";
import { CLIENT_ADDRESS_HEADER } from "../src/net/colyseus.js";
import type { SocketGate } from "../src/net/socket-gate.js";
import { showsValues, writeTradeState, type TraderView } from "./trade/watch-state.js";

type Refusal = { code: string; message: string };

/** A trade event with its validated payload (the event table checked its schema). */
export type TradeEvent = { [E in TradeEventName]: { event: E; data: ClientEventPayload<E> } }[TradeEventName];

/** Turn a validated trade event into a domain action, or a refusal for an event that has no place in an open trade. */
export function toTradeAction(playerId: string, { event, data }: TradeEvent): TradeAction | Refusal {
  switch (event) {
    case "tradeAddItem":
      // The schema requires `inventorySlot` and `quantity` when `coins` is absent.
      if (data.coins !== undefined) return { type: "setCoins", playerId, coins: data.coins };
      return { type: "setItem", playerId, slot: data.inventorySlot!, quantity: data.quantity! };
    case "tradeRemoveItem":
      return { type: "removeItem", playerId, slot: data.inventorySlot };
    case "tradeAccept":
      return { type: "accept", playerId, revision: data.revision };
    case "tradeCancel":
      return { type: "cancel", playerId, reason: "cancelled" };
    default:
      return { code: TRADE_ERROR.INVALID_TRADE, message: "That request is not valid in an open trade." };
  }
}

/** What a trade room works with, given once when the server defines the room type. */
export interface TradeRoomDeps {
  /**
   * The trade service of each world in this process, by world number. A trade room works on its
   * world's players in memory, so it is always created in the world's process by the world's trade
   * service (`matchMaker.handleCreateRoom` with the world's number); only watchers may connect to
   * it from elsewhere.
   */
  envs: ReadonlyMap<number, TradeEnv>;
  /** Authentication of watchers. */
  gate: Pick<SocketGate, "authenticate">;
}

/** The `trade` room type for `matchMaker.defineRoomType`, bound to its dependencies (see `worldRoomType`). */
export function tradeRoomType(deps: TradeRoomDeps) {
  return class BoundTradeRoom extends TradeRoom {
    static override onAuth(token: string, _options: { characterId?: string }, ctx: AuthContext): Promise<Principal> {
      return authorizeWatcher(deps.gate, token, ctx);
    }
    override onCreate(options: { tradeId?: unknown; world?: unknown }) {
      const env = typeof options?.world === "number" ? deps.envs.get(options.world) : undefined;
      if (!env) throw new ServerError(403, "trade rooms are created by the server");
      this.env = env;
      super.onCreate(options);
    }
  };
}

/** Watchers sign in with their token (no anonymous identity: it could never be a trader). */
async function authorizeWatcher(gate: TradeRoomDeps["gate"], token: string, ctx: AuthContext): Promise<Principal> {
  if (!token) throw new ServerError(401, "missing or invalid token");
  const principal = await gate.authenticate(token, ctx.headers.get(CLIENT_ADDRESS_HEADER) ?? undefined);
  if (!principal) throw new ServerError(401, "missing or invalid token");
  return principal;
}

export class TradeRoom extends Room implements TradeRoomHandle {
  override autoDispose = false;
  override maxClients = 4;
  override state = new TradeRoomState();
  /** The trade this room owns, as the domain state machine last left it. */
  private trade!: Trade;
  private finished = false;
  /** Fires when the server abandons a settlement still running (`abandon`, shutdown). */
  private readonly abandoning = new AbortController();
  private markEnded!: () => void;
  /** Resolves once the trade has ended and its audit record is written. */
  readonly ended = new Promise<void>((resolve) => (this.markEnded = resolve));

  /** The trade service of the world that created the room (set before `onCreate` runs). */
  protected env!: TradeEnv;

  /**
   * Only the trade service creates trade rooms (`matchMaker.handleCreateRoom` with the trade's id
   * as the only option): the trade comes from the service's own record of the trade it is
   * opening (`TradeEnv.claim`, taken once), never from the options. Anything else — a client's
   * `create`/`joinOrCreate` with forged trade state or a copied trade id that got past the
   * matchmaking middleware — is refused (403) before the room does anything, and a trade that
   * already has a room can't be given another (`opened` refuses to replace a route).
   */
  override onCreate(options: { tradeId?: unknown }) {
    const trade = typeof options?.tradeId === "string" ? this.env.claim(options.tradeId) : undefined;
    if (!trade) throw new ServerError(403, "trade rooms are created by the server");
    this.trade = trade;
    // Routed from now on, before either player can know of the room: nothing is lost in between.
    // (`handleCreateRoom` calls `onCreate` synchronously from the service's `respond`, so nothing
    // can reach the trade before this.)
    if (!this.env.opened(this.trade.id, this)) throw new ServerError(403, "this trade already has a room");
    // Still being created: this only marks the listing (persisted with it), nothing to wait for.
    this.setPrivate(true).catch((e: unknown) => this.env.logger.error({ err: e, tradeId: this.trade.id }, "hiding the trade room failed"));
    this.syncState();
    const { a, b } = this.trade;
    for (const [me, partner] of [
      [a, b],
      [b, a],
    ] as const) {
      this.env.send(me.playerId, "tradeStarted", {
        tradeId: this.trade.id,
        partnerId: partner.playerId,
        partnerName: partner.name,
        partnerLevel: partner.level,
        partnerFreeSlots: this.env.freeSlots(partner.playerId),
        roomId: this.roomId,
      });
    }
    this.clock.setInterval(() => this.apply(tickTrade(this.trade, this.env.now(), this.env.params)), 250);
  }

  /**
   * Whether `principal` may watch this trade: it plays one of the two traders (the character its
   * token is bound to, else the one it names), and that character belongs to its account. Checked
   * by the matchmaking middleware for `joinById` and again here in `onJoin`.
   */
  async admits(principal: Principal, requested: unknown): Promise<boolean> {
    const characterId = principal.characterId ?? (typeof requested === "string" ? requested : undefined);
    if (!characterId || !this.trade || !isParty(this.trade, characterId)) return false;
    return (await this.env.accountOf(characterId)) === principal.accountId;
  }

  /** Watchers: only the traders' own characters, each seeing the trade from its own side. */
  override async onJoin(client: Client, options: { characterId?: string }, principal: Principal) {
    if (!principal || !(await this.admits(principal, options?.characterId))) throw new ServerError(403, "you are not part of this trade");
    const characterId = (principal.characterId ?? options.characterId)!;
    // The state is kept only while someone watches: bring it up to date for the first full state.
    this.syncState(undefined, true);
    client.view = new StateView();
    client.view.add(this.state.traders.get(characterId)!);
  }

  /** A validated trade event from one of the players (routed by the trade service). */
  act<E extends TradeEventName>(playerId: string, event: E, data: ClientEventPayload<E>) {
    if (this.finished) return;
    if (!isParty(this.trade, playerId)) return this.refuse(playerId, { code: TRADE_ERROR.NOT_IN_TRADE, message: "You are not in this trade." });
    const action = toTradeAction(playerId, { event, data } as TradeEvent);
    if ("code" in action) return this.refuse(playerId, action);
    const ctx = { items: this.env.items, holdingsOf: (id: string) => this.env.holdingsOf(id) };
    const res = applyTradeAction(this.trade, action, this.env.now(), ctx);
    if (!res.ok) return this.refuse(playerId, res.error);
    this.apply(res.value);
  }

  /** The world reports a move, death or disconnect (or the server is stopping). */
  interrupt(playerId: string | undefined, reason: TradeInterruption) {
    if (this.finished) return;
    const res = cancelTrade(this.trade, { reason }, this.env.now());
    if (res.ok) this.apply(res.value);
  }

  /**
   * Shutdown could not wait for this trade any longer: a settlement still running stops retrying
   * and stops waiting for row locks (it ends as `server_error` unless its write was already sent,
   * whose outcome it still reads), then the trade ends as usual.
   */
  abandon() {
    this.abandoning.abort();
  }

  private refuse(playerId: string, error: Refusal) {
    this.env.send(playerId, "tradeError", { tradeId: this.trade.id, code: error.code, message: error.message });
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
        for (const id of this.ids()) this.refuse(id, effect.error);
        return this.sendUpdated(views);
      }
      case "confirmScreen": {
        const views = this.publish();
        for (const id of this.ids()) {
          const { revision, myOffer, theirOffer, values } = views.get(id)!;
          this.env.send(id, "tradeConfirmScreen", { tradeId: this.trade.id, revision, myOffer, theirOffer, values });
        }
        return;
      }
      case "settle":
        this.syncState();
        void this.settle();
        return;
      case "cancelled":
        this.syncState();
        for (const id of this.ids())
          this.env.send(id, "tradeCancelled", { tradeId: this.trade.id, reason: effect.reason, message: CANCEL_MESSAGES[effect.reason] });
        void this.finish();
        return;
    }
  }

  /**
   * Run the settlement, then end the trade:
   * 1. committed: `tradeCompleted` to both, both freed, `player:sync` to both;
   * 2. not committed: `tradeCancelled` (invalid_items, or server_error) to both;
   * 3. players whose items in memory can't be trusted are evicted — only now, so they were told;
   * 4. the room finishes (audit, `ended`, close) whatever threw before.
   */
  private async settle() {
    let outcome: SettleOutcome;
    try {
      outcome = await this.env.settle(this.trade, this.abandoning.signal);
    } catch (e) {
      // Nothing was committed (the settlement itself never throws): end the trade, never leave it settling.
      this.env.logger.error({ err: e, tradeId: this.trade.id }, "settlement failed");
      outcome = { result: { ok: false, failure: "server_error", message: "The trade could not be completed." }, stale: [] };
    }
    const { result, stale } = outcome;
    try {
      const now = this.env.now();
      if (result.ok) {
        const done = completeTrade(this.trade, now);
        if (done.ok) this.trade = done.value.trade;
        this.syncState();
        for (const id of this.ids()) {
          this.env.send(id, "tradeCompleted", { tradeId: this.trade.id, receivedItems: result.received[id] ?? [] });
        }
        this.env.setTrading(this.trade.a.playerId, undefined);
        this.env.setTrading(this.trade.b.playerId, undefined);
        for (const id of this.ids()) this.env.sync(id);
      } else {
        // The re-check failed: invalid_items. Anything else (nothing committed, or an outcome storage
        // could not confirm): server_error.
        const reason = result.failure === "invalid_items" || result.failure === "inventory_full" ? "invalid_items" : "server_error";
        const failed = failSettlement(this.trade, reason, now);
        if (failed.ok) this.apply(failed.value);
      }
    } catch (e) {
      this.env.logger.error({ err: e, tradeId: this.trade.id }, "ending a settled trade failed");
    } finally {
      try {
        if (stale.length > 0) this.env.evict(this.trade, stale, result);
      } catch (e) {
        this.env.logger.error({ err: e, tradeId: this.trade.id }, "evicting players after a trade failed");
      }
      await this.finish();
    }
  }

  private sendUpdated(views: Map<string, TraderView>) {
    for (const id of this.ids()) {
      const { revision, myOffer, theirOffer, partnerFreeSlots } = views.get(id)!;
      this.env.send(id, "tradeUpdated", { tradeId: this.trade.id, revision, myOffer, theirOffer, partnerFreeSlots });
    }
  }

  private ids() {
    return [this.trade.a.playerId, this.trade.b.playerId];
  }

  /** The trade from `id`'s side, built once per change for the event and the synchronised state. */
  private traderView(id: string): TraderView {
    const { myOffer, theirOffer } = viewFor(this.trade, id);
    const view = { revision: this.trade.revision, myOffer, theirOffer, partnerFreeSlots: this.env.freeSlots(partnerOf(this.trade, id).playerId) };
    if (!showsValues(this.trade.state)) return view;
    return { ...view, values: computeValues(myOffer, theirOffer, (itemId) => this.env.itemValue(itemId)) };
  }

  /** Both traders' views, copied onto the synchronised state (while someone watches). */
  private publish(): Map<string, TraderView> {
    const views = new Map(this.ids().map((id) => [id, this.traderView(id)] as const));
    this.syncState(views);
    return views;
  }

  /**
   * Copy the trade onto the synchronised state — only while someone watches (or when forced), from
   * `views` when the caller has built them (see `writeTradeState`).
   */
  private syncState(views?: Map<string, TraderView>, force = false) {
    if (!force && this.clients.length === 0) return;
    writeTradeState(this.state, this.trade, (id) => views?.get(id) ?? this.traderView(id));
  }

  /**
   * End of the trade: free both players, audit a cancelled trade, send watchers the final state,
   * resolve `ended` and close the room. Never throws: `ended` always resolves.
   */
  private async finish() {
    if (this.finished) return;
    this.finished = true;
    try {
      this.env.setTrading(this.trade.a.playerId, undefined);
      this.env.setTrading(this.trade.b.playerId, undefined);
      this.env.closed(this.trade.id, this);
      if (this.trade.state === "cancelled") {
        await this.env.auditCancelled(this.trade).catch((e) => this.env.logger.error({ err: e }, "trade audit failed"));
      }
      if (this.clients.length > 0) this.broadcastPatch(); // watchers see the final screen before the room closes
    } catch (e) {
      this.env.logger.error({ err: e, tradeId: this.trade.id }, "ending the trade room failed");
    } finally {
      this.markEnded();
      this.clock.setTimeout(() => void this.disconnect(), 50);
    }
  }
}
