/**
 * `WorldRoom` (room name `world`): connects players to the one `World`, routes every client event
 * through the event table, and turns the world into schema patches filtered by each client's view.
 * Plain-WebSocket clients (the `/ws` adapter) join the same room through `attachJson`.
 */
import { randomUUID } from "node:crypto";
import { Room, ServerError, type AuthContext, type Client, type RoomException, type RoomMethodName } from "@colyseus/core";
import { StateView } from "@colyseus/schema";
import type { Principal } from "../src/auth/service.js";
import { CLOSE_CODES, CLIENT_EVENTS, CLIENT_EVENT_NAMES, type ClientEventName } from "../src/events.js";
import type { Connection, Player } from "../src/world/player.js";
import type { VisibleSet } from "../src/world/world.js";
import { GroundItemState, NpcState, PlayerState, ResourceState, WorldState } from "../schema/world.js";
import { CLIENT_ADDRESS_HEADER } from "../src/net/colyseus.js";
import { FloodMeter } from "../src/net/flood.js";
import { WorldError } from "../src/world/errors.js";
import type { WorldRuntime } from "../src/world/runtime.js";

type Kind = keyof VisibleSet;
const KINDS: Kind[] = ["players", "npcs", "resources", "groundItems"];
const SCHEMA = { players: PlayerState, npcs: NpcState, resources: ResourceState, groundItems: GroundItemState } as const;

/** A connected client, SDK or plain WebSocket. */
export interface Session extends Connection {
  playerId: string;
  accountId: string;
  flood: FloodMeter;
  /** SDK sessions: the close code, once the server has closed this connection (no reconnection seat then). */
  closedCode?: number;
  /** SDK sessions: the client whose view is kept in step with the world. */
  client?: Client;
  /** JSON sessions: what this client has been told, for world:update deltas. */
  sent?: Record<Kind, Map<string, Record<string, unknown>>>;
  visible?: VisibleSet;
  /** The second buffer of `visible` (swapped every tick). */
  spare?: VisibleSet;
}

interface JoinOptions {
  characterId?: string;
}

/** What `onAuth` hands `onJoin`: the principal and the address it was checked against. */
type WorldAuth = Principal & { address?: string };

export class WorldRoom extends Room {
  /** Set once by the server before the room is created. */
  static runtime: WorldRuntime;
  override maxClients = 5_000;
  override autoDispose = false;
  override state = new WorldState();
  private readonly sessions = new Map<string, Session>();
  private readonly schemaOf: Record<Kind, Map<string, InstanceType<(typeof SCHEMA)[Kind]>>> = {
    players: new Map(),
    npcs: new Map(),
    resources: new Map(),
    groundItems: new Map(),
  };

  /** Ends the subscription to the world's `playerRemoved` (onDispose). */
  private stopListening: (() => void) | undefined;

  private get rt(): WorldRuntime {
    return WorldRoom.runtime;
  }

  /**
   * Matchmaking authentication: the SDK's `client.auth.token`. In anonymous mode a client without
   * a token gets a temporary identity. Blocked accounts and addresses are refused (429); an invalid
   * token and an anonymous identity count as authentication attempts of the address.
   */
  static override async onAuth(token: string, _options: JoinOptions, context: AuthContext): Promise<WorldAuth> {
    const rt = WorldRoom.runtime;
    // The matchmaking middleware puts the address here (never Colyseus's header-trusting context.ip).
    const address = context.headers.get(CLIENT_ADDRESS_HEADER) ?? undefined;
    const left = rt.blockedFor(undefined, address);
    if (left > 0) throw new ServerError(429, `temporarily blocked; try again in ${left} s`);
    const principal = await rt.authenticate(token, address).catch(asServerError);
    if (!principal) throw new ServerError(401, "missing or invalid token");
    if (rt.blockedFor(principal.accountId) > 0) throw new ServerError(429, "temporarily blocked for flooding");
    return { ...principal, address };
  }

  /** Unused creation permits (see `permitCreation`). */
  private static readonly permits = new Set<string>();

  /**
   * A one-time permit to create a world room, for the server's own `matchMaker.createRoom("world",
   * { permit })` at start-up. Each world room runs the simulation of the one shared `World`, so a
   * second one would tick it again: a room created without a permit the server issued (a client's
   * `create`/`joinOrCreate`, refused before by the matchmaking middleware) fails in `onCreate`
   * before anything starts.
   */
  static permitCreation(): string {
    const permit = randomUUID();
    WorldRoom.permits.add(permit);
    return permit;
  }

  override onCreate(options: { permit?: unknown }) {
    if (typeof options?.permit !== "string" || !WorldRoom.permits.delete(options.permit)) throw new ServerError(403, "rooms are created by the server");
    this.setSimulationInterval(() => this.onTick(), this.rt.tickMs);
    // Patches leave at the end of each tick (onTick). A separate patch timer at the same rate fires
    // just before the tick and would show every change one whole tick late.
    this.setPatchRate(null);
    for (const event of CLIENT_EVENT_NAMES) {
      this.onMessage(event, (client: Client, payload: unknown) => {
        const s = this.sessions.get(client.sessionId);
        if (s) this.dispatch(s, event, payload);
      });
    }
    this.onMessage("*", (client: Client, type: string | number) => {
      const s = this.sessions.get(client.sessionId);
      if (s) this.dispatch(s, String(type), undefined);
    });
    this.stopListening = this.rt.world.events.on("playerRemoved", (id) => this.removeSchema("players", id));
  }

  override onDispose() {
    this.stopListening?.();
  }

  override async onJoin(client: Client, options: JoinOptions, principal: WorldAuth) {
    const session: Session = {
      id: randomUUID(),
      kind: "sdk",
      playerId: "",
      accountId: principal.accountId,
      remoteAddress: principal.address,
      flood: new FloodMeter(),
      client,
      send: (event, data) => {
        this.rt.metrics?.messageOut(event);
        session.client?.send(event, data);
      },
      close: (code, reason) => session.client?.leave(code, reason),
    };
    client.view = new StateView();
    this.recordServerCloses(client, session);
    const player = await this.enter(session, principal, options?.characterId);
    client.userData = { sessionId: session.id };
    this.sessions.set(client.sessionId, session);
    this.refreshView(session, player);
    this.rt.metrics?.joins.inc({ transport: "sdk" });
  }

  /** A plain-WebSocket client joins on its own behalf (the `/ws` adapter). */
  async attachJson(
    principal: Principal,
    characterId: string | undefined,
    io: { send(text: string): void; close(code: number, reason: string): void; remoteAddress?: string },
  ): Promise<Session> {
    const session: Session = {
      id: randomUUID(),
      kind: "json",
      playerId: "",
      accountId: principal.accountId,
      remoteAddress: io.remoteAddress,
      flood: new FloodMeter(),
      sent: { players: new Map(), npcs: new Map(), resources: new Map(), groundItems: new Map() },
      send: (event, data) => {
        this.rt.metrics?.messageOut(event);
        io.send(JSON.stringify({ event, data }));
      },
      close: (code, reason) => io.close(code, reason),
    };
    const player = await this.enter(session, principal, characterId);
    this.sessions.set(session.id, session);
    this.sendWorldUpdate(session, player, true);
    return session;
  }

  /**
   * A plain-WebSocket frame. Frames of a connection that is no longer its player's live one
   * (replaced, revoked, flood-closed: the socket still delivers during the closing handshake) are
   * ignored.
   */
  receiveJson(session: Session, raw: string) {
    const player = this.rt.world.connectedPlayer(session.playerId, session.id);
    if (!player) return;
    let frame: { event?: unknown; data?: unknown };
    try {
      frame = JSON.parse(raw);
    } catch {
      if (session.flood.count()) this.tooMany(session);
      else this.rt.world.refuse(player, "INVALID_MESSAGE");
      return;
    }
    this.route(session, player, typeof frame?.event === "string" ? frame.event : "", frame?.data);
  }

  /** The plain-WebSocket connection closed. */
  detachJson(session: Session) {
    this.sessions.delete(session.id);
    this.rt.world.drop(session.playerId, session.id);
  }

  /**
   * Colyseus closes an SDK client by itself, before any room handler runs, when a frame is not
   * valid msgpack (4002). Every close the server starts goes through `client.leave`, so recording
   * it there lets `onDrop` refuse such a connection a reconnection seat like any other server close.
   */
  private recordServerCloses(client: Client, s: Session) {
    const leave = client.leave.bind(client);
    client.leave = (code?: number, data?: string) => {
      s.closedCode ??= code ?? 1000;
      return leave(code, data);
    };
  }

  /**
   * Colyseus calls this for an exception in a message handler, timer or lifecycle method instead
   * of letting it escape a socket listener (which would end the process). Logged, never rethrown
   * here (lifecycle methods still fail their join or reconnection).
   */
  override onUncaughtException(error: RoomException, methodName: RoomMethodName) {
    const cause = error.cause ?? error;
    if (cause instanceof ServerError) {
      // an intended refusal (join, reconnection)
      this.rt.metrics?.joinRefusals.inc({ transport: "sdk", code: String(cause.code) });
      return;
    }
    this.rt.logger.error({ err: cause, method: methodName }, "world room: uncaught exception");
  }

  private async enter(session: Session, principal: Principal, requested: string | undefined): Promise<Player> {
    // Read and joined in the character's storage queue (see resolveCharacter).
    const { player, resumed } = await this.rt.resolveCharacter(principal, requested, (record) => {
      session.playerId = record.character.id;
      return this.rt.world.join(record, session, CLOSE_CODES.REPLACED);
    }).catch(asServerError);
    if (!resumed || !player.sessionId) player.sessionId = await this.rt.characters.openSession(player.id, principal.accountId, session.kind);
    if (principal.roles.includes("admin")) player.admin = true;
    this.upsertSchema("players", player.id);
    return player;
  }

  /**
   * The socket went away without a consented leave. A connection the server closed itself
   * (flood 4029, replaced 4009, revoked 4003, bad token 4001) or that is no longer the player's
   * live one gets no reconnection seat: `onLeave` follows at once.
   */
  override onDrop(client: Client) {
    const s = this.sessions.get(client.sessionId);
    if (!s) return;
    if (s.closedCode !== undefined || !this.rt.world.connectedPlayer(s.playerId, s.id)) return;
    // The seat's timer alone ends the window: when it expires, onLeave removes the player.
    this.rt.world.drop(s.playerId, s.id, true);
    this.allowReconnection(client, this.rt.world.reconnectSeconds).catch(() => undefined);
  }

  /**
   * A dropped SDK client is back within the window. Colyseus skips `onAuth` here, so the account's
   * block is checked again (the upgrade filter already refused a blocked address). Throwing refuses
   * the reconnection (the client gets an error).
   */
  override onReconnect(client: Client) {
    const s = this.sessions.get(client.sessionId);
    if (!s || !this.rt.world.player(s.playerId)) throw new ServerError(410, "that session is gone; join again");
    if (this.rt.blockedFor(s.accountId) > 0) throw new ServerError(429, "temporarily blocked");
    const previous = s.client;
    s.client = client;
    // Only the connection that dropped, while nobody else plays the character (a fresh join wins).
    if (!this.rt.world.reconnect(s.playerId, s)) {
      s.client = previous;
      throw new ServerError(409, "this character is playing on another connection; join again");
    }
    this.recordServerCloses(client, s);
  }

  /**
   * The client is gone for good (consented leave, no seat, seat expired, reconnection refused).
   * The player leaves and is saved only if this was its live or its dropped connection.
   */
  override async onLeave(client: Client) {
    const s = this.sessions.get(client.sessionId);
    if (!s) return;
    this.sessions.delete(client.sessionId);
    const live = this.rt.world.connectedPlayer(s.playerId, s.id) !== undefined;
    await this.rt.world.leave(s.playerId, live ? "left" : "reconnect_timeout", s.id);
  }

  // ------------------------------------------------------------------ events

  /** An SDK message: routed only while the session is its player's live connection. */
  private dispatch(s: Session, event: string, payload: unknown) {
    const player = this.rt.world.connectedPlayer(s.playerId, s.id);
    if (player) this.route(s, player, event, payload);
  }

  /**
   * Every event from either transport, from the player's live connection: rate limit, validate,
   * route. A bad payload changes nothing and never disconnects; the sender is told why.
   */
  private route(s: Session, player: Player, event: string, payload: unknown) {
    this.rt.metrics?.messageIn(event);
    if (s.flood.count()) return this.tooMany(s);
    // Own keys only: a client-chosen name like "constructor" must not find Object.prototype's members.
    const schema = Object.hasOwn(CLIENT_EVENTS, event) ? CLIENT_EVENTS[event as ClientEventName] : undefined;
    if (!schema) return this.rt.world.refuse(player, "UNKNOWN_EVENT", `Unknown event "${event.slice(0, 40)}".`);
    const parsed = schema.safeParse(payload ?? {});
    if (!parsed.success) {
      const where = parsed.error.issues[0];
      const text = `Invalid ${event}: ${where ? `${where.path.join(".") || "payload"} ${where.message}` : "bad payload"}`;
      if (event.startsWith("trade")) {
        const tradeId = (payload as { tradeId?: unknown })?.tradeId;
        player.send("tradeError", { ...(typeof tradeId === "string" ? { tradeId } : {}), code: "INVALID_REQUEST", message: text });
      } else this.rt.world.refuse(player, "INVALID_PAYLOAD", text);
      return;
    }
    void this.rt.handle(player, event as ClientEventName, parsed.data).catch((e) => {
      this.rt.logger.error({ err: e, event, playerId: player.id }, "event handler failed");
    });
  }

  private tooMany(s: Session) {
    this.rt.metrics?.floodDrops.inc();
    if (!s.flood.shouldClose()) return;
    this.rt.block(s.accountId, s.remoteAddress);
    s.close(CLOSE_CODES.FLOOD, "message flood");
  }

  // ------------------------------------------------------------------ tick and sync

  private onTick() {
    const started = performance.now();
    const world = this.rt.world;
    world.step();
    this.state.tick = world.tick;
    this.syncSchema();
    for (const s of this.sessions.values()) {
      const p = world.connectedPlayer(s.playerId, s.id);
      if (!p) continue;
      if (s.kind === "sdk") this.refreshView(s, p);
      else this.sendWorldUpdate(s, p, false);
    }
    this.broadcastPatch();
    this.rt.metrics?.tick((performance.now() - started) / 1000);
  }

  /** Copy the world's public state into schema objects (unchanged values send nothing). */
  private syncSchema() {
    const world = this.rt.world;
    const live: Record<Kind, Iterable<string>> = {
      players: world.players.keys(),
      npcs: world.npcs.keys(),
      resources: world.resources.keys(),
      groundItems: world.groundItems.keys(),
    };
    for (const kind of KINDS) {
      const seen = new Set<string>();
      for (const id of live[kind]) {
        seen.add(id);
        this.upsertSchema(kind, id);
      }
      for (const id of [...this.schemaOf[kind].keys()]) if (!seen.has(id)) this.removeSchema(kind, id);
    }
  }

  private upsertSchema(kind: Kind, id: string) {
    const view = this.rt.world.publicView(kind, id);
    if (!view) return;
    let obj = this.schemaOf[kind].get(id) as Record<string, unknown> | undefined;
    if (!obj) {
      obj = new SCHEMA[kind]() as unknown as Record<string, unknown>;
      Object.assign(obj, view);
      this.schemaOf[kind].set(id, obj as never);
      (this.state[kind] as unknown as Map<string, unknown>).set(id, obj);
      return;
    }
    for (const [k, v] of Object.entries(view)) if (obj[k] !== v) obj[k] = v;
  }

  private removeSchema(kind: Kind, id: string) {
    const obj = this.schemaOf[kind].get(id);
    if (!obj) return;
    for (const s of this.sessions.values()) if (s.client?.view?.has(obj)) s.client.view.remove(obj);
    this.schemaOf[kind].delete(id);
    (this.state[kind] as unknown as Map<string, unknown>).delete(id);
  }

  /** Keep an SDK client's StateView equal to what its player can see. */
  private refreshView(s: Session, p: Player) {
    const view = s.client?.view;
    if (!view) return;
    const next = this.rt.world.visibleFor(p, s.spare);
    const prev = s.visible;
    for (const kind of KINDS) {
      for (const id of next[kind]) {
        if (prev?.[kind].has(id)) continue;
        const obj = this.schemaOf[kind].get(id);
        if (obj) view.add(obj);
      }
      if (prev)
        for (const id of prev[kind]) {
          if (next[kind].has(id)) continue;
          const obj = this.schemaOf[kind].get(id);
          if (obj && view.has(obj)) view.remove(obj);
        }
    }
    s.spare = prev;
    s.visible = next;
  }

  /** Send a plain-WebSocket client the changes in what it sees (`world:update`). */
  private sendWorldUpdate(s: Session, p: Player, full: boolean) {
    const world = this.rt.world;
    const next = world.visibleFor(p);
    const update: Record<string, unknown> = { tick: world.tick };
    let changed = full;
    for (const kind of KINDS) {
      const sent = s.sent![kind];
      const delta: Record<string, unknown> = {};
      for (const id of next[kind]) {
        const view = world.publicView(kind, id);
        if (!view) continue;
        const before = sent.get(id);
        if (!before) {
          delta[id] = view;
          sent.set(id, { ...view });
          continue;
        }
        const fields: Record<string, unknown> = {};
        let any = false;
        for (const [k, v] of Object.entries(view))
          if (before[k] !== v) {
            fields[k] = v;
            before[k] = v;
            any = true;
          }
        if (any) delta[id] = fields;
      }
      for (const id of [...sent.keys()])
        if (!next[kind].has(id)) {
          delta[id] = null;
          sent.delete(id);
        }
      if (Object.keys(delta).length > 0) changed = true;
      update[kind] = delta;
    }
    if (changed) s.send("world:update", update);
  }

  /** Sessions by player id (trade routing, tests). */
  sessionOf(playerId: string): Session | undefined {
    for (const s of this.sessions.values()) if (s.playerId === playerId) return s;
    return undefined;
  }
}

/** A world refusal (`WorldError`) as the Colyseus error the matchmaker and the SDK expect. */
function asServerError(e: unknown): never {
  throw e instanceof WorldError ? new ServerError(e.status, e.message) : e;
}
