/**
 * Worlds across processes (docs/operations.md "Worlds", docs/operations.md "Scaling: several processes and machines"): process A
 * hosts world 1 and process B world 2, on the test Redis and the test database, with a short
 * LEASE_TTL_SECONDS. Where each world is (GET /api/v1/worlds, /ws close 4016), the monitor of
 * every process, one character one world across processes (replaced with 4009, items unchanged,
 * lease moved), private chat and friend status across processes, agent routes reaching the other
 * process, a trade in B's world (strangers refused alike through A and B), a process starting on
 * the shared database closing only stale logins, and a SIGKILLed process whose characters join
 * elsewhere once their lease expires while the other world keeps playing.
 */
import assert from "node:assert/strict";
import { CLOSE_CODES, type ChatMessage } from "../../../src/events.js";
import type { Storage } from "../../../src/storage/orm.js";
import { admin, becomeAdmin, closeAll, eventually, invCount, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { matchmake, playersOnline, requireClusterDatabase, startClusterProcess, stopCluster, worldRoomOf, type ClusterProcess } from "../../helpers/cluster.js";
import { jsonPlayer, sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { useTestRedis } from "../../helpers/redis.js";
import { TEST_ENV } from "../../helpers/server.js";
import { postgresStorage, resetStorage } from "../../helpers/storage.js";
import { acceptTwice, audits, offerAxeForCoins, openTrade, totals } from "../../helpers/trade.js";

/** Lease TTL of the test processes: renewed every 3⅓ s; a killed process's characters are free within 10 s. */
const TTL = "10";

describe("cluster: worlds across processes", function () {
  this.timeout(240_000);
  requireClusterDatabase(this);
  const redisUrl = useTestRedis(this, 9);
  let a: ClusterProcess;
  let b: ClusterProcess;
  const procs: ClusterProcess[] = [];
  const players: (SdkPlayer | RawPlayer | undefined)[] = [];
  const traders: TestPlayer[] = [];
  let storage: Storage;

  before(async () => {
    storage = await postgresStorage();
    await resetStorage(storage);
    procs.push((a = await startClusterProcess(redisUrl, { WORLDS: "1", LEASE_TTL_SECONDS: TTL })));
    procs.push((b = await startClusterProcess(redisUrl, { WORLDS: "2", LEASE_TTL_SECONDS: TTL })));
  });
  afterEach(async () => {
    await closeAll(players.splice(0));
    await Promise.all(traders.splice(0).map((p) => p.close()));
  });
  after(async () => stopCluster(procs));

  const sql = <T = any>(query: string, params: unknown[] = []) => storage.orm.em.fork().getConnection().execute<T[]>(query, params);
  const leaseOf = async (id: string) =>
    (await sql<{ world: number; owner: string }>("select world, owner from character_leases where character_id = ?", [id]))[0];
  const raw = async (p: ClusterProcess, opts: Parameters<typeof RawPlayer.connect>[1] = {}) => {
    const player = await RawPlayer.connect(p, opts);
    players.push(player);
    return player;
  };
  const api = async (base: string, method: string, path: string, token: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, headers: res.headers, body: (await res.json().catch(() => undefined)) as any };
  };

  it("every process lists both worlds at their own process's address; /ws?world=2 on A is closed 4016 with B's address", async () => {
    for (const via of [a, b]) {
      const res = await fetch(`${via.url}/api/v1/worlds`);
      assert.equal(res.status, 200);
      const { worlds } = (await res.json()) as { worlds: { world: number; wsUrl: string; players: number; full: boolean }[] };
      assert.deepEqual(
        worlds.map((w) => [w.world, w.wsUrl, w.full]),
        [
          [1, `ws://${a.publicAddress}?world=1`, false],
          [2, `ws://${b.publicAddress}?world=2`, false],
        ],
      );
    }
    const misdirected = await RawPlayer.connect(a, { world: 2, noWait: true });
    const closed = await misdirected.log.waitClose();
    assert.equal(closed.code, CLOSE_CODES.WORLD_ELSEWHERE);
    assert.equal(closed.reason, `WORLD_ELSEWHERE: world 2 is at ws://${b.publicAddress}?world=2`);
    const nowhere = await RawPlayer.connect(a, { world: 3, noWait: true });
    assert.equal((await nowhere.log.waitClose()).code, CLOSE_CODES.UNKNOWN_WORLD);
    // Following the address works; so does the SDK's world option through A's matchmaker.
    const before = await playersOnline(b.url);
    await raw(b, { world: 2 });
    const sdk = await SdkPlayer.join(a, { world: 2 });
    players.push(sdk);
    assert.equal(await playersOnline(b.url), before + 2);
  });

  it("the monitor of either process lists the rooms of every process", async () => {
    const rooms = [await worldRoomOf(redisUrl, a.processId), await worldRoomOf(redisUrl, b.processId)];
    for (const via of [a, b]) {
      const res = await fetch(`${via.url}/colyseus/api`, {
        headers: { authorization: `Basic ${Buffer.from(`admin:${TEST_ENV.ADMIN_CODE}`).toString("base64")}` },
      });
      assert.equal(res.status, 200);
      const body = (await res.json()) as { rooms: { roomId: string }[] };
      for (const id of rooms)
        assert.ok(
          body.rooms.some((r) => r.roomId === id),
          `${via.processId}'s monitor lists room ${id}`,
        );
    }
  });

  it("the same character joining world 2 on B replaces its connection on A (4009): saved first, items unchanged, lease moved; and back", async () => {
    const first = await raw(a);
    await becomeAdmin(first);
    await admin(first, "/give feather 7");
    assert.deepEqual(await leaseOf(first.id), { world: 1, owner: a.processId });
    // Through A's matchmaker, seated in B's world 2.
    const second = await SdkPlayer.join(a, { world: 2, token: first.token, accountId: first.accountId });
    players.push(second);
    assert.equal(second.id, first.id);
    assert.equal((await first.log.waitClose()).code, CLOSE_CODES.REPLACED);
    assert.equal(invCount(second, "feather"), 7);
    assert.deepEqual(await leaseOf(first.id), { world: 2, owner: b.processId });
    // Back to A over /ws: B's connection is replaced the same way.
    const back = await raw(a, { token: first.token, accountId: first.accountId });
    assert.equal((await second.log.waitClose()).code, CLOSE_CODES.REPLACED);
    assert.equal(invCount(back, "feather"), 7);
    assert.deepEqual(await leaseOf(first.id), { world: 1, owner: a.processId });
    const stored = await sql<{ total: string }>(
      "select coalesce(sum(quantity), 0) as total from inventory_items where character_id = ? and item_id = 'feather'",
      [first.id],
    );
    assert.equal(Number(stored[0]!.total), 7, "saved once, not duplicated");
  });

  it("private chat and a friend's online status cross processes", async () => {
    const pa = await raw(a);
    const pb = await raw(b);
    await sql("insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())", [pa.id, pb.id, pa.id, pb.id]);
    const friendsOf = async (p: RawPlayer, base: string) =>
      (await api(base, "GET", `/api/player/${p.id}/friends`, p.token!)).body as { id: string; online: boolean }[];
    assert.deepEqual(
      (await friendsOf(pa, a.url)).map((f) => [f.id, f.online]),
      [[pb.id, true]],
    );
    const mb = pb.log.mark();
    pa.send("player:chat", { text: "hello from process A", to: pb.id });
    await pb.log.waitFor<ChatMessage>("chat:message", (m) => m.text === "hello from process A" && m.type === "private", { since: mb });
    const ma = pa.log.mark();
    pb.send("player:chat", { text: "hello from process B", to: pa.id });
    await pa.log.waitFor<ChatMessage>("chat:message", (m) => m.text === "hello from process B" && m.type === "private", { since: ma });
    await pb.close();
    await eventually(async () => (await friendsOf(pa, a.url))[0]?.online === false, "B's player offline for A");
    const mo = pa.log.mark();
    pa.send("player:chat", { text: "still there?", to: pb.id });
    await pa.log.waitFor("chat:message", (m: any) => m.code === "PLAYER_OFFLINE", { since: mo });
  });

  it("agent routes on A reach the agent playing on B: stop, resume, message, quick actions", async () => {
    const owner = await raw(b);
    const reg = await api(a.url, "POST", "/api/agent/register", owner.token!, { characterId: owner.id });
    assert.equal(reg.status, 201, JSON.stringify(reg.body));
    const { agentId, token: agentToken } = reg.body as { agentId: string; token: string };
    const m = owner.log.mark();
    const stop = await api(a.url, "POST", `/api/agents/${agentId}/goal/stop`, agentToken);
    assert.equal(stop.status, 200, JSON.stringify(stop.body));
    assert.equal(stop.body.goalsPaused, true);
    await owner.log.waitFor("player:sync", (s: any) => s.goalsPaused === true && s.goal === null, { since: m });
    const resume = await api(a.url, "POST", `/api/agents/${agentId}/goal/resume`, owner.token!);
    assert.equal(resume.status, 200);
    await owner.log.waitFor("player:sync", (s: any) => s.goalsPaused === false, { since: m });
    const mm = owner.log.mark();
    const msg = await api(a.url, "POST", `/api/agents/${agentId}/message`, owner.token!, { text: "come home" });
    assert.ok(msg.status < 300, JSON.stringify(msg.body));
    await owner.log.waitFor<ChatMessage>("chat:message", (c) => c.text === "come home", { since: mm });
    const quick = await api(a.url, "GET", `/api/agents/${agentId}/quick-actions`, agentToken);
    assert.equal(quick.status, 200, JSON.stringify(quick.body));
  });

  it("a trade between two players of world 2 on B completes, items conserved; a stranger is refused the trade room alike through A and B", async () => {
    const ta = await sdkPlayer(a, { world: 2 });
    traders.push(ta);
    const tb = await jsonPlayer(b);
    traders.push(tb);
    const ids = [ta.id, tb.id];
    const before = await totals(storage.orm, ids);
    const { tradeId, roomId } = await openTrade(ta, tb);
    const stranger = tokenFor().token;
    for (const via of [a, b]) {
      const r = await matchmake(via.url, "joinById", roomId, stranger);
      assert.equal(r.status, 403, `through ${via === a ? "A" : "B"}: ${JSON.stringify(r.body)}`);
      assert.equal((r.body as any).error?.code, "ROOM_JOIN_FORBIDDEN");
    }
    const revision = await offerAxeForCoins(ta, tb, tradeId);
    const m = await acceptTwice(ta, tb, tradeId, revision);
    await ta.next("tradeCompleted", (d) => d.tradeId === tradeId, { after: m });
    await eventually(async () => (await audits(storage.orm, [tradeId])).some((x) => x.outcome === "completed"), "the trade audited completed");
    await eventually(async () => {
      const after = await totals(storage.orm, ids);
      return JSON.stringify(after) === JSON.stringify(before);
    }, "item and coin totals unchanged by the trade");
    assert.equal((await totals(storage.orm, [ta.id])).bronze_axe, undefined, "the axe left its seller");
    assert.equal((await totals(storage.orm, [tb.id])).bronze_axe, before.bronze_axe, "and is the buyer's");
  });

  it("a process starting on the shared database closes only the logins nobody plays", async () => {
    const live = await raw(a);
    const gone = await SdkPlayer.join(a);
    const goneId = gone.id;
    await gone.leave();
    await eventually(async () => (await leaseOf(goneId)) === undefined, "the leaver's lease released");
    // A login a killed process left open: its character has no lease.
    await sql("update player_logins set ended_at = null, end_reason = null where character_id = ?", [goneId]);
    const c = await startClusterProcess(redisUrl, { WORLDS: "3", LEASE_TTL_SECONDS: TTL });
    procs.push(c);
    const open = await sql<{ character_id: string; end_reason: string | null }>(
      "select character_id, end_reason from player_logins where character_id in (?, ?)",
      [live.id, goneId],
    );
    assert.deepEqual(
      open.filter((r) => r.character_id === live.id).map((r) => r.end_reason),
      [null],
      "the live player's login on A stays open",
    );
    assert.deepEqual(
      open.filter((r) => r.character_id === goneId).map((r) => r.end_reason),
      ["server_restart"],
      "the stale login is closed",
    );
    await c.child.stop("SIGTERM");
  });

  it("B SIGKILLed: A's world keeps playing; B's character is refused (409 CHARACTER_ELSEWHERE) until its lease expires, then joins A", async () => {
    const onA = await raw(a);
    const onB = await raw(b);
    const id = onB.id;
    assert.equal((await leaseOf(id))?.owner, b.processId);
    await b.child.stop("SIGKILL");

    // At once (the lease has at least two thirds of its 10 s left; asking B takes 3 s): refused.
    const refused = await RawPlayer.connect(a, { token: onB.token, accountId: onB.accountId, noWait: true });
    onA.send("player:move", { x: 3, z: 2 });
    const closed = await refused.log.waitClose();
    assert.equal(closed.code, 4409);
    assert.match(closed.reason, /playing in world 2 on another server; leave there first or retry in \d+ s/);
    await onA.waitWorld((w) => w.players.get(onA.id)?.x === 3 && w.players.get(onA.id)?.z === 2, "the player on A to walk");
    const joined = await eventually(
      async () => {
        const attempt = await RawPlayer.connect(a, { token: onB.token, accountId: onB.accountId }).catch(() => undefined);
        return attempt;
      },
      "B's character to join A once its lease expired",
      30_000,
    );
    players.push(joined);
    assert.equal(joined.id, id);
    assert.deepEqual(await leaseOf(id), { world: 1, owner: a.processId });
    assert.equal(a.child.proc.exitCode, null, "A still runs");
  });
});
