/**
 * WorldRoom through the Colyseus SDK against a real server (TICK_MS=50, shared PGlite): join and
 * sync, movement over ticks, refusals, combat, death, gathering, bank, store, chat, admin commands,
 * replaced connections, reconnection and interest management. Every wait is on an event or a patch.
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import type { WebSocket } from "ws";
import type { WorldRoom } from "../../../rooms/WorldRoom.js";
import { chebyshev } from "../../../src/domain/movement.js";
import { SKILLS } from "../../../src/domain/types.js";
import { CLOSE_CODES, type ChatMessage, type PlayerSync } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import { VIEW_RADIUS } from "../../../src/world/world.js";
import { admin, becomeAdmin, closeAll, eventually, invCount, lastSync, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

describe("WorldRoom (SDK clients)", function () {
  this.timeout(40_000);
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

  /** Join a new player (optionally as admin) and remember it for cleanup. */
  const join = async (opts: Parameters<typeof SdkPlayer.join>[1] & { admin?: boolean } = {}) => {
    const p = await SdkPlayer.join(server, opts);
    players.push(p);
    if (opts.admin) await becomeAdmin(p);
    return p;
  };
  const sql = <T = any>(query: string, params: unknown[] = []) => server.storage.orm.em.fork().getConnection().execute<T[]>(query, params);
  const stored = (id: string) => server.characters.load(id);
  const slotOf = (p: SdkPlayer, itemId: string) => (lastSync(p).inventory as { slot: number; itemId: string }[]).find((s) => s.itemId === itemId)!.slot;

  describe("joining", () => {
    it("sends player:sync with the contract's shape and the starter kit, and shows the player in state", async () => {
      const p = await join();
      const s = lastSync(p);
      for (const k of ["id", "accountId", "name", "isAgent", "position", "health", "maxHealth", "coins", "combatLevel", "skills", "inventory", "equipment"])
        assert.ok(k in s, `player:sync has ${k}`);
      assert.equal(s.accountId, p.accountId);
      assert.deepEqual(s.position, { x: 0, y: 10, z: 0 });
      assert.equal(s.isAgent, false);
      assert.equal(s.health, 100);
      assert.equal(s.maxHealth, 100);
      assert.equal(s.combatLevel, 3);
      for (const skill of SKILLS) {
        assert.equal(typeof s.skills[skill].level, "number", skill);
        assert.equal(typeof s.skills[skill].xp, "number", skill);
      }
      assert.equal(s.skills.constitution.level, 10);
      const kit = server.content.starterKit;
      assert.equal(s.coins, kit.coins);
      const have = new Map<string, number>();
      for (const slot of s.inventory) {
        assert.deepEqual(Object.keys(slot).sort(), ["itemId", "quantity", "slot"]);
        have.set(slot.itemId, (have.get(slot.itemId) ?? 0) + slot.quantity);
      }
      assert.deepEqual(have, new Map(kit.items.map((i) => [i.itemId, i.quantity])));
      assert.deepEqual(s.equipment, {});
      await p.waitState((st) => st.players.get(p.id)?.x === 0, "myself in state");
      assert.equal(p.me.name, s.name);
    });

    it("holds a reserved seat for SEAT_RESERVATION_SECONDS (30 by default, not Colyseus's 15)", async () => {
      const [listing] = await matchMaker.query({ name: "world" });
      const room = matchMaker.getLocalRoomById(listing!.roomId) as WorldRoom;
      assert.equal(room.seatReservationTimeout, server.config.seatReservationSeconds);
      assert.equal(server.config.seatReservationSeconds, 30);
    });

    it("opens a login record on join and closes it on leave", async () => {
      const p = await join();
      const open = await sql("select ended_at from player_logins where character_id = ?", [p.id]);
      assert.equal(open.length, 1);
      assert.equal(open[0].ended_at, null);
      await p.leave();
      await eventually(
        async () => (await sql("select end_reason from player_logins where character_id = ? and ended_at is not null", [p.id]))[0],
        "login closed",
      );
    });

    it("plays the requested character, and refuses another account's character", async () => {
      const first = await join();
      await first.leave();
      const again = await join({ token: first.token, accountId: first.accountId, characterId: first.id });
      assert.equal(again.id, first.id);
      const stranger = tokenFor();
      await assert.rejects(SdkPlayer.join(server, { token: stranger.token, characterId: first.id }), /another account|403/);
    });

    it("refuses a bad token", async () => {
      await assert.rejects(SdkPlayer.join(server, { token: "not-a-token" }), /token|401/);
    });
  });

  describe("movement", () => {
    /** Every patch's (tick, position) of a player, as the client saw it. */
    const track = (p: SdkPlayer) => {
      const seen: { tick: number; x: number; z: number }[] = [];
      p.room.onStateChange((s: any) => {
        const me = s.players.get(p.id);
        if (me && (seen.length === 0 || seen.at(-1)!.x !== me.x || seen.at(-1)!.z !== me.z)) seen.push({ tick: s.tick, x: me.x, z: me.z });
      });
      return seen;
    };

    it("walks one tile per tick and runs two, in steps the client sees", async () => {
      const p = await join();
      await p.waitState((s) => s.players.get(p.id) !== undefined, "myself");
      const seen = track(p);
      const t0 = p.state.tick;
      p.send("player:move", { x: 8, z: 0 });
      await p.waitAt(8, 0);
      const walkTicks = seen.at(-1)!.tick - t0;
      assert.ok(walkTicks >= 8, `8 tiles took ${walkTicks} ticks`);
      let prev = { tick: t0, x: 0, z: 0 };
      for (const s of seen) {
        assert.ok(Math.abs(s.x - prev.x) <= s.tick - prev.tick, `walked ${s.x - prev.x} tiles in ${s.tick - prev.tick} ticks`);
        prev = s;
      }
      assert.ok(seen.length >= 4, `intermediate positions were visible: ${JSON.stringify(seen)}`);

      seen.length = 0;
      const t1 = p.state.tick;
      p.send("player:move", { x: 0, z: 0, run: true });
      await p.waitState((s) => s.players.get(p.id)?.running === true, "running flag");
      await p.waitAt(0, 0);
      const runTicks = seen.at(-1)!.tick - t1;
      assert.ok(runTicks >= 4 && runTicks < walkTicks, `8 tiles running took ${runTicks} ticks`);
      prev = { tick: t1, x: 8, z: 0 };
      for (const s of seen) {
        assert.ok(Math.abs(s.x - prev.x) <= 2 * (s.tick - prev.tick), `ran ${prev.x - s.x} tiles in ${s.tick - prev.tick} ticks`);
        prev = s;
      }
      assert.ok(
        seen.some((s, i) => i > 0 && Math.abs(s.x - seen[i - 1]!.x) === 2),
        "some patch shows a 2-tile step",
      );
    });

    it("accepts a 200-tile move and refuses 201 with a system message", async () => {
      const p = await join({ admin: true });
      await admin(p, "/tp -100 0");
      await p.waitAt(-100, 0);
      const m = p.log.mark();
      p.send("player:move", { x: 101, z: 0 });
      await p.log.system(/at most 200 tiles/, m);
      assert.equal(p.me.x, -100);
      p.send("player:move", { x: 100, z: 0 });
      await p.waitState((s) => s.players.get(p.id)?.x === -99 && s.players.get(p.id)?.moving === true, "walking toward x=100");
    });

    it("refuses blocked, out-of-bounds and malformed targets without disconnecting", async () => {
      const p = await join();
      let m = p.log.mark();
      p.send("player:move", { x: 5, z: 9 }); // inside the Lumbrook bank
      await p.log.system(/can't stand there/, m);
      m = p.log.mark();
      p.send("player:move", { x: 0, z: -129 });
      await p.log.system(/outside the world/, m);
      m = p.log.mark();
      p.send("player:move", { x: 1.5, z: 0 });
      await p.log.system(/Invalid player:move/, m);
      m = p.log.mark();
      p.send("player:move", { x: "1", z: 0 });
      await p.log.system(/Invalid player:move/, m);
      m = p.log.mark();
      p.send("no:such:event", {});
      await p.log.system(/Unknown event/, m);
      assert.equal(p.log.isClosed, false);
      p.send("player:move", { x: 1, z: 1 });
      await p.waitAt(1, 1);
    });
  });

  describe("gameplay", () => {
    it("fights a chicken: combat:hit, skill:xp, the chicken dies and drops, the kill is counted, the drop can be picked up", async () => {
      const p = await join({ admin: true });
      const chickenId = server.world.npcIdsOf("chicken")[1]!;
      const chicken = server.world.npcs.get(chickenId)!;
      await admin(p, `/tp ${chicken.spawn.x} ${chicken.spawn.z - 2}`);
      await p.waitState((s) => s.npcs.get(chickenId) !== undefined, "the chicken in view");
      // Piles already on the ground (another test's, or restored from the shared database) are not this kill's drop.
      const earlier = new Set(p.state.groundItems.keys());
      // The nearest new pile of the item to the chicken's spawn (it fights within its wander radius).
      const dropped = (itemId: string) =>
        ([...p.state.groundItems.entries()] as [string, any][])
          .filter(([id, g]) => !earlier.has(id) && g.itemId === itemId)
          .map(([, g]) => g)
          .sort((a, b) => chebyshev(chicken.spawn, a) - chebyshev(chicken.spawn, b))[0];
      const m = p.log.mark();
      p.send("player:action", { action: "attack", targetId: chickenId });
      const hit = await p.log.waitFor("combat:hit", (h) => h.attackerId === p.id && h.targetId === chickenId, { since: m });
      assert.deepEqual(Object.keys(hit).sort(), ["attackerId", "damage", "targetHealth", "targetId", "targetMaxHealth"].sort());
      assert.equal(hit.targetMaxHealth, 10);
      const xp = await p.log.waitFor("skill:xp", () => true, { since: m, timeoutMs: 20_000 });
      assert.deepEqual(Object.keys(xp).sort(), ["gained", "leveledUp", "level", "skill", "xp"].sort());
      assert.ok(xp.gained > 0);
      await p.log.waitFor("combat:hit", (h) => h.targetId === chickenId && h.targetHealth === 0, { since: m, timeoutMs: 20_000 });
      await p.waitState((s) => s.npcs.get(chickenId) === undefined, "the dead chicken gone from view");
      await p.waitState(() => dropped("bones") !== undefined && dropped("raw_chicken") !== undefined, "bones and raw chicken on the ground");
      // The pile lives 300 ticks (15 s at the tests' 50 ms tick): picked up before waiting for the
      // kill row, whose save may take seconds on a loaded machine.
      const bones = dropped("bones");
      const before = invCount(p, "bones");
      const m2 = p.log.mark();
      p.send("player:action", { action: "pickup", targetId: bones.id });
      await p.log
        .waitFor<PlayerSync>("player:sync", (s) => s.inventory.some((i) => i.itemId === "bones"), { since: m2 })
        .catch((e: Error) => {
          // Seen in full CI runs, not alone: what the server held then, for whoever traces it.
          const me = server.world.player(p.id);
          const pile = server.world.groundItems.get(bones.id);
          const facts = {
            player: me && { x: me.x, z: me.z, action: me.action, path: me.path.length },
            pile: pile && { x: pile.x, z: pile.z, stored: pile.stored, storing: pile.storing, taking: pile.taking },
          };
          throw new Error(`${e.message}\nserver: ${JSON.stringify(facts)}`);
        });
      assert.equal(invCount(p, "bones"), before + 1);
      await p.waitState((s) => s.groundItems.get(bones.id) === undefined, "picked-up bones gone");
      const kills = await eventually(async () => (await server.characters.kills(p.id)).find((k) => k.npcId === "chicken"), "kill row");
      assert.equal(kills.count, 1);
    });

    it("dies in the Ashlands: lock taken and resolved, items dropped except the 3 kept, respawn in Lumbrook", async () => {
      const p = await join({ admin: true });
      const bandit = server.world.npcs.get(server.world.npcIdsOf("ash_bandit")[0]!)!;
      const m = p.log.mark();
      // Next to where the bandit is now (it wanders up to 8 tiles from its spawn, farther than its
      // aggression radius of 5), on a tile the player may stand on.
      const c = server.world.content;
      const near = [
        [0, -2],
        [0, 2],
        [-2, 0],
        [2, 0],
        [-1, -1],
        [1, 1],
      ]
        .map(([dx, dz]) => ({ x: bandit.x + dx!, z: bandit.z + dz! }))
        .find((t) => c.inBounds(t.x, t.z) && !c.isBlocked(t.x, t.z))!;
      await admin(p, `/tp ${near.x} ${near.z}`);
      await p.log.waitFor("combat:hit", (h) => h.targetId === p.id, { since: m });
      await p.log.system(/you are dead/, m, 30_000);
      const s = lastSync(p);
      assert.deepEqual({ x: s.position.x, z: s.position.z }, { x: 0, z: 0 });
      assert.equal(s.health, s.maxHealth);
      const items = (s.inventory as { itemId: string }[]).map((i) => i.itemId).sort();
      assert.deepEqual(items, ["bread", "bronze_axe", "bronze_pickaxe"], "the 3 most valuable items are kept");
      await p.waitAt(0, 0);

      const deaths = await sql("select resolved_at, items, position_z from player_deaths where character_id = ?", [p.id]);
      assert.equal(deaths.length, 1);
      assert.notEqual(deaths[0].resolved_at, null, "the death lock is resolved");
      const dropped = (typeof deaths[0].items === "string" ? JSON.parse(deaths[0].items) : deaths[0].items).dropped as { itemId: string; quantity: number }[];
      assert.deepEqual(dropped.map((d) => `${d.itemId}×${d.quantity}`).sort(), ["shrimp×2", "small_fishing_net×1", "tinderbox×1"]);
      assert.ok(deaths[0].position_z > 64, "died in the Ashlands");
      const row = await stored(p.id);
      assert.deepEqual(row!.inventory.map((i) => i.itemId).sort(), ["bread", "bronze_axe", "bronze_pickaxe"]);
      assert.deepEqual({ x: row!.character.positionX, z: row!.character.positionZ }, { x: 0, z: 0 });
      const ground = [...server.world.groundItems.values()].filter((g) => g.ownerId === p.id);
      assert.deepEqual(ground.map((g) => `${g.itemId}×${g.quantity}`).sort(), ["shrimp×2", "small_fishing_net×1", "tinderbox×1"]);
    });

    it("a death a crash left open is resolved on the next join: the lost items go to the bank", async () => {
      const p = await join();
      await p.leave();
      await eventually(() => !server.world.players.has(p.id), "player saved and gone");
      await sql(
        `insert into player_deaths (id, character_id, position_x, position_z, killed_by, items, created_at)
         values (gen_random_uuid()::text, ?, 0, 100, 'npc:ash_bandit:0', ?, now())`,
        [p.id, JSON.stringify({ dropped: [{ itemId: "shrimp", quantity: 2 }], kept: [] })],
      );
      const again = await join({ token: p.token, accountId: p.accountId });
      assert.deepEqual(lastSync(again).bank, [{ itemId: "shrimp", quantity: 2 }]);
      const open = await sql("select count(*)::int as n from player_deaths where character_id = ? and resolved_at is null", [p.id]);
      assert.equal(open[0].n, 0);
    });

    it("chops a tree near spawn: walks there, gets logs and woodcutting xp, the tree is depleted", async () => {
      const p = await join();
      const tree = server.world.resources.get("lumbrook_tree_1")!;
      await p.waitState((s) => s.resources.get(tree.id)?.depleted === false, "the tree in view, standing");
      const m = p.log.mark();
      p.send("player:action", { action: "gather", targetId: tree.id });
      const xp = await p.log.waitFor("skill:xp", (x) => x.skill === "woodcutting", { since: m, timeoutMs: 20_000 });
      assert.equal(xp.gained, 24);
      assert.equal(xp.xp, 24);
      await p.log.waitFor<PlayerSync>("player:sync", (s) => s.inventory.some((i) => i.itemId === "logs"), { since: m });
      assert.equal(invCount(p, "logs"), 1);
      assert.ok(Math.max(Math.abs(p.me.x - tree.x), Math.abs(p.me.z - tree.z)) <= 1, "standing next to the tree");
      await p.waitState((s) => s.resources.get(tree.id)?.depleted === true, "tree depleted");
    });

    it("refuses to gather without the right tool", async () => {
      const p = await join();
      const rock = [...server.world.resources.values()].find((r) => r.skill === "fishing")!;
      // Drop the net first: the starter kit's only fishing tool.
      const m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "small_fishing_net"), targetId: "drop" });
      await p.log.waitFor<PlayerSync>("player:sync", (s) => !s.inventory.some((i) => i.itemId === "small_fishing_net"), { since: m });
      p.send("player:action", { action: "gather", targetId: rock.id });
      await p.log.system(/suitable tool|too far/, m);
    });

    it("banks near the booth: deposit and withdraw commit at once", async () => {
      const p = await join({ admin: true });
      let m = p.log.mark();
      p.send("bank:deposit", { slot: 0 });
      await p.log.system(/need to be at a bank/, m);
      await admin(p, "/tp 6 6");
      const axeSlot = slotOf(p, "bronze_axe");
      m = p.log.mark();
      p.send("bank:deposit", { slot: axeSlot });
      await p.log.waitFor<PlayerSync>("player:sync", (s) => s.bank.some((b) => b.itemId === "bronze_axe"), { since: m });
      let row = await stored(p.id);
      assert.deepEqual(row!.bank, [{ itemId: "bronze_axe", quantity: 1 }]);
      assert.ok(!row!.inventory.some((i) => i.itemId === "bronze_axe"));
      assert.equal(invCount(p, "bronze_axe"), 0);

      m = p.log.mark();
      p.send("bank:withdraw", { itemId: "bronze_axe", quantity: 2 });
      await p.log.system(/doesn't have 2/, m);
      m = p.log.mark();
      p.send("bank:withdraw", { itemId: "bronze_axe", quantity: 1 });
      await p.log.waitFor<PlayerSync>("player:sync", (s) => s.inventory.some((i) => i.itemId === "bronze_axe"), { since: m });
      row = await stored(p.id);
      assert.deepEqual(row!.bank, []);
      assert.equal(row!.inventory.filter((i) => i.itemId === "bronze_axe").length, 1);
    });

    it("buys and sells at the general store; coins commit at once", async () => {
      const p = await join({ admin: true });
      const store = server.content.stores.get("lumbrook_general_store")!;
      let m = p.log.mark();
      p.send("player:action", { action: "buy", targetId: store.id, itemId: "tinderbox", quantity: 2 });
      await p.log.system(/need to be at the/, m);
      await admin(p, `/tp ${store.x} ${store.z - 1}`);
      m = p.log.mark();
      p.send("player:action", { action: "buy", targetId: store.id, itemId: "tinderbox", quantity: 2 });
      await p.log.system(/You buy 2/, m);
      assert.equal(lastSync(p).coins, 23);
      assert.equal(invCount(p, "tinderbox"), 3);
      assert.equal((await stored(p.id))!.character.coins, 23);
      m = p.log.mark();
      p.send("player:action", { action: "buy", targetId: store.id, itemId: "shortbow", quantity: 1 });
      await p.log.system(/need 50 coins/, m);
      m = p.log.mark();
      p.send("player:action", { action: "sell", targetId: store.id, itemId: "bronze_pickaxe", quantity: 1 });
      await p.log.system(/You sell 1/, m);
      assert.equal(lastSync(p).coins, 23 + 7);
      const row = await stored(p.id);
      assert.equal(row!.character.coins, 30);
      assert.ok(!row!.inventory.some((i) => i.itemId === "bronze_pickaxe"));
    });

    it("eats food and equips a weapon through inventory:use", async () => {
      const p = await join({ admin: true });
      await admin(p, "/give bronze_sword 1");
      let m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "bronze_sword") });
      await p.log.waitFor("player:sync", (s) => s.equipment.weapon?.itemId === "bronze_sword", { since: m });
      await p.waitState((s) => s.players.get(p.id)?.weapon === "bronze_sword", "weapon in public state");
      m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, "bread") });
      await p.log.system(/You eat the bread/, m);
      assert.equal(invCount(p, "bread"), 0);
    });
  });

  describe("chat", () => {
    it("public chat reaches players in view and not players far away", async () => {
      const a = await join();
      const b = await join();
      const far = await join({ admin: true });
      await admin(far, "/tp 100 0");
      const mb = b.log.mark();
      const mf = far.log.mark();
      a.send("player:chat", { text: "hello lumbrook" });
      const got = await b.log.waitFor("chat:message", (c) => c.text === "hello lumbrook", { since: mb });
      assert.equal(got.type, "public");
      assert.equal(got.fromId, a.id);
      assert.equal(got.fromName, lastSync(a).name);
      assert.ok(!Number.isNaN(Date.parse(got.timestamp)) && typeof got.id === "string");
      // The far player's own line comes back after anything already sent to it.
      far.send("player:chat", { text: "anyone?" });
      await far.log.waitFor("chat:message", (c) => c.text === "anyone?", { since: mf });
      assert.equal(far.log.all<ChatMessage>("chat:message", mf).filter((c) => c.text === "hello lumbrook").length, 0);
    });

    it("private chat goes to the friend only", async () => {
      const a = await join();
      const b = await join();
      const c = await join();
      await sql("insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())", [a.id, b.id, a.id, b.id]);
      const mb = b.log.mark();
      const mc = c.log.mark();
      a.send("player:chat", { text: "psst", to: b.id });
      const got = await b.log.waitFor("chat:message", (m) => m.text === "psst", { since: mb });
      assert.equal(got.type, "private");
      assert.equal(got.fromId, a.id);
      c.send("player:chat", { text: "me too" });
      await c.log.waitFor("chat:message", (m) => m.text === "me too", { since: mc });
      assert.equal(c.log.all<ChatMessage>("chat:message", mc).filter((m) => m.text === "psst").length, 0);
    });

    it("refuses messages over 200 characters and private messages to unknown players (as to any non-friend: nothing says who is online)", async () => {
      const a = await join();
      let m = a.log.mark();
      a.send("player:chat", { text: "x".repeat(201) });
      await a.log.system(/Invalid player:chat/, m);
      m = a.log.mark();
      a.send("player:chat", { text: "hi", to: "nobody-here" });
      await a.log.system(/only message your friends/, m);
    });
  });

  describe("admin commands", () => {
    it("need /admin with the right code", async () => {
      const p = await join();
      let m = p.log.mark();
      p.send("player:chat", { text: "/give bronze_sword 1" });
      await p.log.system(/need admin access/, m);
      m = p.log.mark();
      p.send("player:chat", { text: "/admin wrong-code" });
      await p.log.system(/Wrong admin code/, m);
      m = p.log.mark();
      p.send("player:chat", { text: "/tp 5 5" });
      await p.log.system(/need admin access/, m);
    });

    it("/give, /coins and /tp work once admin, and validate their arguments", async () => {
      const p = await join({ admin: true });
      await admin(p, "/give feather 150");
      assert.equal(invCount(p, "feather"), 150);
      await admin(p, "/coins 1234");
      assert.equal(lastSync(p).coins, 1234);
      assert.equal((await stored(p.id))!.character.coins, 1234, "coins are committed at once");
      await admin(p, "/tp 5 5");
      await p.waitAt(5, 5);
      for (const [cmd, re] of [
        ["/give no_such_item 1", /Unknown item/],
        ["/give feather 0", /whole number/],
        ["/coins -5", /whole number/],
        ["/tp 5 9", /free tile/],
        ["/tp 500 0", /free tile/],
      ] as const) {
        const m = p.log.mark();
        p.send("player:chat", { text: cmd });
        await p.log.system(re, m);
      }
    });
  });

  describe("connections", () => {
    it("a first join creates the account's character, named after the token's name when that name is valid and free", async () => {
      const named = `Alda${Date.now() % 100000}`;
      const first = tokenFor(undefined, { name: named });
      const a = await join({ token: first.token, accountId: first.accountId });
      assert.equal(lastSync(a).name, named);
      const again = tokenFor(undefined, { name: named.toUpperCase() }); // taken, regardless of case
      const b = await join({ token: again.token, accountId: again.accountId });
      const invalid = tokenFor(undefined, { name: "no!" });
      const c = await join({ token: invalid.token, accountId: invalid.accountId });
      for (const p of [b, c]) {
        assert.notEqual(lastSync(p).name.toLowerCase(), named.toLowerCase());
        assert.match(lastSync(p).name, /^[A-Za-z0-9 _-]{3,12}$/);
      }
      assert.equal((await stored(a.id))!.character.name, named);
    });

    it("a second join for the same character closes the first with 4009; the player stays", async () => {
      const first = await join();
      first.send("player:move", { x: 2, z: 2 });
      await first.waitAt(2, 2);
      const second = await join({ token: first.token, accountId: first.accountId });
      assert.equal(second.id, first.id);
      const closed = await first.log.waitClose();
      assert.equal(closed.code, CLOSE_CODES.REPLACED);
      assert.deepEqual(lastSync(second).position, { x: 2, y: 10, z: 2 });
      assert.ok(server.world.isOnline(first.id));
      second.send("player:move", { x: 3, z: 2 });
      await second.waitAt(3, 2);
    });

    it("a dropped client reconnects within the window with the same state", async () => {
      const p = await join({ admin: true });
      await admin(p, "/give feather 7");
      p.send("player:move", { x: 3, z: 0 });
      await p.waitAt(3, 0);
      const room = matchMaker.getLocalRoomById(p.room.roomId) as WorldRoom;
      const socket = (room.linkOf(p.id)!.client as unknown as { ref: WebSocket }).ref;
      socket.terminate(); // no close frame: the network just went away
      const closed = await p.log.waitClose();
      assert.notEqual(closed.code, 1000);
      await eventually(() => server.world.players.has(p.id) && !server.world.isOnline(p.id), "player lingering, offline");

      const m = p.log.mark();
      const back = await p.client.reconnect(p.room.reconnectionToken);
      back.reconnection.enabled = false;
      p.attach(back);
      const sync = await p.log.waitFor("player:sync", () => true, { since: m });
      assert.equal(sync.id, p.id);
      assert.deepEqual(sync.position, { x: 3, y: 10, z: 0 });
      assert.equal(invCount(p, "feather"), 7);
      assert.equal(sync.admin, true, "the session's admin role survives");
      assert.ok(server.world.isOnline(p.id));
      p.send("player:move", { x: 4, z: 0 });
      await p.waitAt(4, 0);
    });

    /** Cut a client's socket without a close frame, and wait until the server holds its seat. */
    const cut = async (p: SdkPlayer) => {
      const room = matchMaker.getLocalRoomById(p.room.roomId) as WorldRoom;
      (room.linkOf(p.id)!.client as unknown as { ref: WebSocket }).ref.terminate();
      await p.log.waitClose();
      await eventually(() => server.world.players.has(p.id) && !server.world.isOnline(p.id), "player lingering, offline");
    };

    it("a reconnection after a fresh join for the same character is refused; the fresh client keeps playing", async () => {
      const old = await join();
      await cut(old);
      const fresh = await join({ token: old.token, accountId: old.accountId });
      assert.equal(fresh.id, old.id);
      const m = fresh.log.mark();
      // The old SDK comes back late (its automatic reconnection): it must not take the character.
      await assert.rejects(old.client.reconnect(old.room.reconnectionToken));
      assert.ok(server.world.isOnline(fresh.id));
      assert.equal(fresh.log.isClosed, false);
      fresh.send("player:move", { x: 2, z: 1 });
      await fresh.waitAt(2, 1);
      fresh.send("player:chat", { text: "still mine" });
      await fresh.log.waitFor("chat:message", (c) => c.text === "still mine", { since: m });
    });

    it("a dropped client's seat alone ends its window: the tick never removes a player whose seat is still valid", async () => {
      const before = server.world.reconnectSeconds;
      try {
        const p = await join();
        await cut(p); // the seat was given the full window
        // The world's own reconnection timeout would now have run out: it must leave this player to its seat.
        server.world.reconnectSeconds = 0;
        const tick = server.world.tick;
        await eventually(() => server.world.tick >= tick + 3, "three ticks");
        assert.ok(server.world.players.has(p.id), "still waiting for its seat");
        const m = p.log.mark();
        const back = await p.client.reconnect(p.room.reconnectionToken);
        back.reconnection.enabled = false;
        p.attach(back);
        assert.equal((await p.log.waitFor("player:sync", () => true, { since: m })).id, p.id);
        assert.ok(server.world.isOnline(p.id));
      } finally {
        server.world.reconnectSeconds = before;
      }
    });

    it("a dropped client that does not come back within the window leaves, is saved, and cannot reconnect after", async () => {
      const before = server.world.reconnectSeconds;
      server.world.reconnectSeconds = 1;
      try {
        const p = await join();
        p.send("player:move", { x: 0, z: 2 });
        await p.waitAt(0, 2);
        await cut(p);
        await eventually(() => !server.world.players.has(p.id), "the player left after the window", 10_000);
        const login = await eventually(
          async () => (await sql("select end_reason from player_logins where character_id = ? and ended_at is not null", [p.id]))[0],
          "login closed",
        );
        assert.equal(login.end_reason, "reconnect_timeout");
        assert.deepEqual({ x: (await stored(p.id))!.character.positionX, z: (await stored(p.id))!.character.positionZ }, { x: 0, z: 2 });
        await assert.rejects(p.client.reconnect(p.room.reconnectionToken));
        assert.ok(!server.world.players.has(p.id));
      } finally {
        server.world.reconnectSeconds = before;
      }
    });
  });

  describe("interest management", () => {
    it("a player 100 tiles away is not in state and comes into view at most a tick after it reached the view radius", async () => {
      const a = await join();
      const b = await join({ admin: true });
      await a.waitState((s) => s.players.get(b.id) !== undefined, "b near a at spawn");
      await admin(b, "/tp 100 0");
      await a.waitState((s) => s.players.get(b.id) === undefined, "b gone from a's view");
      assert.ok(server.world.players.has(b.id));
      // b runs back toward spawn (2 tiles a tick from x=100: 98, 96, … 24, 22, 20): a's view is calm
      // (all in view fit), selected every CALM_RESELECT_TICKS (2) ticks after the tick's patch, so it
      // takes b in after the patch of the tick b reached the view radius or of the next one, and b
      // comes with the patch after that: one or two run steps nearer.
      let appearedAt: number | undefined;
      a.room.onStateChange((s: any) => {
        const seen = s.players.get(b.id);
        if (seen && appearedAt === undefined) appearedAt = seen.x;
      });
      b.send("player:move", { x: 10, z: 0, run: true });
      await a.waitState((s) => s.players.get(b.id) !== undefined, "b back in view", 20_000);
      assert.ok(appearedAt === VIEW_RADIUS - 2 || appearedAt === VIEW_RADIUS - 4, `b appeared at x=${appearedAt}`);
      await a.waitState((s) => s.players.get(b.id)?.x === 10, "b's moves keep arriving");
    });

    it("players who join at the same time all see each other (none left out while still joining)", async () => {
      const joined = await Promise.all(Array.from({ length: 8 }, () => join()));
      for (const p of joined) await p.waitState((s) => joined.every((o) => s.players.get(o.id) !== undefined), `${p.id} sees all eight`);
    });

    it("sees NPCs and resources only near itself", async () => {
      const p = await join({ admin: true });
      await p.waitState((s) => s.resources.size > 0, "resources near spawn");
      assert.ok(
        [...p.state.npcs.values()].every((n: any) => n.npcId !== "chicken"),
        "no chickens from the town",
      );
      for (const r of p.state.resources.values() as Iterable<any>) assert.ok(Math.max(Math.abs(r.x), Math.abs(r.z)) <= VIEW_RADIUS);
      await admin(p, "/tp 0 40");
      await p.waitState((s) => [...s.npcs.values()].some((n: any) => n.npcId === "chicken"), "chickens in the meadow");
      await p.waitState((s) => s.resources.get("lumbrook_tree_1") === undefined, "town trees out of view");
    });
  });
});
