/**
 * The MCP server over Streamable HTTP (`/mcp`) through the SDK's own client, against the real server
 * (TICK_MS=50, shared PGlite): authentication, the tool list, observe, walk (reached, blocked,
 * refused) and chat heard by a `/ws` player — the MCP session is an ordinary player of the world.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, RawPlayer, tokenFor } from "../../helpers/clients.js";
import { McpAgent } from "../../helpers/mcp.js";
import { startTestServer } from "../../helpers/server.js";

describe("MCP over Streamable HTTP", function () {
  this.timeout(60_000);
  let server: GameServer;
  let agents: McpAgent[] = [];
  let raws: RawPlayer[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    await Promise.all(agents.map((a) => a.close()));
    await closeAll(raws);
    agents = [];
    raws = [];
  });

  const agent = async (token = tokenFor().token) => {
    const a = await McpAgent.connect(server.url, { token });
    agents.push(a);
    return a;
  };

  it("refuses a session without a valid token, and a request without a session", async () => {
    const init = {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "x", version: "1" } },
    };
    const post = (headers: Record<string, string>, body: unknown = init) =>
      fetch(`${server.url}/mcp`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
        body: JSON.stringify(body),
      });
    assert.equal((await post({})).status, 401);
    assert.equal((await post({ authorization: "Bearer nonsense" })).status, 401);
    const { token } = tokenFor();
    const r = await post({ authorization: `Bearer ${token}` }, { jsonrpc: "2.0", id: 2, method: "tools/list" });
    assert.equal(r.status, 400);
    assert.equal((await post({ authorization: `Bearer ${token}`, "mcp-session-id": "nope" })).status, 404);
    assert.equal((await post({ authorization: `Bearer ${token}`, origin: "https://evil.example" })).status, 403);
  });

  it("lists the tools, observes, walks and chats as a player of the world", async () => {
    const a = await agent();
    const { tools } = await a.client.listTools();
    const names = tools.map((t) => t.name);
    for (const n of ["observe", "walk", "walk_to", "gather", "chat", "trade_request", "trade_accept", "goal_get"]) assert.ok(names.includes(n), n);
    const obs = await a.call("observe");
    assert.equal(obs.outcome, "completed");
    assert.match(obs.observation, /^You: \S+ \(/);
    assert.deepEqual(obs.status.tile, [0, 0]);

    const walked = await a.call("walk", { x: 2, z: 3 });
    assert.equal(walked.outcome, "reached", JSON.stringify(walked));
    assert.deepEqual(walked.status.tile, [2, 3]);
    const id = /^You: \S+ \(([^)]+)\)/.exec(obs.observation)![1]!;
    assert.deepEqual(server.world.players.get(id)!.tile, { x: 2, z: 3 }, "the world's player moved");

    const far = await a.call("walk", { x: 500, z: 0 });
    assert.equal(far.outcome, "refused");
    assert.equal(far.code, "OUT_OF_BOUNDS");

    const listener = await RawPlayer.connect(server);
    raws.push(listener);
    await listener.waitWorld((w) => w.players.size >= 2, "the listener sees the agent");
    await a.call("observe");
    const m = listener.log.mark();
    const said = await a.call("chat", { text: "hello from an agent" });
    assert.equal(said.outcome, "completed", JSON.stringify(said));
    const heard = await listener.log.waitFor("chat:message", (c) => c.text === "hello from an agent", { since: m });
    assert.equal(heard.type, "public");
  });

  it("a second connection for the character replaces the session, which then answers DISCONNECTED", async () => {
    const t = tokenFor();
    const a = await agent(t.token);
    const obs = await a.call("observe");
    const id = /^You: \S+ \(([^)]+)\)/.exec(obs.observation)![1]!;
    const socket = await RawPlayer.connect(server, { token: t.token, characterId: id });
    raws.push(socket);
    const after = await a.call("walk", { x: 1, z: 1 });
    assert.equal(after.outcome, "refused");
    assert.equal(after.code, "DISCONNECTED");
    assert.match(after.detail, /4009/);
    assert.equal(server.world.players.get(id)!.connection?.kind, "json", "the socket plays it");
    socket.send("player:move", { x: 1, z: 0 });
    await socket.waitWorld((w) => w.players.get(id)?.x === 1, "the socket's player moves");
    assert.equal(socket.log.isClosed, false);
  });

  it("answers a schema violation as a tool error and changes nothing", async () => {
    const a = await agent();
    const r = await a.raw("walk", { x: 1.5, z: "a" });
    assert.equal(r.isError, true);
    const obs = await a.call("observe");
    assert.deepEqual(obs.status.tile, [0, 0]);
  });
});
