/**
 * The world connection through the Colyseus SDK (docs/protocol.md "WebSocket protocol"): join, the server events
 * into the store, the schema state copied into plain data once per patch, typed sends, and the
 * SDK's own reconnection after a dropped socket.
 */
import { Client, type Room } from "@colyseus/sdk";
import type {
  ClientEventName,
  ClientEventPayload,
  GroundItemPublic,
  NpcPublic,
  PlayerPublic,
  ResourcePublic,
  ServerEventName,
  ServerEventPayload,
} from "../protocol.js";
import { FINAL_CLOSE_CODES } from "../protocol.js";
import { addChat, addSystemLine, applyHit, applySync, applyWorld, applyXp, type Store, type WorldView } from "../state/store.js";
import { applyTradeEvent } from "../state/trade.js";

/** The decoded schema state: four maps of schema objects (schema/world.ts on the server). */
interface SchemaMap<T> {
  forEach(cb: (value: T, key: string) => void): void;
}
interface WorldSchema {
  tick: number;
  players?: SchemaMap<PlayerPublic>;
  npcs?: SchemaMap<NpcPublic>;
  resources?: SchemaMap<ResourcePublic>;
  groundItems?: SchemaMap<GroundItemPublic>;
}

const PLAYER_FIELDS = ["id", "name", "x", "z", "health", "maxHealth", "combatLevel", "moving", "running", "isAgent", "activity", "targetId", "weapon"] as const;
const NPC_FIELDS = ["id", "npcId", "name", "x", "z", "health", "maxHealth", "combatLevel", "targetId"] as const;
const RESOURCE_FIELDS = ["id", "type", "skill", "x", "z", "depleted"] as const;
const GROUND_FIELDS = ["id", "itemId", "quantity", "x", "z"] as const;

function copy<T>(map: SchemaMap<T> | undefined, fields: readonly string[]): Map<string, T> {
  const out = new Map<string, T>();
  map?.forEach((v, k) => {
    const o: Record<string, unknown> = {};
    for (const f of fields) o[f] = (v as Record<string, unknown>)[f];
    out.set(k, o as T);
  });
  return out;
}

/** A plain copy of the schema state (what the renderer and the UI read). */
export function snapshot(state: WorldSchema): WorldView {
  return {
    tick: state.tick,
    players: copy(state.players, PLAYER_FIELDS),
    npcs: copy(state.npcs, NPC_FIELDS),
    resources: copy(state.resources, RESOURCE_FIELDS),
    groundItems: copy(state.groundItems, GROUND_FIELDS),
  };
}

export class Session {
  #room?: Room;
  /** Milliseconds between the last two patches (the tick, as seen here), for smooth walking. */
  tickMs = 600;
  #lastPatch = 0;

  constructor(
    readonly endpoint: string,
    readonly store: Store,
  ) {}

  get room(): Room | undefined {
    return this.#room;
  }

  /** Joins the world room (never create: docs/rooms.md "What a client may ask the matchmaker"). */
  async join(token: string, characterId: string, world?: number): Promise<void> {
    const client = new Client(this.endpoint);
    client.auth.token = token;
    const room = await client.join("world", world ? { characterId, world } : { characterId });
    this.#room = room;
    this.#listen(room);
  }

  send<E extends ClientEventName>(event: E, data: ClientEventPayload<E>): void {
    this.#room?.send(event, data);
  }

  async leave(): Promise<void> {
    await this.#room?.leave(true);
  }

  #on<E extends ServerEventName>(room: Room, event: E, cb: (data: ServerEventPayload<E>) => void): void {
    room.onMessage(event, cb as (data: unknown) => void);
  }

  #listen(room: Room): void {
    const store = this.store;
    this.#on(room, "player:sync", (me) => store.update((s) => applySync(s, me)));
    this.#on(room, "chat:message", (m) => store.update((s) => addChat(s, m)));
    this.#on(room, "skill:xp", (xp) => store.update((s) => applyXp(s, xp, performance.now())));
    this.#on(room, "combat:hit", (hit) => store.update((s) => applyHit(s, hit, performance.now())));
    for (const event of ["tradeIncoming", "tradeStarted", "tradeUpdated", "tradeConfirmScreen", "tradeCompleted", "tradeCancelled"] as const) {
      room.onMessage(event, (data: never) => store.update((s) => ({ ...s, trade: applyTradeEvent(s.trade, { event, data }) })));
    }
    this.#on(room, "tradeError", (e) => store.update((s) => addSystemLine(s, e.message, e.code)));
    room.onStateChange((state: WorldSchema) => {
      const now = performance.now();
      if (this.#lastPatch) this.tickMs = Math.min(2000, Math.max(30, 0.8 * this.tickMs + 0.2 * (now - this.#lastPatch)));
      this.#lastPatch = now;
      store.update((s) => applyWorld(s, snapshot(state)));
    });
    room.onDrop(() => store.update((s) => ({ ...s, banner: "Connection lost: reconnecting…" })));
    room.onReconnect(() => store.update((s) => ({ ...s, banner: undefined })));
    room.onLeave((code, reason) => {
      const why = FINAL_CLOSE_CODES[code] ?? (code === 1000 ? "You logged out." : `Disconnected (${code}${reason ? `: ${reason}` : ""}).`);
      store.update((s) => ({ ...s, banner: why }));
    });
    room.onError((code, message) => store.update((s) => addSystemLine(s, `Connection error ${code}: ${message ?? ""}`)));
  }
}
