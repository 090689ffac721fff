/**
 * What a client may do through the matchmaker (
 * docs/rooms.md "What a client may ask the matchmaker"): every verb (create, joinOrCreate, join, joinById, reconnect) on both room types
 * (world, trade), through the real HTTP matchmaker (plain fetch to /ws/matchmake/<verb>/<room>) and
 * through the Colyseus SDK. Only the server creates rooms; only the two traders join a trade room.
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import { Client } from "@colyseus/sdk";
import type { WebSocket } from "ws";
import type { WorldRoom } from "../../../rooms/WorldRoom.js";
import type { GameServer } from "../../../src/server/server.js";
import { startTestServer } from "../../helpers/server.js";
import { jsonPlayer, sdkPlayer, tokenFor, type TestPlayer } from "../../helpers/clients.js";
import { acceptTwice, audits, openTrade, slotOf, totals, until } from "../../helpers/trade.js";

type Answer = { status: number; body: any };

describe("matchmaker: only the server creates rooms, only traders join a trade room", function () {
  this.timeout(60_000);
  let server: GameServer;
  let players: TestPlayer[] = [];
  let worldRoomId: string;

  before(async function () {
    this.timeout(180_000); // the first embedded database of the process: slow on a loaded machine
    server = await startTestServer();
    worldRoomId = (await matchMaker.query({ name: "world" }))[0]!.roomId;
  });
  after(async () => {
    await server?.close();
  });
  afterEach(async () => {
    await Promise.all(players.map((p) => p.close()));
    players = [];
    // A trade ends when a trader leaves, and its room is disposed after that: each test counts rooms
    // from a clean slate, not from the rooms an earlier test is still closing.
    await until(async () => (await matchMaker.query({ name: "trade" })).length === 0, "the trade rooms of the test disposed");
  });

  /** POST /ws/matchmake/<verb>/<target> as a plain HTTP client. */
  async function matchmake(verb: string, target: string, token: string | undefined, body?: unknown): Promise<Answer> {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (token) headers.authorization = `Bearer ${token}`;
    const r = await fetch(`${server.url}/ws/matchmake/${verb}/${target}`, {
      method: "POST",
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  }

  /** A refusal of ours: 403, the error body with `code`, the message also at the top level, no stack. */
  function assertRefused(a: Answer, code: string, what: string) {
    assert.equal(a.status, 403, `${what}: ${JSON.stringify(a.body)}`);
    assert.equal(a.body.error.code, code, what);
    assert.equal(typeof a.body.message, "string", what);
    assert.equal(a.body.message, a.body.error.message, what);
    assert.doesNotMatch(JSON.stringify(a.body), /\bat [\w.<>]+ \(|\.ts:\d+|node_modules/, `${what}: no stack in the answer`);
  }

  /** An SDK call that must fail with a 403 MatchMakeError. */
  async function assertSdkRefused(call: Promise<unknown>, what: string, message = /created by the server|joined by name|two traders|not part of this trade/) {
    await assert.rejects(call, (e: any) => {
      assert.equal(e.name, "MatchMakeError", `${what}: ${e}`);
      assert.equal(e.code, 403, `${what}: code`);
      assert.match(e.message, message, `${what}: message`);
      return true;
    });
  }

  const worldRooms = async () => (await matchMaker.query({ name: "world" })).length;
  const tradeRooms = async () => (await matchMaker.query({ name: "trade" })).length;

  /** Ticks the world advances in a window of wall time (GET /api/v1/world), never more than one per TICK_MS. */
  async function tickAdvance(token: string): Promise<{ ticks: number; bound: number }> {
    const tick = async () => {
      const r = await fetch(`${server.url}/api/v1/world`, { headers: { authorization: `Bearer ${token}` } });
      assert.equal(r.status, 200);
      return (await r.json()).tick as number;
    };
    const t0 = performance.now();
    const first = await tick();
    // Wait for 20 ticks of progress (in-process: polling the API would hit its rate limit), then
    // read the tick through the API again and compare with wall time.
    await until(() => server.world.tick - first >= 20, "20 ticks", 20_000);
    const last = await tick();
    const elapsed = performance.now() - t0;
    // One simulation: at most one tick per TICK_MS of wall time (a loaded machine only ticks slower),
    // plus the tick that may fall in the first request. Two simulations would tick twice as fast.
    return { ticks: last - first, bound: Math.floor(elapsed / server.config.tickMs) + 2 };
  }

  /** Both players accept twice; resolves with the completion each received. */
  async function complete(a: TestPlayer, b: TestPlayer, tradeId: string, revision: number) {
    const m = await acceptTwice(a, b, tradeId, revision);
    return Promise.all([
      a.next("tradeCompleted", (d) => d.tradeId === tradeId, { after: m }),
      b.next("tradeCompleted", (d) => d.tradeId === tradeId, { after: m }),
    ]);
  }

  describe("plain HTTP", () => {
    it("create and joinOrCreate of the world, with and without options, are refused (403 ROOM_CREATION_FORBIDDEN); still one world room ticking at its rate", async () => {
      const { token } = tokenFor();
      for (const verb of ["create", "joinOrCreate"]) {
        for (const body of [undefined, {}, { permit: "guessed" }, { characterId: "x", tickMs: 1 }]) {
          assertRefused(await matchmake(verb, "world", token, body), "ROOM_CREATION_FORBIDDEN", `${verb}/world ${JSON.stringify(body)}`);
        }
        assertRefused(await matchmake(verb, "world", undefined, {}), "ROOM_CREATION_FORBIDDEN", `${verb}/world without a token`);
      }
      // The same verbs spelled otherwise in the path.
      // (Colyseus does not decode them; the guard refuses every spelling but the canonical one: matchmake-paths.test.ts.)
      const encoded = await matchmake("cr%65ate", "w%6Frld", token, {});
      assert.equal(encoded.status, 400, "percent-encoded");
      assert.equal(encoded.body.error.code, "MATCHMAKE_PATH_INVALID", "percent-encoded");
      const doubled = await fetch(`${server.url}/ws//matchmake//joinOrCreate/world`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{}",
      });
      assert.notEqual(doubled.status, 200, "doubled slashes");
      assert.ok(doubled.status < 500, `doubled slashes: ${doubled.status}`);
      assert.equal(await worldRooms(), 1, "no second world room");
      const { ticks, bound } = await tickAdvance(token);
      assert.ok(ticks <= bound, `the world ticked ${ticks} times where one simulation ticks at most ${bound}`);
    });

    it("create and joinOrCreate of a trade with a forged session are refused, and the real trade is unaffected", async () => {
      const a = await sdkPlayer(server);
      const b = await jsonPlayer(server);
      players.push(a, b);
      const before = await totals(server.storage.orm, [a.id, b.id]);
      const { tradeId, roomId } = await openTrade(a, b);
      // The attacker (a) forges the confirmation screen with the victim's (b's) axe offered and accepted.
      const forged = {
        id: tradeId,
        state: "confirm",
        revision: 9,
        a: { playerId: a.id, name: "A", level: 3 },
        b: { playerId: b.id, name: "B", level: 3 },
        offers: {
          [a.id]: { items: [], coins: 0, accepted: false },
          [b.id]: { items: [{ inventorySlot: slotOf(b, "bronze_axe"), itemId: "bronze_axe", quantity: 1 }], coins: 0, accepted: true },
        },
      };
      for (const verb of ["create", "joinOrCreate"]) {
        for (const body of [{ session: forged }, { tradeId }, {}, undefined]) {
          assertRefused(await matchmake(verb, "trade", a.token, body), "ROOM_CREATION_FORBIDDEN", `${verb}/trade ${JSON.stringify(body)?.slice(0, 40)}`);
        }
      }
      assert.equal(await tradeRooms(), 1, "only the real trade's room");
      assert.ok(matchMaker.getLocalRoomById(roomId), "the real room is still there");
      // The real trade still routes to its room and completes as the players made it.
      const m = a.mark();
      a.send("tradeAddItem", { tradeId, inventorySlot: slotOf(a, "bronze_axe"), quantity: 1 });
      b.send("tradeAddItem", { tradeId, coins: 10 });
      const upd = await a.next("tradeUpdated", (d) => d.myOffer.items.length === 1 && d.theirOffer.coins === 10, { after: m });
      await b.next("tradeUpdated", (d) => d.revision === upd.revision, { after: m });
      const [doneA, doneB] = await complete(a, b, tradeId, upd.revision);
      assert.deepEqual(doneA.receivedItems, [{ itemId: "coins", quantity: 10 }], "a received b's coins");
      assert.deepEqual(doneB.receivedItems, [{ itemId: "bronze_axe", quantity: 1 }], "b received a's axe, nothing it offered itself");
      const rows = await audits(server.storage.orm, [tradeId]);
      assert.deepEqual(
        rows.map((r) => r.outcome),
        ["completed"],
      );
      assert.deepEqual(await totals(server.storage.orm, [a.id, b.id]), before, "items and coins conserved");
      const after = await totals(server.storage.orm, [b.id]);
      assert.equal(after.bronze_axe, 2, "b kept its own axe and received a's");
    });

    it("join by name reaches the world only; joinById of a trade room only its traders; reconnect needs a real token", async () => {
      const a = await sdkPlayer(server);
      const b = await jsonPlayer(server);
      const c = await sdkPlayer(server);
      const d = await jsonPlayer(server);
      players.push(a, b, c, d);
      const { roomId } = await openTrade(a, b);
      const { roomId: otherRoomId } = await openTrade(c, d);
      const stranger = tokenFor();

      // join: the world by name, never a trade.
      const joined = await matchmake("join", "world", stranger.token, {});
      assert.equal(joined.status, 200, JSON.stringify(joined.body));
      assert.equal(joined.body.roomId, worldRoomId);
      for (const body of [{}, { tradeId: "x" }, { characterId: a.id }]) {
        assertRefused(await matchmake("join", "trade", a.token, body), "ROOM_JOIN_FORBIDDEN", `join/trade ${JSON.stringify(body)}`);
      }

      // joinById: the world room, and a trade room by one of its traders only.
      assert.equal((await matchmake("joinById", worldRoomId, stranger.token, {})).status, 200);
      assert.equal((await matchmake("joinById", roomId, a.token, { characterId: a.id })).status, 200, "a trader watches its trade");
      assert.equal((await matchmake("joinById", roomId, b.token, { characterId: b.id })).status, 200);
      assertRefused(await matchmake("joinById", roomId, stranger.token, {}), "ROOM_JOIN_FORBIDDEN", "a third player");
      assertRefused(await matchmake("joinById", roomId, stranger.token, { characterId: a.id }), "ROOM_JOIN_FORBIDDEN", "a third player naming a trader");
      assertRefused(
        await matchmake("joinById", roomId, a.token, {}),
        "ROOM_JOIN_FORBIDDEN",
        "a trader that names no character (its token is not bound to one)",
      );
      assertRefused(await matchmake("joinById", roomId, c.token, { characterId: c.id }), "ROOM_JOIN_FORBIDDEN", "a trader of another pair");
      assertRefused(await matchmake("joinById", otherRoomId, a.token, { characterId: c.id }), "ROOM_JOIN_FORBIDDEN", "a trader naming the other pair's trader");
      const noToken = await matchmake("joinById", roomId, undefined, {});
      assert.equal(noToken.status, 401, "no token: Colyseus's own 401");

      // reconnect: a made-up reconnection token is Colyseus's own matchmaking error (its code
      // MATCHMAKE_EXPIRED, 524, as status and code, which the SDK reports), never a 500 or a stack.
      for (const target of [worldRoomId, roomId]) {
        const r = await matchmake("reconnect", target, a.token, { reconnectionToken: "forged" });
        assert.deepEqual(r, { status: 524, body: { code: 524, error: "reconnection token invalid or expired." } }, `reconnect/${target}`);
      }
      assert.equal(await worldRooms(), 1);
      assert.equal(await tradeRooms(), 2);
    });

    it("the rooms refuse on their own too: a world or trade room created in-process without the server's record fails in onCreate", async () => {
      const a = await sdkPlayer(server);
      const b = await jsonPlayer(server);
      players.push(a, b);
      const { tradeId } = await openTrade(a, b);
      const refusedIn = (p: Promise<unknown>) =>
        assert.rejects(p, (e: any) => {
          assert.equal(e.code, 403);
          return true;
        });
      await refusedIn(matchMaker.createRoom("world", {}));
      await refusedIn(matchMaker.createRoom("world", { permit: "guessed" }));
      await refusedIn(matchMaker.createRoom("trade", { session: { id: tradeId, a: { playerId: a.id }, b: { playerId: b.id } } }));
      await refusedIn(matchMaker.createRoom("trade", { tradeId }));
      await refusedIn(matchMaker.handleCreateRoom("trade", { tradeId: "made-up" }));
      assert.equal(await worldRooms(), 1);
      assert.equal(await tradeRooms(), 1);
      // The real trade is still routed: an event reaches its room.
      const m = b.mark();
      a.send("tradeAddItem", { tradeId, coins: 5 });
      await b.next("tradeUpdated", (d) => d.theirOffer.coins === 5, { after: m });
    });
  });

  describe("Colyseus SDK", () => {
    const sdkClient = (token: string) => {
      const client = new Client(`${server.url}/ws`);
      client.auth.token = token;
      return client;
    };

    it("create and joinOrCreate of either room type are refused with a 403 MatchMakeError; the world ticks at its rate", async () => {
      const { token } = tokenFor();
      const client = sdkClient(token);
      // A trade room of an earlier test may still be closing: compare with the count before.
      const tradesBefore = await tradeRooms();
      for (const room of ["world", "trade"]) {
        await assertSdkRefused(client.create(room), `create ${room}`);
        await assertSdkRefused(client.create(room, { permit: "guessed", session: { id: "x" } }), `create ${room} with options`);
        await assertSdkRefused(client.joinOrCreate(room), `joinOrCreate ${room}`);
        await assertSdkRefused(client.joinOrCreate(room, { tradeId: "x" }), `joinOrCreate ${room} with options`);
      }
      assert.equal(await worldRooms(), 1);
      assert.ok((await tradeRooms()) <= tradesBefore, "no trade room was created");
      const { ticks, bound } = await tickAdvance(token);
      assert.ok(ticks <= bound, `the world ticked ${ticks} times where one simulation ticks at most ${bound}`);
    });

    it("join and joinById reach the world; a trade room only by id and only for its traders; reconnect resumes a dropped world session", async () => {
      const a = await sdkPlayer(server);
      const b = await jsonPlayer(server);
      const c = await sdkPlayer(server);
      const d = await jsonPlayer(server);
      players.push(a, b, c, d);
      const { tradeId, roomId } = await openTrade(a, b);
      const { roomId: otherRoomId } = await openTrade(c, d);
      const stranger = sdkClient(tokenFor().token);

      await assertSdkRefused(stranger.join("trade"), "join trade");
      await assertSdkRefused(sdkClient(a.token).join("trade", { characterId: a.id }), "join trade as a trader");
      await assertSdkRefused(stranger.joinById(roomId), "joinById trade by a third player");
      await assertSdkRefused(stranger.joinById(roomId, { characterId: a.id }), "joinById trade by a third player naming a trader");
      await assertSdkRefused(sdkClient(c.token).joinById(roomId, { characterId: c.id }), "joinById trade by a trader of another pair");
      await assertSdkRefused(sdkClient(a.token).joinById(otherRoomId, { characterId: c.id }), "joinById another pair's trade naming its trader");

      // A trader watches its own trade by id and sees it from its side.
      const watch = await sdkClient(a.token).joinById(roomId, { characterId: a.id });
      try {
        await until(() => (watch.state as any)?.tradeId === tradeId, "the trade's state");
        assert.deepEqual([...(watch.state as any).traders.keys()], [a.id], "a sees its own side only");
      } finally {
        await watch.leave();
      }

      // The world: joinById, and the SDK's reconnection after a dropped socket.
      const byId = await stranger.joinById(worldRoomId);
      assert.equal(byId.roomId, worldRoomId);
      await byId.leave();
      const e = await sdkPlayer(server); // not in `players`: its first room is gone, `back` is left below
      const room = matchMaker.getLocalRoomById(worldRoomId) as WorldRoom;
      e.room!.reconnection.enabled = false;
      const socket = (room.linkOf(e.id)!.client as unknown as { ref: WebSocket }).ref;
      socket.terminate(); // no close frame: the network just went away
      await until(() => server.world.players.has(e.id) && !server.world.isOnline(e.id), "player lingering, offline");
      const back = await new Client(`${server.url}/ws`).reconnect(e.room!.reconnectionToken);
      back.reconnection.enabled = false;
      assert.equal(back.roomId, worldRoomId);
      await until(() => server.world.isOnline(e.id), "player back online");
      await back.leave();
      await assert.rejects(stranger.reconnect(`${worldRoomId}:forged`), (e: any) => {
        assert.equal(e.name, "MatchMakeError");
        assert.match(e.message, /reconnection token invalid or expired/);
        return true;
      });
      assert.equal(await worldRooms(), 1);
      assert.equal(await tradeRooms(), 2);
    });
  });
});
