/**
 * The bot of the world benchmark (`bench-world.ts`, run by `bot-worker.ts`): a plain Colyseus SDK
 * client that only ever `join`s the room named `world` that the server created. Against the game it
 * joins with a server token (its character was made up front, or is made by the join); against the
 * bare baseline (`loadtest/baseline/server.ts`) it has no token and asks for its home tile in the
 * join options. Against the game, a bot whose home is not the spawn goes there with admin `/tp`.
 *
 * Every bot counts the bytes and frames it receives (WebSocket payloads). Only bots that need the
 * state (the probes' observers, or all with `decode: true`) decode it: a bot that does not throws
 * away state frames unread, so the bots' CPU stays low beside the server's on a small machine.
 *
 * Roles: a `wander` bot runs to a random free tile within `roam` tiles of home (or, drifting, of
 * where it stands: `standingAt`) once every `moveEveryMs`; an `idle` bot joins and stays; an `observer` stands still and a `mover` walks a
 * tile or two next to it: together they are a probe pair, timing a move until another client sees
 * it (probe-pair.ts).
 */
import { Client, type Room } from "@colyseus/sdk";
import type { GameContent } from "../src/content/load.js";
import { RUN_TILES_PER_TICK } from "../src/domain/movement.js";
import { CLIENT_EVENTS } from "../src/events.js";
import { withTimeout } from "./lib/cli.js";

export interface Tile {
  x: number;
  z: number;
}

export type TargetKind = "game" | "baseline";

export interface BotTarget {
  kind: TargetKind;
  /** The SDK endpoint (`http://host:port/ws` for the game, `http://host:port` for the baseline). */
  endpoint: string;
  adminCode?: string;
  /** Game only: the world to join (the join option `{ world }`, docs/operations.md "Worlds"); none: the server's default world. */
  world?: number;
}

/** How a join ended (docs/benchmarks.md "Benchmarks", failures by kind). */
export interface JoinOutcome {
  /** `joined`; `busy` (503 / SERVER_BUSY: told to retry); `refused` (a matchmaking error: another 4xx, or Colyseus's 520–525 but 523); anything else is a failure. */
  kind: "joined" | "busy" | "refused" | "failed";
  /** Finer kind for the table: `joined`, `503`, `http-429`, `mm-524`, `5xx-500`, `close-4002`, `timeout`, `net-ECONNRESET`, `ws-error`… */
  detail: string;
  startedAt: number;
  endedAt: number;
  message?: string;
}

/** Payloads checked against the shared event table, as the server will. */
function payload<E extends keyof typeof CLIENT_EVENTS>(event: E, data: unknown) {
  return CLIENT_EVENTS[event].parse(data);
}

const STATE = 14;
const STATE_PATCH = 15;

/** Sort a failed join into a kind. */
export function classifyJoinError(e: unknown): Pick<JoinOutcome, "kind" | "detail" | "message"> {
  const err = e as { code?: unknown; message?: string; name?: string };
  const message = String(err?.message ?? e).slice(0, 200);
  if (message.startsWith("join took longer")) return { kind: "failed", detail: "timeout", message };
  const code = err?.code;
  if (typeof code === "string") return { kind: "failed", detail: `net-${code}`, message };
  // The SDK reports a room socket that failed to open (an `error` event: no code, no reason) as a ServerError without either.
  if (code === undefined && err?.name === "ServerError" && !err.message) return { kind: "failed", detail: "ws-error", message: "room socket error (no code)" };
  if (typeof code !== "number") return { kind: "failed", detail: "other", message };
  if (code === 503 || /SERVER_BUSY/.test(message)) return { kind: "busy", detail: "503", message };
  if (code >= 400 && code < 500) return { kind: "refused", detail: `http-${code}`, message };
  if (code >= 520 && code <= 525 && code !== 523) return { kind: "refused", detail: `mm-${code}`, message };
  if (code >= 500 && code < 600) return { kind: "failed", detail: `5xx-${code}`, message };
  if (code >= 1000) return { kind: "failed", detail: `close-${code}`, message };
  return { kind: "failed", detail: `code-${code}`, message };
}

export interface BotCounters {
  bytes: number;
  frames: number;
  moves: number;
}

export class BenchBot {
  room: Room | undefined;
  /** The bot's own id in the state's players map (from `player:sync`). */
  id = "";
  /** Close code once the room is gone (not set by `leave`). */
  closedCode: number | undefined;
  counters: BotCounters = { bytes: 0, frames: 0, moves: 0 };
  onStateChange: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private systemWaiters: { re: RegExp; resolve: () => void }[] = [];
  private leaving = false;
  private idWaiters: (() => void)[] = [];

  constructor(
    readonly target: BotTarget,
    readonly home: Tile,
    /** Server token (game only). */
    readonly token: string | undefined,
    /** Decode the state (observers). */
    readonly decode: boolean,
  ) {}

  /** Join the world; never throws (the outcome says how it went). */
  async join(timeoutMs: number): Promise<JoinOutcome> {
    const startedAt = Date.now();
    const client = new Client(this.target.endpoint);
    if (this.token) client.auth.token = this.token;
    const options = this.target.kind === "baseline" ? { x: this.home.x, z: this.home.z } : this.target.world === undefined ? {} : { world: this.target.world };
    const joining = client.join("world", options);
    try {
      const room = await withTimeout(joining, timeoutMs, "join");
      this.attach(room);
      return { kind: "joined", detail: "joined", startedAt, endedAt: Date.now() };
    } catch (e) {
      // A join that answers after its time is up is left at once.
      joining.then(
        (r) => r.leave(true).catch(() => undefined),
        () => undefined,
      );
      return { ...classifyJoinError(e), startedAt, endedAt: Date.now() };
    }
  }

  private attach(room: Room) {
    this.room = room;
    room.reconnection.enabled = false;
    // Count every payload from now on (the transport looks the handler up on each message); state
    // frames of a bot that does not decode are dropped unread.
    const events = room.connection.events;
    const onmessage = events.onmessage!;
    events.onmessage = (ev: MessageEvent) => {
      const data = ev.data as ArrayBuffer | string;
      this.counters.frames++;
      if (typeof data === "string") {
        this.counters.bytes += Buffer.byteLength(data);
        return onmessage(ev);
      }
      this.counters.bytes += data.byteLength;
      if (!this.decode && data.byteLength > 0) {
        const code = new Uint8Array(data, 0, 1)[0]! & 0x1f;
        if (code === STATE || code === STATE_PATCH) return;
      }
      onmessage(ev);
    };
    room.onMessage("player:sync", (s: { id: string }) => {
      if (this.id || !s?.id) return;
      this.id = s.id;
      for (const w of this.idWaiters.splice(0)) w();
    });
    room.onMessage("chat:message", (m: { type: string; text: string }) => {
      if (m?.type !== "system") return;
      for (const w of [...this.systemWaiters]) {
        if (!w.re.test(m.text)) continue;
        this.systemWaiters.splice(this.systemWaiters.indexOf(w), 1);
        w.resolve();
      }
    });
    room.onMessage("*", () => undefined);
    if (this.decode) room.onStateChange(() => this.onStateChange?.());
    room.onLeave((code: number) => {
      if (!this.leaving) this.closedCode = code;
      this.stop();
    });
  }

  /** Resolves once the bot knows its id (`player:sync`). */
  whenIdentified(timeoutMs: number): Promise<void> {
    if (this.id) return Promise.resolve();
    return withTimeout(new Promise<void>((r) => this.idWaiters.push(r)), timeoutMs, "player:sync");
  }

  /** The player `id` as this bot's state shows it (decoding bots only). */
  seen(id: string): { x: number; z: number; moving: boolean } | undefined {
    return this.room?.state?.players?.get(id);
  }

  /** Game only: become admin and teleport home (bots that do not start at the spawn). */
  async goHome(timeoutMs: number): Promise<void> {
    if (this.target.kind !== "game") return;
    await this.command(`/admin ${this.target.adminCode}`, /Admin mode enabled/, timeoutMs);
    await this.command(`/tp ${this.home.x} ${this.home.z}`, /Teleported/, timeoutMs);
  }

  private command(text: string, ok: RegExp, timeoutMs: number): Promise<void> {
    const done = new Promise<void>((resolve) => this.systemWaiters.push({ re: ok, resolve }));
    this.room!.send("player:chat", payload("player:chat", { text }));
    return withTimeout(done, timeoutMs, text.split(" ")[0]!);
  }

  move(to: Tile) {
    if (!this.room || this.closedCode !== undefined) return;
    this.room.send("player:move", payload("player:move", { x: to.x, z: to.z, run: true }));
    this.counters.moves++;
  }

  chat(text: string) {
    if (!this.room || this.closedCode !== undefined) return;
    this.room.send("player:chat", payload("player:chat", { text }));
  }

  /** Run `fn` every `everyMs`, first after a random part of it (so bots do not beat in step). */
  every(everyMs: number, rng: () => number, fn: () => void) {
    this.stop();
    this.timer = setTimeout(
      () => {
        fn();
        this.timer = setInterval(fn, everyMs);
      },
      Math.floor(rng() * everyMs),
    );
  }

  stop() {
    if (this.timer) {
      clearTimeout(this.timer);
      clearInterval(this.timer);
    }
    this.timer = undefined;
  }

  takeCounters(): BotCounters {
    const c = this.counters;
    this.counters = { bytes: 0, frames: 0, moves: 0 };
    return c;
  }

  async leave(): Promise<void> {
    this.stop();
    this.leaving = true;
    if (this.room && this.closedCode === undefined) await withTimeout(this.room.leave(true), 5_000, "leave").catch(() => this.room?.connection.close());
  }
}

/** A random free tile within `roam` tiles (Chebyshev) of `home`, other than `not`. */
export function randomTileNear(
  home: Tile,
  roam: number,
  content: Pick<GameContent, "isBlocked" | "inBounds">,
  rng: () => number,
  not?: Tile,
): Tile | undefined {
  for (let attempt = 0; attempt < 20; attempt++) {
    const x = home.x + Math.floor(rng() * (2 * roam + 1)) - roam;
    const z = home.z + Math.floor(rng() * (2 * roam + 1)) - roam;
    if (not && x === not.x && z === not.z) continue;
    if (!content.inBounds(x, z) || content.isBlocked(x, z)) continue;
    return { x, z };
  }
  return undefined;
}

/**
 * Where a bot that ran from `from` towards `to` `elapsedMs` ago stands now, reckoned without the
 * state (a walking bot does not decode it): `RUN_TILES_PER_TICK` tiles a tick along the straight
 * line (diagonal steps first, as a path on the tile grid goes), stopping at `to`.
 */
export function standingAt(from: Tile, to: Tile, elapsedMs: number, tickMs: number): Tile {
  const steps = Math.max(0, Math.floor(elapsedMs / tickMs)) * RUN_TILES_PER_TICK;
  const toward = (a: number, b: number) => a + Math.sign(b - a) * Math.min(steps, Math.abs(b - a));
  return { x: toward(from.x, to.x), z: toward(from.z, to.z) };
}
