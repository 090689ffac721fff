/**
 * The AsyncAPI document served at `/api/asyncapi.json` and the event table agree both ways: every
 * client event of the table (rooms/world/event-table.ts) and every server event (src/events.ts) is
 * a message of the document, on both channels (world:update on `/ws` only), with zod's JSON Schema
 * of its payload schema and an operation of the right direction; every message and operation of the
 * document is an event of the table. The document is valid AsyncAPI 3.0.0: it passes the official
 * JSON Schema (@asyncapi/specs) and every reference in it resolves. What the server really sends,
 * on both transports, fits the document.
 */
import assert from "node:assert/strict";
import { Ajv } from "ajv";
import specs from "@asyncapi/specs";
import { z } from "zod";
import { EVENT_TABLE } from "../../../rooms/world/event-table.js";
import { JSON_ONLY_SERVER_EVENTS, SERVER_EVENT_SCHEMAS } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

type Json = Record<string, any>;
const ROOM = "worldRoom";
const WS = "plainWebSocket";

/** Zod's JSON Schema of a payload schema, as the document must carry it (draft-07, no `$schema`). */
const jsonSchemaOf = (schema: z.ZodType, io: "input" | "output") => {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { target: "draft-7", io }) as Json;
  return rest;
};

describe("AsyncAPI document of the WebSocket protocol (/api/asyncapi.json)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let doc: Json;

  /** The value a local `$ref` (`#/a/b`) points to, or undefined. */
  const resolve = (ref: string): unknown => {
    assert.ok(ref.startsWith("#/"), `a local reference: ${ref}`);
    let at: unknown = doc;
    for (const part of ref
      .slice(2)
      .split("/")
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))) {
      if (at === null || typeof at !== "object" || !Object.hasOwn(at, part)) return undefined;
      at = (at as Json)[part];
    }
    return at;
  };
  const deref = (v: Json): Json => (typeof v?.$ref === "string" ? deref(resolve(v.$ref) as Json) : v);
  /** The messages of a channel, by name (the event), dereferenced. */
  const messagesOf = (channel: string): Map<string, Json> =>
    new Map(Object.values(doc.channels[channel].messages as Record<string, Json>).map((m) => [deref(m).name as string, deref(m)]));
  /** The operations of a channel: event name → actions. */
  const operationsOf = (channel: string): Map<string, string[]> => {
    const out = new Map<string, string[]>();
    for (const op of Object.values(doc.operations as Record<string, Json>)) {
      if (op.channel.$ref !== `#/channels/${channel}`) continue;
      for (const m of op.messages) {
        const name = deref(m).name as string;
        out.set(name, [...(out.get(name) ?? []), op.action]);
      }
    }
    return out;
  };

  before(async () => {
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
    const res = await fetch(`${server.url}/api/asyncapi.json`);
    assert.equal(res.status, 200, "public, no token");
    assert.match(res.headers.get("content-type") ?? "", /application\/json/);
    doc = (await res.json()) as Json;
  });
  after(async () => server?.close());

  it("is valid AsyncAPI 3.0.0 (the official JSON Schema)", () => {
    assert.equal(doc.asyncapi, "3.0.0");
    const ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false, meta: false, validateSchema: false });
    const validate = ajv.compile(specs.schemas["3.0.0"] as object);
    assert.ok(validate(doc), JSON.stringify(validate.errors?.slice(0, 5), null, 1));
  });

  it("every reference resolves; operations name their channel and messages of that channel", () => {
    const refs: string[] = [];
    const walk = (v: unknown) => {
      if (Array.isArray(v)) v.forEach(walk);
      else if (v && typeof v === "object") {
        for (const [k, x] of Object.entries(v)) {
          if (k === "$ref" && typeof x === "string") refs.push(x);
          else walk(x);
        }
      }
    };
    walk(doc);
    assert.ok(refs.length > 100, `${refs.length} references`);
    for (const ref of refs) assert.notEqual(resolve(ref), undefined, `${ref} resolves`);
    for (const [id, op] of Object.entries(doc.operations as Record<string, Json>)) {
      assert.ok(["send", "receive"].includes(op.action), `${id}: action`);
      assert.match(op.channel.$ref, /^#\/channels\/[^/]+$/, `${id}: a channel`);
      assert.ok(op.messages.length > 0, `${id}: messages`);
      for (const m of op.messages) assert.ok(m.$ref.startsWith(`${op.channel.$ref}/messages/`), `${id}: ${m.$ref} is a message of its channel`);
    }
    for (const [id, channel] of Object.entries(doc.channels as Record<string, Json>)) {
      for (const m of Object.values(channel.messages as Record<string, Json>))
        assert.match(m.$ref, /^#\/components\/messages\//, `${id}: messages are components`);
    }
  });

  it("every event of the table is in the document with its schema and direction", () => {
    const expected: (readonly [string, z.ZodType, "input" | "output", "receive" | "send"])[] = [
      ...Object.entries(EVENT_TABLE).map(([event, entry]) => [event, entry.schema, "input", "receive"] as const),
      ...Object.entries(SERVER_EVENT_SCHEMAS).map(([event, schema]) => [event, schema, "output", "send"] as const),
    ];
    for (const channel of [ROOM, WS]) {
      const messages = messagesOf(channel);
      const operations = operationsOf(channel);
      for (const [event, schema, io, action] of expected) {
        if (channel === ROOM && (JSON_ONLY_SERVER_EVENTS as readonly string[]).includes(event)) {
          assert.ok(!messages.has(event), `${event} is not a room message`);
          continue;
        }
        const message = messages.get(event);
        assert.ok(message, `${channel}: ${event} is a message`);
        assert.deepEqual(operations.get(event), [action], `${channel}: ${event} has one ${action} operation`);
        const payload = deref(message.payload);
        const data = channel === WS ? deref(payload.properties.data) : payload;
        if (channel === WS) assert.equal(payload.properties.event.const, event, `${event}: the frame names the event`);
        assert.deepEqual(data, jsonSchemaOf(schema, io), `${channel}: ${event} carries its schema`);
      }
    }
  });

  it("what the server sends on both transports fits the document's schemas", async () => {
    const players: TestPlayer[] = [];
    try {
      const a = await jsonPlayer(server);
      players.push(a);
      const b = await sdkPlayer(server);
      players.push(b);
      // Chat, a move, a refused payload, a trade asked and cancelled, a refused trade event.
      a.send("player:chat", { text: "hello" });
      await b.next("chat:message", (m) => m.text === "hello");
      const me = a.sync().position;
      a.send("player:move", { x: me.x + 1, z: me.z });
      await a.next("world:update", (u) => u.players[a.id]?.x === me.x + 1);
      a.send("player:move", { x: "east" });
      await a.next("chat:message", (m) => m.type === "system");
      a.send("tradeRequest", { targetPlayerId: b.id });
      const { tradeId } = await b.next("tradeIncoming");
      a.send("tradeCancel", { tradeId });
      await b.next("tradeCancelled", (c) => c.tradeId === tradeId);
      a.send("tradeAddItem", { tradeId: "nope", inventorySlot: 99, quantity: 1 });
      await a.next("tradeError", (e) => e.code === "INVALID_SLOT");

      const ajv = new Ajv({ allErrors: true, strict: false });
      const seen = new Set<string>();
      for (const p of players) {
        for (const { event, data } of p.received) {
          if (event.startsWith("__")) continue; // Colyseus's own (the playground's message list)
          assert.ok(Object.hasOwn(SERVER_EVENT_SCHEMAS, event), `${p.kind}: ${event} is a server event of the table`);
          const key = event.replace(/[^A-Za-z0-9._-]/g, ".");
          const validate = ajv.getSchema(key) ?? (ajv.addSchema(doc.components.schemas[key], key), ajv.getSchema(key)!);
          assert.ok(validate(data), `${p.kind}: ${event} ${JSON.stringify(data).slice(0, 300)} fits: ${JSON.stringify(validate.errors?.slice(0, 3))}`);
          seen.add(event);
        }
      }
      for (const event of ["player:sync", "world:update", "chat:message", "tradeIncoming", "tradeCancelled", "tradeError"])
        assert.ok(seen.has(event), `${event} was checked`);
    } finally {
      await Promise.all(players.map((p) => p.close()));
    }
  });

  it("every message and operation of the document is an event of the table", () => {
    const client = new Set(Object.keys(EVENT_TABLE));
    const serverEvents = new Set(Object.keys(SERVER_EVENT_SCHEMAS));
    for (const [id, message] of Object.entries(doc.components.messages as Record<string, Json>)) {
      assert.ok(client.has(message.name) || serverEvents.has(message.name), `${id} (${message.name}) is in the table`);
    }
    for (const channel of [ROOM, WS]) {
      for (const [event, actions] of operationsOf(channel)) {
        for (const action of actions)
          assert.ok(action === "receive" ? client.has(event) : serverEvents.has(event), `${channel}: ${action} ${event} is in the table`);
      }
    }
  });
});
