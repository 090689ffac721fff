/**
 * Phase 3 of loading the content: every cross reference between manifests (item ids, biome ids,
 * node types, model ids) and every placement rule (bounds, buildings, stations, the spawn tile).
 */
import { inBounds } from "../domain/movement.js";
import { INVENTORY_SIZE, STARTING_LEVELS, type SkillName, type Tile } from "../domain/types.js";
import { centredFootprintTiles, footprintOf, stationModelScales } from "./footprint.js";
import { blockedTilesOf, fenceTilesOf, tileKey, toTile, type ContentItem } from "./game-content.js";
import type { ContentIssue } from "./issues.js";
import type { Parsed } from "./read.js";
import type { Ammunition, CharacterTemplate, GatheringNode, NpcDef, ToolDef } from "./schemas.js";
import type { Biome, MusicTrack, Store, WorldArea } from "./world-schemas.js";

/** Maps and lookups derived while checking, reused to build the content. */
export interface Checked {
  issues: ContentIssue[];
  items: Map<string, ContentItem>;
  tools: Map<string, ToolDef>;
  ammunition: Map<string, Ammunition>;
  npcs: Map<string, NpcDef>;
  biomes: Map<string, Biome>;
  music: Map<string, MusicTrack>;
  stores: Map<string, Store>;
  gatheringNodes: Map<string, GatheringNode>;
  templates: Map<string, CharacterTemplate>;
  blockedTiles: Set<string>;
  fenceTiles: Set<string>;
  gateTiles: Set<string>;
  stationTiles: Map<string, Tile[]>;
  areaAt: (x: number, z: number) => WorldArea | undefined;
}

/** Phase 3: every cross reference and placement rule. `checkModels`: model ids must have a
 * model-bounds.json entry when that file is present. */
export function crossCheck(p: Parsed, checkModels: boolean): Checked {
  const issues: ContentIssue[] = [];
  const issue = (file: string, at: string, message: string) => issues.push({ file, path: at, message });

  /** Builds an id map, reporting duplicates. */
  function byId<T>(file: string, list: readonly T[], key: (t: T) => string, where = (i: number) => `[${i}]`): Map<string, T> {
    const map = new Map<string, T>();
    list.forEach((t, i) => {
      const id = key(t);
      if (map.has(id)) issue(file, where(i), `duplicate id "${id}"`);
      else map.set(id, t);
    });
    return map;
  }

  const items = new Map<string, ContentItem>();
  for (const src of p.itemSources)
    src.list.forEach((item, i) => {
      if (items.has(item.id)) return issue(src.file, `[${i}].id`, `duplicate item id "${item.id}"`);
      items.set(item.id, { ...item, category: item.category ?? src.category ?? "misc" });
    });

  const checkItem = (file: string, at: string, id: string, opts: { coins?: boolean; tradeable?: boolean } = {}) => {
    if (opts.coins && id === "coins") return;
    const item = items.get(id);
    if (!item) return issue(file, at, `unknown item "${id}"`);
    if (opts.tradeable && !item.tradeable) issue(file, at, `item "${id}" is not tradeable`);
  };
  /** Number of inventory slots a list of item quantities fills. */
  const slotsFor = (list: readonly { itemId: string; quantity: number }[]) => list.reduce((n, e) => n + (items.get(e.itemId)?.stackable ? 1 : e.quantity), 0);

  const { worldBounds, spawn, areas } = p.worldAreas;
  const biomes = byId("biomes.json", p.biomes, (b) => b.id);
  const music = byId("music.json", p.music, (m) => m.id);
  byId("buildings.json", p.buildings, (b) => b.id);
  const buildingTiles = blockedTilesOf(p.buildings);

  // Models: every model id must have a bounds entry, when the bounds manifest is present.
  const modelEntries = new Map((p.modelBounds?.models ?? []).map((m) => [m.id, m]));
  const checkModel = (file: string, at: string, modelId: string) => {
    if (checkModels && p.modelBounds && !modelEntries.has(modelId))
      issue(file, at, `unknown model "${modelId}": model-bounds.json has no entry (add models/${modelId}.glb to the world and run npm run bounds)`);
  };
  p.stations.forEach((s, i) => checkModel("stations.json", `[${i}].modelId`, s.modelId));
  p.buildings.forEach((b, i) => checkModel("buildings.json", `[${i}].modelId`, b.modelId));
  p.vegetation.forEach((v, i) => checkModel("vegetation.json", `[${i}].modelId`, v.modelId));
  for (const { file, list } of p.gathering) list.forEach((n, i) => checkModel(file, `[${i}].modelId`, n.modelId));

  // Stations stand on their tile and block their model's footprint as model-bounds.json gives it
  // (its own tile without an entry). One model, one scale, so that footprint is the one for every
  // station of the model; a footprint that is not the model's dimensions times that scale was
  // written for another scale (stations.json changed since `npm run bounds`).
  byId(
    "stations.json",
    p.stations,
    (s) => s.id,
    (i) => `[${i}].id`,
  );
  const conflicts = new Set<number>();
  for (const c of stationModelScales(p.stations).conflicts) {
    conflicts.add(c.index);
    issue(
      "stations.json",
      `[${c.index}].modelScale`,
      `${c.station.modelScale} differs from the modelScale ${c.first.modelScale} of station "${c.first.id}", which uses the same model "${c.station.modelId}": stations sharing a model need the same modelScale`,
    );
  }
  const stationTiles = new Map<string, Tile[]>();
  const stationAt = new Map<string, string>();
  p.stations.forEach((s, i) => {
    if (conflicts.has(i)) return;
    const entry = modelEntries.get(s.modelId);
    if (entry) {
      const expected = footprintOf(entry.dimensions, s.modelScale);
      const { width, depth } = entry.footprint;
      if (expected.width !== width || expected.depth !== depth)
        return issue(
          "stations.json",
          `[${i}].modelScale`,
          `model-bounds.json gives model "${s.modelId}" a ${width} by ${depth} footprint, but its dimensions times modelScale ${s.modelScale} ` +
            `make ${expected.width} by ${expected.depth}: model-bounds.json is stale (run npm run bounds)`,
        );
    }
    const tiles = entry ? centredFootprintTiles(s.x, s.z, entry.footprint) : [{ x: s.x, z: s.z }];
    let bad = false;
    // The station's own tile first, so its problem is the one named.
    for (const t of [{ x: s.x, z: s.z }, ...tiles.filter((t) => t.x !== s.x || t.z !== s.z)]) {
      const at = t.x === s.x && t.z === s.z ? `position (${t.x}, ${t.z})` : `footprint tile (${t.x}, ${t.z})`;
      const other = stationAt.get(tileKey(t.x, t.z));
      if (!inBounds(worldBounds, t.x, t.z)) issue("stations.json", `[${i}]`, `${at} is outside the world bounds`);
      else if (buildingTiles.has(tileKey(t.x, t.z))) issue("stations.json", `[${i}]`, `${at} is inside a building`);
      else if (other && other !== s.id) issue("stations.json", `[${i}]`, `${at} is taken by station "${other}"`);
      else if (t.x === spawn.x && t.z === spawn.z) issue("stations.json", `[${i}]`, `${at} covers the spawn tile`);
      else continue;
      bad = true;
      break;
    }
    if (bad || stationTiles.has(s.id)) return;
    stationTiles.set(s.id, tiles);
    for (const t of tiles) stationAt.set(tileKey(t.x, t.z), s.id);
  });

  // Fences (world-areas.json `areas[].fences`): each within its area, clear of buildings and
  // stations; its gates on it. Gate tiles are fence tiles players may cross (not in `fenceTiles`).
  const fenceTiles = new Set<string>();
  const gateTiles = new Set<string>();
  areas.forEach((a, i) =>
    a.fences?.forEach((f, j) => {
      const at = `areas[${i}].fences[${j}]`;
      const tiles = fenceTilesOf(f);
      const keys = new Set(tiles.map((t) => tileKey(t.x, t.z)));
      const bad = tiles.find((t) => !inBounds(a.bounds, t.x, t.z) || buildingTiles.has(tileKey(t.x, t.z)) || stationAt.has(tileKey(t.x, t.z)));
      if (bad) {
        const key = tileKey(bad.x, bad.z);
        const why = !inBounds(a.bounds, bad.x, bad.z)
          ? `is outside the area's bounds`
          : buildingTiles.has(key)
            ? "is inside a building"
            : `is taken by station "${stationAt.get(key)}"`;
        return issue("world-areas.json", at, `fence tile (${bad.x}, ${bad.z}) ${why}`);
      }
      const gates = new Set<string>();
      let badGate = false;
      f.gates?.forEach((g, k) => {
        if (keys.has(tileKey(g.x, g.z))) gates.add(tileKey(g.x, g.z));
        else {
          badGate = true;
          issue("world-areas.json", `${at}.gates[${k}]`, `gate (${g.x}, ${g.z}) is not a tile of its fence`);
        }
      });
      if (badGate) return;
      for (const k of keys) if (gates.has(k)) gateTiles.add(k);
      for (const k of keys) if (!gates.has(k)) fenceTiles.add(k);
    }),
  );
  // A tile that is a gate of one fence and a plain tile of another stays a fence.
  for (const k of fenceTiles) gateTiles.delete(k);
  const blockedTiles = new Set([...buildingTiles, ...stationAt.keys(), ...fenceTiles]);

  /** A placed thing must be inside the world and on a free tile (not a fence or its gate). */
  const checkTile = (file: string, at: string, x: number, z: number) => {
    const key = tileKey(x, z);
    if (!inBounds(worldBounds, x, z)) issue(file, at, `position (${x}, ${z}) is outside the world bounds`);
    else if (buildingTiles.has(key)) issue(file, at, `position (${x}, ${z}) is inside a building`);
    else if (stationAt.has(key)) issue(file, at, `position (${x}, ${z}) is taken by station "${stationAt.get(key)}"`);
    else if (fenceTiles.has(key) || gateTiles.has(key)) issue(file, at, `position (${x}, ${z}) is on a fence`);
  };

  byId(
    "world-areas.json",
    areas,
    (a) => a.id,
    (i) => `areas[${i}].id`,
  );
  areas.forEach((a, i) => {
    const at = `areas[${i}]`;
    const b = a.bounds;
    if (!inBounds(worldBounds, b.minX, b.minZ) || !inBounds(worldBounds, b.maxX, b.maxZ))
      issue("world-areas.json", `${at}.bounds`, "area extends outside worldBounds");
    if (!biomes.has(a.biome)) issue("world-areas.json", `${at}.biome`, `unknown biome "${a.biome}"`);
    if (p.music.length > 0 && !music.has(a.musicTrack)) issue("world-areas.json", `${at}.musicTrack`, `unknown music track "${a.musicTrack}"`);
    if (a.safeZone && a.pvp) issue("world-areas.json", `${at}.pvp`, "a safe zone cannot allow PvP");
    for (let j = 0; j < i; j++) {
      const o = areas[j]!.bounds;
      if (b.minX <= o.maxX && o.minX <= b.maxX && b.minZ <= o.maxZ && o.minZ <= b.maxZ)
        issue("world-areas.json", `${at}.bounds`, `overlaps area "${areas[j]!.id}"`);
    }
  });
  const areaAt = (x: number, z: number): WorldArea | undefined => {
    const tx = toTile(x);
    const tz = toTile(z);
    return areas.find((a) => inBounds(a.bounds, tx, tz));
  };
  checkTile("world-areas.json", "spawn", spawn.x, spawn.z);
  if (!areaAt(spawn.x, spawn.z)?.safeZone) issue("world-areas.json", "spawn", "the spawn tile must lie in a safe area");

  p.buildings.forEach((b, i) => {
    const corner = { x: b.x + b.footprint.width - 1, z: b.z + b.footprint.depth - 1 };
    if (!inBounds(worldBounds, b.x, b.z) || !inBounds(worldBounds, corner.x, corner.z))
      issue("buildings.json", `[${i}]`, "building extends outside the world bounds");
    if (inBounds({ minX: b.x, minZ: b.z, maxX: corner.x, maxZ: corner.z }, spawn.x, spawn.z))
      issue("buildings.json", `[${i}]`, "building covers the spawn tile");
  });

  p.vegetation.forEach((v, i) =>
    v.biomes.forEach((b, j) => {
      if (!biomes.has(b)) issue("vegetation.json", `[${i}].biomes[${j}]`, `unknown biome "${b}"`);
    }),
  );
  byId("vegetation.json", p.vegetation, (v) => v.id);

  const tools = byId(
    "tools.json",
    p.tools,
    (t) => t.itemId,
    (i) => `[${i}].itemId`,
  );
  p.tools.forEach((t, i) => checkItem("tools.json", `[${i}].itemId`, t.itemId));

  const ammunition = byId(
    "ammunition.json",
    p.ammunition,
    (a) => a.itemId,
    (i) => `[${i}].itemId`,
  );
  p.ammunition.forEach((a, i) => {
    const item = items.get(a.itemId);
    if (!item) issue("ammunition.json", `[${i}].itemId`, `unknown item "${a.itemId}"`);
    else if (item.equipSlot !== "ammo") issue("ammunition.json", `[${i}].itemId`, `item "${a.itemId}" does not go in the ammo slot`);
    a.launchers.forEach((l, j) => {
      const w = items.get(l);
      if (!w) issue("ammunition.json", `[${i}].launchers[${j}]`, `unknown item "${l}"`);
      else if (w.equipSlot !== "weapon") issue("ammunition.json", `[${i}].launchers[${j}]`, `item "${l}" is not a weapon`);
    });
  });

  const npcs = byId(
    "npcs.json",
    p.npcs,
    (n) => n.id,
    (i) => `[${i}].id`,
  );
  p.npcs.forEach((n, i) => {
    n.drops.always.forEach((d, j) => checkItem("npcs.json", `[${i}].drops.always[${j}].itemId`, d.itemId, { coins: true }));
    n.drops.table.forEach((d, j) => checkItem("npcs.json", `[${i}].drops.table[${j}].itemId`, d.itemId, { coins: true }));
    if (n.drops.rolls > 0 && n.drops.table.length === 0) issue("npcs.json", `[${i}].drops.rolls`, "rolls on an empty table");
    n.spawns.forEach((s, j) => {
      checkTile("npcs.json", `[${i}].spawns[${j}]`, s.x, s.z);
      if (n.aggressive && areaAt(s.x, s.z)?.safeZone) issue("npcs.json", `[${i}].spawns[${j}]`, "an aggressive NPC cannot spawn in a safe area");
    });
  });

  const stores = byId(
    "stores.json",
    p.stores,
    (s) => s.id,
    (i) => `[${i}].id`,
  );
  p.stores.forEach((s, i) => {
    checkTile("stores.json", `[${i}]`, s.x, s.z);
    const seen = new Set<string>();
    s.stock.forEach((e, j) => {
      checkItem("stores.json", `[${i}].stock[${j}].itemId`, e.itemId, { tradeable: true });
      if (seen.has(e.itemId)) issue("stores.json", `[${i}].stock[${j}].itemId`, `"${e.itemId}" is stocked twice`);
      seen.add(e.itemId);
    });
  });

  const gatheringNodes = new Map<string, GatheringNode>();
  for (const { file, skill, list } of p.gathering)
    list.forEach((n, i) => {
      if (gatheringNodes.has(n.id)) return issue(file, `[${i}].id`, `duplicate node type "${n.id}"`);
      gatheringNodes.set(n.id, n);
      if (n.skill !== skill) issue(file, `[${i}].skill`, `must be "${skill}" in ${file}`);
      checkItem(file, `[${i}].yields`, n.yields);
      if (n.consumes) checkItem(file, `[${i}].consumes.itemId`, n.consumes.itemId);
      n.tools.forEach((t, j) => {
        checkItem(file, `[${i}].tools[${j}]`, t);
        const def = tools.get(t);
        if (items.has(t) && !def) issue(file, `[${i}].tools[${j}]`, `item "${t}" is not listed in tools.json`);
        else if (def && def.skill !== n.skill) issue(file, `[${i}].tools[${j}]`, `tool "${t}" is a ${def.skill} tool`);
      });
    });
  const occupied = new Set<string>();
  byId(
    "resources.json",
    p.resources,
    (r) => r.id,
    (i) => `[${i}].id`,
  );
  p.resources.forEach((r, i) => {
    if (!gatheringNodes.has(r.type)) issue("resources.json", `[${i}].type`, `unknown gathering node type "${r.type}"`);
    checkTile("resources.json", `[${i}]`, r.x, r.z);
    const key = tileKey(r.x, r.z);
    if (occupied.has(key)) issue("resources.json", `[${i}]`, `another resource node stands on (${r.x}, ${r.z})`);
    occupied.add(key);
  });

  byId(
    "recipes/cooking.json",
    p.cooking,
    (r) => r.id,
    (i) => `[${i}].id`,
  );
  p.cooking.forEach((r, i) => {
    for (const k of ["input", "output", "burnt"] as const) checkItem("recipes/cooking.json", `[${i}].${k}`, r[k]);
    if (r.stations.includes("range") && p.stations.length > 0 && !p.stations.some((s) => s.type === "range"))
      issue("recipes/cooking.json", `[${i}].stations`, "no range station exists");
  });
  byId(
    "recipes/smithing.json",
    p.smithing,
    (r) => r.id,
    (i) => `[${i}].id`,
  );
  p.smithing.forEach((r, i) => {
    r.inputs.forEach((e, j) => checkItem("recipes/smithing.json", `[${i}].inputs[${j}].itemId`, e.itemId));
    r.tools.forEach((t, j) => checkItem("recipes/smithing.json", `[${i}].tools[${j}]`, t));
    checkItem("recipes/smithing.json", `[${i}].output.itemId`, r.output.itemId);
    if (r.station === "anvil" && !r.tools.some((t) => tools.get(t)?.skill === "smithing"))
      issue("recipes/smithing.json", `[${i}].tools`, "anvil recipes need a smithing tool (hammer)");
  });

  byId(
    "prayers.json",
    p.prayers,
    (x) => x.id,
    (i) => `[${i}].id`,
  );

  p.starterKit.items.forEach((e, i) => checkItem("starter-kit.json", `items[${i}].itemId`, e.itemId, { tradeable: true }));
  if (slotsFor(p.starterKit.items) > INVENTORY_SIZE) issue("starter-kit.json", "items", `needs more than ${INVENTORY_SIZE} slots`);

  const templates = byId(
    "templates.json",
    p.templates,
    (t) => t.id,
    (i) => `[${i}].id`,
  );
  p.templates.forEach((t, i) => {
    t.items.forEach((e, j) => checkItem("templates.json", `[${i}].items[${j}].itemId`, e.itemId));
    for (const [skill, level] of Object.entries(t.skills) as [SkillName, number][]) {
      const min = STARTING_LEVELS[skill] ?? 1;
      if (level < min) issue("templates.json", `[${i}].skills.${skill}`, `must be at least ${min}`);
    }
    if (slotsFor(p.starterKit.items) + slotsFor(t.items) > INVENTORY_SIZE)
      issue("templates.json", `[${i}].items`, `with the starter kit needs more than ${INVENTORY_SIZE} slots`);
  });

  return {
    issues,
    items,
    tools,
    ammunition,
    npcs,
    biomes,
    music,
    stores,
    gatheringNodes,
    templates,
    blockedTiles,
    fenceTiles,
    gateTiles,
    stationTiles,
    areaAt,
  };
}
