/**
 * The lease fence (docs/cluster.md "The fence") on every write kind, on real storage (PGlite, and
 * PostgreSQL when TEST_DATABASE_URL is set): a player loaded under a lease that another process
 * then took over (after it expired) writes nothing — per-player save, batched save, immediate item
 * commit, settlement, death and its resolution, leave save — and is dropped with one log line; the
 * renewal never takes such a lease back. The legitimate writer's writes still commit. On
 * PostgreSQL, a takeover waits for a write that holds the fence.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { CharacterClaims } from "../../../src/cluster/claims.js";
import { LeaseStore } from "../../../src/cluster/leases.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { emptyInventory, type ItemLookup } from "../../../src/domain/inventory.js";
import { createLogger } from "../../../src/logger.js";
import { LeaseLostError, type LeaseFence } from "../../../src/storage/fence.js";
import type { Storage } from "../../../src/storage/orm.js";
import { settleTrade } from "../../../src/trade/settlement.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { STARTER } from "../../helpers/records.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";
import { audits, holdings, lockWaiters, settlingTrade, until } from "../../helpers/trade.js";

const LOST = "character lease lost; player dropped without saving";

for (const kind of storageKinds()) {
  describe(`the lease fence on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let content: GameContent;
    let items: ItemLookup;
    let repo: CharacterRepository;
    let world: World;
    let lines: { msg: string; characterId?: string; world?: number; why?: string }[];
    let closed: number[];
    const procA = () => new LeaseStore(storage.orm, "proc-a");
    const procB = () => new LeaseStore(storage.orm, "proc-b");

    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
      items = (id) => content.items.get(id);
      repo = new CharacterRepository(storage.orm);
    });
    beforeEach(async () => {
      await resetStorage(storage);
      lines = [];
      closed = [];
      world = new World({
        content,
        characters: repo,
        logger: createLogger("info", { write: (line: string) => void lines.push(JSON.parse(line)) }),
        saveIntervalSeconds: 3600,
        checkAdminCode: () => "wrong",
        worldNumber: 1,
      });
    });

    const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close: (code) => void closed.push(code) });

    /** A character with the starter kit and 10 coins, in the world under proc-a's lease (world 1). */
    async function joined(): Promise<{ p: Player; fence: LeaseFence }> {
      const c = await repo.create({ accountId: randomUUID(), coins: 10, inventory: STARTER });
      const taken = await procA().take(c.id, 1);
      assert.ok(taken.ok);
      const record = (await repo.load(c.id))!;
      return { p: world.join({ ...record, fence: taken.fence }, connection(), 4009).player, fence: taken.fence };
    }

    /** Proc-a's lease expires (a stall past LEASE_TTL_SECONDS) and proc-b takes it over for its world 2. */
    async function takeOver(id: string): Promise<LeaseFence> {
      await storage.orm.em.fork().getConnection().execute("update character_leases set expires_at = now() - interval '1 second' where character_id = ?", [id]);
      const taken = await procB().take(id, 2);
      assert.ok(taken.ok, "taken over");
      return taken.fence;
    }

    const stored = async (id: string) => {
      const r = (await repo.load(id))!;
      return { coins: r.character.coins, inventory: r.inventory.map((s) => `${s.slot}:${s.itemId}×${s.quantity}`), x: r.character.positionX };
    };
    const deaths = async (id: string) =>
      storage.orm.em.fork().getConnection().execute<{ n: number }[]>("select count(*)::int as n from player_deaths where character_id = ?", [id]);

    /** The player was dropped, its connection closed with REPLACED, and exactly one line said so. */
    function assertDroppedOnce(p: Player) {
      assert.equal(world.player(p.id), undefined, "dropped from the world");
      assert.ok(p.leaseLost);
      assert.deepEqual(closed, [4009]);
      const said = lines.filter((l) => l.msg === LOST);
      assert.equal(said.length, 1, JSON.stringify(lines));
      assert.equal(said[0]!.characterId, p.id);
      assert.equal(said[0]!.world, 1);
      assert.ok(said[0]!.why);
    }

    it("per-player save: the holder's save commits; after a takeover it writes nothing and the player is dropped once", async () => {
      const { p } = await joined();
      p.x += 1;
      p.safety.progressChanged();
      await world.queues.run(p.id, () => world.saving.save(p));
      assert.equal((await stored(p.id)).x, p.x, "the holder writes");
      const before = await stored(p.id);
      await takeOver(p.id);
      p.x += 5;
      p.coins = 999;
      p.inventory = emptyInventory();
      p.safety.itemsChanged();
      p.safety.progressChanged();
      await assert.rejects(
        world.queues.run(p.id, () => world.saving.save(p)),
        (e) => e instanceof LeaseLostError,
      );
      assert.deepEqual(await stored(p.id), before);
      assertDroppedOnce(p);
    });

    it("batched save: the fenced row is refused and reported, the other row of the same statement is written", async () => {
      const { p: stale } = await joined();
      const { p: fine } = await joined();
      const before = await stored(stale.id);
      await takeOver(stale.id);
      for (const p of [stale, fine]) {
        p.x += 3;
        p.safety.progressChanged();
      }
      world.saving.saveDirty();
      await world.queues.drain();
      assert.deepEqual(await stored(stale.id), before);
      assert.equal((await stored(fine.id)).x, fine.x);
      assert.deepEqual(await repo.saveProgress([stale.snapshot(false), fine.snapshot(false)]), { updated: 1, fenced: [stale.id] });
      assertDroppedOnce(stale);
      assert.equal(world.player(fine.id), fine);
    });

    it("batched save of two statements (rows with and without a goal): each refuses its own fenced rows, reported in the rows' order", async () => {
      const all = await Promise.all([joined(), joined(), joined(), joined(), joined()]);
      const [a, b, c, d, e] = all.map((j) => j.p) as [Player, Player, Player, Player, Player];
      const before = { a: await stored(a.id), d: await stored(d.id) };
      for (const p of [a, d, e]) await takeOver(p.id);
      const rows = [a, b, c, d, e].map((p, i) => {
        const s = p.snapshot(false);
        s.x = 40 + i;
        if (i % 2 === 1) delete s.goal; // b and d leave the goal as stored: the second statement
        return s;
      });
      delete rows[4]!.fence; // a row without a fence is not checked (a world without claims), whoever holds the lease
      assert.deepEqual(await repo.saveProgress(rows), { updated: 3, fenced: [a.id, d.id] });
      assert.deepEqual([await stored(a.id), await stored(d.id)], [before.a, before.d], "the fenced rows are not written");
      assert.deepEqual([(await stored(b.id)).x, (await stored(c.id)).x, (await stored(e.id)).x], [41, 42, 44]);
    });

    it("item commit: refused, memory unchanged, nothing stored", async () => {
      const { p } = await joined();
      const before = await stored(p.id);
      await takeOver(p.id);
      assert.equal(await world.commitItems(p, () => ({ coins: p.coins + 100 })), false);
      assert.equal(p.coins, 10);
      assert.deepEqual(await stored(p.id), before);
      assertDroppedOnce(p);
    });

    it("leave save: nothing written; the leave fails with the fence's refusal and one line says so", async () => {
      const { p } = await joined();
      const before = await stored(p.id);
      await takeOver(p.id);
      p.inventory = emptyInventory();
      p.safety.itemsChanged();
      await assert.rejects(world.leave(p.id, "logout"), LeaseLostError);
      assert.deepEqual(await stored(p.id), before);
      const said = lines.filter((l) => l.msg === LOST);
      assert.deepEqual(
        said.map((l) => l.characterId),
        [p.id],
      );
    });

    it("death: no death recorded, no item moved; the player is dropped once", async () => {
      const { p } = await joined();
      const before = await stored(p.id);
      await takeOver(p.id);
      world.killPlayer(p, "goblin");
      await world.queues.drain();
      assert.deepEqual(await deaths(p.id), [{ n: 0 }]);
      assert.deepEqual(await stored(p.id), before);
      assertDroppedOnce(p);
      assert.equal(world.groundItems.size, 0, "nothing dropped on the ground");
    });

    it("death resolution: a lock recorded under the lease is not resolved for the ground after a takeover (the bank gets it)", async () => {
      const { p, fence } = await joined();
      const deathId = (await repo.recordDeath(
        { characterId: p.id, x: 1, z: 1, items: { dropped: [{ itemId: "bread", quantity: 1 }], kept: [] } },
        { ...p.snapshot(false), fence },
      ))!;
      assert.ok(deathId);
      await takeOver(p.id);
      await assert.rejects(repo.resolveDeath(deathId, { characterId: p.id, ...fence }), (e) => e instanceof LeaseLostError);
      assert.equal((await repo.recoverOpenDeath(p.id)).restored, 1, "still open: the bank gets the items");
    });

    it("settlement: with both leases held it commits; with one side's lease taken over, nothing is written (lease_lost, that side)", async () => {
      const { p: a, fence: fa } = await joined();
      const { p: b, fence: fb } = await joined();
      const spec = (p: Player, give: boolean) => ({
        id: p.id,
        holdings: holdings(10, STARTER),
        ...(give ? { items: [{ slot: 6, quantity: 1 }] } : { coins: 1 }),
      });
      const first = await settleTrade(storage.orm, settlingTrade(randomUUID(), spec(a, true), spec(b, false), items), items, undefined, {
        [a.id]: fa,
        [b.id]: fb,
      });
      assert.ok(first.ok, JSON.stringify(first));
      const before = [await stored(a.id), await stored(b.id)];
      await takeOver(b.id);
      const trade = settlingTrade(
        randomUUID(),
        { ...spec(a, false), holdings: holdings(11, STARTER.slice(0, 6)) },
        { ...spec(b, true), holdings: holdings(9, STARTER) },
        items,
      );
      const r = await settleTrade(storage.orm, trade, items, undefined, { [a.id]: fa, [b.id]: fb });
      assert.deepEqual(r, { ok: false, failure: "lease_lost", message: "The trade could not be completed.", lost: [b.id] });
      assert.deepEqual([await stored(a.id), await stored(b.id)], before);
      assert.deepEqual(await audits(storage.orm, [trade.id]), []);
    });

    it("renewal: a lease that changed hands is not taken back; the player is dropped without a save", async () => {
      const { p } = await joined();
      const claims = new CharacterClaims({ leases: procA(), worlds: () => [{ number: 1, world }], replacedCode: 4009, logger: createLogger("silent") });
      await claims.renew();
      assert.equal(world.player(p.id), p, "renewed while held");
      const before = await stored(p.id);
      await takeOver(p.id);
      p.inventory = emptyInventory();
      p.safety.itemsChanged();
      await claims.renew();
      await world.queues.drain();
      assertDroppedOnce(p);
      assert.deepEqual(await stored(p.id), before, "no leave save");
      assert.equal((await procA().holder(p.id))?.owner, "proc-b", "the lease stays with its new holder");
    });

    if (kind.name === "postgresql") {
      it("a takeover waits for a write that holds the fence, then reads after it", async () => {
        const { p, fence } = await joined();
        await storage.orm.em
          .fork()
          .getConnection()
          .execute("update character_leases set expires_at = now() - interval '1 second' where character_id = ?", [p.id]);
        let commit!: () => void;
        let held!: () => void;
        const isHeld = new Promise<void>((r) => (held = r));
        const write = repo["fork"]().transactional(async (em) => {
          await repo.holdLease(em, p.id, fence);
          await repo.writeSnapshot(em, { ...p.snapshot(false), x: 77 });
          held();
          await new Promise<void>((r) => (commit = r));
        });
        await isHeld;
        const take = procB().take(p.id, 2);
        await until(async () => (await lockWaiters(storage.orm)) > 0, "the takeover waits for the write");
        commit();
        await write;
        assert.ok((await take).ok);
        assert.equal((await stored(p.id)).x, 77, "the write committed before the takeover");
      });
    }
  });
}
