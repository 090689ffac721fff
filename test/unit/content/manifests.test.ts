import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, unlink, writeFile } from "node:fs/promises";
import { existsSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { SKILLS } from "../../../src/domain/types.js";
import { dataResponses, SkillUnlocksResponseSchema, WorldAreasResponseSchema } from "../../../src/http/content.js";
import { blockedTilesOf, tileKey } from "../../../src/content/game-content.js";
import { ContentError, loadContent, loadContentLenient, type GameContent } from "../../../src/content/load.js";
import { ITEM_FILES, MANIFEST_FILES, missingRequired } from "../../../src/content/manifests.js";
import { UNLOCK_TYPES } from "../../../src/content/schemas.js";
import { itemSources } from "../../../src/content/sources.js";

const SHIPPED = fileURLToPath(new URL("../../../world/manifests", import.meta.url));
const MODELS = fileURLToPath(new URL("../../../world/models", import.meta.url));

/** A private copy of the shipped manifests that a test may corrupt. */
async function copyManifests(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), "content-test-"));
  await cp(SHIPPED, dir, { recursive: true });
  return dir;
}

async function editJson(dir: string, file: string, change: (json: any) => void): Promise<void> {
  const p = path.join(dir, file);
  const json = JSON.parse(await readFile(p, "utf8"));
  change(json);
  await writeFile(p, JSON.stringify(json));
}

async function loadError(dir: string): Promise<ContentError> {
  try {
    await loadContent(dir);
  } catch (err) {
    assert.ok(err instanceof ContentError, `expected ContentError, got ${String(err)}`);
    return err;
  }
  assert.fail("loadContent accepted broken content");
}

describe("shipped game content", () => {
  let content: GameContent;
  before(async () => {
    content = await loadContent(SHIPPED);
  });

  it("ships at least 25 manifest files and loads every one", () => {
    const present = MANIFEST_FILES.filter((f) => existsSync(path.join(SHIPPED, f)));
    assert.ok(present.length >= 25, `only ${present.length} files`);
    assert.deepEqual([...content.files].sort(), [...present].sort());
  });

  it("has at least 60 items with sensible flags", () => {
    assert.ok(content.items.size >= 60, `only ${content.items.size} items`);
    assert.equal(content.items.has("coins"), false, "coins live on the character");
    const untradeable = [...content.items.values()].filter((i) => !i.tradeable);
    assert.ok(untradeable.length >= 2);
    for (const id of ["bronze_arrow", "feather", "fishing_bait", "spirit_shard"]) assert.equal(content.items.get(id)?.stackable, true, id);
    for (const id of ["raw_shrimp", "shrimp", "logs", "copper_ore", "bronze_bar"]) assert.equal(content.items.get(id)?.stackable, false, id);
    assert.ok(content.items.get("shrimp")!.heals! > 0);
    assert.ok(content.items.get("bones")!.buryXp! > 0);
    assert.equal(content.items.get("bronze_sword")!.equipSlot, "weapon");
    assert.ok(content.items.get("bronze_sword")!.attackSpeed! > 0);
    assert.equal(content.items.get("steel_platebody")!.requirements?.defense, 20);
    assert.equal(content.items.get("shrimp")!.category, "food");
    for (const tier of ["bronze", "iron", "steel"])
      for (const kind of ["sword", "platebody", "kiteshield", "bar"]) assert.ok(content.items.has(`${tier}_${kind}`));
  });

  it("has at least 6 NPCs with combat stats, drops and spawns", () => {
    assert.ok(content.npcs.size >= 6);
    for (const npc of content.npcs.values()) {
      assert.ok(npc.spawns.length > 0, npc.id);
      assert.ok(npc.stats.constitution >= 1 && npc.attackSpeed >= 1, npc.id);
    }
    assert.ok([...content.npcs.values()].some((n) => n.aggressive));
    assert.ok(content.npcs.get("goblin")!.drops.table.some((d) => d.itemId === "coins"));
  });

  it("gives every skill unlocks, sorted by level, with allowed types only", () => {
    for (const skill of SKILLS) {
      const list = content.skillUnlocks[skill];
      assert.ok(list.length > 0, skill);
      for (const u of list) assert.ok((UNLOCK_TYPES as readonly string[]).includes(u.type), `${skill}: ${u.type}`);
      assert.deepEqual(
        list.map((u) => u.level),
        [...list.map((u) => u.level)].sort((a, b) => a - b),
      );
    }
  });

  it("spawns new characters at (0, 0) inside a safe, non-PvP town", () => {
    assert.deepEqual(content.spawn, { x: 0, z: 0 });
    assert.equal(content.isSafe(0, 0), true);
    assert.equal(content.isPvp(0, 0), false);
    assert.equal(content.areaAt(0, 0)?.id, "lumbrook");
    assert.equal(content.isBlocked(0, 0), false);
  });

  it("has a PvP area and answers position lookups", () => {
    const pvp = content.areas.filter((a) => a.pvp);
    assert.ok(pvp.length >= 1);
    const a = pvp[0]!;
    assert.equal(content.isPvp(a.bounds.minX, a.bounds.minZ), true);
    assert.equal(content.isSafe(a.bounds.minX, a.bounds.minZ), false);
    assert.equal(content.areaAt(500, 500), undefined);
    assert.equal(content.inBounds(500, 0), false);
    assert.ok(content.areas.length >= 4 && content.areas.length <= 6);
    for (const area of content.areas) assert.ok(content.biomes.has(area.biome));
  });

  it("blocks building tiles and finds stations", () => {
    const bank = content.buildings.find((b) => b.id === "lumbrook_bank")!;
    assert.equal(content.isBlocked(bank.x, bank.z), true);
    assert.equal(content.isBlocked(bank.x + bank.footprint.width - 1, bank.z + bank.footprint.depth - 1), true);
    assert.equal(content.isBlocked(bank.x + bank.footprint.width, bank.z), false);
    const stationTiles = [...content.stationTiles.values()].flat();
    // Fences (world-areas.json) are the third layer of blocked tiles (issue 26: the chicken pen).
    assert.equal(content.blockedTiles.size, blockedTilesOf(content.buildings).size + stationTiles.length + content.fenceTiles.size);
    for (const t of stationTiles) assert.equal(content.isBlocked(t.x, t.z), true);
    for (const type of ["bank", "range", "furnace", "anvil"] as const)
      assert.ok(
        content.stations.some((s) => s.type === type),
        type,
      );
    assert.equal(content.stationNear("bank", 6, 9, 2)?.id, "lumbrook_bank_booth");
    assert.equal(content.stationNear("bank", 0, -100, 2), undefined);
  });

  it("isBlocked agrees with blockedTiles on every tile of the world and around it, at fractional positions too", () => {
    const b = content.worldBounds;
    let blocked = 0;
    for (let x = b.minX - 3; x <= b.maxX + 3; x++)
      for (let z = b.minZ - 3; z <= b.maxZ + 3; z++) {
        const expected = content.blockedTiles.has(tileKey(x, z));
        if (expected) blocked++;
        assert.equal(content.isBlocked(x, z), expected, `${x},${z}`);
        assert.equal(content.isBlocked(x + 0.4, z - 0.4), expected, `${x + 0.4},${z - 0.4}`);
      }
    assert.equal(blocked, content.blockedTiles.size);
  });

  it("has gathering, recipes, a general store, a tradeable starter kit with coins, and templates", () => {
    for (const skill of ["woodcutting", "fishing", "mining"]) assert.ok([...content.gatheringNodes.values()].some((n) => n.skill === skill));
    for (const node of content.resourceNodes) assert.ok(content.gatheringNodes.has(node.type));
    assert.ok(
      content.recipes.cooking.length > 0 &&
        content.recipes.smithing.some((r) => r.station === "furnace") &&
        content.recipes.smithing.some((r) => r.station === "anvil"),
    );
    assert.ok(content.stores.get("lumbrook_general_store")!.stock.length > 5);
    assert.ok(content.starterKit.coins > 0);
    for (const e of content.starterKit.items) assert.equal(content.items.get(e.itemId)?.tradeable, true);
    assert.ok(content.templates.size >= 3);
  });

  it("gives every item a source: a drop, a store, a recipe, a gathering node, the starter kit or a template", () => {
    const sources = itemSources(content);
    const orphans = [...content.items.keys()].filter((id) => !sources.get(id)?.length);
    assert.deepEqual(orphans, []);
    assert.ok(sources.get("ashes")!.includes("drop:ash_bandit"));
    for (const id of ["leather_chaps", "leather_gloves"]) assert.ok(sources.get(id)!.includes("store:lumbrook_general_store"), id);
    assert.ok(sources.get("ridge_token")!.includes("drop:hill_brute"));
    assert.ok(sources.get("oak_shortbow")!.includes("drop:wolf"));
    // Nothing relies on a note today.
    assert.deepEqual(
      [...content.items.values()].filter((i) => i.obtainedBy).map((i) => i.id),
      [],
    );
  });

  it("describes a quest unlock only as planned content (the game has no quest system yet)", () => {
    const quests = SKILLS.flatMap((s) => content.skillUnlocks[s].filter((u) => u.type === "quest"));
    assert.ok(quests.length >= 1, "the quest type stays in use");
    for (const q of quests) assert.match(q.description, /^Planned, not in the game yet: /);
    for (const type of UNLOCK_TYPES)
      assert.ok(
        SKILLS.some((s) => content.skillUnlocks[s].some((u) => u.type === type)),
        type,
      );
  });

  it("ships a .glb with a bounds entry for every model id the manifests name", () => {
    const ids = new Set([
      ...content.stations.map((s) => s.modelId),
      ...content.buildings.map((b) => b.modelId),
      ...content.vegetation.map((v) => v.modelId),
      ...[...content.gatheringNodes.values()].map((n) => n.modelId),
    ]);
    assert.ok(ids.size >= 25);
    const bounds = new Map(content.modelBounds!.models.map((m) => [m.id, m]));
    for (const id of ids) {
      assert.ok(existsSync(path.join(MODELS, `${id}.glb`)), `world/models/${id}.glb`);
      assert.equal(bounds.get(id)?.assetPath, `asset://models/${id}.glb`);
    }
  });

  it("blocks each station's footprint (model dimensions times its modelScale) and keeps it usable", () => {
    // The furnace is the 2.27 x 2.18 model at scale 1: 2 by 2 tiles from its own tile.
    const furnace = content.stations.find((s) => s.id === "lumbrook_furnace")!;
    assert.deepEqual(content.stationTiles.get(furnace.id), [
      { x: furnace.x, z: furnace.z },
      { x: furnace.x, z: furnace.z + 1 },
      { x: furnace.x + 1, z: furnace.z },
      { x: furnace.x + 1, z: furnace.z + 1 },
    ]);
    // The altar model is 1.3 x 0.9 at scale 1.5: 1.95 x 1.35, so 2 by 1.
    const altar = content.stations.find((s) => s.id === "lumbrook_altar")!;
    assert.equal(altar.modelScale, 1.5);
    assert.equal(content.stationTiles.get(altar.id)!.length, 2);
    for (const s of content.stations) {
      for (const t of content.stationTiles.get(s.id)!) assert.equal(content.isBlocked(t.x, t.z), true, `${s.id} ${t.x},${t.z}`);
      // A free tile next to it still reaches it.
      const free = [-1, 0, 1, 2].flatMap((dx) => [-1, 0, 1, 2].map((dz) => ({ x: s.x + dx, z: s.z + dz }))).find((t) => !content.isBlocked(t.x, t.z));
      assert.ok(free && content.stationNear(s.type, free.x, free.z, 3)?.id === s.id, s.id);
    }
  });

  it("builds the public data responses in their documented shape", () => {
    const { skillUnlocks, areas } = dataResponses(content);
    SkillUnlocksResponseSchema.parse(skillUnlocks);
    WorldAreasResponseSchema.parse(areas);
    assert.deepEqual(Object.keys(skillUnlocks), [...SKILLS]);
  });
});

describe("content validation", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await copyManifests();
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("names file and field for an unknown item in a drop table", async () => {
    await editJson(dir, "npcs.json", (npcs) => {
      npcs[3].drops.table[0].itemId = "bronze_sord";
    });
    const err = await loadError(dir);
    assert.match(err.message, /^npcs\.json: \[3\]\.drops\.table\[0\]\.itemId: unknown item "bronze_sord"$/m);
    assert.deepEqual(err.issues[0], { file: "npcs.json", path: "[3].drops.table[0].itemId", message: 'unknown item "bronze_sord"' });
  });

  it("names file and field for a value of the wrong type or an unknown key", async () => {
    await editJson(dir, "npcs.json", (npcs) => {
      npcs[2].maxHit = "lots";
      npcs[1].hitpoints = 5;
    });
    const err = await loadError(dir);
    assert.match(err.message, /^npcs\.json: \[2\]\.maxHit: /m);
    assert.match(err.message, /^npcs\.json: \[1\]: Unrecognized key: "hitpoints"/m);
  });

  it("rejects invalid JSON naming the file", async () => {
    await writeFile(path.join(dir, "biomes.json"), '[{"id": "grassland",');
    assert.match((await loadError(dir)).message, /^biomes\.json: invalid JSON/m);
  });

  it("rejects an item with id coins", async () => {
    await editJson(dir, "items/misc.json", (items) => {
      items[0].id = "coins";
    });
    assert.match((await loadError(dir)).message, /^items\/misc\.json: \[0\]\.id: "coins" is reserved/m);
  });

  const crossReferences: [string, string, (json: any) => void, RegExp][] = [
    ["world-areas.json", "area biome", (w) => (w.areas[1].biome = "tundra"), /^world-areas\.json: areas\[1\]\.biome: unknown biome "tundra"$/m],
    ["world-areas.json", "area music", (w) => (w.areas[0].musicTrack = "nope"), /^world-areas\.json: areas\[0\]\.musicTrack: unknown music track "nope"$/m],
    ["world-areas.json", "overlapping areas", (w) => (w.areas[1].bounds.minZ = 20), /^world-areas\.json: areas\[1\]\.bounds: overlaps area "lumbrook"$/m],
    ["world-areas.json", "unsafe spawn", (w) => (w.spawn = { x: 0, z: 100 }), /^world-areas\.json: spawn: the spawn tile must lie in a safe area$/m],
    ["stores.json", "store stock", (s) => (s[0].stock[2].itemId = "golden_net"), /^stores\.json: \[0\]\.stock\[2\]\.itemId: unknown item "golden_net"$/m],
    [
      "starter-kit.json",
      "untradeable starter item",
      (k) => k.items.push({ itemId: "mysterious_letter", quantity: 1 }),
      /^starter-kit\.json: items\[6\]\.itemId: item "mysterious_letter" is not tradeable$/m,
    ],
    [
      "templates.json",
      "template item",
      (t) => (t[1].items[0].itemId = "laser_sword"),
      /^templates\.json: \[1\]\.items\[0\]\.itemId: unknown item "laser_sword"$/m,
    ],
    ["resources.json", "node type", (r) => (r[0].type = "magic_tree"), /^resources\.json: \[0\]\.type: unknown gathering node type "magic_tree"$/m],
    [
      "gathering/mining.json",
      "gathering tool",
      (g) => (g[0].tools[0] = "bronze_axe"),
      /^gathering\/mining\.json: \[0\]\.tools\[0\]: tool "bronze_axe" is a woodcutting tool$/m,
    ],
    ["gathering/fishing.json", "gathering yield", (g) => (g[0].yields = "raw_whale"), /^gathering\/fishing\.json: \[0\]\.yields: unknown item "raw_whale"$/m],
    ["recipes/cooking.json", "cooking output", (c) => (c[1].output = "sushi"), /^recipes\/cooking\.json: \[1\]\.output: unknown item "sushi"$/m],
    [
      "recipes/smithing.json",
      "smithing input",
      (s) => (s[0].inputs[1].itemId = "tin"),
      /^recipes\/smithing\.json: \[0\]\.inputs\[1\]\.itemId: unknown item "tin"$/m,
    ],
    [
      "stations.json",
      "station inside a building",
      (s) => Object.assign(s[0], { x: 5, z: 9 }),
      /^stations\.json: \[0\]: position \(5, 9\) is inside a building$/m,
    ],
    [
      "npcs.json",
      "spawn outside the world",
      (n) => (n[0].spawns[0] = { x: 999, z: 0 }),
      /^npcs\.json: \[0\]\.spawns\[0\]: position \(999, 0\) is outside the world bounds$/m,
    ],
    ["vegetation.json", "vegetation biome", (v) => (v[0].biomes[1] = "moon"), /^vegetation\.json: \[0\]\.biomes\[1\]: unknown biome "moon"$/m],
    [
      "ammunition.json",
      "ammunition launcher",
      (a) => (a[0].launchers[0] = "bronze_arrow"),
      /^ammunition\.json: \[0\]\.launchers\[0\]: item "bronze_arrow" is not a weapon$/m,
    ],
  ];
  for (const [file, what, change, expected] of crossReferences) {
    it(`rejects an unknown or invalid cross reference: ${what}`, async () => {
      await editJson(dir, file, change);
      assert.match((await loadError(dir)).message, expected);
    });
  }

  it("rejects world bounds wider or deeper than 4096 tiles, naming the field, instead of failing to allocate", async () => {
    await editJson(dir, "world-areas.json", (w) => (w.worldBounds = { minX: -1e9, maxX: 1e9, minZ: -1e9, maxZ: 1e9 }));
    const err = await loadError(dir);
    assert.match(err.message, /^world-areas\.json: worldBounds: the world may be at most 4096 tiles wide and 4096 deep$/m);
    // The largest world allowed loads.
    await editJson(dir, "world-areas.json", (w) => (w.worldBounds = { minX: -2048, maxX: 2047, minZ: -2048, maxZ: 2047 }));
    assert.equal((await loadContent(dir)).isBlocked(2047, 2047), false);
    await editJson(dir, "world-areas.json", (w) => (w.worldBounds = { minX: -2048, maxX: 2048, minZ: -128, maxZ: 127 }));
    assert.match((await loadError(dir)).message, /^world-areas\.json: worldBounds: the world may be at most 4096 tiles/m);
  });

  it("names a model id without a bounds entry", async () => {
    await editJson(dir, "vegetation.json", (v) => (v[0].modelId = "vegetation/palm"));
    assert.match(
      (await loadError(dir)).message,
      /^vegetation\.json: \[0\]\.modelId: unknown model "vegetation\/palm": model-bounds\.json has no entry \(add models\/vegetation\/palm\.glb/m,
    );
  });

  it("without model-bounds.json, checks no model ids and lets each station block its own tile only", async () => {
    await editJson(dir, "vegetation.json", (v) => (v[0].modelId = "vegetation/palm"));
    await unlink(path.join(dir, "model-bounds.json"));
    const content = await loadContent(dir);
    assert.equal(content.modelBounds, undefined);
    for (const s of content.stations) assert.deepEqual(content.stationTiles.get(s.id), [{ x: s.x, z: s.z }]);
  });

  it("places stations with the footprint model-bounds.json gives, and names a manifest stale for the station's scale", async () => {
    // The furnace model is 2.27 x 2.18, written as 2 by 2 for modelScale 1. At 1.5 it
    // is 3.405 x 3.27, so 3 by 3: the manifest was not regenerated after the stations.json edit.
    const furnace = JSON.parse(await readFile(path.join(dir, "stations.json"), "utf8")).findIndex((s: any) => s.id === "lumbrook_furnace");
    await editJson(dir, "stations.json", (st) => (st[furnace].modelScale = 1.5));
    assert.deepEqual((await loadError(dir)).problems, [
      `stations.json: [${furnace}].modelScale: model-bounds.json gives model "stations/furnace" a 2 by 2 footprint, but its dimensions times modelScale 1.5 make 3 by 3: model-bounds.json is stale (run npm run bounds)`,
    ]);
    // Regenerated for scale 1.5, the station blocks the manifest's 3 by 3.
    await editJson(dir, "model-bounds.json", (m) => (m.models.find((e: any) => e.id === "stations/furnace").footprint = { width: 3, depth: 3 }));
    assert.equal((await loadContent(dir)).stationTiles.get("lumbrook_furnace")!.length, 9);
  });

  it("requires stations sharing a model to share its modelScale", async () => {
    const stations = JSON.parse(await readFile(path.join(dir, "stations.json"), "utf8"));
    const booths = stations.flatMap((s: any, i: number) => (s.modelId === "stations/bank_booth" ? [i] : []));
    assert.equal(booths.length, 2);
    // 1.6 x 0.8 at 1.2 is still 2 by 1: only the rule is broken, not the footprint.
    await editJson(dir, "stations.json", (st) => (st[booths[1]].modelScale = 1.2));
    const err = await loadError(dir);
    assert.deepEqual(err.problems, [
      `stations.json: [${booths[1]}].modelScale: 1.2 differs from the modelScale 1 of station "${stations[booths[0]].id}", which uses the same model "stations/bank_booth": stations sharing a model need the same modelScale`,
    ]);
  });

  it("rejects a station footprint reaching into a building, and anything placed on a station", async () => {
    await editJson(dir, "stations.json", (st) =>
      Object.assign(
        st.find((s: any) => s.id === "lumbrook_furnace"),
        { x: 7, z: -10 },
      ),
    );
    assert.match((await loadError(dir)).message, /^stations\.json: \[2\]: footprint tile \(8, -10\) is inside a building$/m);
    await cp(SHIPPED, dir, { recursive: true });
    await editJson(dir, "npcs.json", (n) => (n[0].spawns[0] = { x: 10, z: -6 }));
    assert.match((await loadError(dir)).message, /^npcs\.json: \[0\]\.spawns\[0\]: position \(10, -6\) is taken by station "lumbrook_furnace"$/m);
  });

  it("gives ContentError one problem line per issue", async () => {
    await editJson(dir, "npcs.json", (npcs) => {
      npcs[2].maxHit = "lots";
      npcs[3].name = "";
    });
    const err = await loadError(dir);
    assert.equal(err.problems.length, 2);
    assert.match(err.problems[0]!, /^npcs\.json: \[2\]\.maxHit: /);
    assert.match(err.problems[1]!, /^npcs\.json: \[3\]\.name: /);
    assert.equal(err.message, err.problems.join("\n"));
  });

  it("reports a missing required manifest", async () => {
    await unlink(path.join(dir, "npcs.json"));
    assert.deepEqual(await missingRequired(dir), ["npcs.json"]);
    assert.match((await loadError(dir)).message, /^npcs\.json: required manifest is missing$/m);
  });

  it("accepts items.json as a plain list instead of the items folder", async () => {
    const all = [];
    for (const f of ITEM_FILES) {
      all.push(...JSON.parse(await readFile(path.join(dir, f), "utf8")));
      await unlink(path.join(dir, f));
    }
    await writeFile(path.join(dir, "items.json"), JSON.stringify(all));
    assert.deepEqual(await missingRequired(dir), []);
    const content = await loadContent(dir);
    assert.equal(content.items.size, all.length);
  });

  it("checks the files an items.json index lists, not just the index", async () => {
    await unlink(path.join(dir, "items/food.json"));
    assert.deepEqual(await missingRequired(dir), ["items/food.json (listed in items.json)"]);
    assert.match((await loadError(dir)).message, /^items\/food\.json: required manifest is missing$/m);
    await editJson(dir, "items.json", (index) => (index.files = index.files.filter((f: string) => f !== "items/food.json")));
    assert.deepEqual(await missingRequired(dir), []);
  });

  it("counts an item marked with obtainedBy as sourced, and finds an item nothing produces", async () => {
    await editJson(dir, "items/misc.json", (items) => {
      items.push({ id: "old_coin", name: "Old coin", examine: "Worn smooth.", value: 1, stackable: true, tradeable: true });
      items.push({ id: "medal", name: "Medal", examine: "Shiny.", value: 0, stackable: false, tradeable: false, obtainedBy: "granted by an admin" });
    });
    const sources = itemSources(await loadContent(dir));
    assert.equal(sources.get("old_coin"), undefined);
    assert.deepEqual(sources.get("medal"), ["note:granted by an admin"]);
  });

  it("accepts the five items files without items.json, and needs all five", async () => {
    await unlink(path.join(dir, "items.json"));
    assert.deepEqual(await missingRequired(dir), []);
    assert.ok((await loadContent(dir)).items.size >= 60);
    await unlink(path.join(dir, "items/misc.json"));
    assert.deepEqual(await missingRequired(dir), ["items.json (or items/*.json)"]);
    assert.match((await loadError(dir)).message, /^items\/misc\.json: required manifest is missing$/m);
  });
});

describe("lenient loading (SKIP_MANIFESTS)", () => {
  let dir: string;
  beforeEach(async () => {
    dir = await copyManifests();
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("loads the shipped content exactly like the strict loader, skipping nothing", async () => {
    const { content, skipped } = await loadContentLenient(dir);
    assert.deepEqual(skipped, []);
    const strict = await loadContent(dir);
    assert.equal(content.items.size, strict.items.size);
    assert.equal(content.npcs.size, strict.npcs.size);
    assert.equal(content.blockedTiles.size, strict.blockedTiles.size);
  });

  it("leaves out an entry that fails its schema and keeps the rest of the file", async () => {
    let bad = "";
    await editJson(dir, "npcs.json", (npcs) => {
      bad = npcs[2].id;
      npcs[2].maxHit = "lots";
    });
    const { content, skipped } = await loadContentLenient(dir);
    assert.equal(content.npcs.has(bad), false);
    assert.equal(content.npcs.size, (await loadContent(SHIPPED)).npcs.size - 1);
    assert.match(skipped.map((i) => `${i.file}: ${i.path}`).join("\n"), /^npcs\.json: \[2\]\.maxHit$/m);
  });

  it("leaves out what refers to something left out, until nothing dangles", async () => {
    // Without raw shrimp: the shrimp recipe, the shrimp spot, its placed nodes and the crab that drops it go.
    await editJson(dir, "items/food.json", (food) =>
      food.splice(
        food.findIndex((i: any) => i.id === "raw_shrimp"),
        1,
      ),
    );
    const { content, skipped } = await loadContentLenient(dir);
    assert.equal(content.items.has("raw_shrimp"), false);
    assert.equal(content.gatheringNodes.has("shrimp_spot"), false);
    assert.equal(
      content.recipes.cooking.some((r) => r.input === "raw_shrimp"),
      false,
    );
    assert.equal(content.npcs.has("dock_crab"), false);
    assert.ok(content.resourceNodes.length > 0);
    for (const r of content.resourceNodes) assert.ok(content.gatheringNodes.has(r.type), r.id);
    for (const id of itemSources(content).keys()) assert.ok(content.items.has(id), id);
    for (const i of skipped) assert.match(`${i.file}: ${i.path}: ${i.message}`, /raw_shrimp|shrimp_spot/);
    assert.ok(content.items.size > 60);
  });

  it("treats an unparseable optional file as empty", async () => {
    await writeFile(path.join(dir, "prayers.json"), "{ nope");
    const { content, skipped } = await loadContentLenient(dir);
    assert.deepEqual(content.prayers, []);
    assert.match(skipped[0]!.message, /^invalid JSON/);
  });

  it("still refuses a world-areas.json the world cannot run without", async () => {
    await writeFile(path.join(dir, "world-areas.json"), "[]");
    await assert.rejects(loadContentLenient(dir), (err: unknown) => err instanceof ContentError && /^world-areas\.json: /.test(err.problems[0]!));
  });
});
