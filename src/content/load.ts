/**
 * Loads the game content manifests from a directory, validates each file against its schema,
 * checks every cross reference between files, and returns plain data with pure lookups.
 * No Colyseus, no database: the world room and the HTTP layer consume `GameContent`.
 *
 * Outline of `loadContent`:
 *   1. read and JSON-parse every manifest that exists (required ones must);
 *   2. validate each against its zod schema; all schema problems are reported together;
 *   3. check cross references (item ids, biome ids, node types, model ids, positions...);
 *   4. build maps and lookups.
 *
 * Two modes. Strict (the default) throws `ContentError` listing every problem. Lenient
 * (`loadContentLenient`, used only for `SKIP_MANIFESTS=true` in tests and development) loads what is
 * usable instead: a file that is missing, not JSON or not an array of entries counts as empty; an
 * entry that fails its schema or names something unknown is left out (again and again until
 * nothing left refers to something left out), and each is reported as a skipped problem. Only a
 * `world-areas.json` the world cannot run without still stops it.
 *
 * Items: `items.json` is either the whole item list, or (as shipped) an index
 * `{ "files": ["items/food.json", ...] }`. Without `items.json` the five `items/*.json` files are
 * read. Each item gets `category` from the file it came from when it has none.
 */
import { readFile, access } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { centredFootprintTiles, footprintOf, stationModelScales } from "./footprint.js";
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
  ItemSchema,
  ItemsIndexSchema,
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
  type SkillUnlocks,
  type SmithingRecipe,
  type StarterKit,
  type Station,
  type StationType,
  type Store,
  type ToolDef,
  type Vegetation,
  type WorldArea,
  type WorldAreas,
} from "./schemas.js";

/** The five files that can stand in for `items.json` (README.md#game-content-and-manifests). */
export const ITEM_FILES = ["items/food.json", "items/weapons.json", "items/tools.json", "items/resources.json", "items/misc.json"] as const;

/** Required manifests besides the items (README.md#game-content-and-manifests). */
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

/** One readable line for an issue: `npcs.json: [3].drops.table[0].itemId: unknown item "bronze_sord"`. */
export function formatIssue(i: ContentIssue): string {
  return `${i.file}: ${i.path ? `${i.path}: ` : ""}${i.message}`;
}

/** At most this many problems are listed; the rest are counted in a last line. */
const MAX_LISTED_ISSUES = 50;

/** Thrown when the content is missing, malformed or inconsistent. `problems` (and the message)
 * hold one line per issue: `npcs.json: [3].drops.table[0].itemId: unknown item "bronze_sord"`. */
export class ContentError extends Error {
  override readonly name = "ContentError";
  /** One readable line per problem (the entry point prints them one per line). */
  readonly problems: string[];
  constructor(readonly issues: readonly ContentIssue[]) {
    const lines = issues.slice(0, MAX_LISTED_ISSUES).map(formatIssue);
    if (issues.length > MAX_LISTED_ISSUES) lines.push(`(and ${issues.length - MAX_LISTED_ISSUES} more)`);
    super(lines.join("\n"));
    this.problems = lines;
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
  /** Tiles covered by buildings and by station footprints, keyed `${x},${z}`. A station blocks
   * the footprint model-bounds.json gives its model (the model's dimensions times the stations'
   * one `modelScale`, centred on its tile, see `centredFootprintTiles`), or its own tile when the
   * model has no bounds entry. */
  readonly blockedTiles: ReadonlySet<string>;
  /** Tiles each station covers, keyed by station id. */
  readonly stationTiles: ReadonlyMap<string, readonly Tile[]>;
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

/**
 * `isBlocked` for the hot paths (A* asks it for every cell it visits): one byte per tile of the
 * world bounds instead of a string key per lookup; tiles outside the bounds fall back to the set.
 */
function blockedLookup(bounds: WorldBounds, blocked: ReadonlySet<string>): (x: number, z: number) => boolean {
  const width = bounds.maxX - bounds.minX + 1;
  const grid = new Uint8Array(width * (bounds.maxZ - bounds.minZ + 1));
  for (const key of blocked) {
    const [x, z] = key.split(",").map(Number) as [number, number];
    if (inRect(bounds, x, z)) grid[(z - bounds.minZ) * width + (x - bounds.minX)] = 1;
  }
  return (x, z) => {
    const tx = toTile(x);
    const tz = toTile(z);
    return inRect(bounds, tx, tz) ? grid[(tz - bounds.minZ) * width + (tx - bounds.minX)] === 1 : blocked.has(tileKey(tx, tz));
  };
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

/** Where a manifest is read from: `overlayDir` when it holds the file, `dir` otherwise. */
async function locate(dir: string, file: string, overlayDir?: string): Promise<string> {
  if (overlayDir) {
    const staged = path.join(overlayDir, file);
    if (await exists(staged)) return staged;
  }
  return path.join(dir, file);
}

/** The item files an `items.json` index names, or `undefined` when it is not a valid index. */
export function itemIndexFiles(json: unknown): string[] | undefined {
  const parsed = ItemsIndexSchema.safeParse(json);
  return parsed.success ? parsed.data.files : undefined;
}

/**
 * Required manifests absent from `dir` (README.md#game-content-and-manifests), seen through `overlayDir` when given.
 * Items count as present when `items.json` is a list, when it is an index and every file it names
 * exists (each missing one is reported as `items/food.json (listed in items.json)`), or, without
 * `items.json`, when all five `items/*.json` files exist (otherwise `items.json (or items/*.json)`).
 * An `items.json` that is neither is malformed rather than missing: the loader names its problem.
 */
export async function missingRequired(dir: string, overlayDir?: string): Promise<string[]> {
  const has = async (f: string) => exists(await locate(dir, f, overlayDir));
  const missing: string[] = [];
  for (const f of REQUIRED_MANIFESTS) if (!(await has(f))) missing.push(f);
  if (await has("items.json")) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(await locate(dir, "items.json", overlayDir), "utf8"));
    } catch {
      return missing;
    }
    for (const f of itemIndexFiles(json) ?? []) if (!(await has(f))) missing.push(`${f} (listed in items.json)`);
  } else {
    const present = await Promise.all(ITEM_FILES.map(has));
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

export interface LoadOptions {
  /** Read a file from here when it exists there, from `dir` otherwise. The manifest sync uses it
   * to validate a staged download merged with the cached copies before moving anything. */
  overlayDir?: string;
}

/** What a lenient load produced, and what it left out. */
export interface LenientLoad {
  content: GameContent;
  /** Every problem found; the entries (or files) concerned were left out. */
  skipped: readonly ContentIssue[];
}

/** The data of every manifest after schema validation; the lists may be pruned (lenient mode). */
interface Parsed {
  files: string[];
  itemSources: { file: string; category: ItemCategory | undefined; list: ItemManifestEntry[] }[];
  npcs: NpcDef[];
  worldAreas: WorldAreas;
  biomes: Biome[];
  stores: Store[];
  ammunition: Ammunition[];
  tools: ToolDef[];
  music: MusicTrack[];
  vegetation: Vegetation[];
  buildings: Building[];
  stations: Station[];
  prayers: Prayer[];
  resources: ResourceNode[];
  gathering: { file: string; skill: string; list: GatheringNode[] }[];
  cooking: CookingRecipe[];
  smithing: SmithingRecipe[];
  unlocks: SkillUnlocks | undefined;
  starterKit: StarterKit;
  templates: CharacterTemplate[];
  modelBounds: ModelBoundsManifest | undefined;
}

/** Reads all manifests of `dir`, validates them and builds the content. Throws `ContentError`
 * listing every problem (file, field path, message). */
export async function loadContent(dir: string, opts: LoadOptions = {}): Promise<GameContent> {
  const issues: ContentIssue[] = [];
  const parsed = await readAll(dir, opts, false, issues);
  if (!parsed || issues.length > 0) throw new ContentError(issues);
  const checked = crossCheck(parsed, true);
  if (checked.issues.length > 0) throw new ContentError(checked.issues);
  return build(parsed, checked);
}

/**
 * `SKIP_MANIFESTS`: loads whatever is usable and reports the rest (see the module comment).
 * Throws `ContentError` only when `world-areas.json` is missing or invalid.
 */
export async function loadContentLenient(dir: string, opts: LoadOptions = {}): Promise<LenientLoad> {
  const skipped: ContentIssue[] = [];
  const parsed = await readAll(dir, opts, true, skipped);
  if (!parsed) throw new ContentError(skipped.filter((i) => i.file === "world-areas.json"));
  const lists = prunableLists(parsed);
  for (;;) {
    const checked = crossCheck(parsed, false);
    const drop = new Map<unknown[], Set<number>>();
    const kept: ContentIssue[] = [];
    for (const issue of checked.issues) {
      const m = /^(areas|items)?\[(\d+)\]/.exec(issue.path);
      const list = m ? lists.get(m[1] ? `${issue.file}#${m[1]}` : issue.file) : undefined;
      if (!list || !m) {
        kept.push(issue);
        continue;
      }
      if (!drop.has(list)) drop.set(list, new Set());
      drop.get(list)!.add(Number(m[2]));
      skipped.push(issue);
    }
    if (drop.size === 0) {
      // What cannot be left out (the spawn tile, the starter kit's size) is only reported.
      skipped.push(...kept);
      return { content: build(parsed, checked), skipped };
    }
    for (const [list, indices] of drop) for (const i of [...indices].sort((a, b) => b - a)) list.splice(i, 1);
  }
}

/** The lists an issue path can point into, keyed by file (`file#areas` / `file#items` for the
 * lists inside world-areas.json and starter-kit.json). */
function prunableLists(p: Parsed): Map<string, unknown[]> {
  const m = new Map<string, unknown[]>([
    ["npcs.json", p.npcs],
    ["world-areas.json#areas", p.worldAreas.areas],
    ["biomes.json", p.biomes],
    ["stores.json", p.stores],
    ["ammunition.json", p.ammunition],
    ["tools.json", p.tools],
    ["music.json", p.music],
    ["vegetation.json", p.vegetation],
    ["buildings.json", p.buildings],
    ["stations.json", p.stations],
    ["prayers.json", p.prayers],
    ["resources.json", p.resources],
    ["recipes/cooking.json", p.cooking],
    ["recipes/smithing.json", p.smithing],
    ["starter-kit.json#items", p.starterKit.items],
    ["templates.json", p.templates],
  ]);
  for (const s of p.itemSources) m.set(s.file, s.list);
  for (const g of p.gathering) m.set(g.file, g.list);
  return m;
}

/**
 * Phases 1-2: reads, parses and validates every manifest. Problems go to `issues`. In lenient mode
 * an array file keeps its valid entries. Returns `undefined` when the content cannot be built
 * (strict: a required file is unusable; lenient: world-areas.json is).
 */
async function readAll(dir: string, opts: LoadOptions, lenient: boolean, issues: ContentIssue[]): Promise<Parsed | undefined> {
  const files: string[] = [];

  /** Reads, parses and validates one file; `undefined` when absent (and not required) or bad. */
  async function read<S extends z.ZodType>(file: string, schema: S, required: boolean): Promise<z.infer<S> | undefined> {
    let text: string;
    try {
      text = await readFile(await locate(dir, file, opts.overlayDir), "utf8");
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
    if (result.success) return result.data;
    // Lenient: keep the entries of a list that pass their schema.
    const element = schema instanceof z.ZodArray ? (schema.element as z.ZodType) : file === "items.json" ? ItemSchema : undefined;
    if (lenient && element && Array.isArray(json)) {
      const kept: unknown[] = [];
      json.forEach((entry, i) => {
        const r = element.safeParse(entry);
        if (r.success) kept.push(r.data);
        else for (const e of r.error.issues) issues.push({ file, path: formatPath([i, ...e.path]), message: e.message });
      });
      return kept as z.infer<S>;
    }
    for (const i of result.error.issues) issues.push({ file, path: formatPath(i.path), message: i.message });
    return undefined;
  }

  const itemSources: Parsed["itemSources"] = [];
  let itemFiles: readonly string[] = ITEM_FILES;
  if (await exists(await locate(dir, "items.json", opts.overlayDir))) {
    const root = await read("items.json", ItemsRootSchema, true);
    itemFiles = root && !Array.isArray(root) ? root.files : [];
    if (Array.isArray(root)) itemSources.push({ file: "items.json", category: undefined, list: root });
    // Lenient: an unusable items.json is as good as none.
    if (lenient && root === undefined) itemFiles = ITEM_FILES;
  }
  for (const f of itemFiles) {
    const list = await read(f, ItemListSchema, true);
    const stem = path.posix.basename(f, ".json");
    const category = ITEM_CATEGORIES.find((c) => c === stem);
    itemSources.push({ file: f, category, list: list ?? [] });
  }
  const npcs = await read("npcs.json", NpcListSchema, true);
  const worldAreas = await read("world-areas.json", WorldAreasSchema, true);
  const biomes = await read("biomes.json", BiomeListSchema, true);
  const stores = await read("stores.json", StoreListSchema, true);
  const ammunition = (await read("ammunition.json", AmmunitionListSchema, false)) ?? [];
  const tools = (await read("tools.json", ToolListSchema, false)) ?? [];
  const music = (await read("music.json", MusicListSchema, false)) ?? [];
  const vegetation = (await read("vegetation.json", VegetationListSchema, false)) ?? [];
  const buildings = (await read("buildings.json", BuildingListSchema, false)) ?? [];
  const stations = (await read("stations.json", StationListSchema, false)) ?? [];
  const prayers = (await read("prayers.json", PrayerListSchema, false)) ?? [];
  const resources = (await read("resources.json", ResourceNodeListSchema, false)) ?? [];
  const gathering: Parsed["gathering"] = [];
  for (const skill of GATHERING_SKILLS) {
    const file = `gathering/${skill}.json`;
    gathering.push({ file, skill, list: (await read(file, GatheringListSchema, false)) ?? [] });
  }
  const cooking = (await read("recipes/cooking.json", CookingListSchema, false)) ?? [];
  const smithing = (await read("recipes/smithing.json", SmithingListSchema, false)) ?? [];
  const unlocks = await read("skill-unlocks.json", SkillUnlocksSchema, false);
  const starterKit = (await read("starter-kit.json", StarterKitSchema, false)) ?? { coins: 0, items: [] };
  const templates = (await read("templates.json", TemplateListSchema, false)) ?? [];
  const modelBounds = await read("model-bounds.json", ModelBoundsManifestSchema, false);

  if (!worldAreas) return undefined;
  if (!lenient && (!npcs || !biomes || !stores)) return undefined;
  return {
    files,
    itemSources,
    npcs: npcs ?? [],
    worldAreas,
    biomes: biomes ?? [],
    stores: stores ?? [],
    ammunition,
    tools,
    music,
    vegetation,
    buildings,
    stations,
    prayers,
    resources,
    gathering,
    cooking,
    smithing,
    unlocks,
    starterKit,
    templates,
    modelBounds,
  };
}

/** Maps and lookups derived while checking, reused to build the content. */
interface Checked {
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
  stationTiles: Map<string, Tile[]>;
  areaAt: (x: number, z: number) => WorldArea | undefined;
}

/** Phase 3: every cross reference and placement rule. `checkModels`: model ids must have a
 * model-bounds.json entry when that file is present. */
function crossCheck(p: Parsed, checkModels: boolean): Checked {
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
  const slotsFor = (list: readonly { itemId: string; quantity: number }[]) =>
    list.reduce((n, e) => n + (items.get(e.itemId)?.stackable ? 1 : e.quantity), 0);

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
  byId("stations.json", p.stations, (s) => s.id, (i) => `[${i}].id`);
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
      if (!inRect(worldBounds, t.x, t.z)) issue("stations.json", `[${i}]`, `${at} is outside the world bounds`);
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
  const blockedTiles = new Set([...buildingTiles, ...stationAt.keys()]);

  /** A placed thing must be inside the world and on a free tile. */
  const checkTile = (file: string, at: string, x: number, z: number) => {
    const key = tileKey(x, z);
    if (!inRect(worldBounds, x, z)) issue(file, at, `position (${x}, ${z}) is outside the world bounds`);
    else if (buildingTiles.has(key)) issue(file, at, `position (${x}, ${z}) is inside a building`);
    else if (stationAt.has(key)) issue(file, at, `position (${x}, ${z}) is taken by station "${stationAt.get(key)}"`);
  };

  byId("world-areas.json", areas, (a) => a.id, (i) => `areas[${i}].id`);
  areas.forEach((a, i) => {
    const at = `areas[${i}]`;
    const b = a.bounds;
    if (!inRect(worldBounds, b.minX, b.minZ) || !inRect(worldBounds, b.maxX, b.maxZ)) issue("world-areas.json", `${at}.bounds`, "area extends outside worldBounds");
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
    return areas.find((a) => inRect(a.bounds, tx, tz));
  };
  checkTile("world-areas.json", "spawn", spawn.x, spawn.z);
  if (!areaAt(spawn.x, spawn.z)?.safeZone) issue("world-areas.json", "spawn", "the spawn tile must lie in a safe area");

  p.buildings.forEach((b, i) => {
    const corner = { x: b.x + b.footprint.width - 1, z: b.z + b.footprint.depth - 1 };
    if (!inRect(worldBounds, b.x, b.z) || !inRect(worldBounds, corner.x, corner.z)) issue("buildings.json", `[${i}]`, "building extends outside the world bounds");
    if (inRect({ minX: b.x, minZ: b.z, maxX: corner.x, maxZ: corner.z }, spawn.x, spawn.z)) issue("buildings.json", `[${i}]`, "building covers the spawn tile");
  });

  p.vegetation.forEach((v, i) =>
    v.biomes.forEach((b, j) => {
      if (!biomes.has(b)) issue("vegetation.json", `[${i}].biomes[${j}]`, `unknown biome "${b}"`);
    }),
  );
  byId("vegetation.json", p.vegetation, (v) => v.id);

  const tools = byId("tools.json", p.tools, (t) => t.itemId, (i) => `[${i}].itemId`);
  p.tools.forEach((t, i) => checkItem("tools.json", `[${i}].itemId`, t.itemId));

  const ammunition = byId("ammunition.json", p.ammunition, (a) => a.itemId, (i) => `[${i}].itemId`);
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

  const npcs = byId("npcs.json", p.npcs, (n) => n.id, (i) => `[${i}].id`);
  p.npcs.forEach((n, i) => {
    n.drops.always.forEach((d, j) => checkItem("npcs.json", `[${i}].drops.always[${j}].itemId`, d.itemId, { coins: true }));
    n.drops.table.forEach((d, j) => checkItem("npcs.json", `[${i}].drops.table[${j}].itemId`, d.itemId, { coins: true }));
    if (n.drops.rolls > 0 && n.drops.table.length === 0) issue("npcs.json", `[${i}].drops.rolls`, "rolls on an empty table");
    n.spawns.forEach((s, j) => {
      checkTile("npcs.json", `[${i}].spawns[${j}]`, s.x, s.z);
      if (n.aggressive && areaAt(s.x, s.z)?.safeZone) issue("npcs.json", `[${i}].spawns[${j}]`, "an aggressive NPC cannot spawn in a safe area");
    });
  });

  const stores = byId("stores.json", p.stores, (s) => s.id, (i) => `[${i}].id`);
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
  byId("resources.json", p.resources, (r) => r.id, (i) => `[${i}].id`);
  p.resources.forEach((r, i) => {
    if (!gatheringNodes.has(r.type)) issue("resources.json", `[${i}].type`, `unknown gathering node type "${r.type}"`);
    checkTile("resources.json", `[${i}]`, r.x, r.z);
    const key = tileKey(r.x, r.z);
    if (occupied.has(key)) issue("resources.json", `[${i}]`, `another resource node stands on (${r.x}, ${r.z})`);
    occupied.add(key);
  });

  byId("recipes/cooking.json", p.cooking, (r) => r.id, (i) => `[${i}].id`);
  p.cooking.forEach((r, i) => {
    for (const k of ["input", "output", "burnt"] as const) checkItem("recipes/cooking.json", `[${i}].${k}`, r[k]);
    if (r.stations.includes("range") && p.stations.length > 0 && !p.stations.some((s) => s.type === "range"))
      issue("recipes/cooking.json", `[${i}].stations`, "no range station exists");
  });
  byId("recipes/smithing.json", p.smithing, (r) => r.id, (i) => `[${i}].id`);
  p.smithing.forEach((r, i) => {
    r.inputs.forEach((e, j) => checkItem("recipes/smithing.json", `[${i}].inputs[${j}].itemId`, e.itemId));
    r.tools.forEach((t, j) => checkItem("recipes/smithing.json", `[${i}].tools[${j}]`, t));
    checkItem("recipes/smithing.json", `[${i}].output.itemId`, r.output.itemId);
    if (r.station === "anvil" && !r.tools.some((t) => tools.get(t)?.skill === "smithing"))
      issue("recipes/smithing.json", `[${i}].tools`, "anvil recipes need a smithing tool (hammer)");
  });

  byId("prayers.json", p.prayers, (x) => x.id, (i) => `[${i}].id`);

  p.starterKit.items.forEach((e, i) => checkItem("starter-kit.json", `items[${i}].itemId`, e.itemId, { tradeable: true }));
  if (slotsFor(p.starterKit.items) > INVENTORY_SIZE) issue("starter-kit.json", "items", `needs more than ${INVENTORY_SIZE} slots`);

  const templates = byId("templates.json", p.templates, (t) => t.id, (i) => `[${i}].id`);
  p.templates.forEach((t, i) => {
    t.items.forEach((e, j) => checkItem("templates.json", `[${i}].items[${j}].itemId`, e.itemId));
    for (const [skill, level] of Object.entries(t.skills) as [SkillName, number][]) {
      const min = STARTING_LEVELS[skill] ?? 1;
      if (level < min) issue("templates.json", `[${i}].skills.${skill}`, `must be at least ${min}`);
    }
    if (slotsFor(p.starterKit.items) + slotsFor(t.items) > INVENTORY_SIZE)
      issue("templates.json", `[${i}].items`, `with the starter kit needs more than ${INVENTORY_SIZE} slots`);
  });

  return { issues, items, tools, ammunition, npcs, biomes, music, stores, gatheringNodes, templates, blockedTiles, stationTiles, areaAt };
}

/** Phase 4: the read-only content. */
function build(p: Parsed, c: Checked): GameContent {
  const skillUnlocks = {} as Record<SkillName, SkillUnlock[]>;
  for (const s of SKILLS) skillUnlocks[s] = [...(p.unlocks?.[s] ?? [])].sort((a, b) => a.level - b.level);
  const { worldBounds, spawn, areas } = p.worldAreas;
  const { blockedTiles, areaAt } = c;
  const stations = p.stations.filter((s) => c.stationTiles.has(s.id));

  const isBlocked = blockedLookup(worldBounds, blockedTiles);
  return {
    files: p.files,
    items: c.items,
    ammunition: c.ammunition,
    tools: c.tools,
    npcs: c.npcs,
    biomes: c.biomes,
    music: c.music,
    vegetation: p.vegetation,
    areas,
    worldBounds: { ...worldBounds },
    spawn: { ...spawn },
    stations,
    buildings: p.buildings,
    stores: c.stores,
    gatheringNodes: c.gatheringNodes,
    resourceNodes: p.resources,
    recipes: { cooking: p.cooking, smithing: p.smithing },
    prayers: p.prayers,
    skillUnlocks,
    starterKit: p.starterKit,
    templates: c.templates,
    modelBounds: p.modelBounds,
    blockedTiles,
    stationTiles: c.stationTiles,
    areaAt,
    isPvp: (x, z) => areaAt(x, z)?.pvp ?? false,
    isSafe: (x, z) => areaAt(x, z)?.safeZone ?? false,
    isBlocked,
    inBounds: (x, z) => inRect(worldBounds, toTile(x), toTile(z)),
    stationNear(type, x, z, range) {
      let best: Station | undefined;
      let bestDist = Infinity;
      for (const s of stations) {
        const d = Math.max(Math.abs(s.x - x), Math.abs(s.z - z));
        if (s.type === type && d <= range && d < bestDist) [best, bestDist] = [s, d];
      }
      return best;
    },
  };
}
