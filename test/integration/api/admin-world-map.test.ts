/** `GET /api/admin/world-map` (docs/client.md "Admin world map"): every player and NPC of a world, admins only. */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startTestServer, TEST_ENV } from "../../helpers/server.js";

describe("admin world map API", () => {
  let server: GameServer;
  let player: TestPlayer;

  before(async () => {
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
    player = await sdkPlayer(server);
  });
  after(async () => {
    await player?.close();
    await server?.close();
  });

  const get = (path: string, code?: string) => fetch(server.url + path, { headers: code ? { "x-admin-code": code } : {} });

  it("refuses callers without the admin code (403), also a wrong code", async () => {
    assert.equal((await get("/api/admin/world-map")).status, 403);
    const r = await get("/api/admin/world-map", "wrong");
    assert.equal(r.status, 403);
    assert.equal((await r.json()).error.code, "FORBIDDEN");
  });

  it("lists every player and NPC of the world for an admin, wherever they are", async () => {
    const r = await get("/api/admin/world-map?world=1", TEST_ENV.ADMIN_CODE);
    assert.equal(r.status, 200);
    const map = await r.json();
    assert.equal(map.world, 1);
    const me = map.players.find((p: { id: string }) => p.id === player.id);
    assert.ok(me, "the joined player");
    assert.equal(me.online, true);
    // Every NPC of the content, not only those near a player.
    const spawns = [...server.world.content.npcs.values()].reduce((n, d) => n + d.spawns.length, 0);
    assert.equal(map.npcs.length, spawns);
    assert.ok(map.npcs.every((n: { name: string; alive: boolean }) => typeof n.name === "string" && typeof n.alive === "boolean"));
  });

  it("answers 404 for a world this process does not host", async () => {
    assert.equal((await get("/api/admin/world-map?world=9", TEST_ENV.ADMIN_CODE)).status, 404);
  });
});
