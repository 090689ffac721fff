/**
 * Fences, table-driven (docs/combat.md#fences): a fence
 * tile blocks walking (validateMoveTarget, findPath, Regions) but not sight (lineOfSight, checkShot);
 * a gate lets players through and not NPCs; a building blocks both. The lookups are the content's
 * own (`tileLookups`), built from a small pen: fence tiles on the ring x 0..6 by z 0..6, the gate
 * (3, 0) on its south side when the case has one, and a building tile at (-3, 3).
 */
import assert from "node:assert/strict";
import { fenceTilesOf, tileKey, tileLookups, type TileLookups } from "../../../src/content/game-content.js";
import { chebyshev, validateMoveTarget, type WorldBounds } from "../../../src/domain/movement.js";
import { findPath } from "../../../src/domain/path-search.js";
import { Regions } from "../../../src/domain/pathing.js";
import { checkShot, lineOfSight, type AmmunitionDef } from "../../../src/domain/ranged.js";
import type { Tile } from "../../../src/domain/types.js";

const BOUNDS: WorldBounds = { minX: -20, maxX: 20, minZ: -20, maxZ: 20 };
const BUILDING = tileKey(-3, 3);

/** The pen's lookups, with or without its gate. */
function pen(gate: boolean): { lookups: TileLookups; fence: Set<string> } {
  const fences = [
    { from: { x: 0, z: 0 }, to: { x: 6, z: 0 }, gates: gate ? [{ x: 3, z: 0 }] : [] },
    { from: { x: 0, z: 6 }, to: { x: 6, z: 6 } },
    { from: { x: 0, z: 1 }, to: { x: 0, z: 5 } },
    { from: { x: 6, z: 1 }, to: { x: 6, z: 5 } },
  ];
  const gates = new Set(fences.flatMap((f) => (f.gates ?? []).map((g) => tileKey(g.x, g.z))));
  const fence = new Set(fences.flatMap((f) => fenceTilesOf(f).map((t) => tileKey(t.x, t.z))).filter((k) => !gates.has(k)));
  return { lookups: tileLookups(BOUNDS, new Set([...fence, BUILDING]), fence, gates), fence };
}

describe("domain/fences (walking blocked, sight clear)", () => {
  describe("fenceTilesOf", () => {
    const cases: [string, Tile, Tile, Tile[]][] = [
      ["along x", { x: 0, z: 2 }, { x: 3, z: 2 }, [0, 1, 2, 3].map((x) => ({ x, z: 2 }))],
      ["along z, written backwards", { x: 5, z: 1 }, { x: 5, z: -1 }, [1, 0, -1].map((z) => ({ x: 5, z }))],
      ["one tile", { x: 7, z: 7 }, { x: 7, z: 7 }, [{ x: 7, z: 7 }]],
    ];
    for (const [name, from, to, tiles] of cases) it(name, () => assert.deepEqual(fenceTilesOf({ from, to }), tiles));
  });

  describe("the tile lookups", () => {
    const { lookups } = pen(true);
    const cases: [string, Tile, { walk: boolean; sight: boolean; npc: boolean }][] = [
      ["a fence tile blocks walking, not sight", { x: 1, z: 0 }, { walk: true, sight: false, npc: true }],
      ["a pen corner is a fence tile", { x: 6, z: 6 }, { walk: true, sight: false, npc: true }],
      ["a gate is free for players, not for NPCs", { x: 3, z: 0 }, { walk: false, sight: false, npc: true }],
      ["a building blocks everything", { x: -3, z: 3 }, { walk: true, sight: true, npc: true }],
      ["inside the pen is free", { x: 3, z: 3 }, { walk: false, sight: false, npc: false }],
      ["fractional positions round to their tile", { x: 0.4, z: 2.3 }, { walk: true, sight: false, npc: true }],
    ];
    for (const [name, t, want] of cases)
      it(name, () => assert.deepEqual({ walk: lookups.isBlocked(t.x, t.z), sight: lookups.blocksSight(t.x, t.z), npc: lookups.blocksNpc(t.x, t.z) }, want));
  });

  describe("lineOfSight over fences (the sight lookup), not over buildings", () => {
    const { lookups } = pen(false);
    const sight = (x: number, z: number) => lookups.blocksSight(x, z);
    const walk = (x: number, z: number) => lookups.isBlocked(x, z);
    const cases: [string, Tile, Tile, boolean][] = [
      ["straight over the south fence", { x: 2, z: -3 }, { x: 2, z: 3 }, true],
      ["diagonally over a pen corner", { x: -2, z: -2 }, { x: 2, z: 2 }, true],
      ["across the whole pen, over two fences", { x: 3, z: -2 }, { x: 3, z: 8 }, true],
      ["through the building", { x: -6, z: 3 }, { x: 2, z: 3 }, false],
    ];
    for (const [name, from, to, clear] of cases)
      it(`${name}: ${clear ? "clear" : "cut"}`, () => {
        assert.equal(lineOfSight(from, to, sight), clear);
        assert.equal(lineOfSight(to, from, sight), clear, "symmetric");
      });
    it("the walking lookup would have cut the shot over the fence: the two differ only by fences", () => {
      assert.equal(lineOfSight({ x: 2, z: -3 }, { x: 2, z: 3 }, walk), false);
    });
    it("checkShot fires over a fence and refuses through a building", () => {
      const bronze: AmmunitionDef = { itemId: "bronze_arrow", rangedStrength: 7, levelRequired: 1, launchers: ["shortbow"] };
      const ammo = new Map([[bronze.itemId, bronze]]);
      const shot = (from: Tile, to: Tile) =>
        checkShot({ from, to, range: 7, launcherId: "shortbow", ammo: { itemId: "bronze_arrow", quantity: 5 }, rangedLevel: 1 }, ammo, sight);
      assert.equal(shot({ x: 2, z: -3 }, { x: 2, z: 3 }).ok, true);
      const r = shot({ x: -6, z: 3 }, { x: 0, z: 3 });
      assert.equal(!r.ok && r.error.code, "NO_LINE_OF_SIGHT");
    });
  });

  describe("walking through a fence", () => {
    const cases: [string, boolean, Tile, Tile, "blocked" | "unreachable" | "around"][] = [
      ["onto a fence tile is refused", true, { x: 2, z: -2 }, { x: 1, z: 0 }, "blocked"],
      ["into a pen without a gate: another region", false, { x: 2, z: -1 }, { x: 2, z: 1 }, "unreachable"],
      ["out of a pen without a gate: another region", false, { x: 4, z: 4 }, { x: 4, z: 8 }, "unreachable"],
      ["into the pen across the fence: routes through the gate", true, { x: 1, z: -1 }, { x: 1, z: 1 }, "around"],
      ["out across the west fence: routes through the gate", true, { x: 1, z: 3 }, { x: -1, z: 3 }, "around"],
    ];
    for (const [name, gate, from, to, want] of cases)
      it(name, () => {
        const { lookups, fence } = pen(gate);
        const walk = (x: number, z: number) => lookups.isBlocked(x, z);
        const target = validateMoveTarget(from, to, BOUNDS, walk);
        if (want === "blocked") return assert.equal(!target.ok && target.error.code, "BLOCKED");
        assert.ok(target.ok);
        const regions = Regions.build(BOUNDS, walk);
        const path = findPath(from, to, walk, BOUNDS);
        if (want === "unreachable") {
          assert.equal(regions.reachable(from, to), false);
          // A* agrees: no path (nothing closer than the start), or one that stops short.
          if (path.ok) assert.equal(path.value.complete, false);
          else assert.equal(path.error.code, "NO_PATH");
          return;
        }
        assert.ok(path.ok);
        assert.equal(regions.reachable(from, to), true);
        assert.equal(path.value.complete, true);
        const tiles = path.value.tiles;
        assert.ok(
          tiles.some((t) => t.x === 3 && t.z === 0),
          "through the gate",
        );
        assert.ok(!tiles.some((t) => fence.has(tileKey(t.x, t.z))), "never on a fence tile");
        assert.ok(tiles.length > chebyshev(from, to), `a detour: ${tiles.length} steps for ${chebyshev(from, to)} tiles`);
      });

    it("keeps melee out: no tile inside the pen is next to a free tile outside it (only to fence, gate or inside)", () => {
      const { lookups } = pen(true);
      const inside = (x: number, z: number) => x >= 1 && x <= 5 && z >= 1 && z <= 5;
      for (let x = 1; x <= 5; x++)
        for (let z = 1; z <= 5; z++)
          for (let dx = -1; dx <= 1; dx++)
            for (let dz = -1; dz <= 1; dz++) {
              const [nx, nz] = [x + dx, z + dz];
              const ok = inside(nx, nz) || lookups.isBlocked(nx, nz) || lookups.blocksNpc(nx, nz);
              assert.ok(ok, `(${x}, ${z}) is next to the free outside tile (${nx}, ${nz})`);
            }
    });

    it("NPCs (blocksNpc) cannot leave a gated pen: a flood fill from inside stays inside", () => {
      const { lookups } = pen(true);
      const npcRegions = Regions.build(BOUNDS, (x, z) => lookups.blocksNpc(x, z));
      const playerRegions = Regions.build(BOUNDS, (x, z) => lookups.isBlocked(x, z));
      assert.equal(npcRegions.reachable({ x: 3, z: 3 }, { x: 3, z: -3 }), false);
      assert.equal(playerRegions.reachable({ x: 3, z: 3 }, { x: 3, z: -3 }), true);
    });
  });
});
