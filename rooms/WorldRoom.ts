/**
 * `WorldRoom` (room name `world`): connects players to the one `World`, routes every client event
 * through the event table, and turns the world into schema patches filtered by each client's view.
 * Plain-WebSocket clients (the `/ws` adapter) join the same room through `attachJson`.
 *
 * The server defines the room type with `worldRoomType(deps)`, a subclass closing over its dependencies (no client option reaches them).
 */
import { randomUUID } from "node:crypto";
import { Room, ServerError, type AuthContext, type Client, type RoomException, type RoomMethodName } from "@colyseus/core";
import type { CharacterRepository } from "../src/storage/characters/repository.js";
import type { Principal } from "../src/auth/service.js";
import { CLOSE_CODES, CLIENT_EVENT_NAMES } from "../src/events.js";
import type { Logger } from "../src/logger.js";
import { tickStart, type Metrics } from "../src/metrics.js";
import type { Adapter, JsonClientLink, JsonSocket, JsonWorld } from "../src/net/adapter.js";
import type { Admission } from "../src/net/admission.js";
import type { SocketGate } from "../src/net/socket-gate.js";
import type { CharacterResolver } from "../src/world/character-resolver.js";
import type { Player } from "../src/world/player.js";
import type { World } from "../src/world/world.js";
import { WorldState } from "../schema/world.js";
import type { EventRouter } from "./world/event-table.js";
import { checkSeat, publishPopulation, type Population } from "./world/capacity.js";
import { asServerError, authorizeJoin, type JoinAuthDeps, type WorldAuth } from "./world/join-auth.js";
import { installInterestEncoder } from "./world/install-encoder.js";
import { TrackedView, type InterestEncoder } from "./world/interest-encoder.js";
import { startTicker, type TickPhase, type Ticker } from "./world/ticker.js";
import { attachLink, detachLink, linkOfClient, newLink, type ClientLink } from "./world/links.js";
import { SendOrder } from "./world/send-order.js";
import { ENTITY_SCHEMAS, refreshView, SchemaMirror, WorldUpdates, type Viewer } from "./world/views.js";

interface JoinOptions {
  characterId?: string;
  /** The world to join: the matchmaking guard checks it and routes the join (src/cluster/routing.ts). */
  world?: number;
}

/** What the world room works with, given once when the server defines the room type. */
export interface WorldRoomDeps {
  world: World;
  /** The world's number (docs/operations.md "Worlds"). */
  worldNumber: number;
  /** Connections the room takes (WORLD_MAX_PLAYERS). */
  maxPlayers: number;
  /** Authentication and blocks of every WebSocket path. */
  gate: SocketGate;
  /** Which character a join plays, read in its storage queue. */
  resolver: CharacterResolver;
  /** Play sessions in storage (opened on join). */
  characters: Pick<CharacterRepository, "recordLogin">;
  /** The event table's router (validates an event, then its handler handles it). */
  router: EventRouter;
  /** The `/ws` adapter: the room registers as its world (by number) while it exists. */
  adapter: Pick<Adapter, "serve">;
  /** Admission control of joins (src/net/admission.ts); joins are unbounded without it. */
  admission?: Admission;
  tickMs: number;
  /** `TICK_PHASE`: `auto` ticks on the world's phase of the wall-clock tick grid, `off` on a plain interval (rooms/world/ticker.ts). */
  tickPhase: TickPhase;
  /** Seconds a reserved seat waits for its client's room socket (`SEAT_RESERVATION_SECONDS`); Colyseus's 15 without it. */
  seatReservationSeconds?: number;
  logger: Logger;
  metrics?: Metrics;
}

/**
 * The `world` room type for `matchMaker.defineRoomType`: one type for every world of the process,
 * filtered by the `world` option (each room is created with its number, which becomes its listing's
 * `metadata.world`). Colyseus calls the static `onAuth` detached from the class, so its shared
 * dependencies are a closure; each room gets its own world's through its creation permit.
 */
export function worldRoomType(shared: JoinAuthDeps) {
  return class BoundWorldRoom extends WorldRoom {
    static override onAuth(token: string, options: JoinOptions, context: AuthContext): Promise<WorldAuth> {
      return authorizeJoin(shared, token, context, options);
    }
  };
}

export class WorldRoom extends Room implements JsonWorld {
  override maxClients = 5_000;
  override autoDispose = false;
  override state = new WorldState();
  /** Connected clients by Colyseus session id (SDK) or link id (`/ws`). */
  private readonly links = new Map<string, ClientLink>();
  private deps!: WorldRoomDeps;
  private world!: World;
  private mirror!: SchemaMirror;
  private encoder!: InterestEncoder;
  private readonly sendOrder = new SendOrder();
  private stopServingJson: (() => void) | undefined;
  /** What the listing's metadata last said (`publishPopulation`). */
  private published: Population | undefined;
  /** Ends the subscription to the world's `playerRemoved` (onDispose). */
  private stopListening: (() => void) | undefined;
  /** Runs `onTick` every tick until the room is disposed (read by tests). */
  ticker: Ticker | undefined;

  /** Unused creation permits, each with the dependencies of the room it creates (see `permitCreation`). */
  private static readonly permits = new Map<string, WorldRoomDeps>();

  /**
   * A one-time permit to create the room of one world, for the server's own `matchMaker.createRoom("world", { permit, world })` at start-up.
   * Each world room runs the simulation of its `World`, so a second one would tick it again: a room created without a permit the server
   * issued (a client's `create`/`joinOrCreate`, refused before by the matchmaking middleware) fails in `onCreate` before anything starts.
   * The permit carries the room's dependencies: no client option reaches them.
   */
  static permitCreation(deps: WorldRoomDeps): string {
    const permit = randomUUID();
    WorldRoom.permits.set(permit, deps);
    return permit;
  }

  override onCreate(options: { permit?: unknown; world?: unknown }) {
    const deps = typeof options?.permit === "string" ? WorldRoom.permits.get(options.permit) : undefined;
    if (!deps || options.world !== deps.worldNumber) throw new ServerError(403, "rooms are created by the server");
    WorldRoom.permits.delete(options.permit as string);
    this.deps = deps;
    this.world = deps.world;
    this.encoder = installInterestEncoder(this, ENTITY_SCHEMAS); // each changed entity encoded once a tick (docs/interest.md "In a crowd")
    this.mirror = new SchemaMirror(this.state, deps.world, this.encoder.slots);
    this.maxClients = deps.maxPlayers;
    if (deps.seatReservationSeconds) this.seatReservationTimeout = deps.seatReservationSeconds;
    this.ticker = startTicker(this, () => this.world.closing || this.onTick(), deps); // looked up each tick (the probe wraps it); none at shutdown
    this.setPatchRate(null); // patches leave at the end of each tick (onTick); a patch timer would send them a tick late
    for (const event of CLIENT_EVENT_NAMES) {
      this.onMessage(event, (client: Client, payload: unknown) => {
        const link = linkOfClient(client);
        if (link) this.receiveSdk(link, event, payload);
      });
    }
    this.onMessage("*", (client: Client, type: string | number) => {
      const link = linkOfClient(client);
      if (link) this.receiveSdk(link, String(type), undefined);
    });
    this.stopListening = this.world.events.on("playerRemoved", (id) => this.mirror.remove("players", id, this.sdkViewers(true)));
    this.stopServingJson = this.deps.adapter.serve(deps.worldNumber, this);
    this.publishPopulation();
  }

  override onDispose() {
    this.ticker?.stop();
    this.stopListening?.();
    this.stopServingJson?.();
  }

  override async onJoin(client: Client, options: JoinOptions, principal: WorldAuth) {
    checkSeat(this.deps.admission, client.sessionId, this.isFull(), this.deps.worldNumber); // rooms/world/capacity.ts
    this.deps.admission?.seats.entered(client.sessionId); // its seat no longer waits (src/net/seat-ledger.ts)
    const link: ClientLink = newLink(
      this.deps.metrics,
      "sdk",
      principal.accountId,
      principal.address,
      (event, data) => link.client?.send(event, data),
      (code, reason) => link.client?.leave(code, reason),
    );
    link.client = client;
    client.view = new TrackedView(this.encoder.slots);
    this.recordServerCloses(client, link);
    // Stage 2 of an admitted join (src/net/admission.ts): busy or a storage failure refuses with 503 SERVER_BUSY.
    const enter = () => this.enter(link, principal, options?.characterId);
    const player = await (this.deps.admission ? this.deps.admission.join(enter, { admitted: true }) : enter());
    attachLink(this.links, client, link);
    refreshView(this.world, this.mirror, client.view, link, player);
    this.deps.metrics?.joins.inc({ transport: "sdk" });
  }

  /** A plain-WebSocket client joins on its own behalf (the `/ws` adapter). */
  async attachJson(principal: Principal, characterId: string | undefined, socket: JsonSocket): Promise<JsonClientLink> {
    const link = newLink(
      this.deps.metrics,
      "json",
      principal.accountId,
      socket.remoteAddress,
      (event, data) => socket.send(JSON.stringify({ event, data })),
      (code, reason) => socket.close(code, reason),
    );
    link.updates = new WorldUpdates();
    const player = await this.enter(link, principal, characterId);
    this.links.set(link.id, link);
    this.sendWorldUpdate(link, player, true);
    return { receive: (text) => this.receiveJson(link, text), detach: () => this.detachJson(link) };
  }

  /**
   * A plain-WebSocket frame. Frames of a connection that is no longer its player's live one (replaced, revoked, flood-closed:
   * the socket still delivers during the closing handshake) are ignored.
   */
  private receiveJson(link: ClientLink, raw: string) {
    const player = this.world.connectedPlayer(link.playerId, link.id);
    if (!player) return;
    let frame: { event?: unknown; data?: unknown };
    try {
      frame = JSON.parse(raw) as typeof frame;
    } catch {
      if (link.flood.count()) this.tooMany(link);
      else this.world.refuse(player, "INVALID_MESSAGE");
      return;
    }
    this.receive(link, player, typeof frame?.event === "string" ? frame.event : "", frame?.data);
  }

  /** The plain-WebSocket connection closed. */
  private detachJson(link: ClientLink) {
    this.links.delete(link.id);
    this.world.drop(link.playerId, link.id);
  }

  /**
   * Colyseus closes an SDK client by itself, before any room handler runs, when a frame is not valid msgpack (4002). Every close the server
   * starts goes through `client.leave`, so recording it there lets `onDrop` refuse such a connection a reconnection seat like any other server close.
   */
  private recordServerCloses(client: Client, link: ClientLink) {
    const leave = client.leave.bind(client);
    client.leave = (code?: number, data?: string) => {
      link.closedCode ??= code ?? 1000;
      return leave(code, data);
    };
  }

  /**
   * Colyseus calls this for an exception in a message handler, timer, tick (rooms/world/ticker.ts) or lifecycle method instead of letting
   * it escape a socket listener (which would end the process). Logged, never rethrown here (lifecycle methods still fail their join or reconnection).
   */
  override onUncaughtException(error: RoomException, methodName: RoomMethodName) {
    const cause = error.cause ?? error;
    // Unset when `onCreate` refused the room (no permit).
    const deps = this.deps as WorldRoomDeps | undefined;
    if (cause instanceof ServerError) {
      // an intended refusal (join, reconnection, creation)
      deps?.metrics?.joinRefusals.inc({ transport: "sdk", code: String(cause.code) });
      return;
    }
    if (deps) deps.logger.error({ err: cause, method: methodName }, "world room: uncaught exception");
  }

  /** Join the character the principal plays, then open its play session in storage (unless resumed). */
  private async enter(link: ClientLink, principal: Principal, requested: string | undefined): Promise<Player> {
    // Read and joined in the character's storage queue (see resolveCharacter).
    const { player, resumed } = await this.deps.resolver
      .resolveCharacter(principal, requested, (record) => {
        link.playerId = record.character.id;
        return this.world.join(record, link, CLOSE_CODES.REPLACED);
      })
      .catch(asServerError);
    try {
      if (!resumed || !player.loginId) player.loginId = await this.deps.characters.recordLogin(player.id, principal.accountId, link.kind);
    } catch (e) {
      // A refused join must not leave a freshly loaded player in the world without a connection.
      if (!resumed) await this.world.leave(player.id, "join_failed", link.id).catch(() => undefined);
      throw e;
    }
    if (principal.roles.includes("admin")) player.admin = true;
    this.mirror.upsert("players", player.id);
    return player;
  }

  /**
   * The socket went away without a consented leave. A connection the server closed itself (flood 4029, replaced 4009, revoked 4003,
   * bad token 4001) or that is no longer the player's live one gets no reconnection seat: `onLeave` follows at once.
   */
  override onDrop(client: Client) {
    const link = this.links.get(client.sessionId);
    if (!link) return;
    if (link.closedCode !== undefined || !this.world.connectedPlayer(link.playerId, link.id)) return;
    // The seat's timer alone ends the window: when it expires, onLeave removes the player.
    this.world.drop(link.playerId, link.id, true);
    this.allowReconnection(client, this.world.reconnectSeconds).catch(() => undefined);
  }

  /**
   * A dropped SDK client is back within the window. Colyseus skips `onAuth` here, so the account's block is checked again
   * (the upgrade filter already refused a blocked address). Throwing refuses the reconnection (the client gets an error).
   */
  override onReconnect(client: Client) {
    const link = this.links.get(client.sessionId);
    if (!link || !this.world.player(link.playerId)) throw new ServerError(410, "that session is gone; join again");
    if (this.deps.gate.blockedFor(link.accountId) > 0) throw new ServerError(429, "temporarily blocked");
    const previous = link.client;
    link.client = client;
    // Only the connection that dropped, while nobody else plays the character (a fresh join wins).
    if (!this.world.reconnect(link.playerId, link)) {
      link.client = previous;
      throw new ServerError(409, "this character is playing on another connection; join again");
    }
    this.recordServerCloses(client, link);
  }

  /**
   * The client is gone for good (consented leave, no seat, seat expired, reconnection refused).
   * The player leaves and is saved only if this was its live or its dropped connection.
   */
  override async onLeave(client: Client) {
    const link = this.links.get(client.sessionId);
    if (!link) return;
    detachLink(this.links, client);
    const live = this.world.connectedPlayer(link.playerId, link.id) !== undefined;
    await this.world.leave(link.playerId, live ? "left" : "reconnect_timeout", link.id);
  }

  // ------------------------------------------------------------------ events
  /** An SDK message: received only while the link is its player's live connection. */
  private receiveSdk(link: ClientLink, event: string, payload: unknown) {
    const player = this.world.connectedPlayer(link.playerId, link.id);
    if (player) this.receive(link, player, event, payload);
  }

  /** Every event from either transport, from the player's live connection: rate limit, then the event table (which routes it). */
  private receive(link: ClientLink, player: Player, event: string, payload: unknown) {
    this.deps.metrics?.messageIn(event);
    if (link.flood.count()) return this.tooMany(link);
    this.deps.router.route(player, event, payload);
  }

  private tooMany(link: ClientLink) {
    this.deps.metrics?.floodDrops.inc();
    if (!link.flood.shouldClose()) return;
    this.deps.gate.block(link.accountId, link.remoteAddress);
    link.close(CLOSE_CODES.FLOOD, "message flood");
  }

  // ------------------------------------------------------------------ tick and sync

  private onTick() {
    const started = tickStart();
    const world = this.world;
    try {
      world.step();
      this.state.tick = world.tick;
      this.mirror.syncAll(() => this.sdkViewers());
      this.selectNewPriorities();
      // The tick's moves go out first, to every SDK client in turn (from a different one each tick:
      // none is always served last); who is tracked is chosen after, for the next patch.
      this.sendOrder.rotate(this.clients);
      this.broadcastPatch();
      this.refreshViews();
    } finally {
      // Whatever part of the tick failed (the ticker logs it), the periodic save and the listing go on.
      world.saveIfDue();
      if (world.tick % 5 === 0) this.publishPopulation();
      this.deps.metrics?.tick(started);
    }
  }

  /**
   * Before the patch, the few SDK clients with a new priority within view (someone who hit them, their
   * attack target, trade partner, chat friend…; docs/interest.md "In a crowd") are selected, so the priority comes
   * in with the patch of the tick that made it one, beside the `combat:hit` or trade message naming it.
   */
  private selectNewPriorities() {
    for (const link of this.links.values()) {
      const view = link.client?.view;
      if (!view) continue;
      const p = this.world.connectedPlayer(link.playerId, link.id);
      if (p && this.world.priorityWaiting(p)) refreshView(this.world, this.mirror, view, link, p);
    }
  }

  /**
   * After the patch, every client's selection (docs/interest.md "In a crowd"): an SDK client's `StateView`
   * changes go out with the next tick's patch; a `/ws` client gets its `world:update` now.
   */
  private refreshViews() {
    for (const link of this.links.values()) {
      const p = this.world.connectedPlayer(link.playerId, link.id);
      if (!p) continue;
      if (link.client?.view) refreshView(this.world, this.mirror, link.client.view, link, p);
      else if (link.updates) this.sendWorldUpdate(link, p, false);
    }
  }

  /** Is the world full (WORLD_MAX_PLAYERS connected players, SDK and `/ws`)? Also Colyseus's check at each seat and join (never the seats not taken): counted only when the world holds that many at all. */
  isFull(): boolean {
    return this.deps !== undefined && this.world.players.size >= this.deps.maxPlayers && this.world.playersOnline() >= this.deps.maxPlayers;
  }
  override hasReachedMaxClients = () => this.isFull();

  /** Listing metadata and lock (rooms/world/capacity.ts), on change. */
  publishPopulation() {
    this.published = publishPopulation(this, this.deps, this.isFull(), this.published);
  }

  /** Every SDK client (`inWorld`: whose player is in the world; none at shutdown, docs/persistence.md "The shutdown save"): its `StateView` and what it tracks. */
  private *sdkViewers(inWorld = false): Generator<Viewer> {
    for (const l of this.links.values()) if (l.client?.view && (!inWorld || this.world.isInWorld(l.playerId))) yield { view: l.client.view, seen: l };
  }

  /** Send a plain-WebSocket client the changes in what it sees (`world:update`). */
  private sendWorldUpdate(link: ClientLink, p: Player, full: boolean) {
    const update = link.updates?.next(this.world, this.mirror, p, full);
    if (update) link.send("world:update", update);
  }

  /** The link of a player's connection (tests). */
  linkOf(playerId: string): ClientLink | undefined {
    return [...this.links.values()].find((link) => link.playerId === playerId);
  }
}
