/**
 * What a join reads and writes, each in one statement, on real storage (PGlite, and PostgreSQL
 * when TEST_DATABASE_URL is set):
 * - `load` returns the record the entity reads return (the character as `findOne` hydrates it, items
 *   as `itemRows` reads them, in the same order), and whether a death lock of the character is open;
 * - a join (`CharacterResolver` with the real repository and World) recovers an open death — the
 *   bank gets the dropped items — and opens no recovery transaction when there is none;
 * - `recordLogin` opens a login and closes the character's open ones (only its own);
 * - `firstOfAccount` finds the character a join without one plays;
 * - concurrent joins' loads, first characters and logins go together, one statement each (a login
 *   of a character asked twice: one statement per login, the later closing the earlier), and each
 *   join gets its own answer.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterEntity } from "../../../entities/character.js";
import type { Principal } from "../../../src/auth/service.js";
import { loadContent } from "../../../src/content/load.js";
import type { StoredGoal } from "../../../src/domain/goal-progress.js";
import { createLogger } from "../../../src/logger.js";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import type { Storage } from "../../../src/storage/orm.js";
import { CharacterResolver } from "../../../src/world/character-resolver.js";
import type { Connection } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { recordTestDeath, respawned, STARTER } from "../../helpers/records.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

const GOAL: StoredGoal = {
  id: "g1",
  type: "gather",
  description: "Chop 5 logs",
  target: "logs",
  progress: 2,
  targetCount: 5,
  startedAt: "2026-01-01T00:00:00.000Z",
};
const DROPPED = [
  { itemId: "shrimp", quantity: 2 },
  { itemId: "tinderbox", quantity: 1 },
];

for (const kind of storageKinds()) {
  describe(`join reads and writes on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let repo: CharacterRepository;
    before(async () => {
      storage = await kind.get();
      repo = new CharacterRepository(storage.orm);
    });
    beforeEach(async () => resetStorage(storage));

    const sql = <T = Record<string, unknown>>(q: string, params: unknown[] = []) => storage.orm.em.fork().getConnection().execute<T[]>(q, params);
    const newCharacter = (inventory = STARTER) => repo.create({ accountId: randomUUID(), coins: 25, inventory });
    const die = (id: string) => recordTestDeath(repo, id, DROPPED);

    /** What `f` returns, and how many statements went through the connection's client meanwhile. */
    async function counted<T>(f: () => Promise<T>): Promise<{ result: T; statements: number }> {
      const client = storage.orm.em.getConnection().getClient() as unknown as { executeQuery: (...a: unknown[]) => Promise<unknown> };
      const original = client.executeQuery;
      let statements = 0;
      client.executeQuery = function (this: unknown, ...a: unknown[]) {
        statements++;
        return original.apply(this, a);
      };
      try {
        return { result: await f(), statements };
      } finally {
        client.executeQuery = original;
      }
    }

    /** The record as the entity reads gave it before `load` was one statement. */
    async function entityReads(id: string) {
      const em = storage.orm.em.fork();
      const character = await em.findOneOrFail(CharacterEntity, { id });
      return { character, ...(await repo.itemRows(em, id)) };
    }
    /** Every property of a character entity, as a plain object (the values with their types). */
    const columns = (c: object) => {
      const props = Object.keys(storage.orm.getMetadata().get(CharacterEntity).properties);
      return Object.fromEntries(props.map((p) => [p, (c as Record<string, unknown>)[p]]));
    };

    it("load returns what the entity reads return: every column with its type, the items in the same order", async () => {
      const c = await newCharacter([
        { slot: 9, itemId: "shrimp", quantity: 3 },
        { slot: 0, itemId: "bronze_axe", quantity: 1 },
        { slot: 27, itemId: "feather", quantity: 500 },
      ]);
      await repo.save({
        ...respawned(c.id),
        x: -12.5,
        z: 3.25,
        goal: GOAL,
        goalsPaused: true,
        skills: { woodcutting: { level: 2, xp: 120 } },
        prayer: { points: 4.5, active: ["thick_skin"] },
        coins: 42,
        items: {
          inventory: [
            { slot: 4, itemId: "logs", quantity: 1 },
            { slot: 1, itemId: "shrimp", quantity: 7 },
          ],
          equipment: {
            weapon: { itemId: "bronze_sword", quantity: 1 },
            ammo: { itemId: "bronze_arrow", quantity: 40 },
            head: { itemId: "bronze_helm", quantity: 1 },
          },
          bank: [
            { itemId: "tinderbox", quantity: 1 },
            { itemId: "bread", quantity: 3 },
            { itemId: "logs", quantity: 12 },
          ],
        },
      });
      const loaded = (await repo.load(c.id))!;
      const expected = await entityReads(c.id);
      assert.deepStrictEqual(columns(loaded.character), columns(expected.character));
      assert.ok(loaded.character.createdAt instanceof Date && loaded.character.lastSeenAt instanceof Date, "dates are Dates");
      assert.deepStrictEqual(loaded.character.goal, GOAL);
      assert.deepStrictEqual(loaded.inventory, expected.inventory);
      assert.deepStrictEqual(
        loaded.inventory.map((s) => s.slot),
        [1, 4],
        "by slot",
      );
      assert.deepStrictEqual(loaded.bank, expected.bank);
      assert.deepStrictEqual(
        loaded.bank.map((b) => b.itemId),
        ["bread", "logs", "tinderbox"],
        "by item id",
      );
      assert.deepStrictEqual(loaded.equipment, expected.equipment);
      assert.deepStrictEqual(Object.keys(loaded.equipment), ["weapon", "ammo", "head"], "as written");
      assert.equal(loaded.openDeath, false);
      assert.equal(typeof loaded.loadedAt, "number");
    });

    it("load of a character with no items: empty rows; of no character: null", async () => {
      const c = await newCharacter([]);
      const loaded = (await repo.load(c.id))!;
      assert.deepStrictEqual([loaded.inventory, loaded.equipment, loaded.bank], [[], {}, []]);
      assert.deepStrictEqual(columns(loaded.character), columns((await entityReads(c.id)).character));
      assert.equal(await repo.load(randomUUID()), null);
    });

    it("firstOfAccount is the account's oldest character, as listByAccount lists them; none for an account without one", async () => {
      const accountId = randomUUID();
      await repo.create({ accountId, coins: 0, inventory: [] });
      await repo.create({ accountId, coins: 0, inventory: [] });
      await newCharacter(); // another account's
      const listed = await repo.listByAccount(accountId);
      assert.equal(listed.length, 2);
      assert.equal(await repo.firstOfAccount(accountId), listed[0]!.id);
      assert.equal(await repo.firstOfAccount(randomUUID()), undefined);
    });

    it("concurrent loads go in one statement: each its own record (one asked twice: two entities), none for no character", async () => {
      const a = await newCharacter([{ slot: 3, itemId: "shrimp", quantity: 2 }]);
      const b = await newCharacter([]);
      const { result, statements } = await counted(() => Promise.all([repo.load(a.id), repo.load(b.id), repo.load(randomUUID()), repo.load(a.id)]));
      assert.equal(statements, 1);
      const [la, lb, none, again] = result;
      assert.equal(none, null);
      assert.deepStrictEqual(columns(la!.character), columns((await entityReads(a.id)).character));
      assert.deepStrictEqual(columns(lb!.character), columns((await entityReads(b.id)).character));
      assert.deepStrictEqual(columns(again!.character), columns(la!.character));
      assert.notEqual(again!.character, la!.character, "each record its own entity");
      assert.deepStrictEqual([la!.inventory, lb!.inventory], [[{ slot: 3, itemId: "shrimp", quantity: 2 }], []]);
    });

    it("concurrent firstOfAccount calls go in one statement, each its account's oldest character", async () => {
      const [x, y] = [randomUUID(), randomUUID()];
      const x1 = await repo.create({ accountId: x, coins: 0, inventory: [] });
      await repo.create({ accountId: x, coins: 0, inventory: [] });
      const y1 = await repo.create({ accountId: y, coins: 0, inventory: [] });
      const { result, statements } = await counted(() => Promise.all([repo.firstOfAccount(y), repo.firstOfAccount(randomUUID()), repo.firstOfAccount(x)]));
      assert.equal(statements, 1);
      assert.deepEqual(result, [y1.id, undefined, x1.id]);
    });

    it("concurrent logins go together; a character asked twice has its logins opened in turn, the later closing the earlier", async () => {
      const a = await newCharacter();
      const b = await newCharacter();
      const { result, statements } = await counted(() =>
        Promise.all([repo.recordLogin(a.id, a.accountId, "sdk"), repo.recordLogin(b.id, b.accountId, "json"), repo.recordLogin(a.id, a.accountId, "json")]),
      );
      assert.equal(statements, 2, "one round with each character once, then a's second login");
      const rows = await sql<{ id: string; character_id: string; transport: string; end_reason: string | null }>(
        "select id, character_id, transport, end_reason from player_logins",
      );
      const byId = new Map(rows.map((r) => [r.id, r]));
      assert.equal(rows.length, 3);
      assert.deepEqual(
        result.map((id) => [byId.get(id)!.character_id, byId.get(id)!.transport, byId.get(id)!.end_reason]),
        [
          [a.id, "sdk", "server_restart"],
          [b.id, "json", null],
          [a.id, "json", null],
        ],
      );
    });

    it("load says whether a death lock is open: after a death, not once it is resolved or recovered", async () => {
      const a = await newCharacter();
      const b = await newCharacter();
      const deathA = (await die(a.id))!;
      await die(b.id);
      assert.equal((await repo.load(a.id))!.openDeath, true);
      assert.equal(await repo.resolveDeath(deathA), true);
      assert.equal((await repo.load(a.id))!.openDeath, false, "resolved for the ground");
      assert.equal((await repo.load(b.id))!.openDeath, true, "another character's lock is its own");
      await repo.recoverOpenDeath(b.id);
      assert.equal((await repo.load(b.id))!.openDeath, false, "recovered for the bank");
    });

    describe("a join", () => {
      let world: World;
      let resolver: CharacterResolver;
      let recoveries: string[];
      const principal = (accountId: string): Principal => ({ accountId, roles: [], anonymous: false, via: "server" });
      const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close() {} });
      beforeEach(async () => {
        const content = await loadContent("world/manifests");
        recoveries = [];
        const store = Object.create(repo) as CharacterRepository;
        store.recoverOpenDeath = (...args) => {
          recoveries.push(args[0]);
          return repo.recoverOpenDeath(...args);
        };
        world = new World({ content, characters: store, logger: createLogger("silent"), saveIntervalSeconds: 3600, checkAdminCode: () => "wrong" });
        resolver = new CharacterResolver({ world, characters: store, createCharacter: async () => assert.fail("no character should be created") });
      });

      it("of a character whose death lock a crash left open: the bank gets the dropped items, the lock is closed", async () => {
        const c = await newCharacter();
        await die(c.id);
        const { player } = await resolver.resolveCharacter(principal(c.accountId), c.id, (r) => world.join(r, connection(), 4009));
        assert.deepEqual(recoveries, [c.id]);
        assert.deepEqual([...player.bank].map(([itemId, quantity]) => `${itemId}×${quantity}`).sort(), ["shrimp×2", "tinderbox×1"]);
        const open = await sql<{ n: number }>("select count(*)::int as n from player_deaths where character_id = ? and resolved_at is null", [c.id]);
        assert.equal(open[0]!.n, 0);
        assert.equal((await repo.load(c.id))!.openDeath, false);
      });

      it("of a character with no open death lock: no recovery transaction, the stored record as it is", async () => {
        const c = await newCharacter();
        const deathId = (await die(c.id))!;
        await repo.resolveDeath(deathId);
        const record = await resolver.resolveCharacter(principal(c.accountId), c.id);
        assert.deepEqual(recoveries, []);
        assert.deepStrictEqual(record.bank, []);
        assert.equal(record.character.coins, 0);
      });
    });

    it("recordLogin opens a login and closes the character's open ones (not another character's)", async () => {
      const a = await newCharacter();
      const b = await newCharacter();
      const first = await repo.recordLogin(a.id, a.accountId, "sdk");
      const other = await repo.recordLogin(b.id, b.accountId, "json");
      const second = await repo.recordLogin(a.id, a.accountId, "json");
      assert.notEqual(first, second);
      const rows = await sql<{
        id: string;
        character_id: string;
        account_id: string;
        transport: string;
        started_at: unknown;
        ended_at: unknown;
        end_reason: string | null;
      }>("select id, character_id, account_id, transport, started_at, ended_at, end_reason from player_logins order by started_at, id");
      const byId = new Map(rows.map((r) => [r.id, r]));
      assert.equal(rows.length, 3);
      assert.deepEqual([byId.get(first)!.end_reason, byId.get(other)!.end_reason, byId.get(second)!.end_reason], ["server_restart", null, null]);
      assert.ok(byId.get(first)!.ended_at !== null && byId.get(first)!.started_at !== null);
      assert.equal(byId.get(second)!.ended_at, null);
      assert.deepEqual([byId.get(second)!.character_id, byId.get(second)!.account_id, byId.get(second)!.transport], [a.id, a.accountId, "json"]);
      await repo.recordLogout(second, "left");
      assert.equal((await sql<{ n: number }>("select count(*)::int as n from player_logins where ended_at is null"))[0]!.n, 1, "only b's is open");
    });

    it("recordLogin writes the times of the entity flush it replaced: started now, the closed one ended now", async () => {
      const a = await newCharacter();
      const before = Date.now();
      const first = await repo.recordLogin(a.id, a.accountId, "sdk");
      await repo.recordLogin(a.id, a.accountId, "sdk");
      const later = Date.now();
      const [row] = await sql<{ started_at: unknown; ended_at: unknown }>("select started_at, ended_at from player_logins where id = ?", [first]);
      for (const t of [row!.started_at, row!.ended_at]) {
        const ms = new Date(t as string).getTime();
        assert.ok(ms >= before - 1_000 && ms <= later + 1_000, `${String(t)} within the test`);
      }
    });
  });
}
