/**
 * Fences in the content (world-areas.json `areas[].fences`): the shipped chicken pen in Lumbrook
 * Meadows keeps its chickens in, lets players in through its gates and lets them shoot over it;
 * the loader names a fence that is not straight, leaves its area, stands on a building, a gate off
 * its fence, and anything placed on a fence.
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { tileKey } from "../../../src/content/game-content.js";
import { ContentError, loadContent, loadContentLenient, type GameContent } from "../../../src/content/load.js";
import { Regions } from "../../../src/domain/pathing.js";
import { lineOfSight } from "../../../src/domain/ranged.js";

const SHIPPED = fileURLToPath(new URL("../../../world/manifests", import.meta.url));

describe("fences in the shipped content: the chicken pen", () => {
  let content: GameContent;
  before(async () => {
    content = await loadContent(SHIPPED);
  });
  const chickens = () => content.npcs.get("chicken")!;

  it("has fence tiles, blocked for walking and NPCs but not for sight, and gates free for players only", () => {
    assert.ok(content.fenceTiles.size > 0);
    assert.ok(content.gateTiles.size > 0);
    for (const k of content.fenceTiles) {
      const [x, z] = k.split(",").map(Number) as [number, number];
      assert.ok(content.blockedTiles.has(k), k);
      assert.deepEqual([content.isBlocked(x, z), content.blocksSight(x, z), content.blocksNpc(x, z)], [true, false, true], k);
    }
    for (const k of content.gateTiles) {
      const [x, z] = k.split(",").map(Number) as [number, number];
      assert.deepEqual([content.isBlocked(x, z), content.blocksSight(x, z), content.blocksNpc(x, z)], [false, false, true], k);
    }
    const bank = content.buildings.find((b) => b.id === "lumbrook_bank")!;
    assert.equal(content.blocksSight(bank.x, bank.z), true, "buildings still cut sight");
  });

  it("keeps every chicken in: NPCs cannot walk from a chicken spawn to the town, players can (through a gate)", () => {
    const npcRegions = Regions.build(content.worldBounds, (x, z) => content.blocksNpc(x, z));
    const playerRegions = Regions.build(content.worldBounds, (x, z) => content.isBlocked(x, z));
    for (const s of chickens().spawns) {
      assert.equal(npcRegions.reachable(s, content.spawn), false, `chicken at (${s.x}, ${s.z})`);
      assert.equal(playerRegions.reachable(content.spawn, s), true, `player to (${s.x}, ${s.z})`);
      // The whole wander square of each chicken is free inside the pen (it never presses on the fence).
      const r = chickens().wanderRadius;
      for (let dx = -r; dx <= r; dx++)
        for (let dz = -r; dz <= r; dz++) {
          const t = { x: s.x + dx, z: s.z + dz };
          if (!content.blocksNpc(t.x, t.z)) assert.equal(npcRegions.regionOf(t.x, t.z), npcRegions.regionOf(s.x, s.z), `(${t.x}, ${t.z})`);
        }
    }
  });

  it("lets a player outside shoot a chicken inside across the fence", () => {
    const npcRegions = Regions.build(content.worldBounds, (x, z) => content.blocksNpc(x, z));
    // From every tile a chicken may stand on (its wander square, inside the pen) to every free tile
    // outside the pen within 7 tiles: where the fence stands in between, it does not cut sight.
    let overFence = 0;
    const near = new Set<number>();
    for (const [i, s] of chickens().spawns.entries()) {
      const pen = npcRegions.regionOf(s.x, s.z);
      const r = chickens().wanderRadius;
      for (let cx = s.x - r; cx <= s.x + r; cx++)
        for (let cz = s.z - r; cz <= s.z + r; cz++) {
          if (content.blocksNpc(cx, cz)) continue;
          for (let dx = -7; dx <= 7; dx++)
            for (let dz = -7; dz <= 7; dz++) {
              const from = { x: cx + dx, z: cz + dz };
              if (content.isBlocked(from.x, from.z) || content.gateTiles.has(tileKey(from.x, from.z)) || npcRegions.regionOf(from.x, from.z) === pen) continue;
              const to = { x: cx, z: cz };
              if (lineOfSight(from, to, (x, z) => content.isBlocked(x, z))) continue; // through a gate: no fence in between
              assert.equal(
                lineOfSight(from, to, (x, z) => content.blocksSight(x, z)),
                true,
                `from (${from.x}, ${from.z}) over the fence to (${cx}, ${cz})`,
              );
              overFence++;
              if (cx === s.x && cz === s.z) near.add(i);
            }
        }
    }
    assert.ok(overFence > 0);
    // Chickens by the fence are in range from outside even at their spawn (deeper ones wander there).
    assert.ok(near.size >= 2, `${near.size} chicken spawns within 7 tiles of a tile outside the pen`);
  });
});

describe("fence validation", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "fence-test-"));
    await cp(SHIPPED, dir, { recursive: true });
  });
  afterEach(async () => rm(dir, { recursive: true, force: true }));

  const edit = async (file: string, change: (json: any) => void) => {
    const p = path.join(dir, file);
    const json = JSON.parse(await readFile(p, "utf8"));
    change(json);
    await writeFile(p, JSON.stringify(json));
  };
  const loadError = async (): Promise<string> => {
    try {
      await loadContent(dir);
    } catch (err) {
      assert.ok(err instanceof ContentError, String(err));
      return err.message;
    }
    assert.fail("loadContent accepted a broken fence");
  };
  const meadows = (w: any) => w.areas.find((a: any) => a.id === "lumbrook_meadows");

  const cases: [string, string, (json: any) => void, RegExp][] = [
    [
      "a fence that is not straight",
      "world-areas.json",
      (w) => (meadows(w).fences[0].to = { x: 10, z: 32 }),
      /^world-areas\.json: areas\[1\]\.fences\[0\].*a fence runs along x or along z/m,
    ],
    [
      "a fence leaving its area",
      "world-areas.json",
      (w) => (meadows(w).fences[2] = { from: { x: -11, z: 32 }, to: { x: -11, z: 20 } }),
      /^world-areas\.json: areas\[1\]\.fences\[2\]: fence tile \(-11, 24\) is outside the area's bounds$/m,
    ],
    [
      "a fence through a building",
      "world-areas.json",
      (w) => (w.areas[0].fences = [{ from: { x: 3, z: 8 }, to: { x: 5, z: 8 } }]),
      /^world-areas\.json: areas\[0\]\.fences\[0\]: fence tile \(4, 8\) is inside a building$/m,
    ],
    [
      "a gate off its fence",
      "world-areas.json",
      (w) => (meadows(w).fences[0].gates = [{ x: -1, z: 34 }]),
      /^world-areas\.json: areas\[1\]\.fences\[0\]\.gates\[0\]: gate \(-1, 34\) is not a tile of its fence$/m,
    ],
    [
      "an NPC spawn on a fence",
      "npcs.json",
      (n) => (n[0].spawns[0] = { x: -11, z: 40 }),
      /^npcs\.json: \[0\]\.spawns\[0\]: position \(-11, 40\) is on a fence$/m,
    ],
    ["an NPC spawn on a gate", "npcs.json", (n) => (n[0].spawns[0] = { x: -1, z: 31 }), /^npcs\.json: \[0\]\.spawns\[0\]: position \(-1, 31\) is on a fence$/m],
  ];
  for (const [what, file, change, expected] of cases)
    it(`names ${what}`, async () => {
      await edit(file, change);
      assert.match(await loadError(), expected);
    });

  it("an area without fences needs none (the field is optional)", async () => {
    await edit("world-areas.json", (w) => delete meadows(w).fences);
    const content = await loadContent(dir);
    assert.equal(content.fenceTiles.size, 0);
    assert.equal(content.gateTiles.size, 0);
  });

  it("lenient loading leaves out the area of a broken fence, and its fences with it", async () => {
    await edit("world-areas.json", (w) => (meadows(w).fences[1].gates = [{ x: 0, z: 0 }]));
    const { content, skipped } = await loadContentLenient(dir);
    assert.ok(skipped.some((i) => i.path === "areas[1].fences[1].gates[0]"));
    assert.equal(
      content.areas.find((a) => a.id === "lumbrook_meadows"),
      undefined,
    );
    assert.equal(content.fenceTiles.size, 0);
  });
});
