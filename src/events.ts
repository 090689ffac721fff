/**
 * Every WebSocket event and its payload schema (docs/protocol.md#client-events, docs/trading.md#events).
 * One table drives the Colyseus room handlers, the plain-WebSocket adapter, the tests and the bots.
 */
import { z } from "zod";

const int = z.number().int();
const id = z.string().min(1).max(128);
const slot = int.min(0).max(27);

/** Client to server events and their payload schemas. */
export const CLIENT_EVENTS = {
  "player:move": z.object({ x: int.min(-1_000_000).max(1_000_000), z: int.min(-1_000_000).max(1_000_000), run: z.boolean().optional() }),
  "player:action": z.object({
    action: z.enum(["attack", "gather", "pickup", "talk", "buy", "sell", "unequip"]),
    targetId: id.optional(),
    itemId: id.optional(),
    quantity: int.min(1).max(2_147_483_647).optional(),
  }),
  "player:chat": z.object({ text: z.string().min(1).max(200), to: id.optional() }),
  "inventory:use": z.object({ slot, targetSlot: slot.optional(), targetId: id.optional() }),
  "bank:deposit": z.object({ slot, quantity: int.min(1).max(2_147_483_647).optional() }),
  "bank:withdraw": z.object({ itemId: id, quantity: int.min(1).max(2_147_483_647) }),
  tradeRequest: z.object({ targetPlayerId: id }),
  tradeRequestRespond: z.object({ tradeId: id, accept: z.boolean() }),
  // Quantities and slots are validated by the trade rules so refusals carry the codes of docs/trading.md#error-codes.
  tradeAddItem: z.object({ tradeId: id, inventorySlot: z.unknown().optional(), quantity: z.unknown().optional(), coins: z.unknown().optional() }),
  tradeRemoveItem: z.object({ tradeId: id, inventorySlot: z.unknown() }),
  tradeAccept: z.object({ tradeId: id, revision: int.min(0).optional() }),
  tradeCancel: z.object({ tradeId: id }),
} as const;

export type ClientEventName = keyof typeof CLIENT_EVENTS;
export type ClientEventPayload<E extends ClientEventName> = z.output<(typeof CLIENT_EVENTS)[E]>;
export const CLIENT_EVENT_NAMES = Object.keys(CLIENT_EVENTS) as ClientEventName[];
export const TRADE_EVENTS = ["tradeRequest", "tradeRequestRespond", "tradeAddItem", "tradeRemoveItem", "tradeAccept", "tradeCancel"] as const;

/** Server to client event names. */
export const SERVER_EVENTS = [
  "world:update",
  "player:sync",
  "combat:hit",
  "skill:xp",
  "chat:message",
  "tradeIncoming",
  "tradeStarted",
  "tradeUpdated",
  "tradeConfirmScreen",
  "tradeCompleted",
  "tradeCancelled",
  "tradeError",
] as const;
export type ServerEventName = (typeof SERVER_EVENTS)[number];

/** `combat:hit` payload. */
export interface CombatHit {
  attackerId: string;
  targetId: string;
  damage: number;
  targetHealth: number;
  targetMaxHealth: number;
}

/** `skill:xp` payload. */
export interface SkillXp {
  skill: string;
  gained: number;
  xp: number;
  level: number;
  leveledUp: boolean;
}

/** `chat:message` payload. */
export interface ChatMessage {
  id: string;
  type: "public" | "private" | "system" | "trade";
  fromId?: string;
  fromName?: string;
  text: string;
  timestamp: string;
  /** Stable refusal code on some system lines (e.g. `PLAYER_DEAD`; README "Refusal codes"). */
  code?: string;
}

/** Maximum messages per second per connection (docs/protocol.md#limits). */
export const MAX_MESSAGES_PER_SECOND = 60;
/** Seconds of continuous flooding before the connection is closed. */
export const FLOOD_SECONDS_BEFORE_CLOSE = 3;
/** Close codes. */
export const CLOSE_CODES = { BAD_TOKEN: 4001, FLOOD: 4029, REPLACED: 4009, REVOKED: 4003, SHUTDOWN: 4000, SERVER_BUSY: 4503 } as const;
