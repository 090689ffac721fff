/**
 * Ranged training across a fence through both transports (real server, TICK_MS=50, PGlite), the
 * issue's "done when" (issue 26): a new player given a shortbow and arrows stands outside the
 * chicken pen in Lumbrook Meadows, shoots a chicken inside over the fence, gains ranged XP, and
 * cannot walk into the pen through the fence (a move onto it is refused, a move across it goes
 * round through a gate). The chicken stays in its pen throughout (docs/combat.md#fences).
 */
import assert from "node:assert/strict";
import { tileKey } from "../../../src/content/game-content.js";
import { chebyshev } from "../../../src/domain/movement.js";
import { Regions } from "../../../src/domain/pathing.js";
import { lineOfSight } from "../../../src/domain/ranged.js";
import type { Tile } from "../../../src/domain/types.js";
import type { GameServer } from "../../../src/server/server.js";
import { admin, becomeAdmin, closeAll, eventually, lastSync, RawPlayer, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

type Client = SdkPlayer | RawPlayer;

describe("ranged training across the chicken pen's fence (SDK and /ws clients)", function () {
  this.timeout(60_000);
  let server: GameServer;
  let clients: Client[] = [];
  /** NPC regions: the chicken pen is one (NPCs do not pass its gates). */
  let npcRegions: Regions;

  before(async () => {
    server = await startTestServer();
    const c = server.content;
    npcRegions = Regions.build(c.worldBounds, (x, z) => c.blocksNpc(x, z));
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(clients);
    clients = [];
  });

  const join = async (kind: "sdk" | "json") => {
    const p = kind === "sdk" ? await SdkPlayer.join(server) : await RawPlayer.connect(server);
    clients.push(p);
    await becomeAdmin(p);
    return p;
  };
  const slotOf = (p: Client, itemId: string) => (lastSync(p).inventory as { slot: number; itemId: string }[]).find((s) => s.itemId === itemId)!.slot;
  const refusal = async (p: Client, event: string, data: unknown) => {
    const m = p.log.mark();
    p.send(event, data);
    return (await p.log.waitFor("chat:message", (c: any) => c.type === "system" && c.code !== undefined, { since: m })).code;
  };
  const isFence = (t: Tile) => server.content.fenceTiles.has(tileKey(t.x, t.z));
  const chickenPen = () => npcRegions.regionOf(server.content.npcs.get("chicken")!.spawns[0]!.x, server.content.npcs.get("chicken")!.spawns[0]!.z);

  /** Free, inside the world, not a gate, and outside the chicken pen? */
  const outside = (t: Tile) => {
    const c = server.content;
    return c.inBounds(t.x, t.z) && !c.isBlocked(t.x, t.z) && !c.gateTiles.has(tileKey(t.x, t.z)) && npcRegions.regionOf(t.x, t.z) !== chickenPen();
  };

  /**
   * A live chicken and the nearest free tile outside its pen at most 6 tiles from it (the bow
   * reaches 7: one to spare if it steps away) whose straight line to it crosses the fence: walking
   * is cut on that line, sight is not.
   */
  const acrossTheFence = () => {
    const c = server.content;
    let best: { chicken: string; from: Tile; d: number } | undefined;
    for (const id of server.world.npcIdsOf("chicken")) {
      const n = server.world.npcs.get(id)!;
      if (n.respawnTick !== undefined) continue;
      for (let dx = -6; dx <= 6; dx++)
        for (let dz = -6; dz <= 6; dz++) {
          const from = { x: n.x + dx, z: n.z + dz };
          const d = chebyshev(from, n);
          if ((best && d >= best.d) || !outside(from)) continue;
          if (lineOfSight(from, n, (x, z) => c.isBlocked(x, z)) || !lineOfSight(from, n, (x, z) => c.blocksSight(x, z))) continue;
          best = { chicken: id, from, d };
        }
    }
    return best;
  };

  /** A fence tile (not a gate) with a free tile outside the pen on one side and inside it on the other. */
  const fenceToCross = () => {
    for (const k of server.content.fenceTiles) {
      const [x, z] = k.split(",").map(Number) as [number, number];
      for (const [dx, dz] of [
        [0, 1],
        [0, -1],
        [1, 0],
        [-1, 0],
      ] as const) {
        const from = { x: x - dx, z: z - dz };
        const inside = { x: x + dx, z: z + dz };
        if (outside(from) && !server.content.isBlocked(inside.x, inside.z) && npcRegions.regionOf(inside.x, inside.z) === chickenPen())
          return { from, fence: { x, z }, inside };
      }
    }
    throw new Error("no fence tile between outside and inside the pen");
  };

  for (const kind of ["sdk", "json"] as const) {
    it(`${kind}: shoots a chicken in the pen from outside, gains ranged XP, and cannot walk in through the fence`, async () => {
      const p = await join(kind);
      await admin(p, "/give shortbow");
      await admin(p, "/give bronze_arrow 40");
      for (const item of ["shortbow", "bronze_arrow"]) {
        const m = p.log.mark();
        p.send("inventory:use", { slot: slotOf(p, item) });
        await p.log.waitFor("player:sync", (s: any) => Object.values(s.equipment).some((e: any) => e.itemId === item), { since: m });
      }

      for (let kill = 0; kill < 3; kill++) {
        const spot = await eventually(() => acrossTheFence(), "a chicken by the fence and a tile outside it", 20_000);
        await admin(p, `/tp ${spot.from.x} ${spot.from.z}`);
        const m = p.log.mark();
        p.send("player:action", { action: "attack", targetId: spot.chicken });
        const hit = await p.log.waitFor("combat:hit", (h: any) => h.attackerId === p.id && h.targetId === spot.chicken, { since: m });
        assert.ok(hit.damage >= 0 && hit.damage <= 10);
        await p.log.waitFor("combat:hit", (h: any) => h.targetId === spot.chicken && h.targetHealth === 0, { since: m, timeoutMs: 20_000 });
        // The shooter never moved: it shot over the fence from where it stood.
        const me = server.world.players.get(p.id)!;
        assert.deepEqual({ x: me.x, z: me.z }, spot.from, "shot from outside the pen without walking");
        if (p.log.all("skill:xp").some((x: any) => x.skill === "ranged")) break;
      }
      assert.ok(
        p.log.all("skill:xp").some((x: any) => x.skill === "ranged"),
        "ranged XP from chickens shot across the fence",
      );
      assert.equal(p.log.all("skill:xp").filter((x: any) => x.skill === "attack").length, 0, "no melee XP");
      // Every chicken is still in its pen.
      for (const id of server.world.npcIdsOf("chicken")) {
        const n = server.world.npcs.get(id)!;
        assert.equal(npcRegions.regionOf(n.x, n.z), chickenPen(), `${id} at (${n.x}, ${n.z})`);
      }

      // Walking: onto the fence is refused; across it, the path goes round through a gate.
      const { from, fence, inside } = fenceToCross();
      await admin(p, `/tp ${from.x} ${from.z}`);
      assert.equal(await refusal(p, "player:move", { x: fence.x, z: fence.z }), "BLOCKED");
      p.send("player:move", { x: inside.x, z: inside.z });
      const me = server.world.players.get(p.id)!;
      const path = await eventually(() => (me.path.length > 0 ? [...me.path] : undefined), "the path into the pen");
      assert.ok(!path.some(isFence), "the path never steps on a fence tile");
      assert.ok(
        path.some((t) => server.content.gateTiles.has(tileKey(t.x, t.z))),
        "it goes through a gate",
      );
      assert.ok(path.length > chebyshev(from, inside), `a detour: ${path.length} steps for ${chebyshev(from, inside)} tiles`);
      await eventually(() => me.x === inside.x && me.z === inside.z, "inside the pen, through the gate", 20_000);
    });
  }
});
