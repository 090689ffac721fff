/**
 * The death lock in storage (PGlite, and PostgreSQL when TEST_DATABASE_URL is set): whichever of
 * `resolveDeath` (the world puts the dropped items on the ground) and `recoverOpenDeath` (the bank
 * gets them) closes the lock owns the items; the other does nothing. Also under concurrency.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { recordTestDeath, respawned } from "../../helpers/records.js";
import type { Storage } from "../../../src/storage/orm.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

const DROPPED = [
  { itemId: "shrimp", quantity: 2 },
  { itemId: "tinderbox", quantity: 1 },
];

for (const kind of storageKinds()) {
  describe(`death lock on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let repo: CharacterRepository;
    before(async () => {
      storage = await kind.get();
      repo = new CharacterRepository(storage.orm);
    });
    beforeEach(async () => resetStorage(storage));

    const newCharacter = async () => repo.create({ accountId: randomUUID(), coins: 0, inventory: DROPPED.map((d, slot) => ({ slot, ...d })) });
    const die = (id: string) => recordTestDeath(repo, id, DROPPED);
    const bank = async (id: string) => (await repo.load(id))!.bank.map((b) => `${b.itemId}×${b.quantity}`).sort();

    it("resolved first: recovery restores nothing", async () => {
      const c = await newCharacter();
      const deathId = (await die(c.id))!;
      assert.ok(deathId);
      assert.equal((await repo.load(c.id))!.inventory.length, 0, "the lost items left the inventory with the lock");
      assert.equal(await repo.resolveDeath(deathId), true);
      assert.equal(await repo.resolveDeath(deathId), true, "resolving again says the same (a retry after a lost answer), and changes nothing");
      assert.equal((await repo.recoverOpenDeath(c.id)).restored, 0);
      assert.deepEqual(await bank(c.id), []);
    });

    it("recovered first: the bank gets the items once and a late resolve closes nothing", async () => {
      const c = await newCharacter();
      const deathId = (await die(c.id))!;
      assert.deepEqual(await repo.recoverOpenDeath(c.id), { restored: 2, overflow: [], at: { x: 5, z: 100 } });
      assert.deepEqual(await bank(c.id), ["shrimp×2", "tinderbox×1"]);
      assert.equal((await repo.recoverOpenDeath(c.id)).restored, 0, "a second recovery restores nothing");
      assert.equal(await repo.resolveDeath(deathId), false, "the world must not drop them too");
      assert.deepEqual(await bank(c.id), ["shrimp×2", "tinderbox×1"]);
    });

    it("recovery into a bank stack near the cap: the bank fills to the cap and the excess comes back as overflow (never lost)", async () => {
      const c = await newCharacter();
      const cap = 2_147_483_647;
      await repo.save({ ...respawned(c.id), items: { inventory: [], equipment: {}, bank: [{ itemId: "shrimp", quantity: cap - 1 }] } });
      await die(c.id);
      const r = await repo.recoverOpenDeath(c.id);
      assert.deepEqual(r, { restored: 2, overflow: [{ itemId: "shrimp", quantity: 1 }], at: { x: 5, z: 100 } });
      assert.deepEqual(await bank(c.id), [`shrimp×${cap}`, "tinderbox×1"]);
    });

    it("a second death while one is open records nothing", async () => {
      const c = await newCharacter();
      assert.ok(await die(c.id));
      assert.equal(await die(c.id), null);
    });

    it("resolve and recovery racing: exactly one of them owns the items, every time", async () => {
      const c = await newCharacter();
      let ground = 0;
      let banked = 0;
      for (let i = 0; i < 20; i++) {
        const deathId = (await die(c.id))!;
        assert.ok(deathId, `death ${i} recorded`);
        const [resolved, { restored }] = await Promise.all([repo.resolveDeath(deathId), repo.recoverOpenDeath(c.id)]);
        assert.notEqual(resolved, restored > 0, `round ${i}: exactly one owner (resolved ${resolved}, restored ${restored})`);
        if (resolved) ground++;
        else banked++;
      }
      assert.equal(ground + banked, 20);
      const shrimp = (await repo.load(c.id))!.bank.find((b) => b.itemId === "shrimp")?.quantity ?? 0;
      assert.equal(shrimp, 2 * banked, "the bank holds exactly the recovered rounds' items");
    });
  });
}
