/**
 * Several worlds in one process (WORLDS=1,2; docs/operations.md "Worlds"): each world its own simulation and
 * room, joined by the SDK's `world` option or `/ws?world=N`; unknown worlds refused cleanly on both
 * transports; GET /api/v1/worlds; one character, one world (a join in world 2 replaces world 1's
 * connection, items unchanged; leases in storage); private chat across worlds.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { Client } from "@colyseus/sdk";
import { CLOSE_CODES, type ChatMessage } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import { admin, becomeAdmin, closeAll, eventually, invCount, lastSync, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

describe("worlds: several in one process", function () {
  this.timeout(60_000);
  let server: GameServer;
  let players: (SdkPlayer | RawPlayer)[] = [];

  before(async () => {
    server = await startTestServer({ WORLDS: "2,1" });
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(players);
    players = [];
  });

  const world = (n: number) => server.worlds.get(n)!.world;
  const join = async (opts: Parameters<typeof SdkPlayer.join>[1] = {}) => {
    const p = await SdkPlayer.join(server, opts);
    players.push(p);
    return p;
  };
  const raw = async (opts: Parameters<typeof RawPlayer.connect>[1] = {}) => {
    const p = await RawPlayer.connect(server, opts);
    players.push(p);
    return p;
  };
  const sql = <T = any>(query: string, params: unknown[] = []) => server.storage.orm.em.fork().getConnection().execute<T[]>(query, params);
  const leaseOf = async (id: string) =>
    (await sql<{ world: number; owner: string }>("select world, owner from character_leases where character_id = ?", [id]))[0];
  /** An SDK join that must fail: its MatchMakeError. */
  const refusedJoin = async (options: Record<string, unknown>) => {
    const client = new Client(`${server.url}/ws`);
    client.auth.token = tokenFor().token;
    try {
      const room = await client.join("world", options);
      await room.leave();
    } catch (e) {
      return e as { name: string; code: number; message: string };
    }
    throw new Error("the join was not refused");
  };

  it("hosts each world in its own room: a join without a world goes to world 1; world 2's players are not in world 1", async () => {
    assert.deepEqual(server.worlds.numbers(), [1, 2]);
    assert.equal(server.world, world(1), "the default world is 1");
    const one = await join();
    const two = await join({ world: 2 });
    assert.notEqual(one.room.roomId, two.room.roomId);
    assert.ok(world(1).isOnline(one.id) && !world(2).isInWorld(one.id));
    assert.ok(world(2).isOnline(two.id) && !world(1).isInWorld(two.id));
    // Both stand at the spawn point: a second world-1 player is seen by the first, world 2's never.
    const other = await join({ world: 1 });
    await one.waitState((s) => s.players.get(other.id) !== undefined, "world 1 sees its other player");
    assert.equal(one.state.players.get(two.id), undefined);
    assert.equal(two.state.players.get(one.id), undefined);
    assert.equal(two.state.players.get(other.id), undefined);
    // Separate simulations: their own NPC objects.
    assert.notEqual(world(1).npcs, world(2).npcs);
    assert.equal(world(1).npcs.size, world(2).npcs.size);
  });

  it("/ws?world=2 joins world 2; /ws without a world joins world 1", async () => {
    const two = await raw({ world: 2 });
    const one = await raw();
    assert.ok(world(2).isOnline(two.id) && !world(1).isInWorld(two.id));
    assert.ok(world(1).isOnline(one.id) && !world(2).isInWorld(one.id));
    assert.equal(two.world.players.get(one.id), undefined);
  });

  it("an unknown or invalid world is refused cleanly on both transports, naming the worlds", async () => {
    const unknown = await refusedJoin({ world: 3 });
    assert.equal(unknown.name, "MatchMakeError");
    assert.equal(unknown.code, 404);
    assert.match(unknown.message, /WORLD_NOT_FOUND: no world 3; worlds: 1,2/);
    for (const bad of ["2", 1.5, 0, -1, null, { n: 1 }]) {
      const e = await refusedJoin({ world: bad });
      assert.equal(e.code, 400, `world ${JSON.stringify(bad)}`);
      assert.match(e.message, /INVALID_WORLD/);
    }
    for (const asked of ["3", "abc", "0", "1.5"]) {
      const p = await raw({ world: asked, noWait: true });
      const closed = await p.log.waitClose();
      assert.equal(closed.code, CLOSE_CODES.UNKNOWN_WORLD, `/ws?world=${asked}`);
      assert.match(closed.reason, /^UNKNOWN_WORLD: .*worlds: 1,2$/);
    }
  });

  it("GET /api/v1/worlds lists every world with its population, capacity and where to connect", async () => {
    await join({ world: 2 });
    await raw({ world: 2 });
    const get = async () => (await (await fetch(`${server.url}/api/v1/worlds`)).json()) as { worlds: Record<string, unknown>[] };
    await eventually(async () => (await get()).worlds.find((w) => w.world === 2)?.players === 2, "world 2 shows 2 players");
    // The earlier tests' world-1 players leave as their connections close; the listing follows
    // within a few ticks (the room publishes its population every 5 ticks).
    await eventually(async () => (await get()).worlds.find((w) => w.world === 1)?.players === 0, "world 1 shows nobody");
    const { worlds } = await get();
    assert.deepEqual(
      worlds.map((w) => [w.world, w.players, w.maxPlayers, w.full]),
      [
        [1, 0, 5000, false],
        [2, 2, 5000, false],
      ],
    );
    assert.equal(worlds[1]!.wsUrl, `${server.config.publicWsUrl}?world=2`);
    assert.equal(worlds[1]!.sdkEndpoint, `${server.config.publicApiUrl}/ws`);
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { paths: Record<string, unknown> };
    assert.ok(doc.paths["/api/v1/worlds"], "documented in the OpenAPI document");
  });

  it("the same character joining world 2 replaces world 1's connection (4009): saved and left first, items unchanged, lease moved", async () => {
    const first = await join({ world: 1 });
    await becomeAdmin(first);
    await admin(first, "/give feather 7");
    const inventory = lastSync(first).inventory;
    assert.deepEqual(await leaseOf(first.id), { world: 1, owner: (await leaseOf(first.id))!.owner });
    const second = await join({ world: 2, token: first.token, accountId: first.accountId });
    assert.equal(second.id, first.id);
    const closed = await first.log.waitClose();
    assert.equal(closed.code, CLOSE_CODES.REPLACED);
    assert.ok(!world(1).isInWorld(first.id) && world(2).isOnline(first.id));
    assert.deepEqual(lastSync(second).inventory, inventory);
    assert.equal(invCount(second, "feather"), 7);
    assert.equal((await leaseOf(first.id))!.world, 2);
    // And back, over /ws: world 2's SDK connection is replaced the same way.
    const back = await raw({ world: 1, token: first.token, accountId: first.accountId });
    assert.equal((await second.log.waitClose()).code, CLOSE_CODES.REPLACED);
    assert.equal(invCount(back, "feather"), 7);
    assert.ok(world(1).isOnline(first.id) && !world(2).isInWorld(first.id));
    // Again to world 2 (SDK); a consented leave releases the lease once saved.
    const last = await join({ world: 2, token: first.token, accountId: first.accountId });
    assert.equal((await back.log.waitClose()).code, CLOSE_CODES.REPLACED);
    assert.equal(invCount(last, "feather"), 7);
    await last.leave();
    await eventually(async () => (await leaseOf(first.id)) === undefined, "lease released after the leave");
  });

  it("two joins of one character racing into worlds 1 and 2: it ends in exactly one, which holds its lease", async () => {
    for (let round = 0; round < 4; round++) {
      const first = await join({ world: 1 + (round % 2) });
      /**
       * A bare SDK join: its room and the close code it gets, if any. One account holds one pending
       * seat: a racer whose seat the other's replaced is refused (SEAT_REPLACED) and counts as replaced.
       */
      const racer = async (n: number) => {
        const client = new Client(`${server.url}/ws`);
        client.auth.token = first.token;
        const room = await client.join("world", { world: n }).catch((e: Error) => {
          assert.match(e.message, /SEAT_REPLACED/);
          return undefined;
        });
        if (room) room.reconnection.enabled = false;
        const closed = room ? new Promise<number>((resolve) => room.onLeave((code: number) => resolve(code))) : Promise.resolve(CLOSE_CODES.REPLACED);
        return { room, closed, n };
      };
      const racers = await Promise.all([racer(1), racer(2)]);
      assert.equal((await first.log.waitClose()).code, CLOSE_CODES.REPLACED);
      const loser = await Promise.race(racers.map((r) => r.closed.then((code) => ({ ...r, code }))));
      assert.equal(loser.code, CLOSE_CODES.REPLACED, `round ${round}`);
      const winner = racers.find((r) => r !== racers.find((x) => x.n === loser.n))!;
      await eventually(
        async () => world(winner.n).isOnline(first.id) && !world(loser.n).isInWorld(first.id) && (await leaseOf(first.id))?.world === winner.n,
        `round ${round}: in world ${winner.n} only, holding its lease`,
      );
      await winner.room!.leave(true);
      await eventually(async () => (await leaseOf(first.id)) === undefined, "released");
    }
  });

  it("a lease another process holds refuses the join (409 CHARACTER_ELSEWHERE); once expired it is taken over", async () => {
    const p = await join();
    const id = p.id;
    await p.leave();
    await eventually(async () => (await leaseOf(id)) === undefined, "released");
    await sql("insert into character_leases (character_id, owner, world, expires_at) values (?, 'another-process', 1, now() + interval '30 seconds')", [id]);
    const client = new Client(`${server.url}/ws`);
    client.auth.token = p.token;
    await assert.rejects(client.join("world", { characterId: id }), (e: any) => {
      assert.equal(e.code, 409);
      assert.match(e.message, /playing in world 1 on another server/);
      return true;
    });
    const ws = await raw({ token: p.token, accountId: p.accountId, characterId: id, noWait: true });
    assert.equal((await ws.log.waitClose()).code, 4409);
    assert.deepEqual(await leaseOf(id), { world: 1, owner: "another-process" });
    await sql("update character_leases set expires_at = now() - interval '1 second' where character_id = ?", [id]);
    const again = await join({ token: p.token, accountId: p.accountId, characterId: id, world: 2 });
    assert.equal(again.id, id);
    assert.equal((await leaseOf(id))!.world, 2);
    assert.notEqual((await leaseOf(id))!.owner, "another-process");
  });

  it("private chat reaches a friend in another world of this process", async () => {
    const a = await join({ world: 1 });
    const b = await raw({ world: 2 });
    const stranger = await join({ world: 1 });
    await sql("insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())", [a.id, b.id, a.id, b.id]);
    server.worldAccess.socialChanged([a.id, b.id]);
    const ma = a.log.mark();
    const mb = b.log.mark();
    a.send("player:chat", { text: "hello from world 1", to: b.id });
    const got = await b.log.waitFor<ChatMessage>("chat:message", (m) => m.text === "hello from world 1", { since: mb });
    assert.equal(got.type, "private");
    assert.equal(got.fromId, a.id);
    await a.log.waitFor<ChatMessage>("chat:message", (m) => m.text === "hello from world 1", { since: ma });
    // Not a friend, or an unknown id: NOT_FRIENDS whether the target is online (here or in world 2) or
    // not, so a stranger learns nothing of who is online (docs/protocol.md#private-messages).
    const codes = async (from: typeof stranger, to: string) => {
      const m = from.log.mark();
      from.send("player:chat", { text: "hi?", to });
      return ((await from.log.waitFor("chat:message", (x: any) => x.code !== undefined, { since: m })) as any).code as string;
    };
    assert.equal(await codes(stranger, b.id), "NOT_FRIENDS", "online in world 2");
    assert.equal(await codes(stranger, a.id), "NOT_FRIENDS", "online in this world");
    assert.equal(await codes(stranger, randomUUID()), "NOT_FRIENDS", "unknown");
    // A friend who ignores the sender answers as an offline one, in this world and in another.
    const c = await join({ world: 1 });
    await sql("insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())", [a.id, c.id, a.id, c.id]);
    for (const target of [b, c]) {
      await sql("insert into ignore_entries (account_id, ignored_character_id, created_at) values (?, ?, now())", [target.accountId, a.id]);
    }
    server.worldAccess.socialChanged([a.id, b.id, c.id]);
    const mc = c.log.mark();
    assert.equal(await codes(a, c.id), "PLAYER_OFFLINE", "an ignoring friend online in this world");
    assert.equal(await codes(a, b.id), "PLAYER_OFFLINE", "an ignoring friend online in world 2");
    assert.equal(c.log.all("chat:message", mc).length, 0, "nothing delivered");
    // Friend status over REST sees world 2.
    const res = await fetch(`${server.url}/api/player/${a.id}/friends`, { headers: { authorization: `Bearer ${a.token}` } });
    const friends = (await res.json()) as { id: string; online: boolean }[];
    assert.deepEqual(
      friends.filter((f) => f.id === b.id).map((f) => [f.id, f.online]),
      [[b.id, true]],
    );
  });

  it("a character in combat in world 1 can't join world 2 until the fight is over (409 CHARACTER_IN_COMBAT); it stays in world 1", async () => {
    const p = await join({ world: 1 });
    const me = world(1).player(p.id)!;
    me.lastCombatAt = world(1).now(); // just hit (the combat logout rule's clock)
    const client = new Client(`${server.url}/ws`);
    client.auth.token = p.token;
    await assert.rejects(client.join("world", { world: 2 }), (e: any) => {
      assert.equal(e.code, 409);
      assert.match(e.message, /in combat in world 1/);
      return true;
    });
    assert.ok(world(1).isOnline(p.id) && !world(2).isInWorld(p.id));
    assert.ok(!p.log.isClosed);
    assert.equal((await leaseOf(p.id))!.world, 1);
    me.lastCombatAt = undefined; // the fight is over
    const moved = await join({ world: 2, token: p.token, accountId: p.accountId });
    assert.equal(moved.id, p.id);
    assert.equal((await p.log.waitClose()).code, CLOSE_CODES.REPLACED);
  });

  it("GET /api/v1/world?world=2 is world 2's snapshot; a world not hosted is 404", async () => {
    const p = await join({ world: 2 });
    const get = (q: string) => fetch(`${server.url}/api/v1/world${q}`, { headers: { authorization: `Bearer ${p.token}` } });
    const two = (await (await get("?world=2")).json()) as { world: number; players: { id: string }[] };
    assert.equal(two.world, 2);
    assert.deepEqual(
      two.players.map((x) => x.id),
      [p.id],
    );
    const one = (await (await get("")).json()) as { world: number; players: { id: string }[] };
    assert.equal(one.world, 1);
    assert.ok(!one.players.some((x) => x.id === p.id));
    assert.equal((await get("?world=3")).status, 404);
    assert.equal((await get("?world=x")).status, 400);
  });
});

describe("worlds: a full world", function () {
  this.timeout(60_000);
  let server: GameServer;
  const players: (SdkPlayer | RawPlayer)[] = [];
  before(async () => {
    server = await startTestServer({ WORLDS: "1,2", WORLD_MAX_PLAYERS: "1" });
  });
  after(async () => {
    await closeAll(players);
    await server?.close();
  });

  it("refuses joins with 503 WORLD_FULL (SDK, Retry-After) and close 4015 (/ws) while full; other worlds still take them", async () => {
    players.push(await SdkPlayer.join(server, { world: 1 }));
    // The listing shows it within a few ticks.
    await eventually(async () => {
      const { worlds } = (await (await fetch(`${server.url}/api/v1/worlds`)).json()) as { worlds: { world: number; full: boolean }[] };
      return worlds.find((w) => w.world === 1)?.full === true;
    }, "world 1 listed as full");
    const res = await fetch(`${server.url}/ws/matchmake/join/world`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tokenFor().token}` },
      body: JSON.stringify({ world: 1 }),
    });
    assert.equal(res.status, 503);
    assert.equal(res.headers.get("retry-after"), "30");
    assert.equal(((await res.json()) as { error: { code: string } }).error.code, "WORLD_FULL");
    const ws = await RawPlayer.connect(server, { world: 1, noWait: true });
    players.push(ws);
    const closed = await ws.log.waitClose();
    assert.equal(closed.code, CLOSE_CODES.WORLD_FULL);
    assert.match(closed.reason, /^WORLD_FULL: world 1 is full/);
    players.push(await RawPlayer.connect(server, { world: 2 }));
  });
});
