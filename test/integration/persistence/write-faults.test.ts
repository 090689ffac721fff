/**
 * Writes whose answer is lost or that fail on a transient fault (issue 28 points 7 and 8), on real
 * storage (PGlite, and PostgreSQL when TEST_DATABASE_URL is set), with the real World and
 * repository; the fault is injected where the database's answer comes back (the statement ran, or
 * failed, and the caller sees an error shaped like a cut connection's):
 * - a death whose COMMIT committed but whose answer was lost is read back: memory follows the
 *   death, its items go on the ground, none is both in memory and owed to the bank;
 * - a death whose outcome can't be read at all leaves memory untrusted (never written again): the
 *   bank gets the dropped items at the next join, none lost, none twice;
 * - a resolve whose answer was lost, retried, still puts the items on the ground (not "the bank
 *   has them", which would lose them);
 * - a leave save that fails on a transient fault (its leave group's, then its own) is tried again and lands.
 * Invariant checked each time: every item of the character, over storage (inventory, equipment,
 * bank) and the world's ground, equals what it held before.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { createLogger } from "../../../src/logger.js";
import type { Storage } from "../../../src/storage/orm.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { STARTER } from "../../helpers/records.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";
import { until } from "../../helpers/trade.js";

/** What a dropped connection looks like to the caller (pg's error; `isStorageUnavailable` knows it). */
const cut = () => Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" });

for (const kind of storageKinds()) {
  describe(`writes under faults on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let content: GameContent;
    let repo: CharacterRepository;
    let world: World;

    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
    });
    beforeEach(async () => {
      await resetStorage(storage);
      repo = new CharacterRepository(storage.orm);
      world = new World({ content, characters: repo, logger: createLogger("silent"), saveIntervalSeconds: 3600, checkAdminCode: () => "wrong" });
    });

    const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close() {} });
    async function joined(): Promise<Player> {
      const c = await repo.create({ accountId: randomUUID(), coins: 10, inventory: STARTER });
      return world.join((await repo.load(c.id))!, connection(), 4009).player;
    }
    /** Every item of the character: storage (inventory, equipment, bank) plus the ground. */
    async function everything(id: string): Promise<Record<string, number>> {
      const r = (await repo.load(id))!;
      const out: Record<string, number> = {};
      const add = (itemId: string, q: number) => (out[itemId] = (out[itemId] ?? 0) + q);
      for (const s of r.inventory) add(s.itemId, s.quantity);
      for (const e of Object.values(r.equipment)) add(e.itemId, e.quantity);
      for (const b of r.bank) add(b.itemId, b.quantity);
      for (const g of world.groundItems.values()) add(g.itemId, g.quantity);
      return out;
    }
    const STARTED = { bronze_axe: 1, bronze_pickaxe: 1, small_fishing_net: 1, tinderbox: 1, shrimp: 2, bread: 1 };
    const inMemory = (p: Player) => p.inventory.filter((s) => s !== null).length;
    const openDeaths = async (id: string) =>
      Number(
        (
          await storage.orm.em
            .fork()
            .getConnection()
            .execute<{ n: number }[]>("select count(*)::int as n from player_deaths where character_id = ? and resolved_at is null", [id])
        )[0]!.n,
      );

    it("a death that committed but whose answer was lost: read back, memory follows it, the items go on the ground once", async () => {
      const p = await joined();
      const record = repo.recordDeath.bind(repo);
      repo.recordDeath = async (...args) => {
        await record(...args);
        throw cut();
      };
      world.killPlayer(p, "goblin");
      await world.queues.drain();
      await until(() => world.groundItems.size > 0, "the dropped items on the ground");
      assert.equal(inMemory(p), 3, "memory holds the three kept items, as storage does");
      assert.ok(!p.itemsStale);
      await world.leave(p.id, "logout");
      assert.equal((await repo.recoverOpenDeath(p.id)).restored, 0, "nothing owed to the bank as well");
      assert.deepEqual(await everything(p.id), STARTED);
    });

    it("a death whose outcome can't be read: memory is not trusted, the bank gets the dropped items at the next join", async () => {
      const p = await joined();
      const record = repo.recordDeath.bind(repo);
      repo.recordDeath = async (...args) => {
        await record(...args);
        throw cut();
      };
      repo.deathRecorded = async () => {
        throw cut();
      };
      world.killPlayer(p, "goblin");
      await world.queues.drain();
      assert.ok(p.itemsStale, "memory is not trusted");
      assert.equal(world.groundItems.size, 0, "nothing on the ground");
      await world.leave(p.id, "logout");
      assert.equal(await openDeaths(p.id), 1);
      assert.ok((await repo.recoverOpenDeath(p.id)).restored > 0, "the bank gets them at the next join");
      assert.deepEqual(await everything(p.id), STARTED);
    });

    it("a resolve whose answer was lost: the retry still puts the items on the ground", async () => {
      const p = await joined();
      const resolve = repo.resolveDeath.bind(repo);
      let calls = 0;
      repo.resolveDeath = async (...args) => {
        const closed = await resolve(...args);
        if (++calls === 1) throw cut();
        return closed;
      };
      world.killPlayer(p, "goblin");
      await world.queues.drain();
      await until(() => calls === 1, "the first resolve");
      await until(() => {
        world.step();
        return world.groundItems.size > 0;
      }, "the retried resolve to put the items on the ground");
      assert.equal(calls, 2);
      await world.leave(p.id, "logout");
      assert.deepEqual(await everything(p.id), STARTED);
    });

    it("a leave save that fails on a transient fault is tried again and lands", async () => {
      const p = await joined();
      p.coins = 10;
      p.inventory = p.inventory.map((s) => (s?.itemId === "bread" ? null : s));
      p.bank = new Map([["bread", 1]]);
      p.safety.itemsChanged();
      // Its leave group's write is cut, then its save alone twice.
      let groupFailures = 1;
      const saveLeaving = repo.saveLeaving.bind(repo);
      repo.saveLeaving = async (rows, reason) => {
        if (groupFailures-- > 0) throw cut();
        return saveLeaving(rows, reason);
      };
      const save = repo.save.bind(repo);
      let failures = 2;
      repo.save = async (s) => {
        if (failures-- > 0) throw cut();
        return save(s);
      };
      await world.leave(p.id, "logout");
      assert.equal(groupFailures, 0, "the group's write failed once");
      assert.equal(failures, -1, "two failures alone, then the save");
      const stored = (await repo.load(p.id))!;
      assert.deepEqual(stored.bank, [{ itemId: "bread", quantity: 1 }]);
      assert.ok(!stored.inventory.some((s) => s.itemId === "bread"));
    });
  });
}
