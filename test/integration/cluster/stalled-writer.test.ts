/**
 * A stalled process writes nothing once its lease is gone (docs/cluster.md "What a cluster
 * guarantees", issue 28 point 1), as an operator would see it from outside: two real server
 * processes on one PostgreSQL and one Redis (WORLDS=1 and WORLDS=2, LEASE_TTL_SECONDS=2).
 * Character C plays in world 1 with its starter axe; process 1 is stopped (SIGSTOP) until C's lease
 * has expired by the database's clock; C joins world 2 on process 2 and trades its axe to D; process
 * 1 gets SIGCONT. It drops C without writing (one log line, C's old connection closed with
 * REPLACED), and once it has stopped, storage holds exactly the axes there were: C none, D two.
 */
import assert from "node:assert/strict";
import { eventually, RawPlayer, tokenFor } from "../../helpers/clients.js";
import { requireClusterDatabase, startClusterProcess, stopCluster, type ClusterProcess } from "../../helpers/cluster.js";
import { useTestRedis } from "../../helpers/redis.js";
import { postgresStorage, resetStorage } from "../../helpers/storage.js";

const LOST = /"msg":"character lease lost; player dropped without saving"/;

describe("cluster: a stalled process past its lease", function () {
  this.timeout(180_000);
  requireClusterDatabase(this);
  const redisUrl = useTestRedis(this, 15);
  const procs: ClusterProcess[] = [];
  const clients: RawPlayer[] = [];

  afterEach(async () => {
    for (const p of procs) if (p.child.proc.signalCode === null && p.child.proc.exitCode === null) p.child.proc.kill("SIGCONT");
    await Promise.all(clients.splice(0).map((c) => c.close()));
    await stopCluster(procs.splice(0));
  });

  const sql = async <T>(query: string, params: unknown[] = []) => (await postgresStorage()).orm.em.fork().getConnection().execute<T[]>(query, params);
  /** Bronze axes each character holds in storage (inventory, equipment, bank). */
  async function axes(ids: string[]): Promise<number[]> {
    const out: number[] = [];
    for (const id of ids) {
      const [r] = await sql<{ n: number }>(
        `select (select coalesce(sum(quantity), 0) from inventory_items where character_id = ? and item_id = 'bronze_axe')
              + (select coalesce(sum(quantity), 0) from equipment_items where character_id = ? and item_id = 'bronze_axe')
              + (select coalesce(sum(quantity), 0) from bank_items where character_id = ? and item_id = 'bronze_axe') as n`,
        [id, id, id],
      );
      out.push(Number(r!.n));
    }
    return out;
  }
  const slotOf = (p: RawPlayer, itemId: string) =>
    (p.log.last<{ inventory: { slot: number; itemId: string }[] }>("player:sync")!.inventory.find((s) => s.itemId === itemId) ?? { slot: -1 }).slot;

  it("stalled past its lease, process 1 writes nothing of the character that moved on; no item is created", async () => {
    await resetStorage(await postgresStorage());
    const env = { LEASE_TTL_SECONDS: "2", SAVE_INTERVAL: "1" };
    procs.push(await startClusterProcess(redisUrl, { ...env, WORLDS: "1" }));
    procs.push(await startClusterProcess(redisUrl, { ...env, WORLDS: "2" }));
    const [p1, p2] = procs as [ClusterProcess, ClusterProcess];

    const c = tokenFor();
    const c1 = await RawPlayer.connect({ url: p1.url }, c);
    clients.push(c1);
    // Something for process 1 to save later: C walks.
    c1.send("player:move", { x: c1.log.last("player:sync").position.x + 2, z: c1.log.last("player:sync").position.z });
    assert.deepEqual(await axes([c1.id]), [1]);

    // The stall: process 1 stopped until C's lease has expired by PostgreSQL's clock.
    p1.child.proc.kill("SIGSTOP");
    await eventually(
      async () => (await sql<{ expired: boolean }>(`select expires_at <= now() as expired from character_leases where character_id = ?`, [c1.id]))[0]?.expired,
      "C's lease to expire",
    );

    // C plays in world 2 now and trades its axe to D for a coin.
    const c2 = await RawPlayer.connect({ url: p2.url }, c);
    const d = await RawPlayer.connect({ url: p2.url });
    clients.push(c2, d);
    assert.equal(c2.id, c1.id);
    const mc = c2.log.mark();
    const md = d.log.mark();
    c2.send("tradeRequest", { targetPlayerId: d.id });
    const { tradeId } = await d.log.waitFor<{ tradeId: string }>("tradeIncoming", () => true, { since: md });
    d.send("tradeRequestRespond", { tradeId, accept: true });
    await c2.log.waitFor("tradeStarted", (t: { tradeId: string }) => t.tradeId === tradeId, { since: mc });
    c2.send("tradeAddItem", { tradeId, inventorySlot: slotOf(c2, "bronze_axe"), quantity: 1 });
    d.send("tradeAddItem", { tradeId, coins: 1 });
    const offered = await c2.log.waitFor<{ revision: number }>("tradeUpdated", (u: any) => u.myOffer.items.length === 1 && u.theirOffer.coins === 1, {
      since: mc,
    });
    await d.log.waitFor("tradeUpdated", (u: { revision: number }) => u.revision === offered.revision, { since: md });
    for (const p of [c2, d]) p.send("tradeAccept", { tradeId, revision: offered.revision });
    const confirm = await c2.log.waitFor<{ revision: number }>("tradeConfirmScreen", () => true, { since: mc });
    for (const p of [c2, d]) p.send("tradeAccept", { tradeId, revision: confirm.revision });
    await c2.log.waitFor("tradeCompleted", (t: { tradeId: string }) => t.tradeId === tradeId, { since: mc });
    assert.deepEqual(await axes([c1.id, d.id]), [0, 2], "the trade committed");

    // Process 1 wakes up: it finds the lease lost, drops C without writing, says so once.
    p1.child.proc.kill("SIGCONT");
    const line = JSON.parse(await p1.child.waitFor(LOST, 30_000)) as { characterId: string; world: number; why: string };
    assert.equal(line.characterId, c1.id);
    assert.equal(line.world, 1);
    assert.equal((await c1.log.waitClose()).code, 4009, "C's old connection is closed with REPLACED");
    // Everything process 1 still had to write is written once it has stopped (SIGTERM saves and drains).
    await p1.child.stop("SIGTERM");
    assert.equal(
      p1.child
        .output()
        .split("\n")
        .filter((l) => LOST.test(l)).length,
      1,
      "one line",
    );
    assert.deepEqual(await axes([c1.id, d.id]), [0, 2], "no axe created by the stalled process");
    // C still plays in world 2 with the trade's result.
    assert.equal(slotOf(c2, "bronze_axe"), -1);
  });
});
