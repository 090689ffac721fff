/**
 * `TradeRoom` (room name `trade`): the window through which the two traders' SDK clients may watch
 * one trade as synchronised state (docs/trading.md "Watching a trade"). It owns nothing: the trade
 * belongs to its `TradeSession` (src/trade/session.ts), which attaches the room when it is created,
 * shows it every change and closes it at the end; the trade events themselves go to the players
 * through their world connections.
 *
 * The server defines the room type with `tradeRoomType(deps)`, a subclass closing over the
 * authentication of watchers: nothing is assigned to the class after the fact.
 */
import { Room, ServerError, type AuthContext, type Client } from "@colyseus/core";
import { StateView } from "@colyseus/schema";
import { TradeRoomState } from "../schema/trade.js";
import type { Principal } from "../src/auth/service.js";
import type { Logger } from "../src/logger.js";
import type { Trade } from "../src/domain/trade/trade.js";
import { CLIENT_ADDRESS_HEADER } from "../src/net/colyseus.js";
import type { SocketGate } from "../src/net/socket-gate.js";
import { takeTradeRoomPermit, type TradeSession, type TradeWatchRoom, type ViewOf } from "../src/trade/session.js";
import { writeTradeState } from "./trade/watch-state.js";

/** What a trade room works with, given once when the server defines the room type. */
export interface TradeRoomDeps {
  /** Authentication of watchers. */
  gate: Pick<SocketGate, "authenticate">;
  logger: Logger;
}

/** The `trade` room type for `matchMaker.defineRoomType`, bound to its dependencies (see `worldRoomType`). */
export function tradeRoomType(deps: TradeRoomDeps) {
  return class BoundTradeRoom extends TradeRoom {
    static override onAuth(token: string, _options: { characterId?: string }, ctx: AuthContext): Promise<Principal> {
      return authorizeWatcher(deps.gate, token, ctx);
    }
    protected override readonly logger = deps.logger;
  };
}

/** Watchers sign in with their token (no anonymous identity: it could never be a trader). */
async function authorizeWatcher(gate: TradeRoomDeps["gate"], token: string, ctx: AuthContext): Promise<Principal> {
  if (!token) throw new ServerError(401, "missing or invalid token");
  const principal = await gate.authenticate(token, ctx.headers.get(CLIENT_ADDRESS_HEADER) ?? undefined);
  if (!principal) throw new ServerError(401, "missing or invalid token");
  return principal;
}

export class TradeRoom extends Room implements TradeWatchRoom {
  override autoDispose = false;
  override maxClients = 4;
  override state = new TradeRoomState();
  /** The trade this room shows. */
  private session!: TradeSession;
  /** Set by the room type (`tradeRoomType`). */
  protected readonly logger?: Logger;

  /**
   * Only the trade service creates trade rooms (`matchMaker.handleCreateRoom("trade", { permit })`,
   * a one-time permit for the session it opens): the room's session comes from that permit, never
   * from the options. Anything else — a client's `create`/`joinOrCreate` with forged trade state or
   * a copied trade id that got past the matchmaking middleware — is refused (403) before the room
   * does anything, and a trade that already has a room can't be given another (`attach` refuses).
   */
  override onCreate(options: { permit?: unknown }) {
    const session = takeTradeRoomPermit(options?.permit);
    if (!session) throw new ServerError(403, "trade rooms are created by the server");
    this.session = session;
    // Still being created: this only marks the listing (persisted with it), nothing to wait for.
    this.setPrivate(true).catch((e: unknown) => this.logger?.error({ err: e, tradeId: session.id }, "hiding the trade room failed"));
    if (!session.attach(this)) throw new ServerError(403, "this trade already has a room");
  }

  /**
   * Whether `principal` may watch this trade (its session decides: one of the two traders, its own
   * character). Checked by the matchmaking middleware for `joinById` and again here in `onJoin`.
   */
  admits(principal: Principal, requested: unknown): Promise<boolean> {
    return this.session ? this.session.admits(principal, requested) : Promise.resolve(false);
  }

  /** Watchers: only the traders' own characters, each seeing the trade from its own side. */
  override async onJoin(client: Client, options: { characterId?: string }, principal: Principal) {
    if (!principal || !(await this.admits(principal, options?.characterId))) throw new ServerError(403, "you are not part of this trade");
    const characterId = (principal.characterId ?? options.characterId)!;
    // The state is kept only while someone watches: bring it up to date for the first full state.
    const { trade, viewOf } = this.session.current();
    writeTradeState(this.state, trade, viewOf);
    client.view = new StateView();
    client.view.add(this.state.traders.get(characterId)!);
  }

  /** The session's trade changed: copied onto the state only while someone watches. */
  show(trade: Trade, viewOf: ViewOf): void {
    if (this.clients.length === 0) return;
    writeTradeState(this.state, trade, viewOf);
  }

  /** The trade ended: watchers see the final state, then the room closes. */
  close(): void {
    if (this.clients.length > 0) this.broadcastPatch();
    this.clock.setTimeout(() => void this.disconnect(), 50);
  }
}
