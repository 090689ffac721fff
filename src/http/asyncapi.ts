/**
 * The WebSocket protocol as an AsyncAPI 3.0 document (served at `GET /api/asyncapi.json`), generated
 * from the event schemas of `src/events.ts` with zod's JSON Schema output. It describes the server:
 * it receives every client event and sends every server event, on two channels — the Colyseus world
 * room (msgpack room messages, the event name as the message type) and the plain WebSocket `/ws`
 * (JSON `{ "event", "data" }` frames). docs/protocol.md says the same in prose.
 */
import { z } from "zod";
import { CLIENT_EVENTS, CLOSE_CODES, JSON_ONLY_SERVER_EVENTS, SERVER_EVENT_SCHEMAS, type ClientEventName, type ServerEventName } from "../events.js";

/** One line on each event (the tables of docs/protocol.md). */
const SUMMARIES: Record<ClientEventName | ServerEventName, string> = {
  "player:move": "Walk or run to a tile at most 200 tiles away; the latest target wins",
  "player:action":
    "Attack (melee, or ranged with a launcher and its ammunition), gather, pick up, talk, buy, sell, unequip, pray (a prayer on, or recharge at an altar) or unpray",
  "player:chat": "Public chat, a private message to a friend (to), or a /command",
  "inventory:use": "Use the item in a slot: eat, wield, wear, bury, light, cook, smith (recipeId picks the recipe), or drop",
  "bank:deposit": "Deposit a slot (or a quantity of its item) within 3 tiles of a bank booth",
  "bank:withdraw": "Withdraw an item within 3 tiles of a bank booth",
  tradeRequest: "Ask a player within 2 tiles to trade",
  tradeRequestRespond: "Accept or decline a trade request (the invited player only)",
  tradeAddItem: "Offer a quantity of an inventory slot, or set the offered coins",
  tradeRemoveItem: "Take a slot out of the offer",
  tradeAccept: "Accept the current screen (quote its revision to be safe)",
  tradeCancel: "Cancel the trade",
  "world:update": "/ws only: the changes in what the player sees, at most once a tick",
  "player:sync": "The player's whole private state: on join and after every change of items, coins, goal, flags, prayers",
  "combat:hit": "A hit, to everyone who sees the target",
  "skill:xp": "An XP gain of the player",
  "chat:message": "Chat, and system lines: refusals (with a stable code on some) and notices",
  tradeIncoming: "A trade request, to the invited player",
  tradeStarted: "The trade opened (offer screen), to both",
  tradeUpdated: "An offer or acceptance changed, to both",
  tradeConfirmScreen: "Both accepted the offers: the confirmation screen with their values",
  tradeCompleted: "The items moved; player:sync follows",
  tradeCancelled: "The trade ended without completing",
  tradeError: "A trade event was refused (docs/trading.md#error-codes)",
};

/** The key of an event in the document's maps (`player:move` → `player.move`; keys allow `[A-Za-z0-9._-]`). */
export const messageKey = (event: string): string => event.replace(/[^A-Za-z0-9._-]/g, ".");

/**
 * The JSON Schema of an event payload as the document carries it: draft-07 (AsyncAPI's schema
 * format is a superset of it), as the client writes it (`input`) for client events and as the
 * server writes it (`output`) for server events.
 */
export function payloadSchema(schema: z.ZodType, direction: "client" | "server"): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { target: "draft-7", io: direction === "client" ? "input" : "output" }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

export const ROOM_CHANNEL = "worldRoom";
export const WS_CHANNEL = "plainWebSocket";

/** Build the AsyncAPI 3.0 document of the WebSocket protocol. */
export function asyncApiDocument(version: string) {
  const schemas: Record<string, unknown> = {};
  const messages: Record<string, unknown> = {};
  const channelMessages: Record<string, Record<string, { $ref: string }>> = { [ROOM_CHANNEL]: {}, [WS_CHANNEL]: {} };
  const operations: Record<string, unknown> = {};

  const add = (event: ClientEventName | ServerEventName, schema: z.ZodType, direction: "client" | "server") => {
    const key = messageKey(event);
    schemas[key] = payloadSchema(schema, direction);
    const ref = { $ref: `#/components/schemas/${key}` };
    const common = { name: event, title: event, summary: SUMMARIES[event] };
    const channels: [string, string, unknown][] = [];
    if (!(JSON_ONLY_SERVER_EVENTS as readonly string[]).includes(event)) channels.push([ROOM_CHANNEL, key, ref]);
    channels.push([
      WS_CHANNEL,
      `ws.${key}`,
      {
        type: "object",
        required: ["event", "data"],
        properties: { event: { type: "string", const: event }, data: ref },
        description: `The JSON frame of ${event}`,
      },
    ]);
    for (const [channel, messageId, payload] of channels) {
      messages[messageId] = { ...common, payload };
      channelMessages[channel]![messageId] = { $ref: `#/components/messages/${messageId}` };
      const action = direction === "client" ? "receive" : "send";
      operations[`${channel === WS_CHANNEL ? "ws" : "room"}.${action}.${key}`] = {
        action,
        channel: { $ref: `#/channels/${channel}` },
        messages: [{ $ref: `#/channels/${channel}/messages/${messageId}` }],
        summary: SUMMARIES[event],
      };
    }
  };
  for (const [event, schema] of Object.entries(CLIENT_EVENTS)) add(event as ClientEventName, schema, "client");
  for (const [event, schema] of Object.entries(SERVER_EVENT_SCHEMAS)) add(event as ServerEventName, schema, "server");

  const closeCodes = Object.entries(CLOSE_CODES)
    .map(([name, code]) => `${code} ${name}`)
    .join(", ");
  return {
    asyncapi: "3.0.0",
    info: {
      title: "Game server WebSocket protocol",
      version,
      description:
        "Every event of the game's WebSocket protocol, over two transports that end in the same world room and the same event table. " +
        "This document describes the server: it receives client events and sends server events. A payload that fails its schema " +
        "changes nothing and is answered with a system chat:message, or a tradeError for trade events. Close codes: " +
        `${closeCodes} (docs/protocol.md#close-codes).`,
    },
    defaultContentType: "application/json",
    servers: {
      game: {
        host: "{host}",
        protocol: "ws",
        description: "The game server's port (wss behind TLS). Matchmaking, REST and both WebSocket transports share it.",
        variables: { host: { default: "localhost:5555", description: "host and port" } },
        security: [{ $ref: "#/components/securitySchemes/queryToken" }, { $ref: "#/components/securitySchemes/bearer" }],
      },
    },
    channels: {
      [ROOM_CHANNEL]: {
        address: "/ws/{processId}/{roomId}",
        title: "Colyseus world room",
        description:
          'The room socket of the world room (room name `world`), reached with the Colyseus SDK: `new Client("http://host/ws")`, ' +
          '`client.auth.token = <token>`, `client.join("world", { characterId? })`. Frames are msgpack; each message\'s type is the ' +
          "event name and its data the payload. The world itself arrives as schema state patches filtered to the player's view, " +
          "not as world:update.",
        parameters: {
          processId: { description: "the process holding the room (from the matchmaker's answer)" },
          roomId: { description: "the world room's id (from the matchmaker's answer)" },
        },
        messages: channelMessages[ROOM_CHANNEL],
        bindings: {
          ws: { bindingVersion: "0.1.0", query: { type: "object", properties: { _authToken: { type: "string", description: "the SDK's token" } } } },
        },
      },
      [WS_CHANNEL]: {
        address: "/ws",
        title: "Plain WebSocket",
        description:
          'For agents and tools without the SDK: every frame, both ways, is UTF-8 JSON `{ "event": <name>, "data": <payload> }`. ' +
          "The server joins the world room on the client's behalf; the first frames it sends are player:sync and a full world:update.",
        messages: channelMessages[WS_CHANNEL],
        bindings: {
          ws: {
            bindingVersion: "0.1.0",
            query: {
              type: "object",
              properties: {
                token: { type: "string", description: "server token (or Authorization: Bearer)" },
                characterId: { type: "string", description: "the character to play (docs/protocol.md#joining)" },
              },
            },
          },
        },
      },
    },
    operations,
    components: {
      schemas,
      messages,
      securitySchemes: {
        queryToken: { type: "httpApiKey", name: "token", in: "query", description: "`/ws?token=` (room sockets: the SDK's `_authToken`)" },
        bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      },
    },
  };
}
