/**
 * Gameplay through the WorldRoom with SDK clients (real server, TICK_MS=50, shared PGlite): PvP
 * inside and outside the PvP area, range checks on talk and attack, ignore lists in public and
 * private chat, firemaking, cooking and smithing through inventory:use, NPC and resource respawn,
 * and equipping and unequipping with a full inventory. Every wait is on an event or a patch.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import type { SocialRelations } from "../../../src/world/world.js";
import { admin, becomeAdmin, closeAll, invCount, lastSync, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import type { ChatMessage, PlayerSync } from "../../../src/events.js";

describe("WorldRoom gameplay (SDK clients)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let players: SdkPlayer[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(players);
    players = [];
  });

  const join = async (opts: { admin?: boolean } = {}) => {
    const p = await SdkPlayer.join(server);
    players.push(p);
    if (opts.admin) await becomeAdmin(p);
    return p;
  };
  const slotOf = (p: SdkPlayer, itemId: string) => (lastSync(p).inventory as { slot: number; itemId: string }[]).find((s) => s.itemId === itemId)!.slot;
  const used = (p: SdkPlayer) => (lastSync(p).inventory as unknown[]).length;
  /** Send an event and wait for the system line it causes. */
  const expectSystem = async (p: SdkPlayer, event: string, data: unknown, re: RegExp) => {
    const m = p.log.mark();
    p.send(event, data);
    return p.log.system(re, m);
  };

  describe("combat range and PvP", () => {
    it("PvP works inside the PvP area and is refused outside it and beyond view", async () => {
      const a = await join({ admin: true });
      const b = await join({ admin: true });
      await expectSystem(a, "player:action", { action: "attack", targetId: b.id }, /only fight other players in a PvP area/);
      // Both in the Ashlands, away from its bandits.
      await admin(a, "/tp 80 70");
      await admin(b, "/tp 81 70");
      await a.waitState((s) => s.players.get(b.id)?.x === 81, "b next to a");
      const m = b.log.mark();
      a.send("player:action", { action: "attack", targetId: b.id });
      const hit = await b.log.waitFor("combat:hit", (h) => h.attackerId === a.id && h.targetId === b.id, { since: m });
      assert.equal(hit.targetMaxHealth, 100);
      // One of them steps out of the area: refused.
      a.send("player:move", { x: 80, z: 70 }); // stop attacking
      await admin(b, "/tp 81 62");
      await expectSystem(a, "player:action", { action: "attack", targetId: b.id }, /only fight other players in a PvP area/);
      // Both inside, but out of view.
      await admin(b, "/tp 80 110");
      await expectSystem(a, "player:action", { action: "attack", targetId: b.id }, /too far away/);
    });

    it("talking needs to be near the NPC or the store", async () => {
      const p = await join({ admin: true });
      const store = server.content.stores.get("lumbrook_general_store")!;
      await expectSystem(p, "player:action", { action: "talk", targetId: store.id }, /need to be at the .* to talk/);
      await admin(p, `/tp ${store.x} ${store.z - 1}`);
      await expectSystem(p, "player:action", { action: "talk", targetId: store.id }, /sells: .*gp/);
      const chicken = server.world.npcs.get(server.world.npcIdsOf("chicken")[2]!)!;
      await expectSystem(p, "player:action", { action: "talk", targetId: chicken.id }, /need to be closer to talk to the chicken/);
      await admin(p, `/tp ${chicken.x} ${chicken.z - 1}`);
      await expectSystem(p, "player:action", { action: "talk", targetId: chicken.id }, /^Chicken: /);
    });
  });

  describe("ignore lists in chat", () => {
    /** Resolves with the world's answer to "does `target` ignore `sender`?" the next time it asks. */
    const nextIgnoreCheck = (target: string, sender: string) => {
      const social = server.world.deps.social as SocialRelations;
      const original = social.isIgnoring.bind(social);
      return new Promise<boolean>((resolve) => {
        social.isIgnoring = async (t, s) => {
          const answer = await original(t, s);
          if (t === target && s === sender) {
            social.isIgnoring = original;
            resolve(answer);
          }
          return answer;
        };
      });
    };
    const ignore = async (who: SdkPlayer, whom: SdkPlayer) => {
      const res = await fetch(`${server.url}/api/player/ignores`, {
        method: "POST",
        headers: { authorization: `Bearer ${who.token}`, "content-type": "application/json" },
        body: JSON.stringify({ characterId: whom.id }),
      });
      assert.equal(res.status, 201);
    };

    it("public chat from an ignored player reaches everyone else but not the one ignoring it", async () => {
      const a = await join();
      const b = await join();
      const c = await join();
      // Public chat reaches those who track the speaker: wait until each tracks the others (a
      // selection takes a newcomer in within CALM_RESELECT_TICKS, after the tick's patch).
      for (const p of [a, b, c]) await p.waitState((s) => [a, b, c].every((o) => s.players.get(o.id) !== undefined), `${p.id} sees the three`);
      await ignore(b, a);
      const mb = b.log.mark();
      const mc = c.log.mark();
      const decided = nextIgnoreCheck(b.id, a.id);
      a.send("player:chat", { text: "hello all" });
      await c.log.waitFor("chat:message", (m) => m.text === "hello all", { since: mc });
      assert.equal(await decided, true);
      // Anything the server sends b from now on comes after "hello all" would have.
      c.send("player:chat", { text: "after" });
      await b.log.waitFor("chat:message", (m) => m.text === "after", { since: mb });
      assert.equal(b.log.all<ChatMessage>("chat:message", mb).filter((m) => m.text === "hello all").length, 0);
    });

    it("private chat from an ignored friend is not delivered; a friend not ignored gets through", async () => {
      const a = await join();
      const b = await join();
      const c = await join();
      const befriend = (x: string, y: string) =>
        server.storage.orm.em
          .fork()
          .getConnection()
          .execute("insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())", [x, y, x, y]);
      await befriend(a.id, b.id);
      await befriend(c.id, b.id);
      server.world.access.socialChanged([a.id, b.id, c.id]);
      await ignore(b, a);
      const mb = b.log.mark();
      const decided = nextIgnoreCheck(b.id, a.id);
      a.send("player:chat", { text: "psst", to: b.id });
      assert.equal(await decided, true);
      c.send("player:chat", { text: "hi friend", to: b.id });
      const got = await b.log.waitFor("chat:message", (m) => m.text === "hi friend", { since: mb });
      assert.equal(got.type, "private");
      assert.equal(b.log.all<ChatMessage>("chat:message", mb).filter((m) => m.text === "psst").length, 0);
    });
  });

  describe("skills through inventory:use", () => {
    it("lights a fire from logs and a tinderbox, then cooks on it", async () => {
      const p = await join({ admin: true });
      await admin(p, "/tp 3 3");
      await admin(p, "/give logs 1");
      await admin(p, "/give raw_shrimp 2");
      let m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "logs"), targetSlot: slotOf(p, "tinderbox") });
      await p.log.system(/The fire catches/, m);
      const xp = await p.log.waitFor("skill:xp", (x) => x.skill === "firemaking", { since: m });
      assert.equal(xp.gained, 40);
      assert.equal(invCount(p, "logs"), 0);
      await p.waitState((s) => [...s.resources.values()].some((r: any) => r.type === "fire" && r.x === 3 && r.z === 3), "a fire in state");
      const fire = [...server.world.resources.values()].find((r) => r.type === "fire" && r.x === 3 && r.z === 3)!;
      m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "raw_shrimp"), targetId: fire.id });
      const line = await p.log.system(/You cook the shrimp|You accidentally burn the shrimp/, m);
      await p.log.waitFor<PlayerSync>("player:sync", (s) => s.inventory.filter((i) => i.itemId === "raw_shrimp").length === 1, { since: m });
      if (/cook/.test(line.text)) {
        assert.equal(invCount(p, "shrimp"), 3, "the starter kit's 2 and the one just cooked");
        assert.equal((await p.log.waitFor("skill:xp", (x) => x.skill === "cooking", { since: m })).gained, 28);
      } else assert.equal(invCount(p, "burnt_shrimp"), 1);
    });

    it("cooks on a range, and refuses from too far away", async () => {
      const p = await join({ admin: true });
      await admin(p, "/give raw_shrimp 1");
      await expectSystem(p, "inventory:use", { slot: slotOf(p, "raw_shrimp"), targetId: "lumbrook_range" }, /need to be closer/);
      const range = server.content.stations.find((s) => s.id === "lumbrook_range")!;
      await admin(p, `/tp ${range.x} ${range.z + 1}`);
      const m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "raw_shrimp"), targetId: range.id });
      await p.log.system(/You cook the shrimp|You accidentally burn the shrimp/, m);
      assert.equal(invCount(p, "raw_shrimp"), 0);
    });

    it("smelts a bronze bar at the furnace and smiths it at the anvil", async () => {
      const p = await join({ admin: true });
      const furnace = server.content.stations.find((s) => s.id === "lumbrook_furnace")!;
      const anvil = server.content.stations.find((s) => s.id === "lumbrook_anvil")!;
      await admin(p, "/give copper_ore 1");
      await admin(p, "/give tin_ore 1");
      await admin(p, "/give hammer 1");
      await admin(p, `/tp ${furnace.x} ${furnace.z + 2}`);
      let m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "copper_ore"), targetId: furnace.id });
      await p.log.system(/You make 1 × Bronze bar/, m);
      assert.equal((await p.log.waitFor("skill:xp", (x) => x.skill === "smithing", { since: m })).gained, 6);
      assert.equal(invCount(p, "copper_ore") + invCount(p, "tin_ore"), 0);
      assert.equal(invCount(p, "bronze_bar"), 1);
      await admin(p, `/tp ${anvil.x} ${anvil.z + 2}`);
      m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "bronze_bar"), targetId: anvil.id });
      await p.log.system(/You make 1 × Bronze dagger/, m);
      assert.equal(invCount(p, "bronze_bar"), 0);
      assert.equal(invCount(p, "bronze_dagger"), 1);
      assert.equal(invCount(p, "hammer"), 1, "the hammer is a tool, not an input");
      // Nothing left to smith with.
      await expectSystem(p, "inventory:use", { slot: slotOf(p, "hammer"), targetId: anvil.id }, /can't make anything from that here/);
    });
  });

  describe("respawn", () => {
    it("a killed NPC comes back at its spawn with full health", async () => {
      const p = await join({ admin: true });
      const id = server.world.npcIdsOf("chicken")[3]!;
      const chicken = server.world.npcs.get(id)!;
      await admin(p, `/tp ${chicken.spawn.x} ${chicken.spawn.z - 2}`);
      await p.waitState((s) => s.npcs.get(id) !== undefined, "the chicken in view");
      const m = p.log.mark();
      p.send("player:action", { action: "attack", targetId: id });
      await p.log.waitFor("combat:hit", (h) => h.targetId === id && h.targetHealth === 0, { since: m, timeoutMs: 30_000 });
      await p.waitState((s) => s.npcs.get(id) === undefined, "the dead chicken gone from view");
      await p.waitState((s) => s.npcs.get(id) !== undefined && s.npcs.get(id).health === s.npcs.get(id).maxHealth, "the chicken back", 20_000);
      // It respawns at its spawn; it comes into view with the next tick's patch, after that tick's
      // step, in which it may have wandered a tile.
      const back = p.state.npcs.get(id);
      assert.ok(Math.max(Math.abs(back.x - chicken.spawn.x), Math.abs(back.z - chicken.spawn.z)) <= 1, `back at (${back.x}, ${back.z})`);
    });

    it("a depleted tree stands again after its respawn time", async () => {
      const p = await join({ admin: true });
      const tree = server.world.resources.get("lumbrook_tree_1")!;
      await p.waitState((s) => s.resources.get(tree.id)?.depleted === false, "the tree standing");
      p.send("player:action", { action: "gather", targetId: tree.id });
      await p.waitState((s) => s.resources.get(tree.id)?.depleted === true, "tree depleted", 20_000);
      const depletedAt = server.world.tick;
      await p.waitState((s) => s.resources.get(tree.id)?.depleted === false, "tree standing again", 20_000);
      assert.ok(server.world.tick - depletedAt >= 49, `respawned after ${server.world.tick - depletedAt} ticks`);
      const m = p.log.mark();
      p.send("player:action", { action: "gather", targetId: tree.id });
      await p.log.waitFor("skill:xp", (x) => x.skill === "woodcutting", { since: m, timeoutMs: 20_000 });
    });
  });

  describe("equipment with a full inventory", () => {
    it("swapping works, unequipping into a full inventory is refused, and works once there is room", async () => {
      const p = await join({ admin: true });
      await admin(p, "/give bronze_sword 1");
      await admin(p, "/give bronze_dagger 1");
      await admin(p, `/give logs ${28 - used(p)}`);
      assert.equal(used(p), 28);
      // Wield the sword: its slot empties; fill it again.
      let m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "bronze_sword") });
      await p.log.waitFor("player:sync", (s) => s.equipment.weapon?.itemId === "bronze_sword", { since: m });
      await admin(p, "/give logs 1");
      assert.equal(used(p), 28);
      // Swap to the dagger with a full inventory: the sword takes the dagger's slot.
      const daggerSlot = slotOf(p, "bronze_dagger");
      m = p.log.mark();
      p.send("inventory:use", { slot: daggerSlot });
      const swapped = await p.log.waitFor("player:sync", (s) => s.equipment.weapon?.itemId === "bronze_dagger", { since: m });
      assert.deepEqual(
        swapped.inventory.find((i: any) => i.slot === daggerSlot),
        { slot: daggerSlot, itemId: "bronze_sword", quantity: 1 },
      );
      assert.equal(used(p), 28);
      // Unequip with no room: refused, nothing moves.
      await expectSystem(p, "player:action", { action: "unequip", targetId: "weapon" }, /don't have enough inventory space/);
      assert.equal(lastSync(p).equipment.weapon?.itemId, "bronze_dagger");
      // Make room and take it off.
      m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "logs"), targetId: "drop" });
      await p.log.waitFor("player:sync", () => true, { since: m });
      m = p.log.mark();
      p.send("player:action", { action: "unequip", targetId: "weapon" });
      const off = await p.log.waitFor("player:sync", (s) => s.equipment.weapon === undefined, { since: m });
      assert.ok(off.inventory.some((i: any) => i.itemId === "bronze_dagger"));
      await p.waitState((s) => s.players.get(p.id)?.weapon === "", "no weapon in public state");
      await expectSystem(p, "player:action", { action: "unequip", targetId: "weapon" }, /aren't wearing anything there/);
      await expectSystem(p, "player:action", { action: "unequip", targetId: "tail" }, /no equipment slot/);
      // Saved with the next save: the dagger is in the inventory, not worn.
      await server.world.access.flush(p.id);
      const row = await server.characters.load(p.id);
      assert.deepEqual(row!.equipment, {});
      assert.ok(row!.inventory.some((i) => i.itemId === "bronze_dagger"));
    });
  });
});
