/**
 * Ranged combat and prayers through both transports (real server, TICK_MS=50, PGlite), the issue's
 * "done when": a player given a shortbow and arrows trains ranged on chickens from a distance and
 * picks up the arrows that land; out of range, out of arrows and without a line of sight it is
 * told why with stable codes; a prayer switches on, its protection is public to others (SDK state
 * and `world:update`), the altar recharges it, and it is saved with the player (docs/combat.md).
 */
import assert from "node:assert/strict";
import { CharacterEntity } from "../../../entities/character.js";
import { xpForLevel } from "../../../src/domain/xp.js";
import type { GameServer } from "../../../src/server/server.js";
import { admin, becomeAdmin, closeAll, eventually, lastSync, RawPlayer, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

type Client = SdkPlayer | RawPlayer;

describe("ranged combat and prayers (SDK and /ws clients)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let clients: Client[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(clients);
    clients = [];
  });

  const join = async (kind: "sdk" | "json", opts: { accountId?: string; characterId?: string } = {}) => {
    const p = kind === "sdk" ? await SdkPlayer.join(server, opts) : await RawPlayer.connect(server, opts);
    clients.push(p);
    await becomeAdmin(p);
    return p;
  };
  /** Ground items as this client sees them (schema state or `world:update`). */
  const ground = (p: Client): any[] => (p instanceof SdkPlayer ? [...p.state.groundItems.values()] : [...p.world.groundItems.values()]);
  const slotOf = (p: Client, itemId: string) => (lastSync(p).inventory as { slot: number; itemId: string }[]).find((s) => s.itemId === itemId)!.slot;
  const ammo = (p: Client) => lastSync(p).equipment.ammo?.quantity ?? 0;
  /** Send an event and wait for the refusal code it causes. */
  const refusal = async (p: Client, event: string, data: unknown) => {
    const m = p.log.mark();
    p.send(event, data);
    return (await p.log.waitFor("chat:message", (c: any) => c.type === "system" && c.code !== undefined, { since: m })).code;
  };
  const equipBow = async (p: Client, arrows: number) => {
    await admin(p, "/give shortbow");
    await admin(p, `/give bronze_arrow ${arrows}`);
    for (const item of ["shortbow", "bronze_arrow"]) {
      const m = p.log.mark();
      p.send("inventory:use", { slot: slotOf(p, item) });
      await p.log.waitFor("player:sync", (s: any) => Object.values(s.equipment).some((e: any) => e.itemId === item), { since: m });
    }
  };
  /** Stand `dx` tiles west of a live chicken and return its id. */
  const besideChicken = async (p: Client, dx: number) => {
    const chicken = server.world
      .npcIdsOf("chicken")
      .map((id) => server.world.npcs.get(id)!)
      .find((n) => n.respawnTick === undefined && !server.content.isBlocked(n.x - dx, n.z))!;
    await admin(p, `/tp ${chicken.x - dx} ${chicken.z}`);
    return chicken.id;
  };

  for (const kind of ["sdk", "json"] as const) {
    it(`${kind}: trains ranged on chickens from five tiles, one arrow a shot, and picks up the arrows that land`, async () => {
      const p = await join(kind);
      await equipBow(p, 40);
      let pile: any;
      for (let kill = 0; kill < 8 && !pile; kill++) {
        const chicken = await besideChicken(p, 5);
        const m = p.log.mark();
        p.send("player:action", { action: "attack", targetId: chicken });
        const hit = await p.log.waitFor("combat:hit", (h: any) => h.attackerId === p.id && h.targetId === chicken, { since: m });
        assert.ok(hit.damage >= 0 && hit.damage <= 10);
        await p.log.waitFor("combat:hit", (h: any) => h.targetId === chicken && h.targetHealth === 0, { since: m, timeoutMs: 20_000 });
        pile = await eventually(() => ground(p).find((g) => g.itemId === "bronze_arrow"), "an arrow pile", 2_000).catch(() => undefined);
      }
      assert.ok(pile, "an arrow landed within eight chickens");
      const xp = p.log.all("skill:xp").filter((x: any) => x.skill === "ranged");
      assert.ok(xp.length > 0, "ranged XP");
      assert.equal(p.log.all("skill:xp").filter((x: any) => x.skill === "attack").length, 0, "no melee XP");
      assert.ok(ammo(p) < 40);
      const m = p.log.mark();
      p.send("player:action", { action: "pickup", targetId: pile.id });
      await p.log.waitFor("player:sync", (s: any) => s.inventory.some((i: any) => i.itemId === "bronze_arrow"), { since: m });
    });

    it(`${kind}: out of range, out of arrows and no line of sight are refused with stable codes`, async () => {
      const p = await join(kind);
      await equipBow(p, 5);
      const far = await besideChicken(p, 12);
      assert.equal(await refusal(p, "player:action", { action: "attack", targetId: far }), "OUT_OF_RANGE");
      p.send("player:action", { action: "unequip", targetId: "ammo" });
      await p.log.waitFor("player:sync", (s: any) => s.equipment.ammo === undefined);
      const near = await besideChicken(p, 3);
      assert.equal(await refusal(p, "player:action", { action: "attack", targetId: near }), "OUT_OF_AMMO");
      // PvP across the Ashlands ruin (x -10..-5, z 90..95).
      const other = await join(kind === "sdk" ? "json" : "sdk");
      await admin(other, "/tp -4 92");
      await admin(p, "/tp -11 92");
      p.send("inventory:use", { slot: slotOf(p, "bronze_arrow") });
      await p.log.waitFor("player:sync", (s: any) => s.equipment.ammo?.quantity === 5);
      assert.equal(await refusal(p, "player:action", { action: "attack", targetId: other.id }), "NO_LINE_OF_SIGHT");
      // In the open, seven tiles apart: the bow hits in PvP.
      await admin(other, "/tp -4 98");
      await admin(p, "/tp -11 98");
      const m = other.log.mark();
      p.send("player:action", { action: "attack", targetId: other.id });
      await other.log.waitFor("combat:hit", (h: any) => h.attackerId === p.id && h.targetId === other.id, { since: m });
    });
  }

  it("prayers: switched on with its id, protection public on both transports, altar recharge, saved with the player", async () => {
    const first = await join("sdk");
    const characterId = first.id;
    assert.equal(await refusal(first, "player:action", { action: "pray", targetId: "ward_of_arrows" }), "LEVEL_TOO_LOW");
    await (first as SdkPlayer).leave();
    await eventually(() => !server.world.players.has(characterId), "the first session gone");
    await server.storage.orm.em.fork().nativeUpdate(CharacterEntity, { id: characterId }, { prayerXp: xpForLevel(40), prayerLevel: 40, prayerPoints: 40 });
    const p = (await join("sdk", { accountId: first.accountId, characterId })) as SdkPlayer;
    const watcher = (await join("json")) as RawPlayer;
    await admin(p, "/tp 2 24");
    await admin(watcher, "/tp 3 24");
    let m = p.log.mark();
    p.send("player:action", { action: "pray", targetId: "ward_of_arrows" });
    const sync = await p.log.waitFor("player:sync", (s: any) => s.prayer.active.includes("ward_of_arrows"), { since: m });
    assert.deepEqual(sync.prayer, { points: 40, maxPoints: 40, active: ["ward_of_arrows"] });
    await watcher.waitWorld((w) => w.players.get(p.id)?.protection === "ranged", "the /ws watcher sees the protection");
    await p.waitState((s) => s.players.get(p.id)?.protection === "ranged", "its own SDK state shows it");
    // Recharge at the altar (an answer even when full).
    const altar = server.content.stations.find((s) => s.type === "altar")!;
    await admin(p, `/tp ${altar.x} ${altar.z - 2}`);
    m = p.log.mark();
    p.send("player:action", { action: "pray", targetId: altar.id });
    await p.log.system(/recharge your prayer points/, m);
    await p.leave();
    const row = await eventually(async () => {
      const c = await server.storage.orm.em.fork().findOne(CharacterEntity, { id: characterId }, { refresh: true });
      return c && c.activePrayers === "ward_of_arrows" ? c : undefined;
    }, "the prayer saved on leave");
    assert.ok(row.prayerPoints > 39 && row.prayerPoints <= 40);
    // Back again, over /ws: still praying.
    const again = await join("json", { accountId: first.accountId, characterId });
    assert.deepEqual(lastSync(again).prayer.active, ["ward_of_arrows"]);
    m = again.log.mark();
    again.send("player:action", { action: "unpray", targetId: "ward_of_arrows" });
    await again.log.waitFor("player:sync", (s: any) => s.prayer.active.length === 0, { since: m });
  });
});
