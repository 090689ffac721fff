/**
 * `observe` in a crowd: a session told of 300 players, 300 NPCs, 200 resource nodes and 300 ground
 * items (more than the world's view bounds would ever send) answers at most MAX_OBSERVE_CHARS
 * characters in text and in JSON, nearest first, with its trade partner and attackers always in
 * even when they are the farthest.
 */
import assert from "node:assert/strict";
import { MAX_OBSERVE_CHARS, observationJson, observationText, observe } from "../../../src/mcp/observe.js";
import { GameSession } from "../../../src/mcp/session.js";
import { shippedContent } from "../../helpers/api.js";

const ME = "me";

function crowdedSession(): GameSession {
  const s = new GameSession();
  const sock = s.socket();
  const frame = (event: string, data: unknown) => sock.send(JSON.stringify({ event, data }));
  frame("player:sync", {
    id: ME,
    name: "Me",
    combatLevel: 3,
    position: { x: 0, y: 0, z: 0 },
    health: 90,
    maxHealth: 100,
    inventory: [],
    equipment: {},
    goalsPaused: false,
    coins: 5,
  });
  const ring = (i: number) => ({ x: (i % 41) - 20, z: Math.floor(i / 41) - 4 });
  const players: Record<string, unknown> = { [ME]: { id: ME, name: "Me", x: 0, z: 0, activity: "idle", targetId: "" } };
  for (let i = 0; i < 300; i++)
    players[`p${i}`] = { id: `p${i}`, name: `Player${i}`, ...ring(i), health: 100, maxHealth: 100, combatLevel: 3, activity: "walking", targetId: "" };
  players.partner = { id: "partner", name: "Partner", x: 24, z: 24, health: 100, maxHealth: 100, combatLevel: 3, activity: "trading", targetId: "" };
  players.attacker = { id: "attacker", name: "Bandit", x: -24, z: 24, health: 100, maxHealth: 100, combatLevel: 9, activity: "attack", targetId: ME };
  const npcs: Record<string, unknown> = {};
  for (let i = 0; i < 300; i++)
    npcs[`n${i}`] = { id: `n${i}`, npcId: "goblin", name: "Goblin", ...ring(i), health: 5, maxHealth: 5, combatLevel: 2, targetId: "" };
  const resources: Record<string, unknown> = {};
  for (let i = 0; i < 200; i++) resources[`r${i}`] = { id: `r${i}`, type: "tree", skill: "woodcutting", ...ring(i), depleted: false };
  const groundItems: Record<string, unknown> = {};
  for (let i = 0; i < 300; i++) groundItems[`g${i}`] = { id: `g${i}`, itemId: "bones", quantity: 1, ...ring(i) };
  frame("world:update", { tick: 1, players, npcs, resources, groundItems });
  frame("tradeStarted", { tradeId: "t1", partnerId: "partner", partnerName: "Partner", partnerLevel: 3, partnerFreeSlots: 20, roomId: "x" });
  for (let i = 0; i < 20; i++)
    frame("chat:message", { id: `c${i}`, type: "public", fromId: `p${i}`, fromName: `Player${i}`, text: "x".repeat(200), timestamp: "" });
  return s;
}

describe("observe in a crowd", () => {
  it("stays within the character bound in both formats and keeps the partner and attackers", async () => {
    const content = await shippedContent();
    const s = crowdedSession();
    for (const perKind of [undefined, 50]) {
      const o = observe(s, content, { perKind, recentSince: 0 });
      assert.equal(o.players[0]!.id === "partner" || o.players[0]!.id === "attacker", true);
      assert.deepEqual(new Set(o.players.slice(0, 2).map((p) => p.id)), new Set(["partner", "attacker"]));
      const text = observationText(o);
      const json = observationJson(o);
      assert.ok(text.length <= MAX_OBSERVE_CHARS, `text ${text.length}`);
      assert.ok(json.length <= MAX_OBSERVE_CHARS, `json ${json.length}`);
      assert.match(text, /TRADE PARTNER/);
      assert.match(text, /ATTACKING YOU/);
      const parsed = JSON.parse(json);
      assert.deepEqual(new Set(parsed.players.slice(0, 2).map((p: { id: string }) => p.id)), new Set(["partner", "attacker"]));
      // After the priorities, nearest first.
      const rest = parsed.players.slice(2).map((p: { d: number }) => p.d);
      assert.deepEqual(
        rest,
        [...rest].sort((a: number, b: number) => a - b),
      );
      assert.ok(parsed.more.players > 0, "the cut is counted");
    }
    assert.ok(observationText(observe(s, content, { recentSince: 0 }), 500).length <= 500);
  });
});
