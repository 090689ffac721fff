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
import {
  applyTradeAction,
  cancelTrade,
  completeTrade,
  computeValues,
  failSettlement,
  isParty,
  partnerOf,
  tickTrade,
  TRADE_ERROR,
  viewFor,
  type TradeAction,
  type TradeOffer,
  type TradeSession,
  type TradeState,
  type TradeStep,
  type TradeValues,
} from "../src/domain/trade.js";
import { CANCEL_MESSAGES, type SettleOutcome, type TradeEnv, type TradeInterruption, type TradeRoomHandle } from "../src/trade/service.js";
import { StateView } from "@colyseus/schema";
import { TradeOfferLineState, TradeOfferState, TradeRoomState, TradeValuesState, TraderViewState } from "../schema/trade.js";
import type { ClientEventPayload, TradeEventName } from "../src/events.js";
import { CLIENT_ADDRESS_HEADER } from "../src/net/colyseus.js";
import type { SocketGate } from "../src/net/socket-gate.js";

type Refusal = { code: string; message: string };

/**
 * The trade from one trader's side: what `tradeUpdated` and `tradeConfirmScreen` send to that
 * player and what its watcher's `TraderViewState` holds. `values` from the confirmation screen on.
 */
export interface TraderView {
  readonly revision: number;
  readonly myOffer: TradeOffer;
  readonly theirOffer: TradeOffer;
  readonly partnerFreeSlots: number;
  readonly values?: TradeValues;
}

/** Screens that show the offers' values: the confirmation screen and what follows it when completing. */
function showsValues(state: TradeState): boolean {
  return state === "confirm" || state === "settling" || state === "completed";
}

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
   * The trade service of the world in this process. A trade room works on that world's players in
   * memory, so it is always created in the world's process (`matchMaker.handleCreateRoom`); only
   * watchers may connect to it from elsewhere.
   */
  env: TradeEnv;
  /** Authentication of watchers. */
  gate: Pick<SocketGate, "authenticate">;
}

/** The `trade` room type for `matchMaker.defineRoomType`, bound to its dependencies (see `worldRoomType`). */
export function tradeRoomType(deps: TradeRoomDeps) {
  return class BoundTradeRoom extends TradeRoom {
    static override onAuth(token: string, _options: { characterId?: string }, ctx: AuthContext): Promise<Principal> {
      return authorizeWatcher(deps.gate, token, ctx);
    }
    constructor() {
      super(deps.env);
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
  private session!: TradeSession;
  private finished = false;
  /** Fires when the server abandons a settlement still running (`abandon`, shutdown). */
  private readonly abandoning = new AbortController();
  private markEnded!: () => void;
  /** Resolves once the trade has ended and its audit record is written. */
  readonly ended = new Promise<void>((resolve) => (this.markEnded = resolve));

  protected constructor(private readonly env: TradeEnv) {
    super();
  }

  /**
   * Only the trade service creates trade rooms (`matchMaker.handleCreateRoom` with the trade's id
   * as the only option): the session comes from the service's own record of the trade it is
   * opening (`TradeEnv.claim`, taken once), never from the options. Anything else — a client's
   * `create`/`joinOrCreate` with a forged session or a copied trade id that got past the
   * matchmaking middleware — is refused (403) before the room does anything, and a trade that
   * already has a room can't be given another (`opened` refuses to replace a route).
   */
  override onCreate(options: { tradeId?: unknown }) {
    const session = typeof options?.tradeId === "string" ? this.env.claim(options.tradeId) : undefined;
    if (!session) throw new ServerError(403, "trade rooms are created by the server");
    this.session = session;
    // Routed from now on, before either player can know of the room: nothing is lost in between.
    // (`handleCreateRoom` calls `onCreate` synchronously from the service's `respond`, so nothing
    // can reach the trade before this.)
    if (!this.env.opened(this.session.id, this)) throw new ServerError(403, "this trade already has a room");
    this.setPrivate(true);
    this.syncState();
    const { a, b } = this.session;
    for (const [me, partner] of [
      [a, b],
      [b, a],
    ] as const) {
      this.env.send(me.playerId, "tradeStarted", {
        tradeId: this.session.id,
        partnerId: partner.playerId,
        partnerName: partner.name,
        partnerLevel: partner.level,
        partnerFreeSlots: this.env.freeSlots(partner.playerId),
        roomId: this.roomId,
      });
    }
    this.clock.setInterval(() => this.apply(tickTrade(this.session, this.env.now(), this.env.params)), 250);
  }

  /**
   * Whether `principal` may watch this trade: it plays one of the two traders (the character its
   * token is bound to, else the one it names), and that character belongs to its account. Checked
   * by the matchmaking middleware for `joinById` and again here in `onJoin`.
   */
  async admits(principal: Principal, requested: unknown): Promise<boolean> {
    const characterId = principal.characterId ?? (typeof requested === "string" ? requested : undefined);
    if (!characterId || !this.session || !isParty(this.session, characterId)) return false;
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
    if (!isParty(this.session, playerId)) return this.refuse(playerId, { code: TRADE_ERROR.NOT_IN_TRADE, message: "You are not in this trade." });
    const action = toTradeAction(playerId, { event, data } as TradeEvent);
    if ("code" in action) return this.refuse(playerId, action);
    const ctx = { items: this.env.items, holdingsOf: (id: string) => this.env.holdingsOf(id) };
    const res = applyTradeAction(this.session, action, this.env.now(), ctx);
    if (!res.ok) return this.refuse(playerId, res.error);
    this.apply(res.value);
  }

  /** The world reports a move, death or disconnect (or the server is stopping). */
  interrupt(playerId: string | undefined, reason: TradeInterruption) {
    if (this.finished) return;
    const res = cancelTrade(this.session, { reason }, this.env.now());
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
    this.env.send(playerId, "tradeError", { tradeId: this.session.id, code: error.code, message: error.message });
  }

  private apply(step: TradeStep) {
    this.session = step.session;
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
          this.env.send(id, "tradeConfirmScreen", { tradeId: this.session.id, revision, myOffer, theirOffer, values });
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
          this.env.send(id, "tradeCancelled", { tradeId: this.session.id, reason: effect.reason, message: CANCEL_MESSAGES[effect.reason] });
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
      outcome = await this.env.settle(this.session, this.abandoning.signal);
    } catch (e) {
      // Nothing was committed (the settlement itself never throws): end the trade, never leave it settling.
      this.env.logger.error({ err: e, tradeId: this.session.id }, "settlement failed");
      outcome = { result: { ok: false, failure: "server_error", message: "The trade could not be completed." }, stale: [] };
    }
    const { result, stale } = outcome;
    try {
      const now = this.env.now();
      if (result.ok) {
        const done = completeTrade(this.session, now);
        if (done.ok) this.session = done.value.session;
        this.syncState();
        for (const id of this.ids()) {
          this.env.send(id, "tradeCompleted", { tradeId: this.session.id, receivedItems: result.received[id] ?? [] });
        }
        this.env.setTrading(this.session.a.playerId, undefined);
        this.env.setTrading(this.session.b.playerId, undefined);
        for (const id of this.ids()) this.env.sync(id);
      } else {
        // The re-check failed: invalid_items. Anything else (nothing committed, or an outcome storage
        // could not confirm): server_error.
        const reason = result.failure === "invalid_items" || result.failure === "inventory_full" ? "invalid_items" : "server_error";
        const failed = failSettlement(this.session, reason, now);
        if (failed.ok) this.apply(failed.value);
      }
    } catch (e) {
      this.env.logger.error({ err: e, tradeId: this.session.id }, "ending a settled trade failed");
    } finally {
      try {
        if (stale.length > 0) this.env.evict(this.session, stale, result);
      } catch (e) {
        this.env.logger.error({ err: e, tradeId: this.session.id }, "evicting players after a trade failed");
      }
      await this.finish();
    }
  }

  private sendUpdated(views: Map<string, TraderView>) {
    for (const id of this.ids()) {
      const { revision, myOffer, theirOffer, partnerFreeSlots } = views.get(id)!;
      this.env.send(id, "tradeUpdated", { tradeId: this.session.id, revision, myOffer, theirOffer, partnerFreeSlots });
    }
  }

  private ids() {
    return [this.session.a.playerId, this.session.b.playerId];
  }

  /** The trade from `id`'s side, built once per change for the event and the synchronised state. */
  private traderView(id: string): TraderView {
    const { myOffer, theirOffer } = viewFor(this.session, id);
    const view = { revision: this.session.revision, myOffer, theirOffer, partnerFreeSlots: this.env.freeSlots(partnerOf(this.session, id).playerId) };
    if (!showsValues(this.session.state)) return view;
    return { ...view, values: computeValues(myOffer, theirOffer, (itemId) => this.env.itemValue(itemId)) };
  }

  /** Both traders' views, copied onto the synchronised state (while someone watches). */
  private publish(): Map<string, TraderView> {
    const views = new Map(this.ids().map((id) => [id, this.traderView(id)] as const));
    this.syncState(views);
    return views;
  }

  /**
   * Copy the session onto the synchronised state — only while someone watches (or when forced),
   * from `views` when the caller has built them. Values, once shown, stay: a trade cancelled on the
   * confirmation screen keeps them, one cancelled on the offer screen never had them.
   */
  private syncState(views?: Map<string, TraderView>, force = false) {
    if (!force && this.clients.length === 0) return;
    const s = this.state;
    s.tradeId = this.session.id;
    s.screen = this.session.state;
    s.revision = this.session.revision;
    for (const me of [this.session.a, this.session.b]) {
      const partner = partnerOf(this.session, me.playerId);
      let v = s.traders.get(me.playerId);
      if (!v) {
        v = new TraderViewState();
        v.playerId = me.playerId;
        v.partnerId = partner.playerId;
        v.myOffer = new TradeOfferState();
        v.theirOffer = new TradeOfferState();
        // `schema()` instantiates child schemas: values stay absent until a screen shows them.
        v.values = undefined as unknown as TradeValuesState;
        s.traders.set(me.playerId, v);
      }
      const view = views?.get(me.playerId) ?? this.traderView(me.playerId);
      copyOffer(v.myOffer, me.playerId, me.name, view.myOffer);
      copyOffer(v.theirOffer, partner.playerId, partner.name, view.theirOffer);
      v.partnerFreeSlots = view.partnerFreeSlots;
      if (view.values) {
        v.values ??= new TradeValuesState();
        v.values.myOfferValue = view.values.myOfferValue;
        v.values.theirOfferValue = view.values.theirOfferValue;
        v.values.wealthTransfer = view.values.wealthTransfer;
      }
    }
  }

  /**
   * End of the trade: free both players, audit a cancelled trade, send watchers the final state,
   * resolve `ended` and close the room. Never throws: `ended` always resolves.
   */
  private async finish() {
    if (this.finished) return;
    this.finished = true;
    try {
      this.env.setTrading(this.session.a.playerId, undefined);
      this.env.setTrading(this.session.b.playerId, undefined);
      this.env.closed(this.session.id, this);
      if (this.session.state === "cancelled") {
        await this.env.auditCancelled(this.session).catch((e) => this.env.logger.error({ err: e }, "trade audit failed"));
      }
      if (this.clients.length > 0) this.broadcastPatch(); // watchers see the final screen before the room closes
    } catch (e) {
      this.env.logger.error({ err: e, tradeId: this.session.id }, "ending the trade room failed");
    } finally {
      this.markEnded();
      this.clock.setTimeout(() => void this.disconnect(), 50);
    }
  }
}

/** Copy one offer onto its schema object (lines replaced only when they changed). */
function copyOffer(o: TradeOfferState, playerId: string, name: string, offer: { items: readonly { inventorySlot: number; itemId: string; quantity: number }[]; coins: number; accepted: boolean }) {
  o.playerId = playerId;
  o.name = name;
  o.coins = offer.coins;
  o.accepted = offer.accepted;
  const same =
    o.items.length === offer.items.length &&
    offer.items.every((l, i) => {
      const x = o.items[i]!;
      return x.inventorySlot === l.inventorySlot && x.itemId === l.itemId && x.quantity === l.quantity;
    });
  if (same) return;
  o.items.clear();
  for (const line of offer.items) {
    const l = new TradeOfferLineState();
    l.inventorySlot = line.inventorySlot;
    l.itemId = line.itemId;
    l.quantity = line.quantity;
    o.items.push(l);
  }
}
