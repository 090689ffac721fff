/**
 * Ranged combat and prayers on the real World with fake storage, a fake clock and scripted draws
 * (docs/combat.md): a shot from a distance uses one arrow and gives ranged XP; a recovered arrow
 * lands under the target only after its removal committed; the refusals (no ammunition, out of
 * range, no line of sight, ammunition above the level); a ranged NPC shoots from a distance and a
 * protection prayer turns its hits aside; prayers switch on, drain with time, switch off at zero,
 * recharge at the altar and switch off on death.
 */
import assert from "node:assert/strict";
import type { CharacterRecord } from "../../../src/world/ports/character-store.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { xpForLevel } from "../../../src/domain/xp.js";
import { createLogger } from "../../../src/logger.js";
import { handleAction, handleInventoryUse } from "../../../src/world/actions.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { FakeCharacterStore } from "../../helpers/fake-store.js";
import { characterRecord, until } from "../../helpers/records.js";

class FakeConnection implements Connection {
  static n = 0;
  readonly id = `ranged-conn-${++FakeConnection.n}`;
  readonly kind = "json" as const;
  sent: { event: string; data: any }[] = [];
  send(event: string, data: unknown) {
    this.sent.push({ event, data });
  }
  close() {}
}

describe("ranged combat and prayers in the world (fake storage, fake clock)", () => {
  let content: GameContent;
  let repo: FakeCharacterStore;
  let clock: { t: number };
  let world: World;
  let draws: number[];

  before(async () => {
    content = await loadContent("world/manifests");
  });
  beforeEach(() => {
    repo = new FakeCharacterStore();
    clock = { t: 1_000_000 };
    draws = [];
    world = new World({
      content,
      characters: repo,
      logger: createLogger("silent"),
      saveIntervalSeconds: 600,
      checkAdminCode: () => "wrong",
      // Scripted draws first; then 0.5 (NPCs stay where they stand, arrows break).
      rng: () => draws.shift() ?? 0.5,
      now: () => clock.t,
    });
  });

  const join = (
    id: string,
    at: { x: number; z: number },
    o: { levels?: Record<string, number>; equipment?: CharacterRecord["equipment"]; prayer?: { points: number; active: string } } = {},
  ) => {
    const rec = characterRecord(id, { at });
    const c = rec.character as unknown as Record<string, unknown>;
    for (const [skill, level] of Object.entries(o.levels ?? {})) c[`${skill}Xp`] = xpForLevel(level);
    if (o.prayer) Object.assign(c, { prayerPoints: o.prayer.points, activePrayers: o.prayer.active });
    rec.equipment = o.equipment ?? {};
    const conn = new FakeConnection();
    const { player } = world.join(rec, conn, 4009);
    return { player, conn };
  };
  const bow = (arrows = 10, arrow = "bronze_arrow"): CharacterRecord["equipment"] => ({
    weapon: { itemId: "shortbow", quantity: 1 },
    ammo: { itemId: arrow, quantity: arrows },
  });
  const codes = (conn: FakeConnection, since = 0) =>
    conn.sent
      .slice(since)
      .filter((s) => s.event === "chat:message" && s.data.code)
      .map((s) => s.data.code as string);
  const act = (p: Player, action: string, targetId: string) => handleAction(world, p, { action, targetId } as never);
  const chicken = () => world.npcs.get(world.npcIdsOf("chicken")[0]!)!;

  describe("ranged", () => {
    it("shoots a chicken from five tiles: one arrow a shot, ranged and constitution XP, no walking", async () => {
      const c = chicken();
      const at = { x: c.x - 5, z: c.z };
      const { player, conn } = join("archer", at, { equipment: bow(10) });
      await act(player, "attack", c.id);
      assert.deepEqual(codes(conn), []);
      draws = [0.01, 0.5, 0.9]; // hits, for 5 of its max 10; the arrow breaks
      world.step();
      const hit = conn.sent.find((s) => s.event === "combat:hit")!.data;
      assert.deepEqual([hit.attackerId, hit.targetId, hit.damage], [player.id, c.id, 5]);
      assert.deepEqual(player.equipment.ammo, { itemId: "bronze_arrow", quantity: 9 });
      assert.deepEqual({ x: player.x, z: player.z }, at, "shot from where it stood");
      assert.equal(player.skills.ranged.xp, 20);
      assert.equal(player.skills.constitution.xp, xpForLevel(10) + 7);
      assert.equal(player.skills.attack.xp, 0);
      assert.equal(world.groundItems.size, 0, "the arrow broke");
    });

    it("a recovered arrow lands under the target, private to the shooter, only after its removal committed", async () => {
      const c = chicken();
      const { player } = join("keeper", { x: c.x - 4, z: c.z }, { equipment: bow(3) });
      const under = { x: c.x, z: c.z };
      await act(player, "attack", c.id);
      let open!: () => void;
      repo.gate = new Promise((r) => (open = r));
      draws = [0.99, 0.1]; // a miss; the arrow lands
      world.step();
      assert.equal(world.groundItems.size, 0, "nothing on the ground before the commit");
      assert.equal(player.itemsLocked, true);
      open();
      await until(() => world.groundItems.size === 1, "the pile after the commit");
      const pile = [...world.groundItems.values()][0]!;
      assert.deepEqual(
        { itemId: pile.itemId, quantity: pile.quantity, x: pile.x, z: pile.z, ownerId: pile.ownerId },
        { itemId: "bronze_arrow", quantity: 1, ...under, ownerId: player.id },
      );
      const saved = repo.saves.at(-1)!;
      assert.deepEqual(saved.items?.equipment.ammo, { itemId: "bronze_arrow", quantity: 2 }, "the commit wrote one arrow fewer");
      assert.deepEqual(player.equipment.ammo, { itemId: "bronze_arrow", quantity: 2 });
    });

    it("arrows picked up go back on the worn stack", async () => {
      const rec = { x: 3, z: 3 };
      const { player } = join("restock", rec, { equipment: bow(4) });
      player.inventory = [{ slot: 0, itemId: "bronze_arrow", quantity: 3 }, ...player.inventory.slice(1)];
      await handleInventoryUse(world, player, { slot: 0 });
      assert.deepEqual(player.equipment.ammo, { itemId: "bronze_arrow", quantity: 7 });
      assert.equal(player.inventory[0], null);
    });

    it("stops with OUT_OF_AMMO when the last arrow is gone", async () => {
      const c = chicken();
      const { player, conn } = join("last", { x: c.x - 3, z: c.z }, { equipment: bow(1) });
      await act(player, "attack", c.id);
      draws = [0.99, 0.9];
      world.step();
      assert.equal(player.equipment.ammo, undefined);
      while (player.nextAttackTick > world.tick) world.step();
      world.step();
      assert.deepEqual(codes(conn), ["OUT_OF_AMMO"]);
    });

    it("refuses without arrows, out of range, without a line of sight, and ammunition above the level", async () => {
      const c = chicken();
      const cases: [string, { x: number; z: number }, CharacterRecord["equipment"], string][] = [
        ["no arrows", { x: c.x - 3, z: c.z }, { weapon: { itemId: "shortbow", quantity: 1 } }, "OUT_OF_AMMO"],
        ["eight tiles", { x: c.x - 8, z: c.z }, bow(), "OUT_OF_RANGE"],
        ["iron arrows at ranged 1", { x: c.x - 3, z: c.z }, bow(5, "iron_arrow"), "LEVEL_TOO_LOW"],
      ];
      for (const [name, at, equipment, code] of cases) {
        const { player, conn } = join(`refused-${name.replace(/ /g, "-")}`, at, { equipment });
        await act(player, "attack", c.id);
        assert.deepEqual(codes(conn), [code], name);
        assert.equal(player.action, null, name);
      }
      // PvP across the Ashlands ruin (x -10..-5, z 90..95): seven tiles, the ruin between.
      const { player: a, conn } = join("west", { x: -11, z: 92 }, { equipment: bow() });
      const { player: b } = join("east", { x: -4, z: 92 });
      await act(a, "attack", b.id);
      assert.deepEqual(codes(conn), ["NO_LINE_OF_SIGHT"]);
      world.movement.teleport(a, -11, 97);
      world.movement.teleport(b, -4, 97);
      await act(a, "attack", b.id);
      assert.deepEqual(codes(conn), ["NO_LINE_OF_SIGHT"], "in the open: no new refusal");
      assert.deepEqual(a.action, { kind: "attack", targetId: b.id });
    });

    it("a goblin archer shoots from a distance; Ward of Arrows turns its hits aside", async () => {
      const archer = world.npcs.get(world.npcIdsOf("goblin_archer")[0]!)!;
      const { player, conn } = join("target", { x: archer.x + 4, z: archer.z }, { levels: { prayer: 40 } });
      archer.targetId = player.id;
      world.step(); // every draw 0.5: a hit for 10
      const first = conn.sent.filter((s) => s.event === "combat:hit").map((s) => s.data);
      assert.deepEqual(
        first.map((h) => [h.attackerId, h.damage]),
        [[archer.id, 10]],
      );
      assert.deepEqual({ x: archer.x, z: archer.z }, { x: player.x - 4, z: player.z }, "it did not walk up");
      player.action = null;
      await act(player, "pray", "ward_of_arrows");
      assert.equal(player.protection, "ranged");
      archer.nextAttackTick = 0;
      const since = conn.sent.length;
      world.step();
      const second = conn.sent.slice(since).filter((s) => s.event === "combat:hit" && s.data.targetId === player.id);
      assert.deepEqual(
        second.map((s) => s.data.damage),
        [0],
      );
    });
  });

  describe("prayers", () => {
    it("switch on at their level, drain with time, switch off at zero, recharge at the altar", async () => {
      const altar = content.stations.find((s) => s.type === "altar")!;
      const { player, conn } = join("pious", { x: altar.x, z: altar.z - 2 }, { levels: { prayer: 2 } });
      await act(player, "pray", "ember_grip");
      assert.deepEqual(codes(conn), ["LEVEL_TOO_LOW"]);
      await act(player, "pray", "nonsense");
      assert.deepEqual(codes(conn).at(-1), "UNKNOWN_PRAYER");
      await act(player, "pray", "bark_ward");
      assert.deepEqual(player.syncPayload().prayer, { points: 2, maxPoints: 2, active: ["bark_ward"] });
      world.step();
      for (let i = 0; i < 6; i++) {
        clock.t += 5_000; // 3 a minute: 1.5 points in 30 s
        world.step();
      }
      assert.ok(Math.abs(player.prayer.points - 0.5) < 1e-9);
      assert.deepEqual(conn.sent.filter((s) => s.event === "player:sync").at(-1)!.data.prayer, { points: 1, maxPoints: 2, active: ["bark_ward"] });
      clock.t += 5_000;
      world.step();
      clock.t += 5_000;
      world.step();
      assert.deepEqual(player.prayer, { points: 0, active: [] });
      assert.match(conn.sent.filter((s) => s.event === "chat:message").at(-1)!.data.text, /run out of prayer points/);
      await act(player, "pray", "bark_ward");
      assert.deepEqual(codes(conn).at(-1), "NO_PRAYER_POINTS");
      world.movement.teleport(player, altar.x + 10, altar.z - 8);
      await act(player, "pray", altar.id);
      assert.deepEqual(codes(conn).at(-1), "TOO_FAR");
      world.movement.teleport(player, altar.x, altar.z - 2);
      await act(player, "pray", altar.id);
      assert.equal(player.prayer.points, 2);
      await act(player, "pray", "bark_ward");
      await act(player, "unpray", "bark_ward");
      assert.deepEqual(player.prayer, { points: 2, active: [] });
    });

    it("a saved prayer comes back on join, its protection public; a death switches every prayer off", async () => {
      const { player } = join(
        "devout",
        { x: 100, z: 110 },
        { levels: { prayer: 40 }, prayer: { points: 12.5, active: "ward_of_blades,keen_edge,gone_prayer" } },
      );
      assert.deepEqual(player.prayer, { points: 12.5, active: ["ward_of_blades", "keen_edge"] });
      assert.equal(player.protection, "melee");
      const saved = player.snapshot(false).prayer;
      assert.deepEqual(saved, { points: 12.5, active: ["ward_of_blades", "keen_edge"] });
      world.killPlayer(player, "npc:goblin:0");
      assert.deepEqual({ prayer: player.prayer, protection: player.protection }, { prayer: { points: 12.5, active: [] }, protection: "" });
    });
  });
});
