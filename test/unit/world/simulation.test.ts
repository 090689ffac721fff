/**
 * The world simulation without sockets or a database: a fake character repository, a fake clock,
 * a scripted rng, and `step()` called by hand. Covers what the room tests cannot pin down exactly:
 * tile-per-tick movement, the reconnection window, the tick never waiting on storage, immediate item
 * transactions, death locking and visibility radius.
 */
import assert from "node:assert/strict";
import type { CharacterRecord, ProgressSnapshot } from "../../../src/world/ports/character-store.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_STACK } from "../../../src/domain/types.js";
import { FakeCharacterStore } from "../../helpers/fake-store.js";
import { LEAVE_GROUP_MAX, LEAVE_GROUP_PARALLEL } from "../../../src/world/systems/leave-groups.js";
import { characterRecord, STARTER, until } from "../../helpers/records.js";
import { chebyshev } from "../../../src/domain/movement.js";
import { PATH_NODES_PER_TICK, pathNodeLimit } from "../../../src/domain/pathing.js";
import { createLogger } from "../../../src/logger.js";
import { handleAction, handleInventoryUse, handleMove } from "../../../src/world/actions.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { GROUND_ITEM_PRIVATE_TICKS, RECONNECT_SECONDS, VIEW_LEAVE_MARGIN, VIEW_RADIUS, World } from "../../../src/world/world.js";

/** A connection that keeps what it was sent. */
class FakeConnection implements Connection {
  static n = 0;
  readonly id = `conn-${++FakeConnection.n}`;
  readonly kind = "sdk" as const;
  sent: { event: string; data: any }[] = [];
  closed: { code: number; reason: string } | undefined;
  send(event: string, data: unknown) {
    this.sent.push({ event, data });
  }
  close(code: number, reason: string) {
    this.closed = { code, reason };
  }
  systemLines() {
    return this.sent.filter((s) => s.event === "chat:message" && s.data.type === "system").map((s) => s.data.text as string);
  }
}

/** A stored character at a position, with 25 coins and the given items. */
const record = (id: string, at: { x: number; z: number } = { x: 0, z: 0 }, inventory: CharacterRecord["inventory"] = []) =>
  characterRecord(id, { at, inventory });

describe("world/World simulation (fake storage, fake clock)", () => {
  let content: GameContent;
  let repo: FakeCharacterStore;
  let clock: { t: number };
  let world: World;

  before(async () => {
    content = await loadContent("world/manifests");
  });

  beforeEach(() => {
    repo = new FakeCharacterStore();
    clock = { t: 1_000_000 };
    world = new World({
      content,
      characters: repo,
      logger: createLogger("silent"),
      saveIntervalSeconds: 60,
      checkAdminCode: (c) => (c === "code" ? "ok" : "wrong"),
      rng: () => 0.5,
      now: () => clock.t,
    });
  });

  /** Counts the leave batches (`saveLeaving`: leave groups, shutdown batches) being written at once, and the most at once. */
  const leaveBatchesInFlight = () => {
    const counts = { now: 0, max: 0 };
    const saveLeaving = repo.saveLeaving.bind(repo);
    repo.saveLeaving = async (rows, reason) => {
      counts.max = Math.max(counts.max, ++counts.now);
      try {
        return await saveLeaving(rows, reason);
      } finally {
        counts.now--;
      }
    };
    return counts;
  };

  const join = (id: string, at?: { x: number; z: number }, inv: CharacterRecord["inventory"] = STARTER) => {
    const conn = new FakeConnection();
    const { player } = world.join(record(id, at, inv), conn, 4009);
    return { player, conn };
  };

  /** Step until the player stops moving; returns the positions after each tick. */
  const walk = (p: Player, maxTicks = 400) => {
    const trail: { x: number; z: number }[] = [];
    for (let i = 0; i < maxTicks && (p.path.length > 0 || world.hasPendingMove(p.id)); i++) {
      world.step();
      trail.push({ x: p.x, z: p.z });
    }
    return trail;
  };

  describe("movement", () => {
    it("walks one tile per tick", () => {
      const { player } = join("walker");
      handleMove(world, player, { x: 10, z: 0 });
      const trail = walk(player);
      assert.equal(trail.length, 10);
      trail.forEach((t, i) => assert.deepEqual(t, { x: i + 1, z: 0 }));
    });

    it("runs two tiles per tick", () => {
      const { player } = join("runner");
      handleMove(world, player, { x: 10, z: 0, run: true });
      const trail = walk(player);
      assert.equal(trail.length, 5);
      trail.forEach((t, i) => assert.deepEqual(t, { x: 2 * (i + 1), z: 0 }));
    });

    it("paths around a building tile by tile, never standing on a blocked tile", () => {
      // The Lumbrook bank covers x 4..9, z 8..12: walk from its west side to its east side.
      const { player } = join("detour", { x: 2, z: 10 });
      handleMove(world, player, { x: 11, z: 10 });
      const trail = walk(player);
      assert.deepEqual(trail.at(-1), { x: 11, z: 10 });
      let prev = { x: 2, z: 10 };
      for (const t of trail) {
        assert.equal(chebyshev(prev, t), 1, `step ${JSON.stringify(prev)} → ${JSON.stringify(t)}`);
        assert.ok(!content.isBlocked(t.x, t.z), `stood on blocked ${t.x},${t.z}`);
        prev = t;
      }
      assert.ok(trail.length > 9, "a detour is longer than the straight line");
    });

    it("refuses 201 tiles and accepts 200 with a system message saying why", () => {
      const { player, conn } = join("far", { x: -100, z: 0 });
      handleMove(world, player, { x: 101, z: 0 });
      assert.equal(player.path.length, 0);
      assert.match(conn.systemLines().at(-1)!, /at most 200 tiles/);
      handleMove(world, player, { x: 100, z: 0 });
      world.step();
      assert.equal(player.path.at(-1)?.x, 100);
    });
  });

  describe('path-finding budget (docs/protocol.md "Movement")', () => {
    /** The bundled map with a closed ring of walls round (60, 60): its inside is free but enclosed. */
    const ringed = () => {
      const c = Object.create(content) as GameContent;
      const wall = (x: number, z: number) => chebyshev({ x, z }, { x: 60, z: 60 }) === 3;
      Object.defineProperty(c, "isBlocked", { value: (x: number, z: number) => wall(x, z) || content.isBlocked(x, z) });
      world = new World({
        content: c,
        characters: repo,
        logger: createLogger("silent"),
        saveIntervalSeconds: 60,
        checkAdminCode: () => "wrong",
        rng: () => 0.5,
        now: () => clock.t,
      });
    };

    it("a move into an enclosed area is refused at once, with no search, and the player is told", () => {
      ringed();
      const { player, conn } = join("boxed-out");
      const searches = { n: 0 };
      const pathTo = world.movement.pathTo.bind(world.movement);
      world.movement.pathTo = (...args: Parameters<World["movement"]["pathTo"]>) => (searches.n++, pathTo(...args));
      handleMove(world, player, { x: 60, z: 60 });
      assert.match(conn.systemLines().at(-1)!, /can't reach/);
      assert.equal(world.hasPendingMove(player.id), false);
      world.step();
      assert.equal(searches.n, 0);
      assert.equal(world.lastMoveTick.expanded, 0);
    });

    it("sixty moves between two ticks are searched once, for the latest target, within the search's node limit", () => {
      ringed();
      const { player } = join("spammer");
      for (let i = 0; i < 60; i++) handleMove(world, player, { x: 60 + (i % 2 ? 5 : -5), z: 60 + (i % 3) });
      assert.equal(player.path.length, 0, "no search in the message handler");
      world.step();
      assert.deepEqual(world.lastMoveTick.served, [player.id]);
      assert.ok(world.lastMoveTick.expanded > 0 && world.lastMoveTick.expanded <= pathNodeLimit(chebyshev({ x: 0, z: 0 }, { x: 65, z: 62 })));
      assert.deepEqual(player.path.at(-1), { x: 65, z: 62 });
    });

    it("a flood of action searches (walks to piles) stays within the tick's path budget; the rest wait for later ticks", async () => {
      // A cup of walls open to the west round the walkers: each walk east to its pile floods the cup up to its search limit.
      const c = Object.create(content) as GameContent;
      const cup = (x: number, z: number) => (x === 90 && z >= 20 && z <= 100) || ((z === 20 || z === 100) && x >= 40 && x <= 90);
      Object.defineProperty(c, "isBlocked", { value: (x: number, z: number) => cup(x, z) || content.isBlocked(x, z) });
      world = new World({
        content: c,
        characters: repo,
        logger: createLogger("silent"),
        saveIntervalSeconds: 60,
        checkAdminCode: () => "wrong",
        rng: () => 0.5,
        now: () => clock.t,
      });
      // Every search's expansions, whoever asks for it.
      const total = { expanded: 0 };
      const pathTo = world.movement.pathTo.bind(world.movement);
      world.movement.pathTo = (p, to, adjacent, maxNodes, stats) => {
        const s = stats ?? { expanded: 0 };
        const found = pathTo(p, to, adjacent, maxNodes, s);
        total.expanded += s.expanded;
        return found;
      };
      const walkers: Player[] = [];
      for (let i = 0; i < 30; i++) {
        const { player } = join(`walker-${i}`, { x: 80, z: 30 + 2 * i });
        const pile = world.ground.drop("logs", 1, 100, 30 + 2 * i);
        await handleAction(world, player, { action: "pickup", targetId: pile.id });
        walkers.push(player);
      }
      world.step();
      assert.ok(total.expanded <= PATH_NODES_PER_TICK, `one tick expanded ${total.expanded} tiles, over the budget of ${PATH_NODES_PER_TICK}`);
      assert.ok(world.movement.actionSearches.searched > 0, "some searched");
      assert.ok(world.movement.actionSearches.deferred > 0, "the rest wait");
      const waiting = walkers.filter((p) => p.action?.kind === "pickup").length;
      assert.ok(waiting > 0, "the walkers whose search waits keep their action");
      // The next tick serves the ones that waited, within its own budget.
      total.expanded = 0;
      world.step();
      assert.ok(total.expanded > 0 && total.expanded <= PATH_NODES_PER_TICK);
    });

    it("a move followed by an attack before the tick does not walk (the later order wins)", () => {
      const { player } = join("changer");
      handleMove(world, player, { x: 10, z: 0 });
      player.action = { kind: "attack", targetId: "nobody" } as Player["action"];
      world.step();
      assert.equal(world.lastMoveTick.expanded, 0);
      assert.deepEqual({ x: player.x, z: player.z }, { x: 0, z: 0 });
    });
  });

  describe("connections", () => {
    it("a second join for the same character replaces the connection (closes the old one with the given code)", () => {
      const a = join("twice");
      const conn2 = new FakeConnection();
      const { player, resumed } = world.join(record("twice"), conn2, 4009);
      assert.equal(resumed, true);
      assert.equal(player, a.player);
      assert.deepEqual(a.conn.closed?.code, 4009);
      assert.equal(player.connection, conn2);
      assert.equal(world.players.size, 1);
    });

    it(`a dropped player lingers ${RECONNECT_SECONDS} s, then leaves, is saved and its login closed`, async () => {
      const { player, conn } = join("dropper");
      player.loginId = "login-1";
      world.drop(player.id, conn.id);
      clock.t += (RECONNECT_SECONDS - 1) * 1000;
      world.step();
      assert.ok(world.players.has(player.id), "still there within the window");
      clock.t += 2_000;
      world.step();
      assert.ok(!world.players.has(player.id), "gone after the window");
      await world.queues.drain();
      assert.equal(repo.saves.at(-1)?.characterId, player.id);
      assert.ok(repo.saves.at(-1)?.items, "the leave save includes items");
      assert.deepEqual(repo.logouts, [{ loginId: "login-1", reason: "reconnect_timeout" }]);
    });

    it("a drop holding a reconnection seat is left to the seat: the tick does not end it, leave does", async () => {
      const { player, conn } = join("seated");
      world.drop(player.id, conn.id, true);
      clock.t += (RECONNECT_SECONDS + 5) * 1000;
      world.step();
      assert.ok(world.players.has(player.id), "the seat's timer, not the tick, ends the window");
      assert.equal(world.reconnect(player.id, conn), player);
      world.drop(player.id, conn.id, true);
      await world.leave(player.id, "reconnect_timeout", conn.id);
      assert.ok(!world.players.has(player.id));
    });

    it("a reconnect within the window keeps the player", () => {
      const { player, conn } = join("returner");
      world.drop(player.id, conn.id);
      clock.t += 5_000;
      const conn2 = new FakeConnection();
      world.join(record("returner"), conn2, 4009);
      clock.t += RECONNECT_SECONDS * 1000;
      world.step();
      assert.ok(world.players.has(player.id));
      assert.equal(player.dropped, undefined);
    });

    it("only the connection that dropped may reconnect, and only while nobody else plays the character", () => {
      const { player, conn } = join("racer");
      world.drop(player.id, conn.id);
      const stranger = new FakeConnection();
      assert.equal(world.reconnect(player.id, stranger), undefined, "another connection cannot resume the dropped one");
      // A fresh join in between: the old connection's reconnection is refused, the fresh one stays.
      const fresh = new FakeConnection();
      world.join(record("racer"), fresh, 4009);
      assert.equal(world.reconnect(player.id, conn), undefined);
      assert.equal(player.connection, fresh);
      assert.equal(fresh.closed, undefined);
      // The fresh connection drops too: it alone may come back, not the older one.
      world.drop(player.id, fresh.id);
      assert.equal(world.reconnect(player.id, conn), undefined);
      assert.equal(world.reconnect(player.id, fresh), player);
      assert.equal(player.connection, fresh);
      assert.equal(player.dropped, undefined);
      assert.equal(fresh.sent.at(-1)?.event, "player:sync", "the returning client is synced");
    });

    it("a stale connection's leave removes nothing; the dropped one's leave removes the player", async () => {
      const { player, conn } = join("leaver");
      world.drop(player.id, conn.id);
      const fresh = new FakeConnection();
      world.join(record("leaver"), fresh, 4009);
      await world.leave(player.id, "left", conn.id);
      assert.ok(world.players.has(player.id), "the replaced connection's leave keeps the player");
      world.drop(player.id, fresh.id);
      await world.leave(player.id, "left", conn.id);
      assert.ok(world.players.has(player.id), "an older connection's leave keeps the player waiting for the fresh one");
      await world.leave(player.id, "reconnect_timeout", fresh.id);
      assert.ok(!world.players.has(player.id));
    });
  });

  describe("persistence", () => {
    /** A tick as the room runs it: the step, then the periodic save when due (WorldRoom.onTick). */
    const tick = () => {
      world.step();
      world.saveIfDue();
    };

    it("saves changed players every SAVE_INTERVAL, and the tick never waits for storage", async () => {
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      const { player } = join("saver");
      handleMove(world, player, { x: 3, z: 0 });
      walk(player);
      assert.equal(repo.saves.length, 0);
      clock.t += 60_000;
      tick(); // queues the save; storage is stuck behind the gate
      const at = world.tick;
      for (let i = 0; i < 50; i++) tick();
      assert.equal(world.tick, at + 50, "ticks keep running while the save is pending");
      assert.equal(repo.saves.length, 0);
      open();
      await world.queues.drain();
      assert.equal(repo.saves.length, 1);
      assert.deepEqual({ x: repo.saves[0]!.x, z: repo.saves[0]!.z }, { x: 3, z: 0 });
      // Nothing changed since: the next interval saves nothing.
      clock.t += 60_000;
      tick();
      await world.queues.drain();
      assert.equal(repo.saves.length, 1);
    });

    it("a failed batched save is retried at the next interval", async () => {
      const { player } = join("retry");
      handleMove(world, player, { x: 2, z: 0 });
      walk(player);
      repo.failSaves = true;
      clock.t += 60_000;
      tick();
      await world.queues.drain();
      assert.equal(repo.saves.length, 0);
      repo.failSaves = false;
      clock.t += 60_000;
      tick();
      await world.queues.drain();
      assert.equal(repo.saves.length, 1);
    });

    it("an immediate item transaction changes memory only after it commits, one at a time", async () => {
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      const { player, conn } = join("banker");
      const first = world.commitItems(player, () => ({ coins: 500 }));
      assert.equal(player.coins, 25, "not before the commit");
      assert.equal(player.itemsLocked, true);
      assert.equal(await world.commitItems(player, () => ({ coins: 1 })), false, "a second transaction waits its turn");
      assert.match(conn.systemLines().at(-1)!, /wait/);
      open();
      assert.equal(await first, true);
      assert.equal(player.coins, 500);
      assert.equal(repo.saves.at(-1)?.coins, 500);
      assert.equal(conn.sent.at(-1)?.event, "player:sync");
    });

    it("a failed immediate transaction changes nothing and says so", async () => {
      const { player, conn } = join("unlucky");
      repo.failSaves = true;
      assert.equal(await world.commitItems(player, () => ({ coins: 999 })), false);
      assert.equal(player.coins, 25);
      assert.equal(player.itemsLocked, false);
      assert.match(conn.systemLines().at(-1)!, /nothing changed/);
    });
  });

  describe("dropping items (the drop commits before anyone can take the pile)", () => {
    const storedItemIds = (s: ProgressSnapshot | undefined) => s?.items?.inventory.map((i) => i.itemId) ?? [];
    const slotOf = (p: Player, itemId: string) => p.inventory.findIndex((s) => s?.itemId === itemId);
    const pickUp = async (p: Player, groundId: string) => {
      await handleAction(world, p, { action: "pickup", targetId: groundId });
      for (let i = 0; i < 10 && p.action; i++) world.step();
      // The pickup commits at once, in the player's storage queue.
      await world.queues.drain();
    };

    it("the pile appears only once the dropper's stored row no longer holds the item; the tick runs meanwhile; a second drop waits", async () => {
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      const a = join("dropper-a");
      const b = join("taker-b");
      const axe = slotOf(a.player, "bronze_axe");
      const dropping = handleInventoryUse(world, a.player, { slot: axe, targetId: "drop" });
      // Storage is stuck: far past the privacy window, the other player finds nothing to take.
      const tick = world.tick;
      for (let i = 0; i <= GROUND_ITEM_PRIVATE_TICKS; i++) world.step();
      assert.equal(world.tick, tick + GROUND_ITEM_PRIVATE_TICKS + 1, "ticks keep running while the drop commits");
      assert.equal(world.groundItems.size, 0, "nothing on the ground before the drop is committed");
      assert.equal(world.visibleFor(b.player).groundItems.size, 0);
      assert.equal(slotOf(a.player, "bronze_axe"), axe, "memory still holds the axe until the commit");
      await handleInventoryUse(world, a.player, { slot: axe, targetId: "drop" });
      assert.match(a.conn.systemLines().at(-1)!, /wait/, "the same stack can't be dropped twice while it commits");
      open();
      await dropping;
      await world.queues.drain();
      assert.equal(repo.saves.length, 1, "one transaction: the drop");
      assert.ok(!storedItemIds(repo.saves[0]).includes("bronze_axe"), "stored without the axe");
      assert.ok(storedItemIds(repo.saves[0]).includes("bronze_pickaxe"), "and with the rest");
      assert.equal(slotOf(a.player, "bronze_axe"), -1);
      assert.equal(a.player.itemsDirty, false, "nothing left for the batched save");
      const piles = [...world.groundItems.values()];
      assert.deepEqual(
        piles.map((g) => ({ itemId: g.itemId, quantity: g.quantity, x: g.x, z: g.z, ownerId: g.ownerId })),
        [{ itemId: "bronze_axe", quantity: 1, x: 0, z: 0, ownerId: a.player.id }],
      );
      // Private to the dropper first, counted from when it appeared; then anyone's.
      assert.equal(world.visibleFor(b.player).groundItems.size, 0);
      for (let i = 0; i < GROUND_ITEM_PRIVATE_TICKS; i++) world.step();
      await pickUp(b.player, piles[0]!.id);
      assert.notEqual(slotOf(b.player, "bronze_axe"), -1, "B took it");
      assert.equal(world.groundItems.size, 0);
    });

    it("a drop whose commit fails changes nothing: the stack stays in the inventory, nothing goes on the ground, the player is told", async () => {
      const a = join("dropper-fail");
      repo.failSaves = true;
      const axe = slotOf(a.player, "bronze_axe");
      await handleInventoryUse(world, a.player, { slot: axe, targetId: "drop" });
      assert.equal(world.groundItems.size, 0);
      assert.equal(slotOf(a.player, "bronze_axe"), axe);
      assert.equal(a.player.itemsLocked, false);
      assert.match(a.conn.systemLines().at(-1)!, /nothing changed/);
      assert.equal(
        a.conn.sent
          .filter((s) => s.event === "player:sync")
          .at(-1)!
          .data.inventory.some((i: any) => i.itemId === "bronze_axe"),
        true,
      );
    });
  });

  describe("death", () => {
    const itemsOf = (p: Player) =>
      p.inventory
        .filter(Boolean)
        .map((s) => s!.itemId)
        .sort();

    it("takes the lock, keeps the 3 most valuable items, drops the rest where it died, respawns in town, resolves the lock", async () => {
      const { player, conn } = join("victim", { x: 0, z: 100 });
      world.killPlayer(player, "npc:ash_bandit:0");
      assert.equal(player.dead, true, "dead at once");
      world.killPlayer(player, "npc:ash_bandit:0"); // a second death while the first is open
      await until(() => conn.systemLines().some((l) => /you are dead/.test(l)), "respawn message");
      assert.equal(repo.deaths.length, 1, "one death lock");
      const d = repo.deaths[0]!;
      assert.equal(d.resolved, true);
      assert.deepEqual(itemsOf(player), ["bread", "bronze_axe", "bronze_pickaxe"]);
      assert.deepEqual(d.items.dropped.map((i) => `${i.itemId}×${i.quantity}`).sort(), ["shrimp×2", "small_fishing_net×1", "tinderbox×1"]);
      const ground = [...world.groundItems.values()];
      assert.deepEqual(ground.map((g) => `${g.itemId}×${g.quantity}`).sort(), ["shrimp×2", "small_fishing_net×1", "tinderbox×1"]);
      assert.ok(ground.every((g) => g.x === 0 && g.z === 100 && g.ownerId === player.id));
      assert.deepEqual({ x: player.x, z: player.z, health: player.health, dead: player.dead }, { x: 0, z: 0, health: 100, dead: false });
      assert.deepEqual({ x: d.after.x, z: d.after.z }, { x: 0, z: 0 }, "the respawn is written with the lock");
      assert.equal(d.after.items?.inventory.length, 3);
    });

    /** Alive, in town, at full health. */
    const respawned = (p: Player) => ({ x: p.x, z: p.z, health: p.health, dead: p.dead });
    const RESPAWNED = { x: 0, z: 0, health: 100, dead: false };

    it("a death lock that is already open changes nothing: no items lost or duplicated; the player still respawns", async () => {
      const { player, conn } = join("twice-dead", { x: 0, z: 100 });
      repo.deaths.push({ id: "old", characterId: player.id, items: { dropped: [], kept: [] }, after: player.snapshot(true), resolved: false });
      const before = itemsOf(player);
      player.health = 0;
      world.killPlayer(player, "npc:ash_bandit:0");
      await until(() => conn.systemLines().some((l) => /you are dead/.test(l)), "respawn message");
      assert.deepEqual(itemsOf(player), before);
      assert.equal(world.groundItems.size, 0);
      assert.equal(repo.deaths.length, 1);
      assert.deepEqual(respawned(player), RESPAWNED, "not left alive with 0 health");
    });

    it("a failed death transaction restores the items and drops nothing; the player respawns", async () => {
      const { player, conn } = join("crash-dead", { x: 0, z: 100 });
      repo.failDeath = true;
      const before = itemsOf(player);
      player.health = 0;
      world.killPlayer(player, "npc:ash_bandit:0");
      await until(() => conn.systemLines().some((l) => /you are dead/.test(l)), "respawn message");
      assert.deepEqual(itemsOf(player), before);
      assert.equal(world.groundItems.size, 0);
      assert.deepEqual(respawned(player), RESPAWNED);
    });

    it("a lock that fails to resolve keeps the dropped items off the ground until a later tick resolves it", async () => {
      const { player, conn } = join("slow-resolve", { x: 0, z: 100 });
      repo.failResolves = 2;
      world.killPlayer(player, "npc:ash_bandit:0");
      await until(() => conn.systemLines().some((l) => /you are dead/.test(l)), "respawn message");
      await until(() => repo.resolveResults.length === 1, "first resolve attempt");
      assert.deepEqual(respawned(player), RESPAWNED, "the player respawns at once");
      assert.deepEqual(itemsOf(player), ["bread", "bronze_axe", "bronze_pickaxe"]);
      assert.equal(world.groundItems.size, 0, "nothing on the ground while the lock is open");
      assert.equal(repo.deaths[0]!.resolved, false);
      for (let i = 0; i < 40 && !repo.resolveResults.includes(true); i++) {
        world.step();
        await new Promise((r) => setImmediate(r));
      }
      await until(() => world.groundItems.size > 0, "items on the ground");
      assert.deepEqual(repo.resolveResults, ["failed", "failed", true]);
      assert.equal(repo.deaths[0]!.resolved, true);
      assert.deepEqual([...world.groundItems.values()].map((g) => `${g.itemId}×${g.quantity}`).sort(), ["shrimp×2", "small_fishing_net×1", "tinderbox×1"]);
      for (let i = 0; i < 100; i++) world.step();
      await new Promise((r) => setImmediate(r));
      assert.equal(repo.resolveResults.length, 3, "no more attempts once resolved");
      assert.equal(world.groundItems.size, 3, "dropped once");
    });

    it("a lock the bank recovery closed first: the retried resolve drops nothing (items in the bank, never also on the ground)", async () => {
      const { player, conn } = join("recovered", { x: 0, z: 100 });
      repo.failResolves = 1;
      world.killPlayer(player, "npc:ash_bandit:0");
      await until(() => conn.systemLines().some((l) => /you are dead/.test(l)), "respawn message");
      await until(() => repo.resolveResults.length === 1, "first resolve attempt");
      // The player leaves and joins again while the lock is open: recovery gives the items to the bank.
      assert.equal((await repo.recoverOpenDeath(player.id)).restored, 3);
      for (let i = 0; i < 40 && repo.resolveResults.length < 2; i++) {
        world.step();
        await new Promise((r) => setImmediate(r));
      }
      await until(() => repo.resolveResults.length === 2, "second resolve attempt");
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(repo.resolveResults, ["failed", false]);
      assert.equal(world.groundItems.size, 0);
    });

    it("a player who leaves during its death transaction is not put back in the world; its death still resolves and its save is the respawn", async () => {
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      const { player, conn } = join("leaves-dead", { x: 0, z: 100 });
      const { player: witness } = join("witness", { x: 1, z: 100 });
      world.killPlayer(player, "npc:ash_bandit:0");
      const leaving = world.leave(player.id, "left");
      open();
      await leaving;
      await until(() => world.groundItems.size > 0, "the dropped items on the ground");
      assert.ok(!world.visibleFor(witness).players.has(player.id), "no ghost in view of the witness");
      assert.ok(![...world.viewersOf(0, 0)].some((p) => p.id === player.id), "no ghost in the grid at the respawn");
      assert.ok(!conn.systemLines().some((l) => /you are dead/.test(l)), "the gone player is not told it respawned");
      assert.equal(repo.deaths[0]!.resolved, true);
      const last = repo.saves.at(-1)!;
      assert.deepEqual({ id: last.characterId, x: last.x, z: last.z, health: last.health }, { id: player.id, x: 0, z: 0, health: 100 }, "saved respawned");
    });

    it("item transactions are refused while the death transaction runs", async () => {
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      const { player } = join("locked-dead", { x: 0, z: 100 });
      world.killPlayer(player, "npc:ash_bandit:0");
      assert.equal(player.dead, true);
      assert.equal(await world.commitItems(player, () => ({ coins: 1 })), false);
      open();
      await until(() => !player.dead, "respawn");
      assert.equal(player.coins, 25);
    });
  });

  describe("leaving together", () => {
    it(`players who leave together are saved ${LEAVE_GROUP_MAX} to a transaction, ${LEAVE_GROUP_PARALLEL} at once; each leave resolves once it is written`, async () => {
      let open!: () => void;
      repo.saveGate = new Promise((r) => (open = r));
      const N = 2 * LEAVE_GROUP_MAX + 50;
      const players = Array.from({ length: N }, (_, i) => join(`g${i}`).player);
      players.forEach((p, i) => (p.loginId = `g${i}`));
      const batches = leaveBatchesInFlight();
      // A player with storage work queued joins a group once that work is done.
      let release!: () => void;
      const busy = players[0]!;
      void world.queues.run(busy.id, () => new Promise<void>((r) => (release = r)));
      const resolved = new Set<string>();
      const leaves = players.map((p) => world.leave(p.id, "logout").then(() => resolved.add(p.id)));
      assert.equal(world.players.size, 0, "every player is out of the world at once");
      await until(() => batches.now === LEAVE_GROUP_PARALLEL, "groups in flight");
      assert.equal(resolved.size, 0, "no leave resolves before its save is written");
      open();
      await until(() => repo.leaveBatches.length === 3, "every group written");
      assert.ok(!repo.saves.some((x) => x.characterId === busy.id), "the busy player waits for its queued work");
      assert.ok(!resolved.has(busy.id));
      release();
      await Promise.all(leaves);
      assert.equal(batches.max, LEAVE_GROUP_PARALLEL, "a bounded number of groups at once");
      assert.deepEqual(
        repo.leaveBatches.map((b) => b.length),
        [LEAVE_GROUP_MAX, LEAVE_GROUP_MAX, N - 1 - 2 * LEAVE_GROUP_MAX, 1],
      );
      assert.deepEqual(repo.leaveBatches.at(-1), [busy.id], "the busy player, in a group of its own after its work");
      assert.deepEqual(repo.saves.map((x) => x.characterId).sort(), players.map((p) => p.id).sort(), "each player saved once");
      assert.ok(
        repo.saves.every((x) => x.items),
        "with items",
      );
      assert.deepEqual(repo.logouts.map((l) => l.loginId).sort(), players.map((p) => p.loginId).sort());
      assert.ok(repo.logouts.every((l) => l.reason === "logout"));
    });

    it("a leave group that fails: its players are saved one at a time, and their leaves resolve when they are", async () => {
      const players = Array.from({ length: 5 }, (_, i) => join(`h${i}`).player);
      repo.saveLeaving = async () => {
        throw new Error("a row the group can't write");
      };
      await Promise.all(players.map((p) => world.leave(p.id, "logout")));
      assert.deepEqual(repo.saves.map((x) => x.characterId).sort(), players.map((p) => p.id).sort());
    });

    it("a leave the tick starts whose save fails is logged by its queue, not left as an unhandled rejection", async () => {
      const unhandled: unknown[] = [];
      const onUnhandled = (e: unknown) => unhandled.push(e);
      process.on("unhandledRejection", onUnhandled);
      try {
        const { player, conn } = join("quitter");
        world.drop(player.id, conn.id);
        player.leaving = "logout";
        repo.failSaves = true;
        world.step();
        assert.ok(!world.players.has(player.id), "the tick took the player out");
        await world.queues.drain();
        await new Promise((r) => setImmediate(r));
        assert.deepEqual(unhandled, []);
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
    });

    it("a leave whose save fails alone too rejects, and the player is not told left", async () => {
      const { player } = join("nowhere");
      const left: string[] = [];
      world.events.on("playerLeft", (id) => left.push(id));
      repo.failSaves = true;
      await assert.rejects(world.leave(player.id, "logout"));
      assert.deepEqual(left, []);
    });
  });

  describe("shutdown", () => {
    it("leaveAll saves every player exactly once and closes its login, a batch a transaction, a bounded number at once", async () => {
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      const N = 45;
      const players = Array.from({ length: N }, (_, i) => join(`p${i}`).player);
      players.forEach((p, i) => (p.loginId = `s${i}`));
      const batches = leaveBatchesInFlight();
      // A player with storage work queued is saved alone, after that work.
      let release!: () => void;
      const busy = players[0]!;
      void world.queues.run(busy.id, () => new Promise<void>((r) => (release = r)));
      const done = world.leaveAll("server_shutdown", 10, 2);
      assert.equal(world.players.size, 0, "everyone is out of the world at once");
      await until(() => batches.now === 2, "two batches in flight");
      open();
      await until(() => repo.leaveBatches.length === 5, "every batch written");
      assert.ok(!repo.saves.some((x) => x.characterId === busy.id), "the busy player waits for its queued work");
      release();
      await done;
      assert.equal(batches.max, 2, "at most `parallel` batches at once");
      assert.deepEqual(
        repo.leaveBatches.map((b) => b.length),
        [10, 10, 10, 10, 4],
      );
      assert.deepEqual(repo.saves.map((x) => x.characterId).sort(), players.map((p) => p.id).sort(), "each player saved once");
      assert.ok(
        repo.saves.every((x) => x.items),
        "with items",
      );
      assert.equal(repo.logouts.length, N);
      assert.ok(repo.logouts.every((c) => c.reason === "server_shutdown"));
    });

    it("a shutdown batch that fails: its players are saved one at a time", async () => {
      const players = Array.from({ length: 5 }, (_, i) => join(`f${i}`).player);
      repo.saveLeaving = async () => {
        throw new Error("a row the batch can't write");
      };
      await world.leaveAll("server_shutdown", 10, 2);
      assert.deepEqual(repo.saves.map((x) => x.characterId).sort(), players.map((p) => p.id).sort());
    });
  });

  describe("chasing an attack target", () => {
    /** A chicken that neither wanders nor fights back, at a tile the test chooses. */
    const placeChicken = (at: { x: number; z: number }) => {
      const npc = world.npcs.get(world.npcIdsOf("chicken")[0]!)!;
      Object.assign(npc, { def: { ...npc.def, aggressive: false, wanderRadius: 0 }, x: at.x, z: at.z, spawn: at, health: 10_000, maxHealth: 10_000 });
      return npc;
    };
    /** Count the world's path computations. */
    const countPaths = () => {
      const counter = { n: 0 };
      const pathTo = world.movement.pathTo.bind(world.movement);
      world.movement.pathTo = (...args: Parameters<World["movement"]["pathTo"]>) => {
        counter.n++;
        return pathTo(...args);
      };
      return counter;
    };

    it("a static target is pathed to once", () => {
      const npc = placeChicken({ x: 8, z: 3 });
      const { player } = join("chaser", { x: 0, z: 3 });
      const paths = countPaths();
      player.action = { kind: "attack", targetId: npc.id };
      for (let i = 0; i < 20; i++) world.step();
      assert.ok(chebyshev(player, npc) <= 1, "reached the target");
      assert.equal(paths.n, 1);
    });

    it("a moving target is pathed to again only on the ticks it moved", () => {
      const npc = placeChicken({ x: 12, z: 3 });
      const { player } = join("follower", { x: 0, z: 3 });
      const paths = countPaths();
      player.action = { kind: "attack", targetId: npc.id };
      world.step();
      assert.equal(paths.n, 1);
      for (let i = 0; i < 3; i++) world.step();
      assert.equal(paths.n, 1, "target still: no new path");
      npc.x += 1;
      world.step();
      assert.equal(paths.n, 2, "target moved: one new path");
      world.step();
      world.step();
      assert.equal(paths.n, 2);
      npc.z += 1;
      world.step();
      assert.equal(paths.n, 3);
    });

    it("an unreachable target is not searched for every tick: the chaser gives up and says so", () => {
      // A tile inside a building whose eight neighbours are blocked too.
      let inside: { x: number; z: number } | undefined;
      for (let x = -40; x <= 40 && !inside; x++)
        for (let z = -40; z <= 40 && !inside; z++) {
          let enclosed = true;
          for (let dx = -1; dx <= 1; dx++) for (let dz = -1; dz <= 1; dz++) enclosed &&= content.isBlocked(x + dx, z + dz);
          if (enclosed) inside = { x, z };
        }
      assert.ok(inside, "the content has a building at least 3 tiles wide");
      const npc = placeChicken(inside);
      let start = { x: inside.x, z: inside.z };
      for (let r = 2; content.isBlocked(start.x, start.z); r++) start = { x: inside.x + r, z: inside.z };
      const { player, conn } = join("stuck", { x: start.x + 3, z: start.z });
      const paths = countPaths();
      player.action = { kind: "attack", targetId: npc.id };
      for (let i = 0; i < 60; i++) world.step();
      assert.equal(player.action, null, "gave up");
      assert.ok(paths.n <= 3, `searched ${paths.n} times in 60 ticks`);
      assert.ok(conn.systemLines().some((l) => /can't reach/.test(l)));
    });

    it("standing on the target's tile: steps off and fights", () => {
      const npc = placeChicken({ x: 5, z: 3 });
      const { player, conn } = join("overlap", { x: 5, z: 3 });
      player.action = { kind: "attack", targetId: npc.id };
      for (let i = 0; i < 5; i++) world.step();
      assert.equal(chebyshev(player, npc), 1);
      assert.ok(
        conn.sent.some((s) => s.event === "combat:hit"),
        "attacked from the next tile",
      );
    });

    it("standing on the target's tile with its four straight neighbours blocked: no corner is cut to a diagonal; it can't reach", () => {
      const walls = new Set(["6,3", "4,3", "5,4", "5,2"]);
      const walled = Object.create(content, { isBlocked: { value: (x: number, z: number) => walls.has(`${x},${z}`) || content.isBlocked(x, z) } });
      world = new World({
        content: walled,
        characters: repo,
        logger: createLogger("silent"),
        saveIntervalSeconds: 60,
        checkAdminCode: () => "wrong",
        rng: () => 0.5,
        now: () => clock.t,
      });
      const npc = placeChicken({ x: 5, z: 3 });
      const { player, conn } = join("boxed", { x: 5, z: 3 });
      player.action = { kind: "attack", targetId: npc.id };
      world.step();
      assert.deepEqual(player.tile, { x: 5, z: 3 }, "did not squeeze between two blocked tiles");
      assert.equal(player.action, null);
      assert.ok(conn.systemLines().some((l) => /can't reach/.test(l)));
    });
  });

  describe("NPC coin drops", () => {
    /**
     * A world whose rng makes every attack hit for its maximum (hit roll 0.01, damage roll 0.99),
     * and a chicken that always drops 50 coins, one hit from death, next to the player.
     */
    const setup = (id: string) => {
      let n = 0;
      world = new World({
        content,
        characters: repo,
        logger: createLogger("silent"),
        saveIntervalSeconds: 60,
        checkAdminCode: () => "wrong",
        rng: () => (n++ % 2 === 0 ? 0.01 : 0.99),
        now: () => clock.t,
      });
      const npc = world.npcs.get(world.npcIdsOf("chicken")[0]!)!;
      Object.assign(npc, {
        def: { ...npc.def, aggressive: false, wanderRadius: 0, drops: { always: [{ itemId: "coins", quantity: 50 }], table: [], rolls: 0, nothingWeight: 0 } },
      });
      npc.health = 1;
      const { player, conn } = join(id, { x: npc.x + 1, z: npc.z });
      return { npc, player, conn };
    };
    const kill = (p: Player, npc: { id: string; respawnTick?: number }) => {
      p.action = { kind: "attack", targetId: npc.id };
      for (let i = 0; i < 10 && npc.respawnTick === undefined; i++) world.step();
      assert.notEqual(npc.respawnTick, undefined, "the chicken died");
    };
    const groundCoins = () => [...world.groundItems.values()].filter((g) => g.itemId === "coins");
    const pickUp = async (p: Player, groundId: string) => {
      await handleAction(world, p, { action: "pickup", targetId: groundId });
      for (let i = 0; i < 10 && p.action; i++) world.step();
      // The pickup commits at once, in the player's storage queue.
      await world.queues.drain();
    };

    it("coins go to the killer's coins when it can hold them", () => {
      const { npc, player } = setup("rich");
      kill(player, npc);
      assert.equal(player.coins, 75);
      assert.equal(groundCoins().length, 0);
    });

    it("at the coin cap the coins drop to the ground; picking them up is all-or-nothing against the cap", async () => {
      const { npc, player, conn } = setup("capped");
      player.coins = MAX_STACK - 10;
      kill(player, npc);
      assert.equal(player.coins, MAX_STACK - 10, "nothing credited past the cap");
      const [pile] = groundCoins();
      assert.ok(pile, "the coins lie on the ground");
      assert.deepEqual(
        { quantity: pile.quantity, x: pile.x, z: pile.z, owner: pile.ownerId },
        { quantity: 50, x: npc.spawn.x, z: npc.spawn.z, owner: player.id },
      );
      await pickUp(player, pile.id);
      assert.equal(player.coins, MAX_STACK - 10);
      assert.ok(world.groundItems.has(pile.id), "still on the ground");
      assert.ok(conn.systemLines().some((l) => /can't carry that many coins/.test(l)));
      player.coins = 100;
      await pickUp(player, pile.id);
      assert.equal(player.coins, 150);
      assert.ok(!world.groundItems.has(pile.id));
      assert.equal(player.itemsDirty, false, "the pickup committed at once");
      assert.equal(repo.saves.at(-1)?.coins, 150, "with the coins");
      assert.equal(conn.sent.filter((s) => s.event === "player:sync").at(-1)!.data.coins, 150);
    });

    it("while the killer's items are in a transaction the coins drop to the ground instead of vanishing", async () => {
      const { npc, player } = setup("busy");
      player.safety.lock();
      kill(player, npc);
      assert.equal(player.coins, 25);
      const [pile] = groundCoins();
      assert.equal(pile?.quantity, 50);
      player.safety.unlock();
      await pickUp(player, pile!.id);
      assert.equal(player.coins, 75);
      assert.equal(groundCoins().length, 0);
    });
  });

  describe("NPCs", () => {
    it("an aggressive NPC attacks a player outside the safe town, who fights back", () => {
      const goblin = world.npcs.get(world.npcIdsOf("goblin")[0]!)!;
      const { player, conn } = join("bait", { x: goblin.x + 2, z: goblin.z });
      for (let i = 0; i < 40 && !conn.sent.some((s) => s.event === "combat:hit" && s.data.attackerId === goblin.id); i++) world.step();
      const hit = conn.sent.find((s) => s.event === "combat:hit" && s.data.attackerId === goblin.id);
      assert.ok(hit, "the goblin attacked");
      assert.equal(hit.data.targetId, player.id);
      assert.deepEqual(player.action, { kind: "attack", targetId: goblin.id });
    });

    it("nothing attacks a player standing in the safe town", () => {
      const { conn } = join("safe", { x: 0, z: 0 });
      for (let i = 0; i < 100; i++) world.step();
      assert.equal(conn.sent.filter((s) => s.event === "combat:hit").length, 0);
    });
  });

  describe("visibility", () => {
    it(`sees players up to ${VIEW_RADIUS} tiles away and no farther`, () => {
      const { player } = join("watcher", { x: 0, z: 0 });
      const near = join("near", { x: VIEW_RADIUS, z: -VIEW_RADIUS }).player;
      const far = join("far-away", { x: VIEW_RADIUS + 1, z: 0 }).player;
      const v = world.visibleFor(player);
      assert.ok(v.players.has(player.id));
      assert.ok(v.players.has(near.id));
      assert.ok(!v.players.has(far.id));
    });

    it(`what it tracks stays in view up to ${VIEW_RADIUS + VIEW_LEAVE_MARGIN} tiles away and leaves past that; nothing new comes in past ${VIEW_RADIUS}`, () => {
      const { player } = join("keeper", { x: 0, z: 0 });
      const tracked = join("tracked", { x: VIEW_RADIUS, z: 0 }).player;
      const untracked = join("untracked", { x: -VIEW_RADIUS - 1, z: 0 }).player;
      let v = world.visibleFor(player);
      assert.ok(v.players.has(tracked.id) && !v.players.has(untracked.id));
      for (const [x, kept] of [
        [VIEW_RADIUS + 1, true],
        [VIEW_RADIUS + VIEW_LEAVE_MARGIN, true],
        [VIEW_RADIUS + VIEW_LEAVE_MARGIN + 1, false],
        [VIEW_RADIUS + 1, false],
        [VIEW_RADIUS, true],
      ] as const) {
        world.movement.teleport(tracked, x, 0);
        v = world.visibleFor(player, undefined, v);
        assert.equal(v.players.has(tracked.id), kept, `at ${x} tiles`);
        assert.ok(!v.players.has(untracked.id), "never tracked: not beyond the view radius");
      }
    });

    it("what is visible does not depend on how many players are far away", () => {
      const { player } = join("center", { x: 0, z: 0 });
      const before = world.visibleFor(player);
      for (let i = 0; i < 200; i++) join(`crowd-${i}`, { x: 100 + (i % 20), z: -100 + Math.floor(i / 20) });
      const after = world.visibleFor(player);
      assert.deepEqual([...after.players], [...before.players]);
    });
  });
});
