/**
 * Worlds across processes (docs/operations.md "Scaling: several processes and machines", docs/rooms.md
 * "Processes"): real server processes on the test Redis and the test database. A matchmaking
 * request answered by one process seats the client in a room of another, and the SDK opens the
 * room socket at that process's public address; `/ws` joins the world of the process it reaches;
 * a block imposed by one process is honoured by the others, whose rate-limit counters are shared;
 * a SIGKILLed process leaves the others playing, and the matchmaker stops handing out its room.
 */
import assert from "node:assert/strict";
import { Client } from "@colyseus/sdk";
import { closeAll, eventually, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { matchmake, playersOnline, requireClusterDatabase, startCluster, stopCluster, worldRoomOf, type ClusterProcess } from "../../helpers/cluster.js";
import { postgresStorage, resetStorage } from "../../helpers/storage.js";
import { useTestRedis } from "../../helpers/redis.js";

/** Reset the shared test database before a cluster starts on it. */
async function freshDatabase() {
  await resetStorage(await postgresStorage());
}

describe("cluster: processes on Redis", function () {
  this.timeout(180_000);
  requireClusterDatabase(this);
  const redisUrl = useTestRedis(this, 13);

  describe("joins across processes", () => {
    let procs: ClusterProcess[] = [];
    const players: (SdkPlayer | RawPlayer | undefined)[] = [];
    before(async () => {
      await freshDatabase();
      procs = await startCluster(2, redisUrl);
    });
    afterEach(async () => closeAll(players.splice(0)));
    after(async () => stopCluster(procs));

    it("each process announces its own world room at its own public address", async () => {
      const [a, b] = procs as [ClusterProcess, ClusterProcess];
      assert.notEqual(a.processId, b.processId);
      assert.equal(a.publicAddress, `127.0.0.1:${a.port}/ws`);
      assert.ok(await worldRoomOf(redisUrl, a.processId), "A's world room is listed");
      assert.ok(await worldRoomOf(redisUrl, b.processId), "B's world room is listed");
    });

    it("an SDK client whose matchmaking request reaches A is seated in B's world and plays in B", async () => {
      const [a, b] = procs as [ClusterProcess, ClusterProcess];
      const roomB = (await worldRoomOf(redisUrl, b.processId))!;
      const { token, accountId } = tokenFor();
      const seat = await matchmake(a.url, "joinById", roomB, token);
      assert.equal(seat.status, 200, JSON.stringify(seat.body));
      assert.equal(seat.body.processId, b.processId);
      assert.equal(seat.body.publicAddress, b.publicAddress);

      const before = { a: await playersOnline(a.url), b: await playersOnline(b.url) };
      const client = new Client(`${a.url}/ws`);
      client.auth.token = token;
      const room = await client.consumeSeatReservation(seat.body as never);
      room.reconnection.enabled = false;
      const p = new SdkPlayer(client, room, accountId, token);
      players.push(p);
      const sync = await p.log.waitFor("player:sync");
      p.id = sync.id;
      // The socket went to B (its address is in the seat): B has the player, A does not.
      assert.equal(await playersOnline(b.url), before.b + 1);
      assert.equal(await playersOnline(a.url), before.a);
      // B's world ticks for it: the player sees itself in the synced state.
      await p.waitState((s) => s.players.get(p.id) !== undefined, "own entry in B's state");
    });

    it("join by name through either process gets a seat on a world room, with the address of the process that has it", async () => {
      for (const via of procs) {
        const seat = await matchmake(via.url, "join", "world", tokenFor().token);
        assert.equal(seat.status, 200, JSON.stringify(seat.body));
        const owner = procs.find((p) => p.processId === seat.body.processId);
        assert.ok(owner, `seat on a known process (${seat.body.processId})`);
        assert.equal(seat.body.publicAddress, owner.publicAddress);
        assert.equal(seat.body.roomId, await worldRoomOf(redisUrl, owner.processId));
      }
      // The SDK follows such a seat whichever process hosts the room.
      players.push(await SdkPlayer.join({ url: procs[1]!.url }));
    });

    it("a /ws client joins the world of the process it connects to", async () => {
      for (const proc of procs) {
        const before = await playersOnline(proc.url);
        players.push(await RawPlayer.connect({ url: proc.url }));
        assert.equal(await playersOnline(proc.url), before + 1);
      }
    });
  });

  describe("shared rate limits and blocks", () => {
    let procs: ClusterProcess[] = [];
    before(async () => {
      await freshDatabase();
      procs = await startCluster(2, redisUrl, { DISABLE_RATE_LIMIT: "false", TRUST_PROXY: "true", RATE_LIMIT_BLOCK_SECONDS: "600" });
    });
    after(async () => stopCluster(procs));

    /** A request from `address` (the trusted proxy reports it in X-Forwarded-For). */
    const from = (address: string, base: string, path: string) => fetch(`${base}${path}`, { headers: { "x-forwarded-for": address } });

    it("the authentication budget is one for the cluster, and the block it earns holds on every process", async () => {
      const [a, b] = procs as [ClusterProcess, ClusterProcess];
      const address = "203.0.113.77";
      // 10 attempts a minute per address (docs/http.md#rate-limits-and-blocks): 6 on A and 4 on B
      // are within it only if each process counted alone.
      for (let i = 0; i < 6; i++) assert.notEqual((await from(address, a.url, "/api/auth/none")).status, 429, `attempt ${i + 1} on A`);
      for (let i = 0; i < 4; i++) assert.notEqual((await from(address, b.url, "/api/auth/none")).status, 429, `attempt ${i + 7} on B`);
      const over = await from(address, b.url, "/api/auth/none");
      assert.equal(over.status, 429, "the 11th attempt, on B, is over the shared budget");

      // A honours B's block: HTTP, matchmaking and /ws upgrades.
      const blocked = await eventually(async () => {
        const r = await from(address, a.url, "/api/v1/worlds-or-anything");
        return r.status === 429 ? r : undefined;
      }, "A to answer 429 for the address B blocked");
      assert.ok(Number(blocked.headers.get("retry-after")) > 500, "Retry-After is the block's remaining time");
      const seat = await matchmake(a.url, "join", "world", tokenFor().token, { "x-forwarded-for": address });
      assert.equal(seat.status, 429);
      const raw = await RawPlayer.connect({ url: a.url }, { noWait: true, headers: { "x-forwarded-for": address } });
      const closed = await raw.log.waitClose().catch((e: Error) => ({ code: -1, reason: e.message }));
      assert.notEqual(closed.code, 1000);
      assert.equal(await playersOnline(a.url), 0);
      // Another address is not affected.
      assert.notEqual((await from("203.0.113.78", a.url, "/api/auth/none")).status, 429);
    });

    it("a process started after the block loads it from Redis", async () => {
      procs.push(...(await startCluster(1, redisUrl, { DISABLE_RATE_LIMIT: "false", TRUST_PROXY: "true" })));
      const c = procs[2]!;
      assert.equal((await from("203.0.113.77", c.url, "/api/anything")).status, 429);
    });
  });

  describe("a process killed", () => {
    let procs: ClusterProcess[] = [];
    const players: (SdkPlayer | RawPlayer | undefined)[] = [];
    before(async () => {
      await freshDatabase();
      procs = await startCluster(2, redisUrl);
    });
    after(async () => {
      await closeAll(players.splice(0));
      await stopCluster(procs);
    });

    it("the other keeps playing, and the dead process's room is refused cleanly, then forgotten", async () => {
      const [a, b] = procs as [ClusterProcess, ClusterProcess];
      const onA = await RawPlayer.connect({ url: a.url });
      players.push(onA);
      const roomB = (await worldRoomOf(redisUrl, b.processId))!;
      await b.child.stop("SIGKILL");

      // A's world keeps ticking for its player (a walk is simulated tick by tick), and takes new players.
      onA.send("player:move", { x: 3, z: 2 });
      await onA.waitWorld((w) => w.players.get(onA.id)?.x === 3 && w.players.get(onA.id)?.z === 2, "the player on A to walk to (3, 2)");
      players.push(await RawPlayer.connect({ url: a.url }));
      players.push(await SdkPlayer.join({ url: a.url }));

      // The dead room is still listed until someone asks for it: the request fails (no hang) and
      // the survivor removes every listing of the dead process.
      const started = performance.now();
      const seat = await matchmake(a.url, "joinById", roomB, tokenFor().token);
      const tookMs = performance.now() - started;
      assert.notEqual(seat.status, 200, JSON.stringify(seat.body));
      assert.ok(tookMs < 15_000, `refused in ${Math.round(tookMs)} ms`);
      assert.equal(await worldRoomOf(redisUrl, b.processId), undefined, "B's listing is gone");
      // Join by name now always lands on A.
      for (let i = 0; i < 3; i++) {
        const s = await matchmake(a.url, "join", "world", tokenFor().token);
        assert.equal(s.status, 200);
        assert.equal(s.body.processId, a.processId);
      }
      assert.equal(a.child.proc.exitCode, null, "A still runs");
    });
  });
});
