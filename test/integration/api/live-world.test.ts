/**
 * REST routes whose claims are about the live world, against the real server (TICK_MS=50, shared
 * PGlite) with SDK and raw `/ws` clients: renaming and deleting need the character out of the world
 * (also while a dropped connection lingers, and against a join racing the change), the world
 * snapshot, the agent flag, goal progress, stop and pause, revoking agent tokens on open sockets,
 * and social changes reaching chat and trade requests. Every wait is on an event, a patch or a tick.
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import type { WebSocket } from "ws";
import type { WorldRoom } from "../../../rooms/WorldRoom.js";
import { CLOSE_CODES } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import type { Connection } from "../../../src/world/player.js";
import { restClient, uniqueName, type ApiHarness } from "../../helpers/api.js";
import { admin, becomeAdmin, closeAll, eventually, invCount, lastSync, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

type Request = ApiHarness["request"];
type Client = SdkPlayer | RawPlayer;

/** An account with a token and one character made through REST. */
interface Owner {
  accountId: string;
  token: string;
  characterId: string;
  name: string;
}

/** Helpers over one running server. */
function liveHelpers(get: () => { server: GameServer; request: Request; clients: Client[] }) {
  const owner = async (name = uniqueName("L")): Promise<Owner> => {
    const { request } = get();
    const t = tokenFor();
    const r = await request("POST", "/api/character", { token: t.token, body: { name } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { ...t, characterId: r.body.id, name };
  };
  const anotherCharacter = async (o: Owner): Promise<string> => {
    const r = await get().request("POST", "/api/character", { token: o.token, body: { name: uniqueName("L") } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body.id;
  };
  const sdk = async (token: string, characterId?: string, accountId?: string) => {
    const p = await SdkPlayer.join(get().server, { token, characterId, accountId });
    get().clients.push(p);
    return p;
  };
  const raw = async (token: string, characterId?: string) => {
    const p = await RawPlayer.connect(get().server, { token, characterId });
    get().clients.push(p);
    return p;
  };
  /** Register a character as an agent; its credentials. */
  const register = async (o: Owner, characterId = o.characterId) => {
    const r = await get().request("POST", "/api/agent/register", { token: o.token, body: { characterId } });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return { agentId: r.body.agentId as string, token: r.body.token as string };
  };
  /** Cut an SDK client's socket on the server side with no close frame: the network went away. */
  const cutSdk = async (p: SdkPlayer) => {
    const room = matchMaker.getLocalRoomById(p.room.roomId) as WorldRoom;
    const socket = (room.linkOf(p.id)!.client as unknown as { ref: WebSocket }).ref;
    socket.terminate();
    await p.log.waitClose();
  };
  const lingering = (id: string) => eventually(() => get().server.world.isInWorld(id) && !get().server.world.isOnline(id), `${id} lingering after its drop`);
  /** Resolve after the world has stepped `n` more ticks (seen in an SDK client's state). */
  const ticks = async (p: SdkPlayer, n: number) => {
    const start = p.state.tick as number;
    await p.waitState((s) => s.tick >= start + n, `${n} ticks`);
  };
  return { owner, anotherCharacter, sdk, raw, register, cutSdk, lingering, ticks };
}

describe("REST against the live world (real server)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let request: Request;
  let clients: Client[] = [];
  const h = liveHelpers(() => ({ server, request, clients }));

  before(async () => {
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
    request = restClient(server.url);
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(clients);
    clients = [];
  });

  const row = (id: string) => server.characters.findById(id);

  describe("renaming and deleting need the character out of the world", () => {
    it("a dropped SDK player lingering for reconnection: rename and delete are 409; it reconnects intact; once it left, delete works", async () => {
      const o = await h.owner();
      const p = await h.sdk(o.token, o.characterId, o.accountId);
      p.send("player:move", { x: 2, z: 0 });
      await p.waitAt(2, 0);
      await h.cutSdk(p);
      await h.lingering(o.characterId);

      const rename = await request("PATCH", `/api/character/${o.characterId}`, { token: o.token, body: { name: uniqueName("R") } });
      assert.equal(rename.status, 409, JSON.stringify(rename.body));
      assert.equal(rename.body.error.code, "CONFLICT");
      const v1 = await request("POST", "/api/v1/player", { token: o.token, body: { name: uniqueName("R") } });
      assert.equal(v1.status, 409);
      const del = await request("DELETE", `/api/character/${o.characterId}`, { token: o.token });
      assert.equal(del.status, 409);
      assert.equal(del.body.error.code, "CONFLICT");
      assert.equal((await row(o.characterId))?.name, o.name, "the row is untouched");

      // Reads of the lingering character come from memory, flagged offline.
      const view = await request("GET", `/api/character/${o.characterId}`, { token: o.token });
      assert.equal(view.body.online, false);
      assert.deepEqual(view.body.position, { x: 2, y: 10, z: 0 });

      const m = p.log.mark();
      const back = await p.client.reconnect(p.room.reconnectionToken);
      back.reconnection.enabled = false;
      p.attach(back);
      const sync = await p.log.waitFor("player:sync", () => true, { since: m });
      assert.equal(sync.name, o.name);
      assert.deepEqual(sync.position, { x: 2, y: 10, z: 0 });

      await p.leave();
      await eventually(() => !server.world.isInWorld(o.characterId), "the player left the world");
      const gone = await request("DELETE", `/api/character/${o.characterId}`, { token: o.token });
      assert.equal(gone.status, 204);
      assert.equal(await row(o.characterId), null);
      await assert.rejects(SdkPlayer.join(server, { token: o.token, characterId: o.characterId }), /no such character/);
    });

    it("a dropped raw /ws player: delete is 409 while it lingers, and reads show its live position", async () => {
      const o = await h.owner();
      const p = await h.raw(o.token, o.characterId);
      p.send("player:move", { x: 3, z: 0 });
      await p.waitWorld((w) => w.players.get(p.id)?.x === 3, "moved");
      p.ws.terminate();
      await h.lingering(o.characterId);
      const del = await request("DELETE", `/api/character/${o.characterId}`, { token: o.token });
      assert.equal(del.status, 409);
      const me = await request("GET", `/api/v1/player?characterId=${o.characterId}`, { token: o.token });
      assert.equal(me.status, 200);
      assert.equal(me.body.online, false);
      assert.equal(me.body.position.x, 3);
      assert.ok(await row(o.characterId));
    });

    it("no join completes while the change runs, nor one built from a record read before it ended", async () => {
      const o = await h.owner();
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      const running = server.world.whileOutOfWorld(o.characterId, () => gate);

      await assert.rejects(SdkPlayer.join(server, { token: o.token, characterId: o.characterId }), /being changed/);
      const refused = await RawPlayer.connect(server, { token: o.token, characterId: o.characterId, noWait: true });
      assert.equal((await refused.log.waitClose()).code, 4409);
      assert.equal(refused.log.all("player:sync").length, 0);

      const stale = await server.characters.load(o.characterId);
      release();
      assert.deepEqual(await running, { ok: true, value: undefined });
      const conn: Connection = { id: "test-connection", kind: "json", send: () => undefined, close: () => undefined };
      assert.throws(() => server.world.join(stale!, conn, CLOSE_CODES.REPLACED), /being changed/);
      assert.equal(server.world.isInWorld(o.characterId), false);

      // A join that reads the character afresh goes in; the change is then refused.
      const p = await h.sdk(o.token, o.characterId, o.accountId);
      assert.equal(p.id, o.characterId);
      assert.deepEqual(await server.world.whileOutOfWorld(o.characterId, async () => "never"), { ok: false });
    });

    it("concurrent deletes and joins never leave a character in the world without its row", async () => {
      const owners = await Promise.all(Array.from({ length: 6 }, () => h.owner()));
      const outcomes = await Promise.all(
        owners.map(async (o) => {
          const [del, join] = await Promise.allSettled([
            request("DELETE", `/api/character/${o.characterId}`, { token: o.token }),
            SdkPlayer.join(server, { token: o.token, characterId: o.characterId }),
          ]);
          if (join.status === "fulfilled") clients.push(join.value);
          return { o, status: del.status === "fulfilled" ? del.value.status : 0, joined: join.status === "fulfilled" };
        }),
      );
      for (const { o, status, joined } of outcomes) {
        const stored = await row(o.characterId);
        assert.ok([204, 409].includes(status), `delete answered ${status}`);
        if (status === 204) {
          assert.equal(stored, null);
          assert.equal(server.world.isInWorld(o.characterId), false, "deleted, yet in the world");
        } else {
          assert.ok(stored, "409 but the row is gone");
          assert.ok(joined, "409 only because the join got in");
        }
      }
    });
  });

  describe("GET /api/v1/world", () => {
    it("lists the caller's own connected characters only (every connected player for an admin token), with live positions and combat levels", async () => {
      const a = await h.owner();
      const b = await h.owner();
      const c = await h.owner();
      const pa = await h.sdk(a.token, a.characterId, a.accountId);
      const pb = await h.sdk(b.token, b.characterId, b.accountId);
      await h.sdk(c.token, c.characterId, c.accountId);
      pa.send("player:move", { x: 4, z: 1 });
      await pa.waitAt(4, 1);
      await h.cutSdk(pb);
      await h.lingering(b.characterId);

      const before = Date.now();
      const r = await request("GET", "/api/v1/world", { token: a.token });
      const after = Date.now();
      assert.equal(r.status, 200);
      const ids = (r.body.players as { id: string }[]).map((p) => p.id).sort();
      const connected = [...server.world.players.values()]
        .filter((p) => p.connection)
        .map((p) => p.id)
        .sort();
      // No radar: another connected player (c) is counted, never named or placed.
      assert.deepEqual(ids, [a.characterId], "only the caller's own character");
      assert.ok(connected.includes(c.characterId));
      assert.equal(r.body.playersOnline, connected.length);
      assert.doesNotMatch(JSON.stringify(r.body), new RegExp(c.characterId), "nothing of c in the answer");
      // An admin token sees every connected player, not the dropped one.
      const all = await request("GET", "/api/v1/world", { token: tokenFor(undefined, { roles: ["admin"] }).token });
      const allIds = (all.body.players as { id: string }[]).map((p) => p.id).sort();
      assert.deepEqual(allIds, connected);
      assert.ok(!allIds.includes(b.characterId), "the dropped player is not listed");
      const me = r.body.players.find((p: { id: string }) => p.id === a.characterId);
      assert.deepEqual(me, { id: a.characterId, name: a.name, position: { x: 4, y: 10, z: 1 }, combatLevel: lastSync(pa).combatLevel, isAgent: false });
      const t = Date.parse(r.body.serverTime);
      assert.ok(t >= before - 1 && t <= after + 1, r.body.serverTime);
      assert.equal(r.body.resourceCount, server.world.resources.size);
      assert.ok(r.body.resourceCount > 0);
      assert.ok(r.body.tick > 0 && r.body.tick <= server.world.tick);
      assert.equal(r.body.areas.length, server.content.areas.length);
    });
  });

  describe("the agent flag reaches the live player at once", () => {
    it("POST /api/character/:id/agent and POST /api/agent/register: player:sync and the public state carry isAgent", async () => {
      const o = await h.owner();
      const p = await h.sdk(o.token, o.characterId, o.accountId);
      const watcher = await h.sdk(tokenFor().token);
      await watcher.waitState((s) => s.players.get(p.id)?.isAgent === false, "the player in view, not an agent");

      let m = p.log.mark();
      const on = await request("POST", `/api/character/${o.characterId}/agent`, { token: o.token, body: { isAgent: true } });
      assert.equal(on.status, 200);
      await p.log.waitFor("player:sync", (s) => s.isAgent === true, { since: m });
      await watcher.waitState((s) => s.players.get(p.id)?.isAgent === true, "public isAgent true");

      m = p.log.mark();
      await request("POST", `/api/character/${o.characterId}/agent`, { token: o.token, body: { isAgent: false } });
      await p.log.waitFor("player:sync", (s) => s.isAgent === false, { since: m });
      await watcher.waitState((s) => s.players.get(p.id)?.isAgent === false, "public isAgent false");

      m = p.log.mark();
      await h.register(o);
      await p.log.waitFor("player:sync", (s) => s.isAgent === true, { since: m });
      await watcher.waitState((s) => s.players.get(p.id)?.isAgent === true, "public isAgent true after register");
    });
  });

  describe("goals in the live world", () => {
    const setGoal = (agentId: string, token: string, body: unknown) => request("POST", `/api/agents/${agentId}/goal`, { token, body });

    it("chopping trees counts toward a woodcutting goal, completes it at targetCount, then stops counting; progress is saved", async () => {
      const o = await h.owner();
      const agent = await h.register(o);
      const p = await h.sdk(agent.token);
      await becomeAdmin(p);
      await admin(p, "/tp -16 0");
      let m = p.log.mark();
      const set = await setGoal(agent.agentId, agent.token, { goalId: "woodcutting:tree", targetCount: 2 });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      await p.log.waitFor("player:sync", (s) => s.goal?.type === "woodcutting" && s.goal.progress === 0, { since: m });

      for (const [tree, progress] of [
        ["lumbrook_tree_1", 1],
        ["lumbrook_tree_2", 2],
      ] as const) {
        m = p.log.mark();
        p.send("player:action", { action: "gather", targetId: tree });
        const s = await p.log.waitFor("player:sync", (s) => s.goal?.progress === progress, { since: m, timeoutMs: 30_000 });
        assert.equal(invCount(p, "logs"), progress);
        if (progress === 1) assert.equal(s.goal.completedAt, undefined);
        else assert.ok(!Number.isNaN(Date.parse(s.goal.completedAt)), "completed");
      }
      await p.log.system(/Goal complete: Chop trees \(2\/2\)/);
      const live = await request("GET", `/api/agents/${agent.agentId}/goal`, { token: o.token });
      assert.equal(live.body.goal.progress, 2);
      assert.equal(live.body.goal.targetCount, 2);
      assert.ok(live.body.goal.completedAt);

      m = p.log.mark();
      p.send("player:action", { action: "gather", targetId: "lumbrook_tree_3" });
      const third = await p.log.waitFor(
        "player:sync",
        (s) => s.inventory.some((i: { itemId: string; quantity: number }) => i.itemId === "logs") && invCount(p, "logs") === 3,
        {
          since: m,
          timeoutMs: 30_000,
        },
      );
      assert.equal(third.goal.progress, 2, "a complete goal stops counting");

      await p.leave();
      const saved = await eventually(async () => {
        const c = await row(o.characterId);
        return c?.goal?.progress === 2 && c.goal;
      }, "the progress saved with the character");
      assert.equal(saved.completedAt, live.body.goal.completedAt);
    });

    it("killing, firemaking, cooking, smelting and exploring count toward their goals", async () => {
      const o = await h.owner();
      const agent = await h.register(o);
      const p = await h.sdk(agent.token);
      await becomeAdmin(p);
      const slotOf = (itemId: string) => (lastSync(p).inventory as { slot: number; itemId: string }[]).find((s) => s.itemId === itemId)!.slot;
      /** Set a goal (owner's token) and wait for its player:sync. */
      const goal = async (goalId: string, targetCount?: number) => {
        const m = p.log.mark();
        const r = await setGoal(agent.agentId, o.token, { goalId, ...(targetCount ? { targetCount } : {}) });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        await p.log.waitFor("player:sync", (s) => s.goal?.id === r.body.goal.id, { since: m });
        return r.body.goal.id as string;
      };
      const completed = (id: string, since: number, timeoutMs = 30_000) =>
        p.log.waitFor("player:sync", (s) => s.goal?.id === id && s.goal.completedAt !== undefined, { since, timeoutMs });

      // Kill a chicken.
      const chickenId = server.world.npcIdsOf("chicken")[2]!;
      const chicken = server.world.npcs.get(chickenId)!;
      await admin(p, `/tp ${chicken.spawn.x} ${chicken.spawn.z - 2}`);
      let id = await goal("combat:chicken", 1);
      let m = p.log.mark();
      p.send("player:action", { action: "attack", targetId: chickenId });
      let done = await completed(id, m);
      assert.equal(done.goal.progress, 1);

      // Light logs.
      await admin(p, "/tp 3 3");
      await admin(p, "/give logs 1");
      id = await goal("firemaking:logs", 1);
      m = p.log.mark();
      p.send("inventory:use", { slot: slotOf("logs"), targetSlot: slotOf("tinderbox") });
      await p.log.system(/fire catches/, m);
      done = await completed(id, m);
      assert.equal(done.goal.progress, 1);

      // Smelt a bronze bar.
      await admin(p, "/tp 8 -5");
      await admin(p, "/give copper_ore 1");
      await admin(p, "/give tin_ore 1");
      id = await goal("smithing:smelt_bronze_bar", 1);
      m = p.log.mark();
      p.send("inventory:use", { slot: slotOf("copper_ore"), targetId: "lumbrook_furnace" });
      done = await completed(id, m);
      assert.equal(invCount(p, "bronze_bar"), 1);

      // Cook shrimp on the range until one is not burnt.
      await admin(p, "/tp -9 -4");
      await admin(p, "/give raw_shrimp 20");
      id = await goal("cooking:cook_shrimp", 1);
      const since = p.log.mark();
      for (let i = 0; i < 20 && !lastSync(p).goal?.completedAt; i++) {
        m = p.log.mark();
        p.send("inventory:use", { slot: slotOf("raw_shrimp"), targetId: "lumbrook_range" });
        const said = await p.log.system(/You cook|accidentally burn/, m);
        if (/You cook/.test(said.text)) await completed(id, m);
      }
      done = await completed(id, since);
      assert.equal(done.goal.progress, 1);

      // Walk into Greenwood (an explore goal is done on arrival: targetCount 1).
      await admin(p, "/tp -22 5");
      id = await goal("explore:greenwood");
      assert.equal(lastSync(p).goal.targetCount, 1);
      m = p.log.mark();
      p.send("player:move", { x: -27, z: 5 });
      done = await completed(id, m);
      assert.ok(done.position.x <= -25, "completed inside Greenwood");
    });

    it("stop cancels a real movement path; player:sync carries goal and goalsPaused; chat still reaches the agent", async () => {
      const o = await h.owner();
      const agent = await h.register(o);
      const p = await h.sdk(agent.token);
      let m = p.log.mark();
      const set = await setGoal(agent.agentId, agent.token, { goalId: "explore:lumbrook_meadows" });
      assert.equal(set.status, 200);
      const withGoal = await p.log.waitFor("player:sync", (s) => s.goal !== null && s.goal !== undefined, { since: m });
      assert.deepEqual(withGoal.goal, set.body.goal);
      assert.equal(withGoal.goalsPaused, false);

      p.send("player:move", { x: 0, z: -20 });
      await p.waitState((s) => (s.players.get(p.id)?.z ?? 0) <= -3, "walking");
      m = p.log.mark();
      const stop = await request("POST", `/api/agents/${agent.agentId}/goal/stop`, { token: o.token });
      assert.equal(stop.status, 200);
      assert.equal(stop.body.goalsPaused, true);
      const paused = await p.log.waitFor("player:sync", (s) => s.goalsPaused === true, { since: m });
      assert.equal(paused.goal, null);
      await h.ticks(p, 10);
      assert.equal(p.me.moving, false);
      assert.equal(p.me.z, paused.position.z, "no further step after stop");
      assert.ok(p.me.z > -20, "it did not arrive");

      const refused = await setGoal(agent.agentId, agent.token, { goalId: "explore:lumbrook_meadows" });
      assert.equal(refused.status, 409);
      assert.equal(refused.body.error.code, "GOALS_PAUSED");

      m = p.log.mark();
      const msg = await request("POST", `/api/agents/${agent.agentId}/message`, { token: o.token, body: { text: "come home" } });
      assert.equal(msg.status, 200);
      const chat = await p.log.waitFor("chat:message", (c) => c.text === "come home", { since: m });
      assert.equal(chat.type, "private");
    });
  });

  describe("revoking an agent closes its sockets and refuses the token", () => {
    it("raw /ws: 4003 on revoke, then 4001 for the revoked token", async () => {
      const o = await h.owner();
      const agent = await h.register(o);
      const p = await h.raw(agent.token);
      assert.equal(p.id, o.characterId);
      const r = await request("DELETE", `/api/agent/${agent.agentId}`, { token: o.token });
      assert.equal(r.status, 200);
      assert.equal((await p.log.waitClose()).code, CLOSE_CODES.REVOKED);
      await eventually(() => !server.world.isInWorld(o.characterId), "the agent left the world");
      const again = await RawPlayer.connect(server, { token: agent.token, noWait: true });
      assert.equal((await again.log.waitClose()).code, CLOSE_CODES.BAD_TOKEN);
      assert.equal(again.log.all("player:sync").length, 0);
    });

    it("SDK: 4003 on revoke; a new join and a reconnection with the revoked token are refused", async () => {
      const o = await h.owner();
      const agent = await h.register(o);
      const p = await h.sdk(agent.token);
      const r = await request("DELETE", `/api/agent/${agent.agentId}`, { token: o.token });
      assert.equal(r.status, 200);
      assert.equal((await p.log.waitClose()).code, CLOSE_CODES.REVOKED);
      await assert.rejects(SdkPlayer.join(server, { token: agent.token }), /invalid token/);
      await assert.rejects(p.client.reconnect(p.room.reconnectionToken));
      await eventually(() => !server.world.isInWorld(o.characterId), "the agent left the world");
    });

    it("SDK dropped and lingering: after the revoke, its reconnection is refused", async () => {
      const o = await h.owner();
      const agent = await h.register(o);
      const p = await h.sdk(agent.token);
      await h.cutSdk(p);
      await h.lingering(o.characterId);
      const r = await request("DELETE", `/api/agent/${agent.agentId}`, { token: o.token });
      assert.equal(r.status, 200);
      await eventually(() => !server.world.isInWorld(o.characterId), "the agent removed from the world");
      await assert.rejects(p.client.reconnect(p.room.reconnectionToken));
    });
  });

  describe("social changes take effect in the world at once", () => {
    /** Make two characters friends through REST. */
    const befriend = async (a: Owner, b: Owner) => {
      const one = await request("POST", `/api/player/${a.characterId}/friend-requests`, { token: a.token, body: { characterId: b.characterId } });
      assert.equal(one.status, 201);
      const two = await request("POST", `/api/player/${b.characterId}/friend-requests`, { token: b.token, body: { characterId: a.characterId } });
      assert.equal(two.body.status, "friends");
    };

    it("an ignored player's public and private chat and trade requests do not arrive; removing the ignore restores them", async () => {
      const [a, b, c] = [await h.owner(), await h.owner(), await h.owner()];
      await befriend(a, b);
      const pa = await h.sdk(a.token, a.characterId, a.accountId);
      const pb = await h.sdk(b.token, b.characterId, b.accountId);
      const pc = await h.sdk(c.token, c.characterId, c.accountId);
      for (const viewer of [pa, pc]) await viewer.waitState((s) => s.players.get(pb.id) !== undefined, "b in view");

      const ignore = await request("POST", "/api/player/ignores", { token: a.token, body: { characterId: b.characterId } });
      assert.equal(ignore.status, 201);
      const ma = pa.log.mark();

      pb.send("player:chat", { text: "public while ignored" });
      await pc.log.waitFor("chat:message", (m) => m.text === "public while ignored");
      let mb = pb.log.mark();
      pb.send("player:chat", { text: "private while ignored", to: a.characterId });
      pb.send("tradeRequest", { targetPlayerId: a.characterId });
      const busy = await pb.log.waitFor("tradeError", () => true, { since: mb });
      assert.equal(busy.code, "PLAYER_BUSY");
      assert.equal(pb.log.all("chat:message", mb).filter((m) => m.text === "private while ignored").length, 0, "no echo of a dropped message");

      const unignore = await request("DELETE", `/api/player/ignores/${b.characterId}`, { token: a.token });
      assert.equal(unignore.status, 204);
      pb.send("player:chat", { text: "public again" });
      await pa.log.waitFor("chat:message", (m) => m.text === "public again", { since: ma });
      pb.send("player:chat", { text: "private again", to: a.characterId });
      const priv = await pa.log.waitFor("chat:message", (m) => m.text === "private again", { since: ma });
      assert.equal(priv.type, "private");
      mb = pb.log.mark();
      pb.send("tradeRequest", { targetPlayerId: a.characterId });
      const incoming = await pa.log.waitFor("tradeIncoming", (t) => t.fromPlayerId === b.characterId, { since: ma });
      pa.send("tradeRequestRespond", { tradeId: incoming.tradeId, accept: false });
      await pb.log.waitFor("tradeCancelled", (t) => t.tradeId === incoming.tradeId, { since: mb });

      const seen = pa.log.all("chat:message", ma).map((m) => m.text);
      assert.ok(!seen.includes("public while ignored") && !seen.includes("private while ignored"), seen.join(" | "));
      assert.equal(pa.log.all("tradeIncoming", ma).length, 1, "only the request after the ignore was removed");
    });

    it("unfriending stops private messages at once", async () => {
      const [a, b] = [await h.owner(), await h.owner()];
      await befriend(a, b);
      const pa = await h.sdk(a.token, a.characterId, a.accountId);
      const pb = await h.sdk(b.token, b.characterId, b.accountId);
      pb.send("player:chat", { text: "hello friend", to: a.characterId });
      await pa.log.waitFor("chat:message", (m) => m.text === "hello friend");

      const r = await request("DELETE", `/api/player/${a.characterId}/friends/${b.characterId}`, { token: a.token });
      assert.equal(r.status, 204);
      const ma = pa.log.mark();
      const mb = pb.log.mark();
      pb.send("player:chat", { text: "still there?", to: a.characterId });
      await pb.log.system(/only message your friends/, mb);
      assert.equal(pa.log.all("chat:message", ma).filter((m) => m.text === "still there?").length, 0);
    });
  });
});

describe("agent goal and pause survive a server restart (real server, same storage)", function () {
  this.timeout(90_000);
  let server: GameServer | undefined;
  let clients: Client[] = [];
  const request = (...args: Parameters<Request>) => restClient(server!.url)(...args);
  const h = liveHelpers(() => ({ server: server!, request, clients }));

  const restart = async () => {
    await closeAll(clients);
    clients = [];
    await server?.close();
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  };
  after(async () => {
    await closeAll(clients);
    await server?.close();
  });

  it("the goal, then the pause, are in player:sync after a restart", async () => {
    await restart();
    const o = await h.owner();
    const agent = await h.register(o);
    let p = await h.sdk(agent.token);
    const set = await request("POST", `/api/agents/${agent.agentId}/goal`, { token: agent.token, body: { goalId: "woodcutting:tree", targetCount: 7 } });
    assert.equal(set.status, 200);
    await p.log.waitFor("player:sync", (s) => s.goal?.id === set.body.goal.id);

    await restart();
    p = await h.sdk(agent.token);
    let sync = lastSync(p);
    assert.deepEqual(sync.goal, set.body.goal);
    assert.equal(sync.goalsPaused, false);

    const m = p.log.mark();
    const stop = await request("POST", `/api/agents/${agent.agentId}/goal/stop`, { token: o.token });
    assert.equal(stop.status, 200);
    await p.log.waitFor("player:sync", (s) => s.goalsPaused === true, { since: m });

    await restart();
    p = await h.sdk(agent.token);
    sync = lastSync(p);
    assert.equal(sync.goal, null);
    assert.equal(sync.goalsPaused, true);
    const state = await request("GET", `/api/agents/${agent.agentId}/goal`, { token: o.token });
    assert.deepEqual(state.body, { success: true, goal: null, goalsPaused: true, online: true });
  });
});
