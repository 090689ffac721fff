/**
 * The game clients of the tests (the one client harness): an SDK player (Colyseus `Client` + room)
 * and a raw-WebSocket player (the `/ws` JSON adapter). Both keep a log of every event they
 * received, so a test can wait for "the next message matching a predicate" without racing the
 * server, and both wait for state conditions by re-checking on every patch or update — never by
 * sleeping a guessed time. `sdkPlayer` / `jsonPlayer` give either one behind the same event-first
 * shape (`TestPlayer`: `next`, `mark`, `sync`), for tests that run on both transports alike.
 */
import { Client, type Room } from "@colyseus/sdk";
import WebSocket from "ws";
import { serverToken, type TokenClaims } from "../../loadtest/lib/tokens.js";
import type { ChatMessage } from "../../src/events.js";
import { frameText } from "../../src/net/adapter.js";
import type { GameServer } from "../../src/server/server.js";
import { TEST_ENV } from "./server.js";

/** Default time a wait may take before the test fails with a description of what was missing. */
export const WAIT_MS = 10_000;

/** A received event. */
export interface Received {
  type: string;
  data: any;
  at: number;
}

/** A server token of the test servers for an account (a new random account unless given). */
export function tokenFor(accountId?: string, extra: TokenClaims = {}) {
  return serverToken(TEST_ENV.JWT_SECRET!, accountId, extra);
}

/**
 * A log of received events with predicate waits. `mark()` returns a position; `waitFor` looks at
 * events from `since` (default: the whole log) and then at new ones until the timeout.
 */
export class EventLog {
  readonly events: Received[] = [];
  private waiters = new Set<{ check: (e: Received, index: number) => boolean }>();
  private closedWith: { code: number; reason: string } | undefined;
  private closeWaiters: ((c: { code: number; reason: string }) => void)[] = [];

  push(type: string, data: unknown) {
    const e = { type, data, at: performance.now() };
    this.events.push(e);
    const index = this.events.length - 1;
    for (const w of [...this.waiters]) if (w.check(e, index)) this.waiters.delete(w);
  }

  /** Position of the next event to arrive. */
  mark(): number {
    return this.events.length;
  }

  /** Events of a type (from `since`). */
  all<T = any>(type: string, since = 0): T[] {
    return this.events
      .slice(since)
      .filter((e) => e.type === type)
      .map((e) => e.data as T);
  }

  /** The latest event of a type. */
  last<T = any>(type: string): T | undefined {
    for (let i = this.events.length - 1; i >= 0; i--) if (this.events[i]!.type === type) return this.events[i]!.data as T;
    return undefined;
  }

  /** Resolve with the first event of `type` at or after `since` for which `pred` holds. */
  waitFor<T = any>(type: string, pred: (data: T) => boolean = () => true, opts: { since?: number; timeoutMs?: number } = {}): Promise<T> {
    const since = opts.since ?? 0;
    for (let i = since; i < this.events.length; i++) {
      const e = this.events[i]!;
      if (e.type === type && pred(e.data as T)) return Promise.resolve(e.data as T);
    }
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        check: (e: Received, index: number) => {
          if (index < since || e.type !== type || !pred(e.data as T)) return false;
          clearTimeout(timer);
          resolve(e.data as T);
          return true;
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        const recent = this.events.slice(-8).map((e) => `${e.type} ${JSON.stringify(e.data).slice(0, 160)}`);
        reject(new Error(`timed out waiting for ${type} matching ${pred.toString().slice(0, 200)}; recent:\n  ${recent.join("\n  ")}`));
      }, opts.timeoutMs ?? WAIT_MS);
      this.waiters.add(waiter);
    });
  }

  /** Resolve when no event of `type` matching `pred` has arrived before `until` resolves. */
  async expectNone(type: string, pred: (data: any) => boolean, since: number, until: Promise<unknown>): Promise<void> {
    await until;
    const hit = this.all(type, since).find(pred);
    if (hit) throw new Error(`unexpected ${type}: ${JSON.stringify(hit)}`);
  }

  /** A system chat line matching `re` (from `since`). */
  system(re: RegExp, since = 0, timeoutMs?: number): Promise<ChatMessage> {
    return this.waitFor<ChatMessage>("chat:message", (m) => m.type === "system" && re.test(m.text), { since, timeoutMs });
  }

  closed(code: number, reason: string) {
    this.closedWith ??= { code, reason };
    for (const w of this.closeWaiters.splice(0)) w(this.closedWith);
  }

  /** Resolves with the close code and reason when the connection closes. */
  waitClose(timeoutMs = WAIT_MS): Promise<{ code: number; reason: string }> {
    if (this.closedWith) return Promise.resolve(this.closedWith);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error("timed out waiting for the connection to close")), timeoutMs);
      this.closeWaiters.push((c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
  }

  get isClosed() {
    return this.closedWith !== undefined;
  }

  /** The connection was replaced by a new one (reconnection): forget the close. */
  reopen() {
    this.closedWith = undefined;
  }
}

/**
 * Poll an asynchronous check (a database row, a server-side fact) until it returns a value other
 * than `undefined`/`false`, at most `timeoutMs`. For facts that produce no event.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = WAIT_MS,
  everyMs = 25,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined && v !== false) return v as T;
    } catch (e) {
      last = e;
    }
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ""}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** What every player helper offers. */
interface PlayerLike {
  readonly log: EventLog;
  readonly id: string;
  send(event: string, data?: unknown): void;
}

/** Send `/admin <code>` and wait for the confirmation. */
export async function becomeAdmin(p: PlayerLike): Promise<void> {
  const m = p.log.mark();
  p.send("player:chat", { text: `/admin ${TEST_ENV.ADMIN_CODE}` });
  await p.log.system(/Admin mode enabled/, m);
}

/** Admin command, waiting for its confirmation line (`Gave`, `Teleported`, `Coins set`). */
export async function admin(p: PlayerLike, command: string): Promise<ChatMessage> {
  const m = p.log.mark();
  p.send("player:chat", { text: command });
  const ok = /^\/give/.test(command) ? /^Gave / : /^\/tp/.test(command) ? /^Teleported/ : /^Coins set/;
  const reply = await p.log.waitFor<ChatMessage>("chat:message", (c) => c.type === "system", { since: m });
  if (!ok.test(reply.text)) throw new Error(`${command} failed: ${reply.text}`);
  return reply;
}

/** The latest `player:sync` of a player. */
export function lastSync(p: PlayerLike): any {
  const s = p.log.last("player:sync");
  if (!s) throw new Error("no player:sync yet");
  return s;
}

/** Quantity of an item in the latest synced inventory. */
export function invCount(p: PlayerLike, itemId: string): number {
  return (lastSync(p).inventory as { itemId: string; quantity: number }[]).filter((s) => s.itemId === itemId).reduce((n, s) => n + s.quantity, 0);
}

// ------------------------------------------------------------------ SDK

export interface SdkJoinOptions {
  accountId?: string;
  token?: string;
  characterId?: string;
  /** The `world` join option (docs/operations.md "Worlds"). */
  world?: number;
  /** Keep the SDK's automatic reconnection (off by default so tests control it). */
  autoReconnect?: boolean;
}

/** An SDK client joined to the world room. */
export class SdkPlayer implements PlayerLike {
  readonly log = new EventLog();
  id = "";
  private stateWaiters = new Set<() => void>();

  constructor(
    readonly client: Client,
    public room: Room,
    readonly accountId: string,
    readonly token: string,
  ) {
    this.attach(room);
  }

  /** Join the world with a fresh (or given) account and wait for the first `player:sync`. */
  static async join(server: Pick<GameServer, "url">, opts: SdkJoinOptions = {}): Promise<SdkPlayer> {
    const t = opts.token ? { token: opts.token, accountId: opts.accountId ?? "" } : tokenFor(opts.accountId);
    const client = new Client(`${server.url}/ws`);
    client.auth.token = t.token;
    const room = await client.join("world", {
      ...(opts.characterId ? { characterId: opts.characterId } : {}),
      ...(opts.world !== undefined ? { world: opts.world } : {}),
    });
    if (!opts.autoReconnect) room.reconnection.enabled = false;
    const p = new SdkPlayer(client, room, t.accountId, t.token);
    const sync = await p.log.waitFor("player:sync");
    p.id = sync.id;
    return p;
  }

  /** Listen to a (new) room object: every message into the log, every patch re-checks waits. */
  attach(room: Room) {
    this.room = room;
    this.log.reopen();
    room.onMessage("*", (type: string | number, data: unknown) => this.log.push(String(type), data));
    room.onStateChange(() => {
      for (const w of [...this.stateWaiters]) w();
    });
    room.onLeave((code: number, reason?: string) => this.log.closed(code, reason ?? ""));
  }

  get state(): any {
    return this.room.state;
  }

  send(event: string, data: unknown = {}) {
    this.room.send(event, data);
  }

  /** My public state entry, if I can see myself yet. */
  get me(): any {
    return this.state?.players?.get(this.id);
  }

  /** Resolve when `pred(state)` holds, re-checking after every patch. */
  waitState(pred: (state: any) => boolean, what = "state condition", timeoutMs = WAIT_MS): Promise<void> {
    const check = () => {
      try {
        return this.room.state !== undefined && pred(this.room.state);
      } catch {
        return false;
      }
    };
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const w = () => {
        if (!check()) return;
        this.stateWaiters.delete(w);
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        this.stateWaiters.delete(w);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      this.stateWaiters.add(w);
    });
  }

  /** Wait until my synced position is (x, z). */
  waitAt(x: number, z: number, timeoutMs = WAIT_MS) {
    return this.waitState((s) => s.players.get(this.id)?.x === x && s.players.get(this.id)?.z === z, `${this.id} at (${x}, ${z})`, timeoutMs);
  }

  /** Leave politely (consented) and wait for the room to close. */
  async leave(): Promise<void> {
    if (this.log.isClosed) return;
    await this.room.leave(true).catch(() => undefined);
  }
}

// ------------------------------------------------------------------ raw WebSocket

export interface RawJoinOptions {
  accountId?: string;
  token?: string;
  /** Send the token as `Authorization: Bearer` instead of the query string. */
  header?: boolean;
  characterId?: string;
  /** `/ws?world=N` (docs/operations.md "Worlds"). */
  world?: number | string;
  /** Do not wait for the first player:sync (for refusal tests). */
  noWait?: boolean;
  /** Extra headers on the upgrade request (e.g. X-Forwarded-For). */
  headers?: Record<string, string>;
}

/** A plain-WebSocket client of the `/ws` adapter. */
export class RawPlayer implements PlayerLike {
  readonly log = new EventLog();
  id = "";
  /** What this client has assembled from `world:update` deltas. */
  readonly world: Record<string, Map<string, Record<string, unknown>>> = {
    players: new Map(),
    npcs: new Map(),
    resources: new Map(),
    groundItems: new Map(),
  };
  /** Raw text frames received, in order. */
  readonly frames: string[] = [];

  private constructor(
    readonly ws: WebSocket,
    readonly accountId: string,
    readonly token: string | undefined,
  ) {
    ws.on("message", (data) => {
      const text = frameText(data);
      this.frames.push(text);
      let frame: { event: string; data: unknown };
      try {
        frame = JSON.parse(text);
      } catch {
        this.log.push("<non-json>", text);
        return;
      }
      if (frame.event === "world:update") this.apply(frame.data as Record<string, unknown>);
      this.log.push(frame.event, frame.data);
    });
    ws.on("close", (code, reason) => this.log.closed(code, reason.toString()));
    ws.on("error", () => undefined);
  }

  static async connect(server: Pick<GameServer, "url">, opts: RawJoinOptions = {}): Promise<RawPlayer> {
    const t = opts.token !== undefined ? { token: opts.token, accountId: opts.accountId ?? "" } : tokenFor(opts.accountId);
    const url = new URL(server.url.replace(/^http/, "ws") + "/ws");
    if (!opts.header && t.token) url.searchParams.set("token", t.token);
    if (opts.characterId) url.searchParams.set("characterId", opts.characterId);
    if (opts.world !== undefined) url.searchParams.set("world", String(opts.world));
    const ws = new WebSocket(url, { headers: { ...opts.headers, ...(opts.header ? { authorization: `Bearer ${t.token}` } : {}) } });
    const p = new RawPlayer(ws, t.accountId, t.token);
    if (opts.noWait) return p;
    const sync = await Promise.race([
      p.log.waitFor("player:sync"),
      p.log.waitClose().then((c) => {
        throw new Error(`closed before player:sync: ${c.code} ${c.reason}`);
      }),
    ]);
    p.id = sync.id;
    return p;
  }

  private apply(update: Record<string, unknown>) {
    for (const kind of Object.keys(this.world)) {
      const delta = update[kind] as Record<string, Record<string, unknown> | null> | undefined;
      if (!delta) continue;
      for (const [id, fields] of Object.entries(delta)) {
        if (fields === null) this.world[kind]!.delete(id);
        else this.world[kind]!.set(id, { ...(this.world[kind]!.get(id) ?? {}), ...fields });
      }
    }
  }

  send(event: string, data: unknown = {}) {
    this.ws.send(JSON.stringify({ event, data }));
  }

  sendText(text: string) {
    this.ws.send(text);
  }

  /** Resolve when `pred(world)` holds, re-checking after every `world:update`. */
  async waitWorld(pred: (w: RawPlayer["world"]) => boolean, what = "world condition", timeoutMs = WAIT_MS): Promise<void> {
    if (pred(this.world)) return;
    await this.log
      .waitFor("world:update", () => pred(this.world), { since: this.log.mark(), timeoutMs })
      .catch((e) => {
        throw new Error(`timed out waiting for ${what}: ${(e as Error).message.split("\n")[0]}`);
      });
  }

  async close(): Promise<void> {
    if (this.log.isClosed) return;
    this.ws.close(1000, "bye");
    await this.log.waitClose().catch(() => undefined);
  }
}

/** Close every client given, ignoring failures (for `afterEach`). */
export async function closeAll(players: (SdkPlayer | RawPlayer | undefined)[]): Promise<void> {
  await Promise.all(players.filter((p) => p !== undefined).map((p) => (p instanceof RawPlayer ? p.close() : p.leave())));
}

// ------------------------------------------------------------------ either transport, one shape

/** A received event as `TestPlayer.received` lists it. */
export interface ReceivedEvent {
  event: string;
  data: any;
  seq: number;
}

/** An SDK or `/ws` player behind one event-first shape (`sdkPlayer`, `jsonPlayer`). */
export interface TestPlayer {
  id: string;
  accountId: string;
  token: string;
  kind: "sdk" | "json";
  room?: Room;
  ws?: WebSocket;
  /** Every event received so far, in order. */
  readonly received: ReceivedEvent[];
  send(event: string, data: unknown): void;
  /** The first event named `event` matching `pred` received at or after index `after` (default: any). */
  next(event: string, pred?: (data: any) => boolean, opts?: { after?: number; timeoutMs?: number }): Promise<any>;
  /** Index to pass as `after` to ignore everything received so far. */
  mark(): number;
  /** The last `player:sync`. */
  sync(): any;
  close(): Promise<void>;
}

function testPlayer(p: SdkPlayer | RawPlayer): TestPlayer {
  const log = p.log;
  return {
    id: p.id,
    accountId: p.accountId,
    token: p.token ?? "",
    kind: p instanceof SdkPlayer ? "sdk" : "json",
    room: p instanceof SdkPlayer ? p.room : undefined,
    ws: p instanceof RawPlayer ? p.ws : undefined,
    get received() {
      return log.events.map((e, seq) => ({ event: e.type, data: e.data, seq }));
    },
    send: (event, data) => p.send(event, data),
    next: (event, pred, opts = {}) => log.waitFor(event, pred, { since: opts.after, timeoutMs: opts.timeoutMs }),
    mark: () => log.mark(),
    sync: () => log.last("player:sync"),
    close: () => (p instanceof SdkPlayer ? p.leave() : p.close()),
  };
}

/** Join the world with the SDK (its automatic reconnection left on) and wait for the first `player:sync`. */
export async function sdkPlayer(
  server: Pick<GameServer, "url">,
  opts: { accountId?: string; token?: string; characterId?: string; world?: number } = {},
): Promise<TestPlayer> {
  return testPlayer(await SdkPlayer.join(server, { ...opts, world: opts.world || undefined, autoReconnect: true }));
}

/** Join the world over the plain WebSocket adapter and wait for the first `player:sync`. */
export async function jsonPlayer(
  server: Pick<GameServer, "url">,
  opts: { accountId?: string; token?: string; characterId?: string } = {},
): Promise<TestPlayer> {
  return testPlayer(await RawPlayer.connect(server, { ...opts, token: opts.token || undefined }));
}
