/**
 * The MCP tools, the AsyncAPI document and the event table cannot drift: every tool that sends a
 * client event serves (tools/list, through the SDK's in-memory client) the very JSON Schema the
 * AsyncAPI document gives each field it passes on; the event table runs that event with the same
 * zod schema; every client event has a tool; and each tool's handler sends its event with the
 * fields it declares passed on unchanged (valid arguments generated from its own schema).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { EVENT_TABLE } from "../../../rooms/world/event-table.js";
import { CLIENT_EVENTS, CLIENT_EVENT_NAMES } from "../../../src/events.js";
import { createLogger } from "../../../src/logger.js";
import { MCP_TOOLS, sessionServer } from "../../../src/mcp/mcp-server.js";
import { Jobs } from "../../../src/mcp/outcome.js";
import { GameSession } from "../../../src/mcp/session.js";
import type { ToolContext } from "../../../src/mcp/tools.js";
import { asyncApiDocument, messageKey } from "../../../src/http/asyncapi.js";
import { shippedContent } from "../../helpers/api.js";
import { validFor } from "../../helpers/fuzz.js";

const ME = "me-1";
/** A session fed a private state and a view, as the world would send them. */
function fedSession(): GameSession {
  const s = new GameSession();
  const sock = s.socket();
  const frame = (event: string, data: unknown) => sock.send(JSON.stringify({ event, data }));
  const inv = ["logs", "tinderbox", "raw_shrimp", "bronze_axe"].map((itemId, slot) => ({ slot, itemId, quantity: 1 }));
  frame("player:sync", {
    id: ME,
    name: "Me",
    position: { x: 0, y: 0, z: 0 },
    health: 10,
    maxHealth: 10,
    inventory: inv,
    equipment: {},
    goalsPaused: false,
    coins: 5,
  });
  const entity = { x: 1, z: 1 };
  frame("world:update", {
    tick: 1,
    players: { [ME]: { id: ME, x: 0, z: 0, activity: "idle" }, p2: { id: "p2", name: "Other", ...entity } },
    npcs: { n1: { id: "n1", name: "Goblin", health: 5, maxHealth: 5, ...entity } },
    resources: { r1: { id: "r1", type: "tree", skill: "woodcutting", depleted: false, ...entity } },
    groundItems: { g1: { id: "g1", itemId: "bones", quantity: 1, ...entity } },
  });
  frame("tradeStarted", { tradeId: "t1", partnerId: "p2", partnerName: "Other", partnerLevel: 3, partnerFreeSlots: 20, roomId: "x" });
  return s;
}

describe("MCP tools, AsyncAPI and the event table agree", () => {
  const doc = asyncApiDocument("test") as unknown as { components: { schemas: Record<string, { properties: Record<string, unknown> }> } };

  it("every client event has a tool, and the event table runs it with the same schema", () => {
    for (const event of CLIENT_EVENT_NAMES) {
      assert.ok(
        MCP_TOOLS.some((t) => t.event === event),
        `no tool sends ${event}`,
      );
      assert.equal(EVENT_TABLE[event].schema, CLIENT_EVENTS[event], `${event}: the table's schema is the protocol's`);
    }
  });

  it("tools/list serves, for every field a tool passes on, the AsyncAPI document's JSON Schema of that field", async () => {
    const content = await shippedContent();
    const session = fedSession();
    const ctx: ToolContext = { session, jobs: new Jobs(session), content, tickMs: 50, accountId: "a", memo: { observedSeq: 0 } };
    const server = sessionServer(ctx, createLogger("silent"));
    const [a, b] = InMemoryTransport.createLinkedPair();
    const client = new Client({ name: "t", version: "1" });
    await Promise.all([server.connect(a), client.connect(b)]);
    const { tools } = await client.listTools();
    assert.deepEqual(
      tools.map((t) => t.name),
      MCP_TOOLS.map((t) => t.name),
    );
    let compared = 0;
    for (const def of MCP_TOOLS) {
      const served = tools.find((t) => t.name === def.name)!.inputSchema as { properties?: Record<string, unknown> };
      if (!def.event) continue;
      const payload = doc.components.schemas[messageKey(def.event)]!;
      for (const field of def.passes ?? []) {
        assert.ok(served.properties?.[field], `${def.name} serves ${field}`);
        assert.deepEqual(served.properties![field], payload.properties[field], `${def.name}.${field} is ${def.event}.${field}`);
        compared++;
      }
    }
    assert.ok(compared >= 30, `${compared} fields compared`);
    await client.close();
  });

  it("each tool's handler sends its event with the fields it passes on unchanged", async () => {
    const content = await shippedContent();
    for (const def of MCP_TOOLS.filter((t) => t.event)) {
      await fc.assert(
        fc.asyncProperty(validFor(def.input), async (generated) => {
          const session = fedSession();
          const args = { ...(generated as Record<string, unknown>), wait: 0 };
          // Ids the session can see, where the tool looks them up.
          if ("targetId" in args && !["use_item", "cook", "buy", "sell"].includes(def.name)) args.targetId = def.name === "walk_to" ? "r1" : "n1";
          if ("tradeId" in args) args.tradeId = "t1";
          const parsed = def.input.safeParse(args);
          if (!parsed.success) return; // the refinement of tradeAddItem (coins or a slot)
          const sent: { event: string; data: Record<string, unknown> }[] = [];
          session.send = (event, data) => void sent.push({ event, data: data as Record<string, unknown> });
          const ctx: ToolContext = { session, jobs: new Jobs(session), content, tickMs: 50, accountId: "a", memo: { observedSeq: 0 } };
          void def.run(ctx, parsed.data as Record<string, unknown>);
          await Promise.resolve();
          assert.equal(sent[0]?.event, def.event, `${def.name} sends ${def.event}`);
          assert.equal(CLIENT_EVENTS[def.event!].safeParse(sent[0]!.data).success, true, `${def.name}: a valid ${def.event}`);
          for (const f of (def.passes ?? []).filter((f) => (parsed.data as Record<string, unknown>)[f] !== undefined))
            assert.deepEqual(sent[0]!.data[f], (parsed.data as Record<string, unknown>)[f], `${def.name} passes ${f}`);
        }),
        { numRuns: 15, seed: 20_261_127 },
      );
    }
  });
});
