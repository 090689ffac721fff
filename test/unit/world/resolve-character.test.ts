/**
 * CharacterResolver.resolveCharacter and the open-death recovery: it runs only for the account's own
 * character, only when the character is not live in this world, and inside the character's storage
 * queue (after what is already queued for it). The record a join builds its player from is read in
 * that queue too, so writes queued before the join (a leave's save, a death) and changes queued after
 * its read (the agent flag) are never lost. Fake storage, real World.
 */
import assert from "node:assert/strict";
import type { CharacterRecord } from "../../../src/world/ports/character-store.js";
import type { Principal } from "../../../src/auth/service.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { emptyInventory, inventoryToSlots } from "../../../src/domain/inventory.js";
import { FakeCharacterStore } from "../../helpers/fake-store.js";
import { characterRecord, STARTER } from "../../helpers/records.js";
import { createLogger } from "../../../src/logger.js";
import type { Connection } from "../../../src/world/player.js";
import { CharacterResolver } from "../../../src/world/character-resolver.js";
import { World } from "../../../src/world/world.js";

/** A stored character of an account, with no coins and the given bank and items. */
const record = (id: string, accountId: string, bank: CharacterRecord["bank"] = [], inventory: CharacterRecord["inventory"] = []) =>
  characterRecord(id, { accountId, coins: 0, bank, inventory });

/** Let queued promise chains run (bounded: fails rather than spinning forever). */
async function until(cond: () => boolean, what: string, turns = 1_000) {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never happened: ${what}`);
}

const conn = (id: string): Connection => ({ id, kind: "json", send: () => undefined, close: () => undefined });
const principal = (accountId: string): Principal => ({ accountId, roles: [], anonymous: false, via: "server" });

describe("world/CharacterResolver resolveCharacter and open deaths", () => {
  let content: GameContent;
  let chars: FakeCharacterStore;
  let world: World;
  let runtime: CharacterResolver;
  before(async () => {
    content = await loadContent("world/manifests");
  });
  beforeEach(() => {
    chars = new FakeCharacterStore();
    const logger = createLogger("silent");
    world = new World({ content, characters: chars, logger, saveIntervalSeconds: 60, checkAdminCode: () => "wrong" });
    runtime = new CharacterResolver({
      world,
      characters: chars,
      createCharacter: async () => assert.fail("no character should be created"),
    });
    chars.rows.set("c1", record("c1", "acc-1"));
    chars.openDeath("c1", [{ itemId: "shrimp", quantity: 2 }]);
  });

  it("another account's character: refused before anything is recovered", async () => {
    await assert.rejects(runtime.resolveCharacter(principal("acc-2"), "c1"), (e: any) => e.status === 403);
    assert.ok(!chars.calls.includes("recover c1"));
    assert.ok(chars.openDeaths.has("c1"), "the lock is still open");
  });

  it("the own character, not in the world: recovered, and the returned record has the restored bank", async () => {
    const r = await runtime.resolveCharacter(principal("acc-1"), "c1");
    assert.deepEqual(r.bank, [{ itemId: "shrimp", quantity: 2 }]);
    assert.deepEqual(chars.calls, ["load c1", "recover c1", "load c1"]);
  });

  it("a character live in this world: not recovered (the world still owns its death)", async () => {
    world.join(record("c1", "acc-1"), conn("x"), 4009);
    await runtime.resolveCharacter(principal("acc-1"), "c1");
    assert.ok(!chars.calls.includes("recover c1"));
    assert.ok(chars.openDeaths.has("c1"));
  });

  it("runs in the character's storage queue, after what is already queued for it", async () => {
    let release!: () => void;
    const order: string[] = [];
    void world.queues.run("c1", async () => {
      await new Promise<void>((r) => (release = r));
      order.push("earlier job");
    });
    const resolving = runtime.resolveCharacter(principal("acc-1"), "c1").then(() => order.push("resolved"));
    await new Promise((r) => setImmediate(r));
    assert.ok(!chars.calls.includes("recover c1"), "recovery waits for the queue");
    release();
    await resolving;
    assert.deepEqual(order, ["earlier job", "resolved"]);
    assert.ok(chars.calls.includes("recover c1"));
  });

  describe("the record a join builds its player from is read in the character's storage queue", () => {
    const enterAs = (id: string) => (r: CharacterRecord) => world.join(r, conn(id), 4009);
    beforeEach(() => {
      chars.deaths = [];
      chars.rows.set("c1", record("c1", "acc-1", [], STARTER));
    });

    it("a rejoin right after a leave reads what the leave's save wrote: an item dropped before leaving does not come back", async () => {
      const { player } = await runtime.resolveCharacter(principal("acc-1"), "c1", enterAs("a"));
      player.inventory = emptyInventory();
      player.safety.itemsChanged();
      let open!: () => void;
      chars.saveGate = new Promise((r) => (open = r));
      const leaving = world.leave("c1", "left");
      const rejoining = runtime.resolveCharacter(principal("acc-1"), "c1");
      await new Promise((r) => setImmediate(r));
      open();
      await leaving;
      assert.deepEqual((await rejoining).inventory, [], "built from the rows the save wrote");
    });

    it("a player who leaves during its death transaction and rejoins holds its items once: on the ground or in hand, never both", async () => {
      const { player } = await runtime.resolveCharacter(principal("acc-1"), "c1", enterAs("a"));
      const held = (itemId: string, inventory: CharacterRecord["inventory"]) =>
        inventory.filter((s) => s.itemId === itemId).reduce((n, s) => n + s.quantity, 0);
      const onGround = (itemId: string) => [...world.groundItems.values()].filter((g) => g.itemId === itemId).reduce((n, g) => n + g.quantity, 0);
      let openDeath!: () => void;
      let openSave!: () => void;
      chars.deathGate = new Promise((r) => (openDeath = r));
      chars.saveGate = new Promise((r) => (openSave = r));
      world.killPlayer(player, "npc:test");
      const leaving = world.leave("c1", "left");
      const rejoining = runtime.resolveCharacter(principal("acc-1"), "c1", enterAs("b"));
      openDeath();
      // The world closes the death lock first, so the dropped items go on the ground.
      await until(() => world.groundItems.size > 0, "the dropped items on the ground");
      openSave();
      await leaving;
      const { player: back } = await rejoining;
      const inHand = inventoryToSlots(back.inventory);
      assert.ok(inHand.length < STARTER.length, "the rejoined player does not hold what it dropped");
      for (const { itemId } of STARTER) assert.equal(held(itemId, inHand) + onGround(itemId), held(itemId, STARTER), `${itemId} counted once`);
    });

    it("an agent flag written after a join read the character still reaches the joined player", async () => {
      let open!: () => void;
      chars.loadGate = new Promise((r) => (open = r));
      const joining = runtime.resolveCharacter(principal("acc-1"), "c1", enterAs("a"));
      await until(() => chars.calls.includes("load c1"), "the join read the character");
      // The REST route: write the stored flag, then tell the world.
      chars.rows.get("c1")!.character.isAgent = true;
      world.access.setAgentFlag("c1", true);
      open();
      const { player } = await joining;
      await world.queues.drain();
      assert.equal(player.isAgent, true);
    });
  });
});
