/**
 * The wandering bot of the world benchmark: a plain Colyseus SDK client that joins the world,
 * teleports to its home tile (admin `/tp`, so bots spread over the map instead of piling up in the
 * starter town), then once a second runs to a random tile at most 2 tiles away (one tick of running)
 * within `roam` tiles of home, and now and then says something in public chat.
 *
 * It measures what a player would notice: bytes received (WebSocket payloads) and the latency from
 * sending `player:move` to the first state patch that shows its own position changed.
 */
import { randomUUID } from "node:crypto";
import { Client, type Room } from "@colyseus/sdk";
import { signServerToken } from "../src/auth/tokens.js";
import type { GameContent } from "../src/content/load.js";
import { CLIENT_EVENTS } from "../src/events.js";

export interface Tile {
  x: number;
  z: number;
}

export interface BotOptions {
  url: string;
  jwtSecret: string;
  adminCode: string;
  home: Tile;
  /** Tiles around home the bot wanders in. */
  roam: number;
  moveEveryMs: number;
  /** Chance per move tick to also send a chat line. */
  chatChance: number;
  content: Pick<GameContent, "isBlocked" | "inBounds">;
  rng: () => number;
  /** Give up on a join step after this long. */
  timeoutMs: number;
}

/** Counters a bot keeps between two `reset()` calls. */
export interface BotStats {
  bytes: number;
  frames: number;
  moves: number;
  chats: number;
  latencies: number[];
  /** Moves whose effect never showed within 5 s. */
  lost: number;
}

const LOST_AFTER_MS = 5_000;

/** Payloads checked against the shared event table, as the server will. */
function payload<E extends keyof typeof CLIENT_EVENTS>(event: E, data: unknown) {
  return CLIENT_EVENTS[event].parse(data);
}

export class WanderBot {
  id = "";
  client: Client | undefined;
  room: Room<any, any> | undefined;
  closedCode: number | undefined;
  stats: BotStats = WanderBot.emptyStats();
  private timer: NodeJS.Timeout | undefined;
  private pending: { from: Tile; at: number } | undefined;
  private systemWaiters: { re: RegExp; resolve: () => void }[] = [];

  constructor(readonly opts: BotOptions) {}

  static emptyStats(): BotStats {
    return { bytes: 0, frames: 0, moves: 0, chats: 0, latencies: [], lost: 0 };
  }

  /** Join, become admin, go home. Rejects on any step taking longer than `timeoutMs`. */
  async connect(): Promise<void> {
    const { token } = signServerToken(this.opts.jwtSecret, { sub: randomUUID() });
    this.client = new Client(`${this.opts.url}/ws`);
    this.client.auth.token = token;
    const room = await withTimeout(this.client.join("world", {}), this.opts.timeoutMs, "join");
    this.room = room;
    room.reconnection.enabled = false;
    // Count every payload from now on (the transport looks the handler up on each message).
    const events = room.connection.events;
    const onmessage = events.onmessage!;
    events.onmessage = (ev: MessageEvent) => {
      const data = ev.data as ArrayBuffer | string;
      this.stats.bytes += typeof data === "string" ? Buffer.byteLength(data) : data.byteLength;
      this.stats.frames++;
      onmessage(ev);
    };
    room.onMessage("player:sync", (s: { id: string }) => {
      this.id ||= s.id;
    });
    room.onMessage("chat:message", (m: { type: string; text: string }) => {
      if (m.type !== "system") return;
      for (const w of [...this.systemWaiters]) if (w.re.test(m.text)) this.systemWaiters.splice(this.systemWaiters.indexOf(w), 1) && w.resolve();
    });
    room.onMessage("*", () => undefined);
    room.onStateChange(() => this.onPatch());
    room.onLeave((code: number) => {
      this.closedCode = code;
      this.stop();
    });
    await this.command(`/admin ${this.opts.adminCode}`, /Admin mode enabled/);
    await this.command(`/tp ${this.opts.home.x} ${this.opts.home.z}`, /Teleported/);
  }

  private command(text: string, ok: RegExp): Promise<void> {
    const done = new Promise<void>((resolve) => this.systemWaiters.push({ re: ok, resolve }));
    this.room!.send("player:chat", payload("player:chat", { text }));
    return withTimeout(done, this.opts.timeoutMs, text.split(" ")[0]!);
  }

  private get me(): { x: number; z: number; moving: boolean } | undefined {
    return this.room?.state?.players?.get(this.id);
  }

  /** After each patch: did the pending move show up? */
  private onPatch() {
    const p = this.pending;
    const me = this.me;
    if (!p || !me) return;
    if (me.x !== p.from.x || me.z !== p.from.z) {
      this.stats.latencies.push(performance.now() - p.at);
      this.pending = undefined;
    }
  }

  /** Start wandering (first move after a random part of the interval, so bots do not beat in step). */
  start() {
    if (this.timer || !this.room) return;
    const first = setTimeout(() => {
      this.tick();
      this.timer = setInterval(() => this.tick(), this.opts.moveEveryMs);
    }, Math.floor(this.opts.rng() * this.opts.moveEveryMs));
    this.timer = first;
  }

  private tick() {
    const me = this.me;
    if (!me || this.closedCode !== undefined) return;
    if (this.pending) {
      if (performance.now() - this.pending.at < LOST_AFTER_MS) return; // still waiting to see the last move
      this.stats.lost++;
      this.pending = undefined;
    }
    const { home, roam } = this.opts;
    if (Math.max(Math.abs(me.x - home.x), Math.abs(me.z - home.z)) > roam + 2) {
      // Died and respawned, or pushed away: go home again.
      this.room!.send("player:chat", payload("player:chat", { text: `/tp ${home.x} ${home.z}` }));
      return;
    }
    const target = this.pickTarget(me);
    if (target) {
      this.pending = me.moving ? undefined : { from: { x: me.x, z: me.z }, at: performance.now() };
      this.room!.send("player:move", payload("player:move", { x: target.x, z: target.z, run: true }));
      this.stats.moves++;
    }
    if (this.opts.rng() < this.opts.chatChance) {
      this.room!.send("player:chat", payload("player:chat", { text: `hello from ${this.id.slice(0, 8)}` }));
      this.stats.chats++;
    }
  }

  private pickTarget(me: Tile): Tile | undefined {
    const { home, roam, content, rng } = this.opts;
    for (let attempt = 0; attempt < 12; attempt++) {
      const x = me.x + Math.floor(rng() * 5) - 2;
      const z = me.z + Math.floor(rng() * 5) - 2;
      if (x === me.x && z === me.z) continue;
      if (Math.abs(x - home.x) > roam || Math.abs(z - home.z) > roam) continue;
      if (!content.inBounds(x, z) || content.isBlocked(x, z)) continue;
      return { x, z };
    }
    return undefined;
  }

  /** Take the counters and start new ones. */
  takeStats(): BotStats {
    const s = this.stats;
    this.stats = WanderBot.emptyStats();
    this.pending = undefined;
    return s;
  }

  stop() {
    if (this.timer) {
      clearTimeout(this.timer);
      clearInterval(this.timer);
    }
    this.timer = undefined;
  }

  async leave(): Promise<void> {
    this.stop();
    if (this.room && this.closedCode === undefined) await withTimeout(this.room.leave(true), 5_000, "leave").catch(() => undefined);
  }
}

/** Reject when `p` takes longer than `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** A small seeded generator (mulberry32) so runs place bots the same way. */
export function seededRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
