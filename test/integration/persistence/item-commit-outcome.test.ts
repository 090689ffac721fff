/**
 * Item commits whose answer is lost (docs/persistence.md "Unknown outcomes"), found by the chaos
 * run: a drop or pickup that committed while its caller saw an error shaped like a cut connection's.
 * Memory must follow storage (items read back, the pile on or off the ground as stored), so the
 * player's next full save never writes the pre-commit items over the commit: before the fix a
 * pickup whose answer was lost lost the item (the pile's row deleted, the inventory saved without
 * it) and a drop's item was both in the inventory and on the ground. On PGlite, and on PostgreSQL
 * when TEST_DATABASE_URL is set; the real World, CharacterRepository and WorldRepository.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { WorldRepository } from "../../../src/storage/world-state.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { createLogger } from "../../../src/logger.js";
import type { Storage } from "../../../src/storage/orm.js";
import { handleAction } from "../../../src/world/actions/player-action.js";
import { handleInventoryUse } from "../../../src/world/actions/inventory.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";
import { until } from "../../helpers/trade.js";

/** What a dropped connection looks like to the caller (pg's error). */
const cut = () => Object.assign(new Error("Connection terminated unexpectedly"), { code: "57P01" });
const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close() {} });

for (const kind of storageKinds()) {
  describe(`item commits whose answer is lost, on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let content: GameContent;
    let repo: CharacterRepository;
    let store: WorldRepository;
    let world: World;

    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
    });
    after(async () => resetStorage(storage));
    beforeEach(async () => {
      await resetStorage(storage);
      repo = new CharacterRepository(storage.orm);
      store = new WorldRepository(storage.orm, 1);
      world = new World({
        content,
        characters: repo,
        logger: createLogger("silent"),
        saveIntervalSeconds: 3600,
        checkAdminCode: () => "wrong",
        worldStore: store,
        tickMs: 600,
      });
    });

    async function joined(): Promise<Player> {
      const c = await repo.create({
        accountId: randomUUID(),
        coins: 10,
        inventory: [{ slot: 0, itemId: "bronze_axe", quantity: 1 }],
        position: { x: 6, y: 10, z: 6 },
      });
      return world.join((await repo.load(c.id))!, connection(), 4009).player;
    }
    /** The next save commits, then fails as if its answer was lost with the connection. */
    function loseNextAnswer() {
      const save = repo.save.bind(repo);
      repo.save = async (...args) => {
        repo.save = save;
        await save(...args);
        throw cut();
      };
    }
    /** Axes over storage: the character's rows and the stored piles. */
    async function storedAxes(id: string): Promise<number> {
      const r = (await repo.load(id))!;
      const held = r.inventory.filter((s) => s.itemId === "bronze_axe").reduce((n, s) => n + s.quantity, 0);
      const piles = await store.loadPiles(new Date());
      return held + piles.filter((g) => g.itemId === "bronze_axe").reduce((n, g) => n + g.quantity, 0);
    }
    const axesInMemory = (p: Player) => p.inventory.filter((s) => s?.itemId === "bronze_axe").length;

    it("a pickup that committed: the item is read back into memory, the pile leaves the ground, and the leave save keeps it", async () => {
      const p = await joined();
      await handleInventoryUse(world, p, { slot: 0, targetId: "drop" });
      const [pile] = [...world.groundItems.values()];
      assert.ok(pile, "dropped");
      loseNextAnswer();
      await handleAction(world, p, { action: "pickup", targetId: pile.id });
      world.step();
      await world.queues.drain();
      await until(() => !pile.taking, "the pickup to end");
      assert.equal(axesInMemory(p), 1, "memory follows the commit");
      assert.equal(world.groundItems.has(pile.id), false, "the pile is off the ground");
      await world.leave(p.id, "test");
      assert.equal(await storedAxes(p.id), 1, "one axe, as before the pickup");
    });

    it("a drop that committed: the item leaves memory, the pile is on the ground, and the leave save does not bring it back", async () => {
      const p = await joined();
      loseNextAnswer();
      await handleInventoryUse(world, p, { slot: 0, targetId: "drop" });
      assert.equal(axesInMemory(p), 0, "memory follows the commit");
      assert.equal([...world.groundItems.values()].filter((g) => g.itemId === "bronze_axe").length, 1, "the pile is on the ground");
      await world.leave(p.id, "test");
      assert.equal(await storedAxes(p.id), 1, "one axe, as before the drop");
    });

    it("a drop that did not commit changes nothing", async () => {
      const p = await joined();
      const save = repo.save.bind(repo);
      repo.save = async () => {
        repo.save = save;
        throw cut();
      };
      await handleInventoryUse(world, p, { slot: 0, targetId: "drop" });
      assert.equal(axesInMemory(p), 1);
      assert.equal(world.groundItems.size, 0);
      await world.leave(p.id, "test");
      assert.equal(await storedAxes(p.id), 1);
    });
  });
}
