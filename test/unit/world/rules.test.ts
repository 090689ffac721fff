/**
 * World rules from issue 10's attack checklist, on the real World with fake storage and a fake
 * clock (docs/protocol.md "Refusal codes", docs/protocol.md "Leaving in combat", docs/persistence.md "Deaths",
 * docs/trading.md "Trading"):
 *
 * - every client event while dead is refused with the stable code PLAYER_DEAD and changes nothing;
 *   moves while dead leave the player where it respawns;
 * - a burst of moves within one tick: only the last target counts;
 * - a player in combat can't leave at once (consented leave, a dropped socket): it stays, is still
 *   attacked, can die, and leaves once out of combat;
 * - no fighting while trading (own attacks, automatic retaliation);
 * - items held by a settlement: a player joining meanwhile is locked; kill coins go to the ground;
 * - death with items in memory that can't be trusted is planned from the stored rows;
 * - death drops past the stack cap become a second pile, never a loss.
 */
import assert from "node:assert/strict";
import type { CharacterRecord } from "../../../src/world/ports/character-store.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { inventoryFromSlots } from "../../../src/domain/inventory.js";
import { MAX_STACK } from "../../../src/domain/types.js";
import { createLogger } from "../../../src/logger.js";
import { handleMove } from "../../../src/world/actions.js";
import type { Connection } from "../../../src/world/player.js";
import { EventRouter } from "../../../rooms/world/event-table.js";
import { COMBAT_LOGOUT_SECONDS, REFUSAL, World } from "../../../src/world/world.js";
import { FakeCharacterStore } from "../../helpers/fake-store.js";
import { characterRecord, STARTER, until } from "../../helpers/records.js";

class FakeConnection implements Connection {
  static n = 0;
  readonly id = `rules-conn-${++FakeConnection.n}`;
  readonly kind = "json" as const;
  sent: { event: string; data: any }[] = [];
  send(event: string, data: unknown) {
    this.sent.push({ event, data });
  }
  close() {}
}

describe("world rules (fake storage, fake clock)", () => {
  let content: GameContent;
  let repo: FakeCharacterStore;
  let clock: { t: number };
  let world: World;
  let rng: () => number;

  before(async () => {
    content = await loadContent("world/manifests");
  });
  beforeEach(() => {
    repo = new FakeCharacterStore();
    clock = { t: 1_000_000 };
    rng = () => 0.5;
    world = new World({
      content,
      characters: repo,
      logger: createLogger("silent"),
      saveIntervalSeconds: 60,
      checkAdminCode: () => "wrong",
      rng: () => rng(),
      now: () => clock.t,
    });
  });

  const join = (id: string, at = { x: 0, z: 0 }, inventory: CharacterRecord["inventory"] = STARTER) => {
    const rec = characterRecord(id, { at, inventory });
    repo.rows.set(id, rec);
    const conn = new FakeConnection();
    const { player } = world.join(structuredClone(rec), conn, 4009);
    return { player, conn };
  };
  const hitsOn = (id: string, since = 0) => {
    let n = 0;
    for (const p of world.players.values())
      for (const s of (p.connection as FakeConnection | undefined)?.sent.slice(since) ?? []) if (s.event === "combat:hit" && s.data.targetId === id) n++;
    return n;
  };
  /** Every hit roll hits for its maximum. */
  const hardHits = () => {
    let n = 0;
    rng = () => (n++ % 2 === 0 ? 0.01 : 0.99);
  };

  describe("refusal codes: everything while dead is refused with PLAYER_DEAD and changes nothing", () => {
    it("move, every action, chat commands, inventory use, bank deposit/withdraw, trade requests", async () => {
      const none = () => assert.fail("no trade event reaches the trade service");
      const trades = { tradeRequest: none, tradeRequestRespond: none, tradeAddItem: none, tradeRemoveItem: none, tradeAccept: none, tradeCancel: none };
      const router = new EventRouter({ world, trades }, createLogger("silent"));
      const bank = content.stations.find((s) => s.type === "bank")!;
      const at = { x: bank.x, z: bank.z - 3 };
      assert.ok(!content.isBlocked(at.x, at.z));
      const { player, conn } = join("ghost", at);
      const { player: other } = join("other", { x: at.x + 1, z: at.z });
      player.bank.set("shrimp", 3);
      player.admin = true;
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      world.killPlayer(player, "npc:goblin:0");
      assert.equal(player.dead, true);
      const state = () =>
        JSON.stringify({
          inv: player.inventory,
          bank: [...player.bank],
          coins: player.coins,
          x: player.x,
          z: player.z,
          path: player.path,
          action: player.action,
          style: player.style,
          tradeId: player.tradeId,
          ground: world.groundItems.size,
          fires: world.resources.size,
        });
      const before = state();
      const events: [string, unknown][] = [
        ["player:move", { x: at.x + 5, z: at.z }],
        ["player:action", { action: "attack", targetId: world.npcIdsOf("goblin")[0] }],
        ["player:action", { action: "gather", targetId: [...world.resources.keys()][0] }],
        ["player:action", { action: "pickup", targetId: "item:1" }],
        ["player:action", { action: "talk", targetId: world.npcIdsOf("goblin")[0] }],
        ["player:action", { action: "buy", targetId: [...content.stores.keys()][0], itemId: "bread", quantity: 1 }],
        ["player:action", { action: "unequip", targetId: "weapon" }],
        ["player:chat", { text: "/style strength" }],
        ["player:chat", { text: "/give bronze_axe 1" }],
        ["player:chat", { text: "/tp 3 3" }],
        ["player:chat", { text: "/coins 999" }],
        ["inventory:use", { slot: 4 }],
        ["inventory:use", { slot: 0, targetId: "drop" }],
        ["bank:deposit", { slot: 0, quantity: 1 }],
        ["bank:withdraw", { itemId: "shrimp", quantity: 1 }],
        ["tradeRequest", { targetPlayerId: other.id }],
      ];
      for (const [event, data] of events) {
        const from = conn.sent.length;
        await router.handle(player, event as never, data as never);
        const answers = conn.sent.slice(from);
        assert.equal(answers.length, 1, `${event} ${JSON.stringify(data)}: one answer`);
        const a = answers[0]!;
        if (event === "tradeRequest") assert.deepEqual([a.event, a.data.code], ["tradeError", REFUSAL.PLAYER_DEAD]);
        else assert.deepEqual([a.event, a.data.type, a.data.code], ["chat:message", "system", REFUSAL.PLAYER_DEAD], `${event} ${JSON.stringify(data)}`);
        world.step();
        assert.equal(state(), before, `${event} ${JSON.stringify(data)} changed nothing`);
      }
      open();
      await until(() => !player.dead, "respawn");
      // Moves sent while dead are gone: the player stands where it respawned.
      for (let i = 0; i < 5; i++) world.step();
      assert.deepEqual({ x: player.x, z: player.z, path: player.path.length }, { ...content.spawn, path: 0 });
    });
  });

  describe("movement bursts", () => {
    it("20 moves within one tick: only the last target counts, one tile per tick, nothing queued beyond it", () => {
      const { player } = join("bursty");
      const { player: control } = join("control", { x: 0, z: 0 });
      for (let i = 0; i < 20; i++) handleMove(world, player, { x: i % 2 === 0 ? 10 - i : -10 + i, z: i % 3 });
      const last = { x: -10 + 19, z: 19 % 3 };
      handleMove(world, control, last);
      assert.deepEqual(player.path, control.path, "the same path as one move to the last target");
      const trail: { x: number; z: number }[] = [];
      for (let i = 0; i < 40 && (player.path.length > 0 || trail.length === 0); i++) {
        world.step();
        trail.push({ x: player.x, z: player.z });
        assert.deepEqual({ x: player.x, z: player.z }, { x: control.x, z: control.z }, `tick ${i}`);
      }
      assert.deepEqual(trail.at(-1), last);
      assert.equal(trail.length, Math.max(Math.abs(last.x), Math.abs(last.z)), "one tile per tick, no extra steps");
      for (let i = 0; i < 5; i++) world.step();
      assert.deepEqual({ x: player.x, z: player.z }, last, "nothing queued beyond the last target");
    });
  });

  describe("combat logout", () => {
    /** A goblin fighting a player standing next to it, outside the safe town. */
    const fight = (id: string) => {
      const goblin = world.npcs.get(world.npcIdsOf("goblin")[0]!)!;
      const { player, conn } = join(id, { x: goblin.x + 1, z: goblin.z });
      player.loginId = `login-${id}`;
      for (let i = 0; i < 40 && player.lastCombatAt === undefined; i++) world.step();
      assert.ok(world.inCombat(player), "in combat");
      return { goblin, player, conn };
    };
    /** The goblin dies (someone else killed it): the fight is over. */
    const endFight = (goblin: { respawnTick?: number; targetId?: string }) => {
      goblin.respawnTick = world.tick + 10_000;
      goblin.targetId = undefined;
    };

    for (const how of ["a consented leave (SDK)", "a dropped SDK socket whose seat expires", "a closed /ws socket"] as const) {
      it(`${how} in combat: the player stays, is still attacked, and leaves ${COMBAT_LOGOUT_SECONDS} s after its last combat action`, async () => {
        const { goblin, player, conn } = fight(`fighter-${how.length}`);
        if (how === "a consented leave (SDK)") await world.leave(player.id, "left", conn.id);
        else if (how === "a dropped SDK socket whose seat expires") {
          world.drop(player.id, conn.id, true);
          await world.leave(player.id, "reconnect_timeout", conn.id);
        } else world.drop(player.id, conn.id);
        assert.equal(world.player(player.id), player, "still in the world");
        assert.equal(player.connection, undefined);
        const health = player.health;
        const hitAt = player.lastCombatAt!;
        for (let i = 0; i < 20 && player.lastCombatAt === hitAt; i++) {
          clock.t += 600;
          world.step();
        }
        assert.ok(player.lastCombatAt! > hitAt, "the goblin keeps fighting it");
        assert.ok(player.health <= health);
        // Past the reconnection window too: still in combat, still here.
        clock.t += world.reconnectSeconds * 1000;
        player.lastCombatAt = clock.t;
        world.step();
        assert.equal(world.player(player.id), player, "in combat: not gone after the reconnection window");
        endFight(goblin);
        clock.t += COMBAT_LOGOUT_SECONDS * 1000 - 1;
        world.step();
        assert.equal(world.player(player.id), player, "not before 10 s out of combat");
        clock.t += 1;
        world.step();
        await until(() => repo.logouts.length === 1, "left and login closed");
        assert.equal(world.player(player.id), undefined);
        assert.equal(repo.logouts[0]!.reason, how === "a consented leave (SDK)" ? "left" : "reconnect_timeout");
        assert.equal(repo.saves.at(-1)!.characterId, player.id);
      });
    }

    it("a player who logged out in combat can die meanwhile (its death is recorded as usual)", async () => {
      const { goblin, player, conn } = fight("doomed");
      await world.leave(player.id, "left", conn.id);
      // A goblin that hits hard and always: the next swing kills.
      Object.assign(goblin, { def: { ...goblin.def, maxHit: 50, stats: { ...goblin.def.stats, attack: 99, strength: 99 } } });
      rng = () => 0.3;
      player.health = 1;
      for (let i = 0; i < 40 && !player.dead; i++) {
        clock.t += 600;
        world.step();
      }
      assert.equal(player.dead, true, "it died");
      await until(() => repo.deaths.length === 1, "its death recorded");
      await until(() => !player.dead, "respawned");
      clock.t += COMBAT_LOGOUT_SECONDS * 1000;
      world.step();
      await until(() => repo.logouts.length === 1, "then left");
    });

    it("out of combat a consented leave is immediate; shutdown (leaveAll) removes a player in combat at once", async () => {
      const { player: calm, conn } = join("calm");
      await world.leave(calm.id, "left", conn.id);
      assert.equal(world.player(calm.id), undefined);
      const { player } = fight("shutdown");
      await world.leaveAll("server_shutdown");
      assert.equal(world.player(player.id), undefined);
    });
  });

  describe("no fighting while trading", () => {
    it("an attack set before the trade stops, and a trader hit by an NPC does not fight back", () => {
      const goblin = world.npcs.get(world.npcIdsOf("goblin")[0]!)!;
      const { player, conn } = join("trader", { x: goblin.x + 1, z: goblin.z });
      player.tradeId = "trade-1";
      player.action = { kind: "attack", targetId: goblin.id };
      world.step();
      assert.equal(player.action, null, "the attack stops");
      assert.equal(conn.sent.filter((s) => s.event === "combat:hit" && s.data.attackerId === player.id).length, 0);
      for (let i = 0; i < 40 && hitsOn(player.id) === 0; i++) world.step();
      assert.ok(hitsOn(player.id) > 0, "the goblin attacked the trader");
      assert.equal(player.action, null, "no automatic retaliation while trading");
      assert.equal(goblin.health, goblin.maxHealth);
    });
  });

  describe("items held by a settlement", () => {
    it("a player joining while its items are held is locked: item changes refused, kill coins go to the ground", async () => {
      const chicken = world.npcs.get(world.npcIdsOf("chicken")[0]!)!;
      Object.assign(chicken, {
        def: {
          ...chicken.def,
          aggressive: false,
          wanderRadius: 0,
          drops: { always: [{ itemId: "coins", quantity: 50 }], table: [], rolls: 0, nothingWeight: 0 },
        },
      });
      chicken.health = 1;
      const first = join("held", { x: chicken.x + 1, z: chicken.z });
      const release = world.holdItems([first.player.id]);
      assert.equal(first.player.itemsLocked, true, "the player here is locked");
      await world.leave(first.player.id, "left", first.conn.id);
      const { player } = join("held", { x: chicken.x + 1, z: chicken.z });
      assert.notEqual(player, first.player);
      assert.equal(player.itemsLocked, true, "a player joining during the hold is locked");
      assert.equal(await world.commitItems(player, () => ({ coins: 1 })), false);
      hardHits();
      player.action = { kind: "attack", targetId: chicken.id };
      for (let i = 0; i < 10 && chicken.respawnTick === undefined; i++) world.step();
      assert.notEqual(chicken.respawnTick, undefined, "the chicken died");
      assert.equal(player.coins, 25, "no coins into items the settlement will replace");
      assert.deepEqual(
        [...world.groundItems.values()].filter((g) => g.itemId === "coins").map((g) => g.quantity),
        [50],
      );
      release();
      assert.equal(world.itemsHeld(player.id), false);
    });
  });

  describe("death", () => {
    const pile = (l: { itemId: string; quantity: number }[]) => l.map((i) => `${i.itemId}×${i.quantity}`).sort();

    it("items in memory that can't be trusted: the death is planned from the stored rows, which it replaces", async () => {
      const { player, conn } = join("stale", { x: 0, z: 100 });
      // A trade whose outcome is unknown left memory holding 100 arrows storage does not have.
      const inv = inventoryFromSlots([...STARTER, { slot: 10, itemId: "iron_arrow", quantity: 100 }]);
      assert.ok(inv.ok);
      player.inventory = inv.value;
      player.safety.markStale();
      world.killPlayer(player, "npc:goblin:0");
      await until(() => conn.sent.some((s) => s.event === "chat:message" && /you are dead/.test(s.data.text)), "respawn");
      const d = repo.deaths[0]!;
      assert.deepEqual(pile(d.items.dropped), ["shrimp×2", "small_fishing_net×1", "tinderbox×1"], "planned from storage");
      assert.ok(d.after.items, "the death writes the remaining items");
      assert.deepEqual(pile(d.after.items.inventory), ["bread×1", "bronze_axe×1", "bronze_pickaxe×1"]);
      await until(() => world.groundItems.size === 3, "drops on the ground");
      assert.ok(![...world.groundItems.values()].some((g) => g.itemId === "iron_arrow"), "nothing from untrusted memory on the ground");
      assert.equal(player.itemsStale, false, "memory follows what the death wrote");
      assert.ok(!player.inventory.some((s) => s?.itemId === "iron_arrow"));
    });

    it("drops past the stack cap become a second pile, never a loss", async () => {
      const { player, conn } = join("hoarder", { x: 0, z: 100 }, [
        ...STARTER,
        { slot: 10, itemId: "ridge_token", quantity: MAX_STACK },
        { slot: 11, itemId: "ridge_token", quantity: MAX_STACK },
      ]);
      assert.equal(player.inventory.filter((s) => s?.itemId === "ridge_token").length, 2);
      world.killPlayer(player, "npc:goblin:0");
      await until(() => conn.sent.some((s) => s.event === "chat:message" && /you are dead/.test(s.data.text)), "respawn");
      const tokens = (l: { itemId: string; quantity: number }[]) => l.filter((i) => i.itemId === "ridge_token").map((i) => i.quantity);
      assert.deepEqual(tokens(repo.deaths[0]!.items.dropped), [MAX_STACK, MAX_STACK], "recorded as two piles");
      await until(() => world.groundItems.size > 0, "drops on the ground");
      assert.deepEqual(tokens([...world.groundItems.values()]), [MAX_STACK, MAX_STACK], "two piles on the ground");
    });
  });
});
