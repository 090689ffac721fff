/**
 * Players leaving together at scale on real storage: PGlite, and PostgreSQL when TEST_DATABASE_URL
 * is set. 200 players in a real World on the real CharacterRepository, each with progress, coins,
 * inventory, equipment and bank of its own that storage does not hold yet; the shutdown save
 * (`leaveAll`, docs/persistence.md "Shutdown") and 200 leaves at once (the leave groups, "Leaving")
 * must each store every player's last state and close every login, in a few batch transactions — no
 * transaction per player.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { LEAVE_BATCH_MAX } from "../../../src/storage/characters/leave-batch.js";
import { CharacterRepository, type ProgressSnapshot } from "../../../src/storage/characters/repository.js";
import { AccountEntity, CharacterEntity, PlayerLoginEntity } from "../../../entities/index.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { inventoryFromSlots } from "../../../src/domain/inventory.js";
import { skillsFromXp } from "../../../src/domain/xp.js";
import { createLogger } from "../../../src/logger.js";
import type { Storage } from "../../../src/storage/orm.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { LEAVE_GROUP_MAX } from "../../../src/world/systems/leave-groups.js";
import { SHUTDOWN_SAVE_BATCH, World } from "../../../src/world/world.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

const N = 200;
const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close() {} });

/** The two ways every player leaves at once: the shutdown save, and each player's own leave. */
const WAYS = [
  { name: "the shutdown save", reason: "server_shutdown", batch: SHUTDOWN_SAVE_BATCH, leave: (w: World) => w.leaveAll("server_shutdown") },
  {
    name: "their leaves at once",
    reason: "logout",
    batch: LEAVE_GROUP_MAX,
    leave: async (w: World) => void (await Promise.all([...w.players.keys()].map((id) => w.leave(id, "logout")))),
  },
];

for (const kind of storageKinds()) {
  describe(`${N} players leaving together on ${kind.name}`, function () {
    this.timeout(120_000);
    let storage: Storage;
    let content: GameContent;

    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
    });
    beforeEach(async () => resetStorage(storage));

    for (const way of WAYS)
      it(`${way.name} stores every player's last state (progress, coins, items) and closes every login, a batch a transaction`, async () => {
        const repo = new CharacterRepository(storage.orm);
        const world = new World({ content, characters: repo, logger: createLogger("silent"), saveIntervalSeconds: 3600, checkAdminCode: () => "wrong" });
        // N stored characters, each in the world with an open login.
        const em = storage.orm.em.fork();
        const accountId = randomUUID();
        em.create(AccountEntity, { id: accountId, anonymous: false, roles: [] });
        const ids = Array.from({ length: N }, () => randomUUID());
        ids.forEach((id, i) => em.create(CharacterEntity, { id, accountId, name: `S${i}_${id.slice(0, 6)}` }));
        await em.flush();
        const players: Player[] = [];
        for (const id of ids) {
          const p = world.join((await repo.load(id))!, connection(), 4009).player;
          p.loginId = randomUUID();
          em.create(PlayerLoginEntity, { id: p.loginId, characterId: id, accountId, transport: "sdk" });
          players.push(p);
        }
        await em.flush();

        // Each player's last state, none of it stored yet.
        players.forEach((p, i) => {
          p.x = (i % 40) - 20;
          p.z = 20 - (i % 37);
          p.skills = skillsFromXp({ woodcutting: 100 + i });
          p.health = 1 + (i % 9);
          p.coins = 1000 + i;
          const slots = [0, 1, 2].map((slot) => ({ slot, itemId: "shrimp", quantity: 1 }));
          slots[i % 3] = { slot: 3 + (i % 25), itemId: "logs", quantity: 1 };
          const inv = inventoryFromSlots(slots);
          assert.ok(inv.ok);
          p.inventory = inv.value;
          p.equipment = i % 2 ? { weapon: { itemId: "bronze_sword", quantity: 1 } } : {};
          p.bank = new Map([["coal", i + 1]]);
          p.safety.itemsChanged();
          p.safety.progressChanged();
        });
        // A player whose items can't be trusted: its progress is saved, its items never.
        const stale = players[7]!;
        stale.safety.markStale();
        const staleItemsBefore = await repo.itemRows(storage.orm.em.fork() as never, stale.id);

        const perPlayer: string[] = [];
        const batches: number[] = [];
        const save = repo.save.bind(repo);
        repo.save = async (s: ProgressSnapshot, step) => {
          perPlayer.push(s.characterId);
          return save(s, step);
        };
        const saveLeaving = repo.saveLeaving.bind(repo);
        repo.saveLeaving = async (rows, reason) => {
          batches.push(rows.length);
          return saveLeaving(rows, reason);
        };
        const expected = players.map((p) => p.snapshot(true));
        const started = performance.now();
        await way.leave(world);
        const ms = performance.now() - started;
        console.log(`      ${N} players saved (${way.name}) in ${Math.round(ms)} ms on ${kind.name}`);

        assert.equal(world.players.size, 0);
        assert.deepEqual(perPlayer, [], "no transaction per player");
        assert.ok(way.batch <= LEAVE_BATCH_MAX);
        assert.deepEqual(
          batches,
          Array.from({ length: Math.ceil(N / way.batch) }, (_, i) => Math.min(way.batch, N - i * way.batch)),
        );
        for (const [i, p] of players.entries()) {
          const stored = (await repo.load(p.id))!;
          const c = stored.character;
          const want = expected[i]!;
          assert.deepEqual(
            { x: c.positionX, z: c.positionZ, health: c.health, woodcuttingXp: c.woodcuttingXp },
            { x: want.x, z: want.z, health: want.health, woodcuttingXp: want.skills.woodcutting!.xp },
            `${p.id}: progress`,
          );
          if (p === stale) {
            assert.deepEqual(await repo.itemRows(storage.orm.em.fork() as never, p.id), staleItemsBefore, "the stale player's items are not written");
            continue;
          }
          assert.equal(c.coins, want.coins, `${p.id}: coins`);
          assert.deepEqual(stored.inventory, want.items!.inventory, `${p.id}: inventory`);
          assert.deepEqual(stored.equipment, want.items!.equipment, `${p.id}: equipment`);
          assert.deepEqual(stored.bank, want.items!.bank, `${p.id}: bank`);
        }
        const open = await storage.orm.em.fork().count(PlayerLoginEntity, { endedAt: null });
        const closed = await storage.orm.em.fork().count(PlayerLoginEntity, { endReason: way.reason });
        assert.deepEqual({ open, closed }, { open: 0, closed: N }, "every login closed once");
      });
  });
}
