/**
 * A chaos bot (docs/chaos.md "What it runs"): one character over the plain WebSocket (`/ws`, JSON frames),
 * connected to one world of one process at a time. When its process seems gone (an action and then
 * a `/help` heartbeat unanswered) it abandons the connection and joins another world, as a client
 * whose server went away does. An abandoned or closed connection keeps being listened to for a
 * while: an item change (`player:sync`) or a `tradeCompleted` that arrives on it after the
 * character was loaded by another world is evidence that two worlds played it at once.
 */
import WebSocket from "ws";

/** A world of a process: where a bot can play. */
export interface Instance {
  /** e.g. `p1/w2` */
  name: string;
  url: () => string;
  world: number;
}

export interface InvSlot {
  slot: number;
  itemId: string;
  quantity: number;
}

type Handler = (data: any) => void;

interface Conn {
  ws: WebSocket;
  instance: Instance;
  openedAt: number;
  syncedAt?: number;
  closedAt?: number;
}

/** Two worlds played one character: `event` came from `stale` after `current` had loaded it. */
export interface DoublePlay {
  character: string;
  event: string;
  stale: string;
  current: string;
  at: number;
  loadedAt: number;
}

export interface BotSink {
  tradeSeen(tradeId: string, instance: string): void;
  doublePlay(d: DoublePlay): void;
}

/** How long a bot waits for its socket to open before it tries another world. */
const OPEN_TIMEOUT_MS = 3_000;
/** How long a connection is still listened to after the bot left it. */
const LISTEN_AFTER_MS = 30_000;
/** The tile every bot stands on: within 3 tiles of the Lumbrook bank booth (6, 7), so bank and trades need no walking. */
export const POST = { x: 5, z: 5 };

export class ChaosBot {
  /** The last `player:sync` of the current connection. */
  state: any;
  x = NaN;
  z = NaN;
  conn: Conn | undefined;
  readonly sessions: { instance: string; syncedAt: number }[] = [];
  /** A join refused or a connection that failed: instance → count by reason. */
  readonly refusals = new Map<string, number>();
  busy = false;
  /** Ground piles in view on the current connection (from `world:update`). */
  readonly ground = new Map<string, { itemId: string; quantity: number; x: number; z: number }>();
  /** Piles this bot dropped and did not get back: where, and what (docs/chaos.md "Ground"). */
  readonly leftovers: { instance: string; itemId: string; quantity: number; at: number }[] = [];
  private readonly handlers = new Map<string, Set<Handler>>();

  constructor(
    readonly id: string,
    readonly name: string,
    private readonly token: string,
    private readonly sink: BotSink,
  ) {}

  get connected(): boolean {
    return !!this.conn?.syncedAt && this.conn.closedAt === undefined;
  }

  get instance(): Instance | undefined {
    return this.conn?.instance;
  }

  get inventory(): InvSlot[] {
    return (this.state?.inventory ?? []) as InvSlot[];
  }

  get bank(): { itemId: string; quantity: number }[] {
    return (this.state?.bank ?? []) as { itemId: string; quantity: number }[];
  }

  get coins(): number {
    return (this.state?.coins as number | undefined) ?? 0;
  }

  /**
   * Join `inst` (the previous connection, if any, is closed and listened to for a while). Resolves
   * once `player:sync` arrived; rejects with the close code and reason, or after `timeoutMs`.
   */
  join(inst: Instance, timeoutMs = 15_000): Promise<void> {
    this.leave();
    const q = `token=${encodeURIComponent(this.token)}&characterId=${encodeURIComponent(this.id)}&world=${inst.world}`;
    const ws = new WebSocket(`${inst.url().replace(/^http/, "ws")}/ws?${q}`);
    const conn: Conn = { ws, instance: inst, openedAt: Date.now() };
    this.conn = conn;
    this.x = this.z = NaN;
    this.ground.clear();
    return new Promise<void>((ok, fail) => {
      let settled = false;
      const settle = (e?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        clearTimeout(opening);
        if (e) {
          this.refused(inst, e.message);
          this.drop(conn);
          fail(e);
        } else ok();
      };
      const timer = setTimeout(() => settle(new Error("join timed out")), timeoutMs);
      // A stalled process accepts the connection (the kernel does) but never answers the upgrade.
      const opening = setTimeout(() => settle(new Error("no answer to the upgrade")), OPEN_TIMEOUT_MS);
      ws.once("open", () => clearTimeout(opening));
      ws.on("message", (raw) => {
        let f: { event: string; data: any };
        try {
          f = JSON.parse((raw as Buffer).toString()) as { event: string; data: any };
        } catch {
          return;
        }
        this.frame(conn, f.event, f.data);
        if (f.event === "player:sync" && conn === this.conn) settle();
      });
      ws.on("close", (code, reason) => {
        conn.closedAt ??= Date.now();
        // The code word of the reason (`CHARACTER_ELSEWHERE`, `SERVER_BUSY`), else its start with numbers blanked.
        const why = /^[A-Z_]{4,}/.exec(reason.toString())?.[0] ?? reason.toString().replace(/\d+/g, "N").slice(0, 40);
        settle(new Error(`closed ${code} ${why}`.trim()));
      });
      ws.on("error", (e) => settle(new Error((e as NodeJS.ErrnoException).code ?? e.message)));
    });
  }

  private refused(inst: Instance, why: string) {
    const k = `${inst.name} ${why}`;
    this.refusals.set(k, (this.refusals.get(k) ?? 0) + 1);
  }

  /** Stop playing on the current connection: closed, and listened to for a while (see the file comment). */
  leave(): void {
    const c = this.conn;
    this.conn = undefined;
    if (c) this.drop(c);
  }

  private drop(c: Conn) {
    if (this.conn === c) this.conn = undefined;
    c.closedAt ??= Date.now();
    try {
      c.ws.close();
    } catch {
      /* not open yet */
    }
    setTimeout(() => c.ws.terminate(), LISTEN_AFTER_MS).unref();
  }

  private frame(c: Conn, event: string, data: any) {
    const now = Date.now();
    if (event === "tradeCompleted") this.sink.tradeSeen(String(data?.tradeId), c.instance.name);
    if (c !== this.conn || c.closedAt !== undefined) {
      if (event === "player:sync" || event === "tradeCompleted") this.stale(c, event, now);
      return;
    }
    if (event === "player:sync") {
      if (c.syncedAt === undefined) {
        c.syncedAt = now;
        this.sessions.push({ instance: c.instance.name, syncedAt: now });
      }
      this.state = data;
      if (Number.isFinite(data?.position?.x)) {
        this.x = data.position.x as number;
        this.z = data.position.z as number;
      }
    }
    if (event === "world:update") {
      const me = data?.players?.[this.id];
      if (me && Number.isFinite(me.x)) this.x = me.x as number;
      if (me && Number.isFinite(me.z)) this.z = me.z as number;
      for (const [id, g] of Object.entries<any>(data?.groundItems ?? {})) {
        if (g === null) this.ground.delete(id);
        else this.ground.set(id, { ...this.ground.get(id), ...g });
      }
    }
    for (const fn of [...(this.handlers.get(event) ?? [])]) fn(data);
  }

  /** An item change or a completed trade from a world the bot left: did another world load the character before it? */
  private stale(c: Conn, event: string, at: number) {
    const later = this.sessions.filter((s) => s.syncedAt > c.openedAt && s.syncedAt < at && s.instance !== c.instance.name);
    const cur = later.at(-1);
    if (cur) this.sink.doublePlay({ character: this.id, event, stale: c.instance.name, current: cur.instance, at, loadedAt: cur.syncedAt });
  }

  send(event: string, data: unknown): void {
    const ws = this.conn?.ws;
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify({ event, data }));
  }

  on(event: string, fn: Handler): () => void {
    let set = this.handlers.get(event);
    if (!set) this.handlers.set(event, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** The next `event` on the current connection matching `pred`; undefined after `timeoutMs` or when the connection changes. */
  wait(event: string, pred: (d: any) => boolean, timeoutMs: number): Promise<any> {
    const c = this.conn;
    return new Promise((resolve) => {
      const off = this.on(event, (d) => {
        if (this.conn !== c || !pred(d)) return;
        done(d);
      });
      const timer = setTimeout(() => done(undefined), timeoutMs);
      const done = (d: any) => {
        off();
        clearTimeout(timer);
        resolve(d);
      };
    });
  }

  /** Does the server answer? `/help` and its system line within `timeoutMs`. */
  async heartbeat(timeoutMs = 2_500): Promise<boolean> {
    if (!this.connected) return false;
    const got = this.wait("chat:message", (d) => d?.type === "system", timeoutMs);
    this.send("player:chat", { text: "/help" });
    return (await got) !== undefined;
  }

  /** Walk to POST unless there; true once the world shows the bot on it. */
  async toPost(timeoutMs = 10_000): Promise<boolean> {
    if (this.x === POST.x && this.z === POST.z) return true;
    const arrived = this.wait("world:update", () => this.x === POST.x && this.z === POST.z, timeoutMs);
    this.send("player:move", { x: POST.x, z: POST.z, run: true });
    return (await arrived) !== undefined || (this.x === POST.x && this.z === POST.z);
  }
}
