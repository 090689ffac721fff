/**
 * One MCP session's player as a plain-WebSocket client sees it (docs/agents.md#how-a-session-plays):
 * the session joins the world through the `/ws` adapter's in-process `connect`, so every frame it
 * sends goes through the same link, flood meter, event table and refusals as a `/ws` socket's. It
 * keeps what that client is told: the private state (`player:sync`), the view assembled from
 * `world:update` deltas, the open trade, recent attackers and a bounded log of every other event.
 */
import type { ChatMessage, PlayerSync, ServerEventPayload } from "../events.js";
import type { JsonClientLink, JsonSocket } from "../net/adapter.js";

/** Events kept for `since` queries and observations (the oldest go first). */
export const SESSION_LOG_SIZE = 300;
/** How long (ms) a player that hit this one counts as an attacker (docs/interest.md "In a crowd": RECENT_ATTACKER_SECONDS). */
export const ATTACKER_MS = 10_000;

export type ViewKind = "players" | "npcs" | "resources" | "groundItems";
/** An entity in view: its public fields (docs/protocol.md "Private state"). */
export type Seen = Record<string, unknown> & { id: string; x: number; z: number };

/** A received event with its place in the session's log. */
export interface Logged {
  seq: number;
  event: string;
  data: Record<string, unknown>;
  at: number;
}

type Offer = ServerEventPayload<"tradeUpdated">["myOffer"];
/** The trade this player is in, as its events told it. */
export interface OpenTrade {
  tradeId: string;
  partnerId: string;
  partnerName: string;
  screen: "offer" | "confirm";
  revision: number;
  myOffer?: Offer;
  theirOffer?: Offer;
  values?: ServerEventPayload<"tradeConfirmScreen">["values"];
}

export class GameSession {
  me: PlayerSync | undefined;
  readonly view: Record<ViewKind, Map<string, Seen>> = { players: new Map(), npcs: new Map(), resources: new Map(), groundItems: new Map() };
  tick = 0;
  trade: OpenTrade | undefined;
  /** Trade requests to this player not answered yet, by trade id. */
  readonly incoming = new Map<string, { fromPlayerId: string; fromPlayerName: string; at: number }>();
  /** Who hit this player, and when (ms). */
  readonly attackers = new Map<string, number>();
  /** Last health seen of each combatant in a `combat:hit` (the target's). */
  readonly lastHealth = new Map<string, number>();
  closed: { code: number; reason: string } | undefined;
  private link: JsonClientLink | undefined;
  private seq = 0;
  private readonly log: Logged[] = [];
  private readonly listeners = new Set<() => void>();
  private readonly firstSync: Promise<void>;
  private gotSync!: () => void;

  constructor(
    private readonly now: () => number = Date.now,
    readonly remoteAddress?: string,
  ) {
    this.firstSync = new Promise((resolve) => (this.gotSync = resolve));
  }

  /** The socket the adapter's `connect` writes to: frames are applied as they arrive. */
  socket(): JsonSocket {
    return {
      send: (text) => this.onFrame(text),
      close: (code, reason) => this.onClose(code, reason),
      remoteAddress: this.remoteAddress,
    };
  }

  /** The joined link; resolves once the first `player:sync` arrived (it is sent first). */
  async attach(link: JsonClientLink): Promise<void> {
    this.link = link;
    await this.firstSync;
  }

  /** Send one client event through the link, as a `/ws` frame. */
  send(event: string, data: unknown): void {
    if (this.closed || !this.link) return;
    this.link.receive(JSON.stringify({ event, data }));
  }

  /** Leave the world (the connection closed, as a socket's would: combat logout applies). */
  detach(): void {
    const link = this.link;
    this.link = undefined;
    this.closed ??= { code: 1000, reason: "session closed" };
    link?.detach();
    this.notify();
  }

  /** The position of the log's next event. */
  mark(): number {
    return this.seq;
  }

  /** Logged events from `since`, optionally of some types. */
  since(since: number, types?: readonly string[]): Logged[] {
    return this.log.filter((e) => e.seq >= since && (!types || types.includes(e.event)));
  }

  /** Call `f` after every event (and on close); returns the undo. */
  onChange(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  /** My own entry in the view (position, activity, moving), live every tick. */
  self(): Seen | undefined {
    return this.me ? this.view.players.get(this.me.id) : undefined;
  }

  /** My tile: from the view when there, else the last sync. */
  tile(): { x: number; z: number } {
    const s = this.self();
    if (s) return { x: s.x, z: s.z };
    return { x: Math.round(this.me?.position.x ?? 0), z: Math.round(this.me?.position.z ?? 0) };
  }

  /** Players and NPCs that hit me within ATTACKER_MS, or fight me now. */
  currentAttackers(): Set<string> {
    const out = new Set<string>();
    const now = this.now();
    for (const [id, at] of this.attackers) if (now - at <= ATTACKER_MS) out.add(id);
    const me = this.me?.id;
    for (const kind of ["players", "npcs"] as const) for (const e of this.view[kind].values()) if (me && e.targetId === me && e.id !== me) out.add(e.id);
    return out;
  }

  private onFrame(text: string) {
    let frame: { event: string; data: Record<string, unknown> };
    try {
      frame = JSON.parse(text) as typeof frame;
    } catch {
      return;
    }
    this.apply(frame.event, frame.data ?? {});
    if (frame.event !== "world:update") {
      this.log.push({ seq: this.seq, event: frame.event, data: frame.data ?? {}, at: this.now() });
      if (this.log.length > SESSION_LOG_SIZE) this.log.shift();
    }
    this.seq++;
    this.notify();
  }

  /** The world closed the connection (replaced, revoked, flood, shutdown): the link goes, as a socket's on its close event. */
  private onClose(code: number, reason: string) {
    this.closed ??= { code, reason };
    const link = this.link;
    this.link = undefined;
    if (link) setImmediate(() => link.detach());
    this.gotSync();
    this.notify();
  }

  private notify() {
    for (const f of [...this.listeners]) f();
  }

  /** Keep the picture in step with one event. */
  private apply(event: string, data: Record<string, unknown>) {
    switch (event) {
      case "player:sync":
        this.me = data as unknown as PlayerSync;
        this.gotSync();
        if (!this.me.inTrade && this.trade) this.trade = undefined;
        return;
      case "world:update": {
        this.tick = (data.tick as number) ?? this.tick;
        for (const kind of Object.keys(this.view) as ViewKind[]) {
          const delta = data[kind] as Record<string, Record<string, unknown> | null> | undefined;
          for (const [id, fields] of Object.entries(delta ?? {})) {
            if (fields === null) this.view[kind].delete(id);
            else this.view[kind].set(id, { ...(this.view[kind].get(id) ?? {}), ...fields } as Seen);
          }
        }
        return;
      }
      case "combat:hit": {
        const hit = data as unknown as ServerEventPayload<"combat:hit">;
        this.lastHealth.set(hit.targetId, hit.targetHealth);
        if (hit.targetId === this.me?.id) this.attackers.set(hit.attackerId, this.now());
        return;
      }
      case "tradeIncoming": {
        const t = data as unknown as ServerEventPayload<"tradeIncoming">;
        this.incoming.set(t.tradeId, { fromPlayerId: t.fromPlayerId, fromPlayerName: t.fromPlayerName, at: this.now() });
        return;
      }
      case "tradeStarted": {
        const t = data as unknown as ServerEventPayload<"tradeStarted">;
        this.incoming.delete(t.tradeId);
        this.trade = { tradeId: t.tradeId, partnerId: t.partnerId, partnerName: t.partnerName, screen: "offer", revision: 0 };
        return;
      }
      case "tradeUpdated":
      case "tradeConfirmScreen": {
        const t = data as unknown as ServerEventPayload<"tradeConfirmScreen">;
        if (this.trade?.tradeId !== t.tradeId) return;
        this.trade = {
          ...this.trade,
          revision: t.revision,
          myOffer: t.myOffer,
          theirOffer: t.theirOffer,
          ...(event === "tradeConfirmScreen" ? { screen: "confirm" as const, values: t.values } : {}),
        };
        return;
      }
      case "tradeCompleted":
      case "tradeCancelled": {
        const id = data.tradeId as string;
        this.incoming.delete(id);
        if (this.trade?.tradeId === id) this.trade = undefined;
        return;
      }
    }
  }
}

/** A view field as text ("" for what is not a string or number). */
export function str(v: unknown): string {
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? String(v) : "";
}

/** A system line that refuses an event (it carries a stable code: docs/protocol.md "Refusal codes"). */
export function refusalOf(e: Logged): { code: string; message: string } | undefined {
  if (e.event === "chat:message") {
    const m = e.data as unknown as ChatMessage;
    if (m.type === "system" && m.code) return { code: m.code, message: m.text };
  }
  if (e.event === "tradeError") return { code: String(e.data.code), message: String(e.data.message) };
  return undefined;
}
