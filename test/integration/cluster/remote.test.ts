/**
 * The holder side and the failure paths of worlds across processes (src/cluster/remote.ts), in one
 * process on its local bus: `character.release` takes a player out exactly as a second join does;
 * the handlers refuse malformed payloads; a character whose lease a process that does not answer
 * holds gets 503 SERVER_BUSY (Retry-After) from REST and counts as offline, and nothing is written.
 * The same paths between real processes: cross.test.ts.
 */
import assert from "node:assert/strict";
import { BusError } from "../../../src/cluster/bus.js";
import { CLOSE_CODES } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, eventually, RawPlayer, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

describe("cluster: requests about characters, holder side and failures", function () {
  this.timeout(60_000);
  let server: GameServer;
  const players: (SdkPlayer | RawPlayer)[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => closeAll(players.splice(0)));

  const sql = <T = any>(query: string, params: unknown[] = []) => server.storage.orm.em.fork().getConnection().execute<T[]>(query, params);
  const leaseOf = async (id: string) => (await sql<{ owner: string }>("select owner from character_leases where character_id = ?", [id]))[0];
  const api = async (method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, headers: res.headers, body: (await res.json().catch(() => undefined)) as any };
  };

  it("the lease owner is the Colyseus process id; character.release closes the player with 4009, saves it and releases the lease", async () => {
    const p = await RawPlayer.connect(server);
    players.push(p);
    assert.equal((await leaseOf(p.id))?.owner, server.processId);
    const released = await server.bus.request(server.processId, "character.release", { characterId: p.id });
    assert.equal(released, true);
    assert.equal((await p.log.waitClose()).code, CLOSE_CODES.REPLACED);
    assert.equal(server.world.isInWorld(p.id), false);
    assert.equal(await leaseOf(p.id), undefined);
    // Nothing held: nothing to do, still true.
    assert.equal(await server.bus.request(server.processId, "character.release", { characterId: p.id }), true);
  });

  it("refuses malformed payloads without calling the world (BAD_PAYLOAD)", async () => {
    for (const [method, payload] of [
      ["world.applyGoal", { characterId: 5, goal: null, goalsPaused: true }],
      ["world.disconnect", { characterId: "x", code: 99_999, reason: "r" }],
      ["world.surroundings", { characterId: "x", radius: -1 }],
      ["world.deliverPrivateMessage", { characterId: "x", from: { name: "" }, text: "hi" }],
      ["character.release", {}],
      ["trade.admits", { roomId: "r" }],
    ] as const) {
      await assert.rejects(server.bus.request(server.processId, method, payload), (e: unknown) => e instanceof BusError && e.code === "BAD_PAYLOAD", method);
    }
  });

  it("a character held by a process that does not answer: REST 503 SERVER_BUSY with Retry-After, offline for presence, nothing written", async () => {
    const p = await SdkPlayer.join(server);
    const id = p.id;
    await p.leave();
    await eventually(async () => (await leaseOf(id)) === undefined, "released");
    const reg = await api("POST", "/api/agent/register", p.token, { characterId: id });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    await sql("insert into character_leases (character_id, owner, world, expires_at) values (?, 'gone-process', 1, now() + interval '60 seconds')", [id]);
    const stop = await api("POST", `/api/agents/${reg.body.agentId}/goal/stop`, p.token);
    assert.equal(stop.status, 503, JSON.stringify(stop.body));
    assert.equal(stop.body.error.code, "SERVER_BUSY");
    assert.equal(stop.headers.get("retry-after"), "5");
    const [row] = await sql<{ goals_paused: boolean }>("select goals_paused from characters where id = ?", [id]);
    assert.equal(row!.goals_paused, false, "nothing written");
    const message = await api("POST", `/api/agents/${reg.body.agentId}/message`, p.token, { text: "hello?" });
    assert.equal(message.status, 409, "offline: not delivered");
    assert.equal(await server.worldAccess.isOnline(id), false);
  });
});
