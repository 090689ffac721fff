import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { storageKinds, resetStorage } from "../../helpers/storage.js";
import type { Storage } from "../../../src/storage/orm.js";
import { AccountEntity, CharacterEntity, InventoryItemEntity, PlayerDeathEntity, EquipmentItemEntity, FriendshipEntity } from "../../../entities/index.js";

for (const kind of storageKinds()) {
  describe(`storage on ${kind.name}`, function () {
    let storage: Storage;
    before(async () => {
      storage = await kind.get();
    });
    beforeEach(async () => resetStorage(storage));

    const exec = (sql: string) => storage.orm.em.fork().getConnection().execute(sql);

    async function makeCharacter(name = `P${randomUUID().slice(0, 6)}`) {
      const em = storage.orm.em.fork();
      const accountId = randomUUID();
      em.create(AccountEntity, { id: accountId, anonymous: false, roles: [] });
      const c = em.create(CharacterEntity, { id: randomUUID(), accountId, name });
      await em.flush();
      return c;
    }

    it("entities and migrations agree (the schema diff is empty)", async () => {
      const diff = await storage.orm.schema.getUpdateSchemaSQL({ wrap: false });
      assert.equal(diff.trim(), "", diff);
    });

    it("applies the documented defaults to a new character", async () => {
      const c = await makeCharacter();
      const row = await storage.orm.em.fork().findOneOrFail(CharacterEntity, { id: c.id });
      assert.equal(row.combatLevel, 3);
      assert.equal(row.attackLevel, 1);
      assert.equal(row.constitutionLevel, 10);
      assert.equal(row.health, 100);
      assert.equal(row.coins, 0);
      assert.deepEqual([row.positionX, row.positionY, row.positionZ], [0, 10, 0]);
      assert.equal(row.isAgent, false);
    });

    it("round-trips inventory rows", async () => {
      const c = await makeCharacter();
      const em = storage.orm.em.fork();
      em.create(InventoryItemEntity, { characterId: c.id, slot: 0, itemId: "bronze_axe", quantity: 1 });
      em.create(InventoryItemEntity, { characterId: c.id, slot: 27, itemId: "feather", quantity: 500 });
      await em.flush();
      const rows = await storage.orm.em.fork().find(InventoryItemEntity, { characterId: c.id }, { orderBy: { slot: "asc" } });
      assert.deepEqual(
        rows.map((r) => [r.slot, r.itemId, r.quantity]),
        [
          [0, "bronze_axe", 1],
          [27, "feather", 500],
        ],
      );
    });

    const violations: [string, (id: string) => string][] = [
      ["inventory slot 28", (id) => `insert into inventory_items (character_id, slot, item_id, quantity) values ('${id}', 28, 'x', 1)`],
      ["inventory slot -1", (id) => `insert into inventory_items (character_id, slot, item_id, quantity) values ('${id}', -1, 'x', 1)`],
      ["inventory quantity 0", (id) => `insert into inventory_items (character_id, slot, item_id, quantity) values ('${id}', 0, 'x', 0)`],
      ["negative coins", (id) => `update characters set coins = -1 where id = '${id}'`],
      ["bank quantity 0", (id) => `insert into bank_items (character_id, item_id, quantity) values ('${id}', 'x', 0)`],
      ["unknown character", () => `insert into inventory_items (character_id, slot, item_id, quantity) values ('nobody', 0, 'x', 1)`],
      [
        "trade audit outcome",
        () =>
          `insert into trade_audits (id, character_a, character_b, offer_a, offer_b, outcome, started_at, ended_at) values ('t', 'a', 'b', '{}', '{}', 'stolen', now(), now())`,
      ],
    ];
    for (const [name, sql] of violations) {
      it(`the database refuses ${name}`, async () => {
        const c = await makeCharacter();
        await assert.rejects(exec(sql(c.id)));
      });
    }

    it("the database keeps inventory slots unique per character", async () => {
      const c = await makeCharacter();
      await exec(`insert into inventory_items (character_id, slot, item_id, quantity) values ('${c.id}', 3, 'x', 1)`);
      await assert.rejects(exec(`insert into inventory_items (character_id, slot, item_id, quantity) values ('${c.id}', 3, 'y', 1)`));
    });

    it("the database keeps equipment slot types unique per character", async () => {
      const c = await makeCharacter();
      const em = storage.orm.em.fork();
      em.create(EquipmentItemEntity, { characterId: c.id, slotType: "weapon", itemId: "a", quantity: 1 });
      await em.flush();
      const em2 = storage.orm.em.fork();
      em2.create(EquipmentItemEntity, { characterId: c.id, slotType: "weapon", itemId: "b", quantity: 1 });
      await assert.rejects(em2.flush());
    });

    it("character names are unique regardless of case", async () => {
      await makeCharacter("Zezima");
      await assert.rejects(makeCharacter("zEZIMA"));
    });

    it("at most one open death lock per character", async () => {
      const c = await makeCharacter();
      const em = storage.orm.em.fork();
      em.create(PlayerDeathEntity, { id: randomUUID(), characterId: c.id, positionX: 0, positionZ: 0 });
      await em.flush();
      const em2 = storage.orm.em.fork();
      em2.create(PlayerDeathEntity, { id: randomUUID(), characterId: c.id, positionX: 1, positionZ: 1 });
      await assert.rejects(em2.flush());
      await exec(`update player_deaths set resolved_at = now() where character_id = '${c.id}'`);
      const em3 = storage.orm.em.fork();
      em3.create(PlayerDeathEntity, { id: randomUUID(), characterId: c.id, positionX: 2, positionZ: 2 });
      await em3.flush();
    });

    it("friendships are stored once per ordered pair", async () => {
      const a = await makeCharacter();
      const b = await makeCharacter();
      const [lo, hi] = [a.id, b.id].sort();
      const em = storage.orm.em.fork();
      em.create(FriendshipEntity, { characterA: lo, characterB: hi });
      await em.flush();
      await assert.rejects(exec(`insert into friendships (character_a, character_b, created_at) values ('${hi}', '${lo}', now())`));
    });

    it("deleting a character cascades to its rows", async () => {
      const c = await makeCharacter();
      await exec(`insert into inventory_items (character_id, slot, item_id, quantity) values ('${c.id}', 0, 'x', 1)`);
      await exec(`delete from characters where id = '${c.id}'`);
      const left = await storage.orm.em.fork().count(InventoryItemEntity, { characterId: c.id });
      assert.equal(left, 0);
    });
  });
}
