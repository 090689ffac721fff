/**
 * The world's modifications in storage (docs/persistence.md "World state") on PGlite, and on
 * PostgreSQL when TEST_DATABASE_URL is set: ground piles commit and roll back with the item
 * transactions that make and take them; depleted nodes and fires are written per chunk; a new
 * `World` on the same storage restores all of it, per world number. The real World,
 * CharacterRepository and WorldRepository; the clock and the rng are the test's.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository, type ProgressSnapshot } from "../../../src/storage/characters/repository.js";
import { PileGoneError, WorldRepository, type PileRow } from "../../../src/storage/world-state.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { createLogger } from "../../../src/logger.js";
import type { Storage } from "../../../src/storage/orm.js";
import { handleAction } from "../../../src/world/actions/player-action.js";
import { handleInventoryUse } from "../../../src/world/actions/inventory.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { WORLD_STATE_FLUSH_SECONDS } from "../../../src/world/systems/world-state.js";
import { GROUND_ITEM_LIFETIME_TICKS, GROUND_ITEM_PRIVATE_TICKS, World } from "../../../src/world/world.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

const TICK_MS = 600;

/** Resolves once `cond` holds (polled every 5 ms), or fails after 10 s. */
async function eventually(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) assert.fail(`never happened: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close() {} });

for (const kind of storageKinds()) {
  describe(`world state in storage on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let content: GameContent;
    let repo: CharacterRepository;
    let store: WorldRepository;
    const clock = { t: 1_000_000 };

    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
    });
    // Storage is shared by the test process: leave no depleted node or pile to the next suite's worlds.
    after(async () => resetStorage(storage));
    beforeEach(async () => {
      await resetStorage(storage);
      repo = new CharacterRepository(storage.orm);
      store = new WorldRepository(storage.orm, 1);
      clock.t = Date.now();
    });

    const newWorld = (worldStore: WorldRepository = store) =>
      new World({
        content,
        characters: repo,
        logger: createLogger("silent"),
        saveIntervalSeconds: 3600,
        checkAdminCode: () => "wrong",
        now: () => clock.t,
        rng: () => 0,
        worldStore,
        tickMs: TICK_MS,
      });
    const newCharacter = () =>
      repo.create({ accountId: randomUUID(), coins: 10, inventory: [{ slot: 0, itemId: "bronze_axe", quantity: 1 }], position: { x: 6, y: 10, z: 6 } });
    const itemsOf = async (id: string) => (await repo.load(id))!.inventory.map((i) => `${i.itemId}×${i.quantity}`);
    const snapshot = (id: string, inventory: { slot: number; itemId: string; quantity: number }[]): ProgressSnapshot => ({
      characterId: id,
      x: 6,
      y: 10,
      z: 6,
      health: 100,
      combatLevel: 3,
      skills: {},
      coins: 10,
      items: { inventory, equipment: {} },
    });
    const pile = (over: Partial<PileRow> = {}): PileRow => ({
      id: `item:${randomUUID()}`,
      itemId: "bronze_axe",
      quantity: 1,
      x: 6,
      z: 6,
      publicAt: new Date(clock.t + 60_000),
      expiresAt: new Date(clock.t + 180_000),
      ...over,
    });
    /** Step the world `n` ticks, the clock with it. */
    const step = (w: World, n = 1) => {
      for (let i = 0; i < n; i++) {
        clock.t += TICK_MS;
        w.step();
      }
    };

    describe("the store", () => {
      it("a pile commits with the save whose step stores it, and goes with the save whose step takes it; a pile taken twice rolls the second save back", async () => {
        const a = await newCharacter();
        const b = await newCharacter();
        const g = pile({ ownerId: a.id });
        await repo.save(snapshot(a.id, []), store.putPiles([g]));
        assert.deepEqual(await itemsOf(a.id), []);
        assert.deepEqual(
          (await store.loadPiles(new Date(clock.t))).map((r) => ({ ...r, publicAt: +r.publicAt, expiresAt: +r.expiresAt })),
          [{ ...g, publicAt: +g.publicAt, expiresAt: +g.expiresAt }],
        );
        const taken = [
          { slot: 0, itemId: "bronze_axe", quantity: 1 },
          { slot: 1, itemId: "bronze_axe", quantity: 1 },
        ];
        await repo.save(snapshot(b.id, taken), store.takePile(g.id));
        assert.deepEqual(await itemsOf(b.id), ["bronze_axe×1", "bronze_axe×1"]);
        assert.deepEqual(await store.loadPiles(new Date(clock.t)), []);
        // The same pile taken again (by A): refused by storage, A's save not written.
        await assert.rejects(repo.save(snapshot(a.id, [{ slot: 0, itemId: "bronze_axe", quantity: 1 }]), store.takePile(g.id)), PileGoneError);
        assert.deepEqual(await itemsOf(a.id), [], "the failed pickup wrote nothing");
      });

      it("a drop whose save fails stores no pile", async () => {
        const a = await newCharacter();
        const bad = { ...snapshot(a.id, []), items: { inventory: [{ slot: 99, itemId: "bronze_axe", quantity: 1 }], equipment: {} } };
        await assert.rejects(repo.save(bad, store.putPiles([pile()])));
        assert.deepEqual(await store.loadPiles(new Date(clock.t)), []);
        assert.deepEqual(await itemsOf(a.id), ["bronze_axe×1"]);
      });

      it("each world reads only its own piles and chunks; expired piles are deleted at load", async () => {
        const other = new WorldRepository(storage.orm, 2);
        await store.insertPiles([pile({ id: "item:one" }), pile({ id: "item:old", expiresAt: new Date(clock.t - 1) })]);
        await other.insertPiles([pile({ id: "item:two" })]);
        assert.deepEqual(
          (await store.loadPiles(new Date(clock.t))).map((r) => r.id),
          ["item:one"],
        );
        assert.deepEqual(
          (await other.loadPiles(new Date(clock.t))).map((r) => r.id),
          ["item:two"],
        );
        const rows = await storage.orm.em.fork().getConnection().execute<{ id: string }[]>(`select id from ground_piles order by id`);
        assert.deepEqual(
          rows.map((r: { id: string }) => r.id),
          ["item:one", "item:two"],
          "the expired pile's row is gone",
        );
        await store.saveChunks([{ chunkX: 0, chunkZ: 0, data: { nodes: [{ id: "n1", respawnAt: 5 }] } }]);
        await other.saveChunks([{ chunkX: 0, chunkZ: 0, data: { fires: [{ x: 1, z: 2, expiresAt: 7 }] } }]);
        assert.deepEqual(await store.loadChunks(), [{ chunkX: 0, chunkZ: 0, data: { nodes: [{ id: "n1", respawnAt: 5 }] } }]);
        assert.deepEqual(await other.loadChunks(), [{ chunkX: 0, chunkZ: 0, data: { fires: [{ x: 1, z: 2, expiresAt: 7 }] } }]);
        await store.saveChunks([{ chunkX: 0, chunkZ: 0, data: {} }]);
        assert.deepEqual(await store.loadChunks(), [], "an empty chunk's row is deleted");
        await store.deletePiles(["item:one"]);
        assert.deepEqual(await store.loadPiles(new Date(clock.t)), []);
      });
    });

    describe("a world on storage", () => {
      async function joined(w: World, id: string): Promise<Player> {
        return w.join((await repo.load(id))!, connection(), 4009).player;
      }

      it("drop, restart, pick up: the pile is restored with its owner and times; the pickup takes it off the ground and into the stored inventory", async () => {
        const c = await newCharacter();
        let world = newWorld();
        let p = await joined(world, c.id);
        await handleInventoryUse(world, p, { slot: 0, targetId: "drop" });
        const [dropped] = [...world.groundItems.values()];
        assert.ok(dropped, "the pile is on the ground");
        assert.deepEqual(await itemsOf(c.id), []);
        assert.equal((await store.loadPiles(new Date(clock.t))).length, 1, "and in storage, with the drop");
        step(world, 10);

        // A new process on the same storage (nothing saved at shutdown: as after SIGKILL).
        world = newWorld();
        await world.restore();
        const restored = world.groundItems.get(dropped.id);
        assert.ok(restored, "the pile is back");
        assert.deepEqual(
          { itemId: restored.itemId, quantity: restored.quantity, x: restored.x, z: restored.z, ownerId: restored.ownerId },
          { itemId: "bronze_axe", quantity: 1, x: 6, z: 6, ownerId: c.id },
        );
        assert.equal(restored.publicTick - world.tick, GROUND_ITEM_PRIVATE_TICKS - 10, "still private for what was left of its window");
        assert.equal(restored.expiresTick - world.tick, GROUND_ITEM_LIFETIME_TICKS - 10);
        p = await joined(world, c.id);
        await handleAction(world, p, { action: "pickup", targetId: dropped.id });
        step(world);
        await world.queues.drain();
        assert.equal(world.groundItems.size, 0);
        assert.deepEqual(
          p.inventory.flatMap((s) => (s ? [s.itemId] : [])),
          ["bronze_axe"],
        );
        assert.deepEqual(await itemsOf(c.id), ["bronze_axe×1"], "the pickup is stored at once");
        assert.deepEqual(await store.loadPiles(new Date(clock.t)), [], "and the pile's row went with it");
      });

      it("a pile that despawns is deleted; an NPC's loot is stored on its own", async () => {
        const world = newWorld();
        const loot = world.ground.drop("bones", 1, 10, 10);
        await eventually(() => loot.stored, "the loot stored");
        assert.equal((await store.loadPiles(new Date(clock.t))).length, 1);
        step(world, GROUND_ITEM_LIFETIME_TICKS);
        assert.equal(world.groundItems.size, 0, "despawned");
        step(world, Math.ceil((WORLD_STATE_FLUSH_SECONDS * 1000) / TICK_MS) + 1);
        await world.worldState.flush();
        const rows = await storage.orm.em.fork().getConnection().execute(`select id from ground_piles`);
        assert.deepEqual(rows, []);
      });

      it("a death's dropped items are stored with the resolve of its lock and restored after a restart", async () => {
        const c = await newCharacter();
        let world = newWorld();
        const p = await joined(world, c.id);
        p.inventory = [
          { slot: 0, itemId: "bronze_axe", quantity: 1 },
          { slot: 1, itemId: "bronze_sword", quantity: 1 },
          { slot: 2, itemId: "bronze_pickaxe", quantity: 1 },
          { slot: 3, itemId: "tinderbox", quantity: 1 },
          ...p.inventory.slice(4),
        ];
        world.killPlayer(p, "test");
        await eventually(() => world.groundItems.size > 0, "the death's pile on the ground");
        const onGround = [...world.groundItems.values()].map((g) => g.itemId);
        world = newWorld();
        await world.restore();
        assert.deepEqual(
          [...world.groundItems.values()].map((g) => g.itemId),
          onGround,
        );
      });

      it("depleted nodes, counted-down nodes and fires survive a restart; a node whose respawn time passed meanwhile is full", async () => {
        let world = newWorld();
        const [a, b, c] = [...world.resources.values()].filter((r) => r.node);
        assert.ok(a && b && c);
        a.respawnTick = world.tick + 100;
        world.worldState.changed(a.x, a.z);
        b.respawnTick = world.tick + 2;
        world.worldState.changed(b.x, b.z);
        world.ground.lightFire(20, 20, 50);
        await world.worldState.flush();
        step(world, 10);
        world = newWorld();
        await world.restore();
        assert.equal(world.resources.get(a.id)!.respawnTick! - world.tick, 90, "still depleted for what was left");
        assert.equal(world.resources.get(b.id)!.respawnTick, undefined, "respawned while down");
        const fires = [...world.resources.values()].filter((r) => r.type === "fire");
        assert.deepEqual(
          fires.map((f) => ({ x: f.x, z: f.z, left: f.expiresTick! - world.tick })),
          [{ x: 20, z: 20, left: 40 }],
        );
      });
    });
  });
}
