/**
 * The WebSocket protocol's contract (docs/protocol.md): every event in both directions with its
 * payload schema, the refusal of a payload that fails its schema, the flood limits and the close
 * codes. Shared by the rooms, the `/ws` adapter, REST (`player:sync`), the AsyncAPI document
 * (`/api/asyncapi.json`), the tests and the bots. Handlers are bound to the client events in
 * `rooms/world/event-table.ts`.
 */
import { z } from "zod";
import { TRADE_ERROR } from "./domain/trade/codes.js";
import { PlayerSyncSchema, WorldUpdateSchema } from "./protocol/player.js";
import { TRADE_CLIENT_EVENTS, TRADE_FIELD_ERRORS, TRADE_SERVER_EVENTS } from "./protocol/trade.js";

export type { PlayerSync, StoredPlayerSync, WorldUpdate, PublicViewOf, ViewKind } from "./protocol/player.js";

const int = z.int();
const id = z.string().min(1).max(128);
const slot = int.min(0).max(27);
const amount = int.min(1).max(2_147_483_647);

/** Client to server events and their payload schemas (docs/protocol.md#client-events). */
export const CLIENT_EVENTS = {
  "player:move": z.object({ x: int.min(-1_000_000).max(1_000_000), z: int.min(-1_000_000).max(1_000_000), run: z.boolean().optional() }),
  "player:action": z.object({
    action: z.enum(["attack", "gather", "pickup", "talk", "buy", "sell", "unequip", "pray", "unpray"]),
    targetId: id.optional(),
    itemId: id.optional(),
    quantity: amount.optional(),
  }),
  "player:chat": z.object({ text: z.string().min(1).max(200), to: id.optional().describe("a friend's player id: a private message") }),
  "inventory:use": z.object({
    slot,
    targetSlot: slot.optional(),
    targetId: id.optional(),
    recipeId: id.optional().describe("at a furnace or anvil: the recipe to make (recipes/smithing.json); the lowest-level one the player can make when absent"),
  }),
  "bank:deposit": z.object({ slot, quantity: amount.optional() }),
  "bank:withdraw": z.object({ itemId: id, quantity: amount }),
  ...TRADE_CLIENT_EVENTS,
} as const;

export type ClientEventName = keyof typeof CLIENT_EVENTS;
export type ClientEventPayload<E extends ClientEventName> = z.output<(typeof CLIENT_EVENTS)[E]>;
export const CLIENT_EVENT_NAMES = Object.keys(CLIENT_EVENTS) as ClientEventName[];
export const TRADE_EVENTS = Object.keys(TRADE_CLIENT_EVENTS) as (keyof typeof TRADE_CLIENT_EVENTS)[];
export type TradeEventName = (typeof TRADE_EVENTS)[number];

/**
 * The refusal of a payload that fails its schema (docs/protocol.md#refusals): the text names the
 * first failing field; `code` is what a trade event's `tradeError` carries — the field's own code
 * for a bad slot, quantity or coin amount (docs/trading.md#error-codes), else `INVALID_REQUEST`.
 */
export function schemaRefusal(event: ClientEventName, error: z.ZodError): { code: string; message: string } {
  const where = error.issues[0];
  const message = `Invalid ${event}: ${where ? `${where.path.join(".") || "payload"} ${where.message}` : "bad payload"}`;
  const field = where?.path.length === 1 ? String(where.path[0]) : undefined;
  const fieldCode = field !== undefined && Object.hasOwn(TRADE_FIELD_ERRORS, field) ? TRADE_FIELD_ERRORS[field] : undefined;
  return { code: fieldCode ?? TRADE_ERROR.INVALID_REQUEST, message };
}

/**
 * A stable refusal code on a system `chat:message` (docs/protocol.md "Refusal codes"). The world lists its
 * codes beside their texts; every code is upper snake case.
 */
export const RefusalCodeSchema = z.string().regex(/^[A-Z][A-Z0-9_]*$/);

/** `chat:message` payload. */
export const ChatMessageSchema = z.object({
  id: z.string(),
  type: z.enum(["public", "private", "system", "trade"]),
  fromId: z.string().optional().describe("the sender's player id; absent for system lines"),
  fromName: z.string().optional(),
  text: z.string(),
  timestamp: z.string().describe("ISO 8601"),
  code: RefusalCodeSchema.optional().describe("stable refusal code of some system lines, e.g. PLAYER_DEAD"),
});
export type ChatMessage = z.output<typeof ChatMessageSchema>;

/** `combat:hit` payload. */
export const CombatHitSchema = z.object({ attackerId: z.string(), targetId: z.string(), damage: int, targetHealth: int, targetMaxHealth: int });
export type CombatHit = z.output<typeof CombatHitSchema>;

/** `skill:xp` payload. */
export const SkillXpSchema = z.object({ skill: z.string(), gained: z.number(), xp: z.number(), level: int, leveledUp: z.boolean() });
export type SkillXp = z.output<typeof SkillXpSchema>;

/** Server to client events and their payload schemas (docs/protocol.md#server-events). */
export const SERVER_EVENT_SCHEMAS = {
  "world:update": WorldUpdateSchema,
  "player:sync": PlayerSyncSchema,
  "combat:hit": CombatHitSchema,
  "skill:xp": SkillXpSchema,
  "chat:message": ChatMessageSchema,
  ...TRADE_SERVER_EVENTS,
} as const;
export type ServerEventName = keyof typeof SERVER_EVENT_SCHEMAS;
export type ServerEventPayload<E extends ServerEventName> = z.output<(typeof SERVER_EVENT_SCHEMAS)[E]>;
/** Server to client event names. */
export const SERVER_EVENTS = Object.keys(SERVER_EVENT_SCHEMAS) as ServerEventName[];
/** Server events only `/ws` clients receive (SDK clients get schema patches instead). */
export const JSON_ONLY_SERVER_EVENTS: readonly ServerEventName[] = ["world:update"];

/** Maximum messages per second per connection (docs/protocol.md#limits). */
export const MAX_MESSAGES_PER_SECOND = 60;
/** Seconds of continuous flooding before the connection is closed. */
export const FLOOD_SECONDS_BEFORE_CLOSE = 3;
/**
 * Close codes (docs/protocol.md#close-codes). UNKNOWN_WORLD, WORLD_FULL: `/ws?world=N` names a world
 * that is not hosted, or is full; WORLD_ELSEWHERE: world N is hosted by another process, the reason
 * gives its address (`WORLD_ELSEWHERE: world 2 is at ws://host:5556/ws?world=2`).
 */
export const CLOSE_CODES = {
  BAD_TOKEN: 4001,
  FLOOD: 4029,
  REPLACED: 4009,
  REVOKED: 4003,
  SHUTDOWN: 4000,
  SERVER_BUSY: 4503,
  UNKNOWN_WORLD: 4014,
  WORLD_FULL: 4015,
  WORLD_ELSEWHERE: 4016,
} as const;
