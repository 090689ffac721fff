/**
 * Scripted MCP sessions through the SDK's own client over Streamable HTTP, against the real server
 * (TICK_MS=50, shared PGlite): from observe to a cooked fish (chop, fish, light a fire, cook on it);
 * two MCP agents completing a trade; an agent paused by its owner (goal/stop) refused with
 * GOALS_PAUSED and its running action interrupted, then playing again after resume.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { restClient } from "../../helpers/api.js";
import { tokenFor } from "../../helpers/clients.js";
import { McpAgent, type ToolAnswer } from "../../helpers/mcp.js";
import { startTestServer } from "../../helpers/server.js";

describe("MCP sessions that play", function () {
  this.timeout(90_000);
  let server: GameServer;
  let agents: McpAgent[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
  });

  /** A new account with one character (made through REST), optionally with skills set in storage first. */
  const character = async (xp: Record<string, number> = {}) => {
    const t = tokenFor();
    const r = await restClient(server.url)("POST", "/api/character", { token: t.token, body: { name: `M${Math.random().toString(36).slice(2, 9)}` } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    for (const [skill, value] of Object.entries(xp)) {
      await server.storage.orm.em.fork().getConnection().execute(`update characters set ${skill}_xp = ? where id = ?`, [value, r.body.id]);
    }
    return { ...t, characterId: r.body.id as string };
  };
  const connect = async (token: string, characterId?: string) => {
    const a = await McpAgent.connect(server.url, { token, characterId });
    agents.push(a);
    return a;
  };
  const ok = (r: ToolAnswer, outcome = "completed") => assert.equal(r.outcome, outcome, JSON.stringify(r));
  const count = (a: ToolAnswer, itemId: string) =>
    (a.inventory as { itemId: string; quantity: number }[]).filter((i) => i.itemId === itemId).reduce((n, i) => n + i.quantity, 0);
  const inventory = (a: McpAgent) => a.resource("game://inventory");

  it("plays from observe to a cooked fish", async () => {
    const c = await character({ cooking: 20_000 });
    const a = await connect(c.token, c.characterId);
    const first = await a.call("observe", { format: "json" });
    const seen = JSON.parse(first.observation);
    assert.equal(seen.self.id, c.characterId);

    ok(await a.call("walk", { x: -16, z: -2, run: true }), "reached");
    const trees = JSON.parse((await a.call("observe", { format: "json" })).observation).resources.filter((r: { info: string }) => /woodcutting/.test(r.info));
    assert.ok(trees.length > 0, "a tree in view");
    ok(await a.call("gather", { targetId: trees[0].id, count: 1 }));
    assert.equal(count(await inventory(a), "logs"), 1);

    ok(await a.call("walk", { x: 58, z: 2, run: true }), "reached");
    const spots = JSON.parse((await a.call("observe", { format: "json" })).observation).resources.filter((r: { info: string }) => /raw_shrimp/.test(r.info));
    const fished = await a.call("gather", { targetId: spots[0].id, count: 1 });
    ok(fished);
    assert.equal(fished.item, "raw_shrimp");

    ok(await a.call("walk", { x: 56, z: 2 }), "reached");
    const lit = await a.call("light_fire");
    ok(lit);
    assert.match(lit.messages.join(" "), /fire catches/);
    const fire = JSON.parse((await a.call("observe", { format: "json" })).observation).resources.find((r: { name: string }) => r.name === "Fire");
    assert.ok(fire, "the fire is in view");
    const cooked = await a.call("cook", { targetId: fire.id });
    ok(cooked);
    assert.match(cooked.messages.join(" "), /You cook the shrimp/);
    const inv = await inventory(a);
    assert.equal(count(inv, "raw_shrimp"), 0);
    assert.equal(count(inv, "shrimp"), 3, "the starter kit's 2 and the one cooked");
  });

  it("two MCP agents complete a trade", async () => {
    const [ca, cb] = [await character(), await character()];
    const a = await connect(ca.token, ca.characterId);
    const b = await connect(cb.token, cb.characterId);
    const asked = await a.call("trade_request", { targetPlayerId: cb.characterId, wait: 0 });
    assert.ok(["in_progress", "completed"].includes(asked.outcome), JSON.stringify(asked));
    const seenByB = await b.call("observe");
    const tradeId = /trade: request (\S+) from/.exec(seenByB.observation)?.[1] ?? /request (\S+) from/.exec(String(seenByB.status.trade))![1]!;
    ok(await b.call("trade_respond", { tradeId, accept: true }));
    if (asked.outcome === "in_progress") ok(await a.call("poll", { handle: asked.handle }));
    const axeSlot = (await inventory(a)).inventory.find((i: { itemId: string }) => i.itemId === "bronze_axe").slot;
    ok(await a.call("trade_offer", { tradeId, inventorySlot: axeSlot, quantity: 1 }));
    ok(await b.call("trade_offer", { tradeId, coins: 10 }));
    const [ra, rb] = await Promise.all([a.call("trade_accept", { tradeId }), b.call("trade_accept", { tradeId })]);
    for (const r of [ra, rb]) {
      ok(r);
      assert.match(r.detail, /confirmation screen/);
    }
    const [da, db] = await Promise.all([a.call("trade_accept", { tradeId }), b.call("trade_accept", { tradeId })]);
    ok(da);
    ok(db);
    assert.deepEqual(da.receivedItems, [{ itemId: "coins", quantity: 10 }]);
    assert.deepEqual(db.receivedItems, [{ itemId: "bronze_axe", quantity: 1 }]);
    assert.equal(count(await inventory(b), "bronze_axe"), 2);
    assert.equal(db.status.trade, null);
  });

  it("a paused agent is refused with GOALS_PAUSED and its running action is interrupted, until resumed", async () => {
    const owner = await character();
    const api = restClient(server.url);
    const reg = await api("POST", "/api/agent/register", { token: owner.token, body: { characterId: owner.characterId } });
    assert.equal(reg.status, 201);
    const a = await connect(reg.body.token);
    ok(await a.call("walk", { x: -16, z: -2, run: true }), "reached");
    const tree = JSON.parse((await a.call("observe", { format: "json" })).observation).resources.find((r: { info: string }) => /woodcutting/.test(r.info));
    const running = await a.call("gather", { targetId: tree.id, wait: 0 });
    assert.equal(running.outcome, "in_progress");
    assert.equal((await api("POST", `/api/agents/${reg.body.agentId}/goal/stop`, { token: owner.token })).status, 200);
    const stopped = await a.call("poll", { handle: running.handle });
    assert.equal(stopped.outcome, "interrupted", JSON.stringify(stopped));
    assert.equal(stopped.by, "goal_stop");
    const refused = await a.call("walk", { x: -14, z: -2 });
    assert.equal(refused.outcome, "refused");
    assert.equal(refused.code, "GOALS_PAUSED");
    assert.equal(refused.status.paused, true);
    assert.equal((await a.call("goal_set", { goalId: "woodcutting:tree" })).code, "GOALS_PAUSED");
    ok(await a.call("observe"));
    ok(await a.call("chat", { text: "waiting for my owner" }));
    assert.deepEqual(server.world.players.get(owner.characterId)!.tile, { x: refused.status.tile[0], z: refused.status.tile[1] }, "it did not move");
    assert.equal((await api("POST", `/api/agents/${reg.body.agentId}/goal/resume`, { token: owner.token })).status, 200);
    ok(await a.call("walk", { x: -14, z: -2 }), "reached");
    const goal = await a.call("goal_set", { goalId: "woodcutting:tree", targetCount: 2 });
    ok(goal);
    assert.equal(goal.goal.type, "woodcutting");
  });
});
