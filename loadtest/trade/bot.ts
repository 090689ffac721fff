/**
 * A trading bot: one player over the plain WebSocket (`/ws`, JSON frames) or the Colyseus SDK,
 * with event handlers (trade-once.ts plays a whole trade between two of them).
 *
 * Used by the benchmark (`loadtest/trade/bench.ts`) and by the invariant and crash tests.
 */
import { Client, type Room } from "@colyseus/sdk";
import WebSocket from "ws";

export type Handler = (data: any) => void;
export interface Slot {
  slot: number;
  itemId: string;
  quantity: number;
}

export interface BotOptions {
  /** Base HTTP URL of the server, e.g. http://127.0.0.1:5555 */
  url: string;
  token: string;
  transport?: "json" | "sdk";
}

/** Messages a bot sends per second at most (the server drops what exceeds 60 in a second). */
export const SEND_PER_SECOND = 50;

export class Bot {
  id = "";
  name = "";
  /** The last `player:sync`. */
  state: any;
  connected = false;
  /** The close code when the server closed the connection (not set by `close()`). */
  closedWith: number | undefined;
  readonly transport: "json" | "sdk";
  private ws: WebSocket | undefined;
  private room: Room | undefined;
  private client: Client | undefined;
  private readonly handlers = new Map<string, Set<Handler>>();

  private constructor(readonly opts: BotOptions) {
    this.transport = opts.transport ?? "json";
    this.on("player:sync", (d) => {
      this.state = d;
      this.id = d.id;
      this.name = d.name;
    });
  }

  /** Connect and wait for the first `player:sync`. */
  static async connect(opts: BotOptions): Promise<Bot> {
    const bot = new Bot(opts);
    await bot.reconnect();
    return bot;
  }

  /** (Re)open the connection and wait for `player:sync`. */
  async reconnect(): Promise<void> {
    const synced = this.wait("player:sync", () => true, 20_000);
    // Awaited below; if the connection fails first, its own error is the one reported.
    synced.catch(() => undefined);
    if (this.transport === "json") {
      const ws = new WebSocket(`${this.opts.url.replace(/^http/, "ws")}/ws?token=${encodeURIComponent(this.opts.token)}`);
      this.ws = ws;
      ws.on("message", (raw) => {
        let f: { event: string; data: unknown };
        try {
          // ws delivers a Buffer (its default binaryType).
          f = JSON.parse((raw as Buffer).toString());
        } catch {
          return;
        }
        this.emit(f.event, f.data);
      });
      ws.on("close", (code) => {
        if (this.ws === ws) {
          this.connected = false;
          this.closedWith = code;
        }
      });
      ws.on("error", () => undefined);
      await new Promise<void>((resolve, reject) => {
        ws.once("open", () => resolve());
        ws.once("error", reject);
      });
    } else {
      const client = new Client(`${this.opts.url}/ws`);
      client.auth.token = this.opts.token;
      this.client = client;
      // Clients may only join the world room the server created (docs/rooms.md "What a client may ask the matchmaker").
      this.attach(await client.join("world", {}));
    }
    this.connected = true;
    await synced;
  }

  private attach(room: Room) {
    this.room = room;
    room.onMessage("*", (type, data) => this.emit(String(type), data));
    room.onLeave((code) => {
      if (this.room === room) {
        this.connected = false;
        this.closedWith = code;
      }
    });
  }

  /**
   * SDK only: drop the connection without leaving (the player lingers) and come back with the
   * room's reconnection token, as the SDK does after a network cut. Waits for the next `player:sync`.
   */
  async resume(): Promise<void> {
    const room = this.room;
    if (!room || !this.client) throw new Error("resume needs a connected SDK bot");
    const token = room.reconnectionToken;
    this.connected = false;
    this.room = undefined;
    room.reconnection.enabled = false; // this bot reconnects itself, below
    await room.leave(false).catch(() => undefined);
    const synced = this.wait("player:sync", () => true, 20_000);
    // Awaited below; if the connection fails first, its own error is the one reported.
    synced.catch(() => undefined);
    this.attach(await this.client.reconnect(token));
    this.connected = true;
    await synced;
  }

  /** SDK only: do not reconnect by itself when the server goes away (e.g. at its shutdown). */
  stopReconnecting() {
    if (this.room) this.room.reconnection.enabled = false;
  }

  /** The synchronised world state the SDK client holds (undefined on the plain WebSocket). */
  get sdkState(): any {
    return this.room?.state;
  }

  /** Plain WebSocket only: send a frame as is (hostile-input tests). */
  sendRawFrame(frame: string | Buffer) {
    if (this.ws?.readyState === this.ws?.OPEN) this.ws!.send(frame);
  }

  /** Close the connection: a plain socket drops (the player lingers), an SDK client leaves. Queued messages are dropped. */
  async close(): Promise<void> {
    this.connected = false;
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.outbox.length = 0;
    const ws = this.ws;
    const room = this.room;
    this.ws = undefined;
    this.room = undefined;
    if (ws && ws.readyState !== ws.CLOSED) {
      await new Promise((r) => {
        ws.once("close", r);
        ws.close();
      });
    }
    if (room) await room.leave().catch(() => undefined);
  }

  /**
   * Send an event, keeping to the server's message rate as a well-behaved client does: at most
   * `SEND_PER_SECOND` in any second (below the 60 of docs/protocol.md#limits, whose excess the server drops), the
   * rest queued in order.
   */
  send(event: string, data: unknown) {
    if (!this.connected) return;
    this.outbox.push([event, data]);
    this.flush();
  }

  private readonly outbox: [string, unknown][] = [];
  /** Send times of the last `SEND_PER_SECOND` messages (oldest first). */
  private readonly sentAt: number[] = [];
  private flushTimer: NodeJS.Timeout | undefined;

  private flush() {
    while (this.outbox.length > 0) {
      const now = performance.now();
      if (this.sentAt.length >= SEND_PER_SECOND) {
        const wait = this.sentAt[0]! + 1000 - now;
        if (wait > 0) {
          this.flushTimer ??= setTimeout(() => {
            this.flushTimer = undefined;
            this.flush();
          }, wait + 1);
          return;
        }
        this.sentAt.shift();
      }
      const [event, data] = this.outbox.shift()!;
      this.sentAt.push(now);
      if (!this.connected) continue;
      if (this.ws) {
        if (this.ws.readyState === this.ws.OPEN) this.ws.send(JSON.stringify({ event, data }));
      } else this.room?.send(event, data);
    }
  }

  on(event: string, fn: Handler): () => void {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  private emit(event: string, data: unknown) {
    for (const fn of [...(this.handlers.get(event) ?? [])]) fn(data);
  }

  /** The next event matching `pred` (rejects after `timeoutMs`). */
  wait(event: string, pred: (d: any) => boolean = () => true, timeoutMs = 10_000): Promise<any> {
    return new Promise((resolve, reject) => {
      const off = this.on(event, (d) => {
        if (!pred(d)) return;
        off();
        clearTimeout(t);
        resolve(d);
      });
      const t = setTimeout(() => {
        off();
        reject(new Error(`${this.name || "bot"}: no ${event} within ${timeoutMs} ms`));
      }, timeoutMs);
    });
  }

  /** A chat command, resolved on the system line matching `answer`. */
  async command(text: string, answer: RegExp, timeoutMs = 10_000): Promise<void> {
    const got = this.wait("chat:message", (d) => d.type === "system" && answer.test(d.text), timeoutMs);
    this.send("player:chat", { text });
    await got;
  }

  get inventory(): Slot[] {
    return (this.state?.inventory ?? []) as Slot[];
  }

  get coins(): number {
    return this.state?.coins ?? 0;
  }
}

/** What one side offers: inventory slots with quantities, and coins. */
