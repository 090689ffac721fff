/**
 * Character leases in storage (PGlite, and PostgreSQL when TEST_DATABASE_URL is set): one holder
 * at a time, compared and set by the database. Racing takes by different processes: exactly one
 * wins; an expired lease is taken over; renew and release touch only the holder's own lease.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { LeaseStore } from "../../../src/cluster/leases.js";
import type { Storage } from "../../../src/storage/orm.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";
import { lockWaiters, until } from "../../helpers/trade.js";

for (const kind of storageKinds()) {
  describe(`character leases on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let repo: CharacterRepository;
    before(async () => {
      storage = await kind.get();
      repo = new CharacterRepository(storage.orm);
    });
    beforeEach(async () => resetStorage(storage));

    const newCharacter = async () => (await repo.create({ accountId: randomUUID(), coins: 0, inventory: [] })).id;
    const store = (owner: string, ttl?: number) => new LeaseStore(storage.orm, owner, ttl);
    const rows = (id: string) =>
      storage.orm.em
        .fork()
        .getConnection()
        .execute<{ owner: string; world: number }[]>("select owner, world from character_leases where character_id = ?", [id]);

    it("the first take wins; another process is refused and told who holds it; the holder takes it again for another of its worlds", async () => {
      const id = await newCharacter();
      const a = store("proc-a");
      const b = store("proc-b");
      const first = await a.take(id, 1);
      assert.ok(first.ok && /^\d+$/.test(first.fence.epoch) && first.fence.owner === "proc-a", "taken, with a fence");
      const refused = await b.take(id, 2);
      assert.ok(!refused.ok && "holder" in refused, "refused, with its holder");
      assert.equal(refused.holder.owner, "proc-a");
      assert.equal(refused.holder.world, 1);
      assert.ok(refused.holder.expiresInSeconds > 0 && refused.holder.expiresInSeconds <= 30);
      const other = await a.take(id, 2);
      assert.ok(other.ok && other.fence.epoch !== first.fence.epoch, "another world of the holder: a new epoch");
      assert.deepEqual(await rows(id), [{ owner: "proc-a", world: 2 }]);
      const again = await a.take(id, 2);
      assert.ok(again.ok && again.fence.epoch === other.fence.epoch, "the same world again: the same epoch");
    });

    it("racing takes by different processes: exactly one wins, and the row names it", async () => {
      for (let round = 0; round < 5; round++) {
        const id = await newCharacter();
        const owners = Array.from({ length: 8 }, (_, i) => `proc-${round}-${i}`);
        const results = await Promise.all(owners.map((o, i) => store(o).take(id, (i % 3) + 1)));
        const winners = owners.filter((_, i) => results[i]!.ok);
        assert.equal(winners.length, 1, `round ${round}: ${winners.length} winners`);
        const [row] = await rows(id);
        assert.equal(row!.owner, winners[0]);
        for (const r of results) if (!r.ok) assert.equal("holder" in r && r.holder.owner, winners[0]);
      }
    });

    it("concurrent takes go together: each granted its own epoch, one held elsewhere refused with its holder, a missing one missing", async () => {
      const [c1, c2, c3, held] = [await newCharacter(), await newCharacter(), await newCharacter(), await newCharacter()];
      assert.ok((await store("proc-b").take(held, 1)).ok);
      const a = store("proc-a");
      const results = await Promise.all([a.take(c1, 1), a.take(c2, 2), a.take(randomUUID(), 1), a.take(held, 1), a.take(c3, 1)]);
      const [r1, r2, missing, refused, r3] = results;
      assert.ok(r1.ok && r2.ok && r3.ok, "the free ones granted");
      assert.equal(new Set([r1.fence.epoch, r2.fence.epoch, r3.fence.epoch]).size, 3, "each its own epoch");
      assert.deepEqual(missing, { ok: false, missing: true });
      assert.ok(!refused.ok && "holder" in refused && refused.holder.owner === "proc-b");
      assert.deepEqual(await rows(c2), [{ owner: "proc-a", world: 2 }]);
      assert.deepEqual(await rows(held), [{ owner: "proc-b", world: 1 }]);
      // The same character twice at once (two of this process's worlds): one statement after the other, the later holds it.
      const [w1, w2] = await Promise.all([a.take(c1, 3), a.take(c1, 4)]);
      assert.ok(w1.ok && w2.ok && w1.fence.epoch !== w2.fence.epoch);
      assert.deepEqual(await rows(c1), [{ owner: "proc-a", world: 4 }]);
    });

    if (kind.name === "postgresql") {
      it("a take that waits on a lease row another transaction holds does not hold back the other takes of the process", async () => {
        const [locked, free] = [await newCharacter(), await newCharacter()];
        const stalled = await store("proc-stalled").take(locked, 1);
        assert.ok(stalled.ok);
        await storage.orm.em
          .fork()
          .getConnection()
          .execute("update character_leases set expires_at = now() - interval '1 second' where character_id = ?", [locked]);
        // The stalled holder's write, its lease row locked FOR SHARE (as every fenced write takes it) and not committed.
        let commit!: () => void;
        let held!: () => void;
        const isHeld = new Promise<void>((r) => (held = r));
        const write = storage.orm.em.fork().transactional(async (em) => {
          await em.getConnection().execute(`select 1 from character_leases where character_id = ? for share`, [locked], "all", em.getTransactionContext());
          held();
          await new Promise<void>((r) => (commit = r));
        });
        await isHeld;
        const a = store("proc-a");
        const takeover = a.take(locked, 1);
        await until(async () => (await lockWaiters(storage.orm)) > 0, "the takeover waits for the write");
        // Asked while the takeover's statement waits: it goes once that one has been in flight MAX_HOLD_MS.
        assert.ok((await a.take(free, 1)).ok, "another character's lease, taken meanwhile");
        assert.equal(await lockWaiters(storage.orm), 1, "the takeover still waits");
        commit();
        await write;
        const taken = await takeover;
        assert.ok(taken.ok && taken.fence.epoch !== stalled.fence.epoch, "then taken over");
      });
    }

    it("a character that does not exist has no lease to take (missing), and none is written", async () => {
      assert.deepEqual(await store("proc-a").take(randomUUID(), 1), { ok: false, missing: true });
      assert.equal((await storage.orm.em.fork().getConnection().execute("select count(*)::int as n from character_leases"))[0].n, 0);
    });

    it("an expired lease is taken over; the old holder can neither renew nor release the new one", async () => {
      const id = await newCharacter();
      const dead = store("proc-dead");
      const old = await dead.take(id, 1);
      assert.ok(old.ok);
      // Expire it as a process that stopped renewing would see it, by the database's clock.
      await storage.orm.em.fork().getConnection().execute("update character_leases set expires_at = now() - interval '1 second' where character_id = ?", [id]);
      assert.equal(await dead.holder(id), undefined);
      const next = store("proc-next");
      const taken = await next.take(id, 2);
      assert.ok(taken.ok && taken.fence.epoch !== old.fence.epoch);
      assert.deepEqual([...(await dead.renew([{ characterId: id, epoch: old.fence.epoch }]))], []);
      await dead.release(id, 1);
      await dead.releaseAll();
      assert.deepEqual(await rows(id), [{ owner: "proc-next", world: 2 }]);
      assert.deepEqual([...(await next.renew([{ characterId: id, epoch: taken.fence.epoch }]))], [id]);
      await next.release(id, 1); // not the world that holds it: nothing
      assert.equal((await rows(id)).length, 1);
      await next.release(id, 2);
      assert.equal((await rows(id)).length, 0);
      assert.ok((await dead.take(id, 1)).ok, "free again");
    });
  });
}
