/**
 * Loads the game content manifests from a directory, validates each file against its schema,
 * checks every cross reference between files, and returns plain data with pure lookups.
 * No Colyseus, no database: the world room and the HTTP layer consume `GameContent`.
 *
 * Outline of `loadContent`:
 *   1. read and JSON-parse every manifest that exists (required ones must);
 *   2. validate each against its zod schema; all schema problems are reported together;
 *   3. check cross references (item ids, biome ids, node types, positions...);
 *   4. build maps and lookups.
 *
 * Items: `items.json` is either the whole item list, or (as shipped) an index
 * `{ "files": ["items/food.json", ...] }`. Without `items.json` the five `items/*.json` files are
 * read. Each item gets `category` from the file it came from when it has none.
 */
import { readFile, access } from "node:fs/promises";
import path from "node:path";
import type { z } from "zod";
import { INVENTORY_SIZE, SKILLS, STARTING_LEVELS, type ItemDef, type SkillName, type Tile } from "../domain/types.js";
import {
  AmmunitionListSchema,
  BiomeListSchema,
  BuildingListSchema,
  CookingListSchema,
  GATHERING_SKILLS,
  GatheringListSchema,
  ITEM_CATEGORIES,
  ItemListSchema,
  ItemsRootSchema,
  ModelBoundsManifestSchema,
  MusicListSchema,
  NpcListSchema,
  PrayerListSchema,
  ResourceNodeListSchema,
  SkillUnlocksSchema,
  SmithingListSchema,
  StarterKitSchema,
  StationListSchema,
  StoreListSchema,
  TemplateListSchema,
  ToolListSchema,
  VegetationListSchema,
  WorldAreasSchema,
  type Ammunition,
  type Biome,
  type Building,
  type CharacterTemplate,
  type CookingRecipe,
  type GatheringNode,
  type ItemCategory,
  type ItemManifestEntry,
  type ModelBoundsManifest,
  type MusicTrack,
  type NpcDef,
  type Prayer,
  type ResourceNode,
  type SkillUnlock,
  type SmithingRecipe,
  type StarterKit,
  type Station,
  type StationType,
  type Store,
  type ToolDef,
  type Vegetation,
  type WorldArea,
} from "./schemas.js";

/** The five files that can stand in for `items.json` (SPEC.md rule 7). */
export const ITEM_FILES = ["items/food.json", "items/weapons.json", "items/tools.json", "items/resources.json", "items/misc.json"] as const;

/** Required manifests besides the items (SPEC.md rule 7). */
export const REQUIRED_MANIFESTS = ["npcs.json", "world-areas.json", "biomes.json", "stores.json"] as const;

/** Every manifest the game knows, relative to the manifests directory. The sync fetches all. */
export const MANIFEST_FILES = [
  "items.json",
  ...ITEM_FILES,
  "ammunition.json",
  "npcs.json",
  "resources.json",
  "tools.json",
  "biomes.json",
  "world-areas.json",
  "stores.json",
  "music.json",
  "vegetation.json",
  "buildings.json",
  "prayers.json",
  "stations.json",
  "gathering/fishing.json",
  "gathering/mining.json",
  "gathering/woodcutting.json",
  "recipes/cooking.json",
  "recipes/smithing.json",
  "skill-unlocks.json",
  "starter-kit.json",
  "templates.json",
  "model-bounds.json",
] as const;
export type ManifestFile = (typeof MANIFEST_FILES)[number];

/** One problem in the content, located by file and field path. */
export interface ContentIssue {
  file: string;
  /** Field path such as `[3].drops.table[0].itemId`; empty for the whole file. */
  path: string;
  message: string;
}

/** Thrown when the content is missing, malformed or inconsistent. The message has one line per
 * issue: `npcs.json: [3].drops.table[0].itemId: unknown item "bronze_sord"`. */
export class ContentError extends Error {
  override readonly name = "ContentError";
  constructor(readonly issues: readonly ContentIssue[]) {
    super(
      issues
        .slice(0, 25)
        .map((i) => `${i.file}: ${i.path ? `${i.path}: ` : ""}${i.message}`)
        .join("\n") + (issues.length > 25 ? `\n(and ${issues.length - 25} more)` : ""),
    );
  }
}

export type ContentItem = ItemManifestEntry & { category: ItemCategory };
/** Compile-time proof that content items are domain items. */
const _itemIsItemDef: (i: ContentItem) => ItemDef = (i) => i;
void _itemIsItemDef;

export interface WorldBounds {
  minX: number;
  maxX: number;
  minZ: number;
  maxZ: number;
}

/** Everything the server knows about the game world and its rules' data. Read-only. */
export interface GameContent {
  /** Manifest files that were read, relative to the manifests directory. */
  readonly files: readonly string[];
  readonly items: ReadonlyMap<string, ContentItem>;
  readonly ammunition: ReadonlyMap<string, Ammunition>;
  /** Tool properties keyed by item id. */
  readonly tools: ReadonlyMap<string, ToolDef>;
  readonly npcs: ReadonlyMap<string, NpcDef>;
  readonly biomes: ReadonlyMap<string, Biome>;
  readonly music: ReadonlyMap<string, MusicTrack>;
  readonly vegetation: readonly Vegetation[];
  readonly areas: readonly WorldArea[];
  readonly worldBounds: WorldBounds;
  /** Where new characters appear: (0, 0). */
  readonly spawn: Tile;
  readonly stations: readonly Station[];
  readonly buildings: readonly Building[];
  readonly stores: ReadonlyMap<string, Store>;
  /** Gathering node types keyed by id (tree, copper_rock, shrimp_spot...). */
  readonly gatheringNodes: ReadonlyMap<string, GatheringNode>;
  /** Placed resource nodes. */
  readonly resourceNodes: readonly ResourceNode[];
  readonly recipes: { readonly cooking: readonly CookingRecipe[]; readonly smithing: readonly SmithingRecipe[] };
  readonly prayers: readonly Prayer[];
  /** Keyed by lowercase skill name, each list sorted by level. */
  readonly skillUnlocks: Readonly<Record<SkillName, readonly SkillUnlock[]>>;
  readonly starterKit: StarterKit;
  readonly templates: ReadonlyMap<string, CharacterTemplate>;
  /** From model-bounds.json when present. */
  readonly modelBounds?: ModelBoundsManifest;
  /** Tiles covered by buildings, keyed `${x},${z}`. */
  readonly blockedTiles: ReadonlySet<string>;
  /** The area containing the position, if any. */
  areaAt(x: number, z: number): WorldArea | undefined;
  isPvp(x: number, z: number): boolean;
  isSafe(x: number, z: number): boolean;
  isBlocked(x: number, z: number): boolean;
  inBounds(x: number, z: number): boolean;
  /** The nearest station of a type within `range` tiles (Chebyshev), if any. */
  stationNear(type: StationType, x: number, z: number, range: number): Station | undefined;
}

/** Tile holding a (possibly fractional) position: tiles are centred on integer coordinates. */
export function toTile(v: number): number {
  return Math.floor(v + 0.5);
}

/** Key of a tile in `blockedTiles`. */
export function tileKey(x: number, z: number): string {
  return `${x},${z}`;
}

/** Every tile covered by a building footprint (`x, z` is the building's minimum corner). */
export function blockedTilesOf(buildings: readonly Building[]): Set<string> {
  const out = new Set<string>();
  for (const b of buildings)
    for (let dx = 0; dx < b.footprint.width; dx++)
      for (let dz = 0; dz < b.footprint.depth; dz++) out.add(tileKey(b.x + dx, b.z + dz));
  return out;
}

function inRect(r: WorldBounds, x: number, z: number): boolean {
  return x >= r.minX && x <= r.maxX && z >= r.minZ && z <= r.maxZ;
}

function exists(p: string): Promise<boolean> {
  return access(p).then(
    () => true,
    () => false,
  );
}

/**
 * Required manifests absent from `dir` (SPEC.md rule 7). Items count as present when
 * `items.json` exists or all five `items/*.json` files do; otherwise the missing entry is
 * reported as `items.json (or items/*.json)`.
 */
export async function missingRequired(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (const f of REQUIRED_MANIFESTS) if (!(await exists(path.join(dir, f)))) missing.push(f);
  if (!(await exists(path.join(dir, "items.json")))) {
    const present = await Promise.all(ITEM_FILES.map((f) => exists(path.join(dir, f))));
    if (!present.every(Boolean)) missing.push("items.json (or items/*.json)");
  }
  return missing;
}

/** Formats a zod path as `[3].drops.table[0].itemId`. */
export function formatPath(p: readonly PropertyKey[]): string {
  let out = "";
  for (const k of p) out += typeof k === "number" ? `[${k}]` : out === "" ? String(k) : `.${String(k)}`;
  return out;
}

/** Reads all manifests of `dir`, validates them and builds the content. Throws `ContentError`. */
export async function loadContent(dir: string): Promise<GameContent> {
  const issues: ContentIssue[] = [];
  const files: string[] = [];

  /** Reads, parses and validates one file; `undefined` when absent (and not required) or bad. */
  async function read<S extends z.ZodType>(file: string, schema: S, required: boolean): Promise<z.infer<S> | undefined> {
    let text: string;
    try {
      text = await readFile(path.join(dir, file), "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") {
        if (required) issues.push({ file, path: "", message: "required manifest is missing" });
        return undefined;
      }
      throw err;
    }
    files.push(file);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (err) {
      issues.push({ file, path: "", message: `invalid JSON: ${(err as Error).message}` });
      return undefined;
    }
    const result = schema.safeParse(json);
    if (!result.success) {
      for (const i of result.error.issues) issues.push({ file, path: formatPath(i.path), message: i.message });
      return undefined;
    }
    return result.data;
  }

  // 1-2. Read and validate.
  const itemSources: { file: string; category: ItemCategory | undefined; list: ItemManifestEntry[] }[] = [];
  let itemFiles: readonly string[] = ITEM_FILES;
  if (await exists(path.join(dir, "items.json"))) {
    const root = await read("items.json", ItemsRootSchema, true);
    itemFiles = root && !Array.isArray(root) ? root.files : [];
    if (Array.isArray(root)) itemSources.push({ file: "items.json", category: undefined, list: root });
  }
  for (const f of itemFiles) {
    const list = await read(f, ItemListSchema, true);
    const stem = path.posix.basename(f, ".json");
    const category = ITEM_CATEGORIES.find((c) => c === stem);
    if (list) itemSources.push({ file: f, category, list });
  }
  const npcList = await read("npcs.json", NpcListSchema, true);
  const worldAreas = await read("world-areas.json", WorldAreasSchema, true);
  const biomeList = await read("biomes.json", BiomeListSchema, true);
  const storeList = await read("stores.json", StoreListSchema, true);
  const ammoList = (await read("ammunition.json", AmmunitionListSchema, false)) ?? [];
  const toolList = (await read("tools.json", ToolListSchema, false)) ?? [];
  const musicList = (await read("music.json", MusicListSchema, false)) ?? [];
  const vegetationList = (await read("vegetation.json", VegetationListSchema, false)) ?? [];
  const buildingList = (await read("buildings.json", BuildingListSchema, false)) ?? [];
  const stationList = (await read("stations.json", StationListSchema, false)) ?? [];
  const prayerList = (await read("prayers.json", PrayerListSchema, false)) ?? [];
  const resourceList = (await read("resources.json", ResourceNodeListSchema, false)) ?? [];
  const gathering: { file: string; skill: string; list: GatheringNode[] }[] = [];
  for (const skill of GATHERING_SKILLS) {
    const file = `gathering/${skill}.json`;
    gathering.push({ file, skill, list: (await read(file, GatheringListSchema, false)) ?? [] });
  }
  const cookingList = (await read("recipes/cooking.json", CookingListSchema, false)) ?? [];
  const smithingList = (await read("recipes/smithing.json", SmithingListSchema, false)) ?? [];
  const unlocksRaw = await read("skill-unlocks.json", SkillUnlocksSchema, false);
  const starterKit = (await read("starter-kit.json", StarterKitSchema, false)) ?? { coins: 0, items: [] };
  const templateList = (await read("templates.json", TemplateListSchema, false)) ?? [];
  const modelBounds = await read("model-bounds.json", ModelBoundsManifestSchema, false);

  if (issues.length > 0 || !npcList || !worldAreas || !biomeList || !storeList) throw new ContentError(issues);

  // 3. Cross references.
  const issue = (file: string, p: string, message: string) => issues.push({ file, path: p, message });

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
  for (const src of itemSources)
    src.list.forEach((item, i) => {
      if (items.has(item.id)) return issue(src.file, `[${i}].id`, `duplicate item id "${item.id}"`);
      items.set(item.id, { ...item, category: item.category ?? src.category ?? "misc" });
    });

  const checkItem = (file: string, p: string, id: string, opts: { coins?: boolean; tradeable?: boolean } = {}) => {
    if (opts.coins && id === "coins") return;
    const item = items.get(id);
    if (!item) return issue(file, p, `unknown item "${id}"`);
    if (opts.tradeable && !item.tradeable) issue(file, p, `item "${id}" is not tradeable`);
  };
  /** Number of inventory slots a list of item quantities fills. */
  const slotsFor = (list: readonly { itemId: string; quantity: number }[]) =>
    list.reduce((n, e) => n + (items.get(e.itemId)?.stackable ? 1 : e.quantity), 0);

  const { worldBounds, spawn, areas } = worldAreas;
  const biomes = byId("biomes.json", biomeList, (b) => b.id);
  const music = byId("music.json", musicList, (m) => m.id);
  const buildings = buildingList;
  byId("buildings.json", buildings, (b) => b.id);
  const blockedTiles = blockedTilesOf(buildings);

  /** A placed thing must be inside the world and not inside a building. */
  const checkTile = (file: string, p: string, x: number, z: number) => {
    if (!inRect(worldBounds, x, z)) issue(file, p, `position (${x}, ${z}) is outside the world bounds`);
    else if (blockedTiles.has(tileKey(x, z))) issue(file, p, `position (${x}, ${z}) is inside a building`);
  };

  byId("world-areas.json", areas, (a) => a.id, (i) => `areas[${i}].id`);
  areas.forEach((a, i) => {
    const p = `areas[${i}]`;
    const b = a.bounds;
    if (!inRect(worldBounds, b.minX, b.minZ) || !inRect(worldBounds, b.maxX, b.maxZ)) issue("world-areas.json", `${p}.bounds`, "area extends outside worldBounds");
    if (!biomes.has(a.biome)) issue("world-areas.json", `${p}.biome`, `unknown biome "${a.biome}"`);
    if (musicList.length > 0 && !music.has(a.musicTrack)) issue("world-areas.json", `${p}.musicTrack`, `unknown music track "${a.musicTrack}"`);
    if (a.safeZone && a.pvp) issue("world-areas.json", `${p}.pvp`, "a safe zone cannot allow PvP");
    for (let j = 0; j < i; j++) {
      const o = areas[j]!.bounds;
      if (b.minX <= o.maxX && o.minX <= b.maxX && b.minZ <= o.maxZ && o.minZ <= b.maxZ)
        issue("world-areas.json", `${p}.bounds`, `overlaps area "${areas[j]!.id}"`);
    }
  });
  const areaAt = (x: number, z: number): WorldArea | undefined => {
    const tx = toTile(x);
    const tz = toTile(z);
    return areas.find((a) => inRect(a.bounds, tx, tz));
  };
  checkTile("world-areas.json", "spawn", spawn.x, spawn.z);
  if (!areaAt(spawn.x, spawn.z)?.safeZone) issue("world-areas.json", "spawn", "the spawn tile must lie in a safe area");

  buildings.forEach((b, i) => {
    const corner = { x: b.x + b.footprint.width - 1, z: b.z + b.footprint.depth - 1 };
    if (!inRect(worldBounds, b.x, b.z) || !inRect(worldBounds, corner.x, corner.z)) issue("buildings.json", `[${i}]`, "building extends outside the world bounds");
    if (inRect({ minX: b.x, minZ: b.z, maxX: corner.x, maxZ: corner.z }, spawn.x, spawn.z)) issue("buildings.json", `[${i}]`, "building covers the spawn tile");
  });

  vegetationList.forEach((v, i) =>
    v.biomes.forEach((b, j) => {
      if (!biomes.has(b)) issue("vegetation.json", `[${i}].biomes[${j}]`, `unknown biome "${b}"`);
    }),
  );
  byId("vegetation.json", vegetationList, (v) => v.id);

  const tools = byId("tools.json", toolList, (t) => t.itemId, (i) => `[${i}].itemId`);
  toolList.forEach((t, i) => checkItem("tools.json", `[${i}].itemId`, t.itemId));

  const ammunition = byId("ammunition.json", ammoList, (a) => a.itemId, (i) => `[${i}].itemId`);
  ammoList.forEach((a, i) => {
    const item = items.get(a.itemId);
    if (!item) issue("ammunition.json", `[${i}].itemId`, `unknown item "${a.itemId}"`);
    else if (item.equipSlot !== "ammo") issue("ammunition.json", `[${i}].itemId`, `item "${a.itemId}" does not go in the ammo slot`);
    a.launchers.forEach((l, j) => {
      const w = items.get(l);
      if (!w) issue("ammunition.json", `[${i}].launchers[${j}]`, `unknown item "${l}"`);
      else if (w.equipSlot !== "weapon") issue("ammunition.json", `[${i}].launchers[${j}]`, `item "${l}" is not a weapon`);
    });
  });

  const npcs = byId("npcs.json", npcList, (n) => n.id, (i) => `[${i}].id`);
  npcList.forEach((n, i) => {
    n.drops.always.forEach((d, j) => checkItem("npcs.json", `[${i}].drops.always[${j}].itemId`, d.itemId, { coins: true }));
    n.drops.table.forEach((d, j) => checkItem("npcs.json", `[${i}].drops.table[${j}].itemId`, d.itemId, { coins: true }));
    if (n.drops.rolls > 0 && n.drops.table.length === 0) issue("npcs.json", `[${i}].drops.rolls`, "rolls on an empty table");
    n.spawns.forEach((s, j) => {
      checkTile("npcs.json", `[${i}].spawns[${j}]`, s.x, s.z);
      if (n.aggressive && areaAt(s.x, s.z)?.safeZone) issue("npcs.json", `[${i}].spawns[${j}]`, "an aggressive NPC cannot spawn in a safe area");
    });
  });

  stationList.forEach((s, i) => checkTile("stations.json", `[${i}]`, s.x, s.z));
  byId("stations.json", stationList, (s) => s.id, (i) => `[${i}].id`);

  const stores = byId("stores.json", storeList, (s) => s.id, (i) => `[${i}].id`);
  storeList.forEach((s, i) => {
    checkTile("stores.json", `[${i}]`, s.x, s.z);
    const seen = new Set<string>();
    s.stock.forEach((e, j) => {
      checkItem("stores.json", `[${i}].stock[${j}].itemId`, e.itemId, { tradeable: true });
      if (seen.has(e.itemId)) issue("stores.json", `[${i}].stock[${j}].itemId`, `"${e.itemId}" is stocked twice`);
      seen.add(e.itemId);
    });
  });

  const gatheringNodes = new Map<string, GatheringNode>();
  for (const { file, skill, list } of gathering)
    list.forEach((n, i) => {
      if (gatheringNodes.has(n.id)) issue(file, `[${i}].id`, `duplicate node type "${n.id}"`);
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
  byId("resources.json", resourceList, (r) => r.id, (i) => `[${i}].id`);
  resourceList.forEach((r, i) => {
    if (!gatheringNodes.has(r.type)) issue("resources.json", `[${i}].type`, `unknown gathering node type "${r.type}"`);
    checkTile("resources.json", `[${i}]`, r.x, r.z);
    const key = tileKey(r.x, r.z);
    if (occupied.has(key)) issue("resources.json", `[${i}]`, `another resource node stands on (${r.x}, ${r.z})`);
    occupied.add(key);
  });

  byId("recipes/cooking.json", cookingList, (r) => r.id, (i) => `[${i}].id`);
  cookingList.forEach((r, i) => {
    for (const k of ["input", "output", "burnt"] as const) checkItem("recipes/cooking.json", `[${i}].${k}`, r[k]);
    if (r.stations.includes("range") && stationList.length > 0 && !stationList.some((s) => s.type === "range"))
      issue("recipes/cooking.json", `[${i}].stations`, "no range station exists");
  });
  byId("recipes/smithing.json", smithingList, (r) => r.id, (i) => `[${i}].id`);
  smithingList.forEach((r, i) => {
    r.inputs.forEach((e, j) => checkItem("recipes/smithing.json", `[${i}].inputs[${j}].itemId`, e.itemId));
    r.tools.forEach((t, j) => checkItem("recipes/smithing.json", `[${i}].tools[${j}]`, t));
    checkItem("recipes/smithing.json", `[${i}].output.itemId`, r.output.itemId);
    if (r.station === "anvil" && !r.tools.some((t) => tools.get(t)?.skill === "smithing"))
      issue("recipes/smithing.json", `[${i}].tools`, "anvil recipes need a smithing tool (hammer)");
  });

  byId("prayers.json", prayerList, (p) => p.id, (i) => `[${i}].id`);

  starterKit.items.forEach((e, i) => checkItem("starter-kit.json", `items[${i}].itemId`, e.itemId, { tradeable: true }));
  if (slotsFor(starterKit.items) > INVENTORY_SIZE) issue("starter-kit.json", "items", `needs more than ${INVENTORY_SIZE} slots`);

  const templates = byId("templates.json", templateList, (t) => t.id, (i) => `[${i}].id`);
  templateList.forEach((t, i) => {
    t.items.forEach((e, j) => checkItem("templates.json", `[${i}].items[${j}].itemId`, e.itemId));
    for (const [skill, level] of Object.entries(t.skills) as [SkillName, number][]) {
      const min = STARTING_LEVELS[skill] ?? 1;
      if (level < min) issue("templates.json", `[${i}].skills.${skill}`, `must be at least ${min}`);
    }
    if (slotsFor(starterKit.items) + slotsFor(t.items) > INVENTORY_SIZE)
      issue("templates.json", `[${i}].items`, `with the starter kit needs more than ${INVENTORY_SIZE} slots`);
  });

  if (issues.length > 0) throw new ContentError(issues);

  // 4. Build.
  const skillUnlocks = {} as Record<SkillName, SkillUnlock[]>;
  for (const s of SKILLS) skillUnlocks[s] = [...(unlocksRaw?.[s] ?? [])].sort((a, b) => a.level - b.level);

  const isBlocked = (x: number, z: number) => blockedTiles.has(tileKey(toTile(x), toTile(z)));
  return {
    files,
    items,
    ammunition,
    tools,
    npcs,
    biomes,
    music,
    vegetation: vegetationList,
    areas,
    worldBounds: { ...worldBounds },
    spawn: { ...spawn },
    stations: stationList,
    buildings,
    stores,
    gatheringNodes,
    resourceNodes: resourceList,
    recipes: { cooking: cookingList, smithing: smithingList },
    prayers: prayerList,
    skillUnlocks,
    starterKit,
    templates,
    modelBounds,
    blockedTiles,
    areaAt,
    isPvp: (x, z) => areaAt(x, z)?.pvp ?? false,
    isSafe: (x, z) => areaAt(x, z)?.safeZone ?? false,
    isBlocked,
    inBounds: (x, z) => inRect(worldBounds, toTile(x), toTile(z)),
    stationNear(type, x, z, range) {
      let best: Station | undefined;
      let bestDist = Infinity;
      for (const s of stationList) {
        const d = Math.max(Math.abs(s.x - x), Math.abs(s.z - z));
        if (s.type === type && d <= range && d < bestDist) [best, bestDist] = [s, d];
      }
      return best;
    },
  };
}
