/**
 * No escape from a fight through the agent routes (docs/protocol.md "Leaving in combat"): re-registering
 * an agent, revoking it (`DELETE /api/agent/:id`) and `isAgent: false` close its connection (4003) at
 * once, but a character in combat stays in the world, still fought, until the fight is over.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { becomeAdmin, teleport, until } from "../../helpers/trade.js";

describe("agent routes while the character is in combat", function () {
  this.timeout(90_000);
  let server: GameServer;
  const players: TestPlayer[] = [];
  before(async function () {
    this.timeout(120_000);
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  });
  after(async () => {
    await Promise.all(players.map((p) => p.close()));
    await server?.close();
  });

  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const r = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json().catch(() => undefined)) as any };
  };

  /** A free tile next to a goblin. */
  const besideGoblin = () => {
    for (const id of server.world.npcIdsOf("goblin")) {
      const goblin = server.world.npcs.get(id)!;
      for (const [dx, dz] of [
        [1, 0],
        [-1, 0],
        [0, 1],
        [0, -1],
      ] as const) {
        const x = goblin.x + dx;
        const z = goblin.z + dz;
        if (server.content.inBounds(x, z) && !server.content.isBlocked(x, z)) return { goblin, x, z };
      }
    }
    throw new Error("no free tile next to a goblin");
  };

  const cases: [string, (p: TestPlayer, agentId: string) => Promise<{ status: number; body: any }>][] = [
    ["re-registering the agent", (p) => api("POST", "/api/agent/register", p.token, { characterId: p.id })],
    ["DELETE /api/agent/:id", (p, agentId) => api("DELETE", `/api/agent/${agentId}`, p.token)],
    ["isAgent: false", (p) => api("POST", `/api/character/${p.id}/agent`, p.token, { isAgent: false })],
  ];
  for (const [what, act] of cases) {
    it(`${what} mid-fight: the connection closes, the character stays until the fight is over`, async () => {
      const p = await sdkPlayer(server);
      players.push(p);
      const reg = await api("POST", "/api/agent/register", p.token, { characterId: p.id });
      assert.equal(reg.status, 201, JSON.stringify(reg.body));
      await becomeAdmin(p);
      const world = server.world;
      const me = world.player(p.id)!;
      me.health = me.maxHealth;
      const spot = besideGoblin();
      await teleport(p, spot.x, spot.z);
      await p.next("combat:hit", (d) => d.targetId === p.id && d.attackerId === spot.goblin.id, { timeoutMs: 30_000 });
      assert.ok(world.inCombat(me), "in combat");
      players.splice(players.indexOf(p), 1); // closed by the server here: a leave of ours would never resolve
      const r = await act(p, reg.body.agentId as string);
      assert.ok(r.status >= 200 && r.status < 300, `${what}: ${r.status} ${JSON.stringify(r.body)}`);
      await until(() => world.player(p.id)?.connection === undefined, "the connection to close");
      assert.equal(world.player(p.id), me, "still in the world while in combat");
      assert.ok(world.inCombat(me) || me.dead, "the fight goes on");
      // Once out of combat the tick removes it (the combat-logout rule).
      await until(() => world.player(p.id) === undefined, "removed once the fight is over", 40_000);
    });
  }
});
