/**
 * The stdio entry (`npm run mcp`, src/mcp/stdio.ts) through the SDK's own client started as a
 * process: the same tools as `/mcp`, a walk that ends reached, resources and a subscription.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { eventually, tokenFor } from "../../helpers/clients.js";
import { McpAgent } from "../../helpers/mcp.js";
import { startTestServer } from "../../helpers/server.js";

describe("MCP over stdio (the proxy)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let a: McpAgent | undefined;

  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await a?.close();
    await server?.close();
  });

  it("lists the same tools, plays, and tells a subscriber its inventory changed", async () => {
    a = await McpAgent.connect(server.url, { token: tokenFor().token, stdio: true });
    const { tools } = await a.client.listTools();
    assert.ok(tools.length >= 30, `${tools.length} tools`);
    const walked = await a.call("walk", { x: -2, z: 1 });
    assert.equal(walked.outcome, "reached", JSON.stringify(walked));
    const { resources } = await a.client.listResources();
    assert.deepEqual(resources.map((r) => r.uri).sort(), ["game://character", "game://inventory", "game://skills", "game://world/areas"]);
    const updated: string[] = [];
    const { ResourceUpdatedNotificationSchema } = await import("@modelcontextprotocol/sdk/types.js");
    a.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
    await a.client.subscribeResource({ uri: "game://inventory" });
    const inv = await a.resource("game://inventory");
    const bread = inv.inventory.find((i: { itemId: string }) => i.itemId === "bread");
    const ate = await a.call("use_item", { slot: bread.slot });
    assert.equal(ate.outcome, "completed", JSON.stringify(ate));
    await eventually(() => updated.includes("game://inventory"), "an inventory update notification");
    assert.equal(server.mcp.sessions(), 1);
  });
});
