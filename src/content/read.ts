/**
 * Phases 1-2 of loading the content: read and JSON-parse every manifest that exists, and validate
 * each against its zod schema (src/content/schemas.ts).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import { formatPath, type ContentIssue } from "./issues.js";
import { fileExists } from "./files.js";
import { ITEM_FILES, locate } from "./manifests.js";
import {
  AmmunitionListSchema,
  CookingListSchema,
  GATHERING_SKILLS,
  GatheringListSchema,
  ITEM_CATEGORIES,
  ItemListSchema,
  ItemSchema,
  ItemsRootSchema,
  NpcListSchema,
  PrayerListSchema,
  SkillUnlocksSchema,
  SmithingListSchema,
  StarterKitSchema,
  TemplateListSchema,
  ToolListSchema,
  type Ammunition,
  type CharacterTemplate,
  type CookingRecipe,
  type GatheringNode,
  type ItemCategory,
  type ItemManifestEntry,
  type NpcDef,
  type Prayer,
  type SkillUnlocks,
  type SmithingRecipe,
  type StarterKit,
  type ToolDef,
} from "./schemas.js";
import {
  BiomeListSchema,
  BuildingListSchema,
  ModelBoundsManifestSchema,
  MusicListSchema,
  ResourceNodeListSchema,
  StationListSchema,
  StoreListSchema,
  VegetationListSchema,
  WorldAreasSchema,
  type Biome,
  type Building,
  type ModelBoundsManifest,
  type MusicTrack,
  type ResourceNode,
  type Station,
  type Store,
  type Vegetation,
  type WorldAreas,
} from "./world-schemas.js";

export interface LoadOptions {
  /** Read a file from here when it exists there, from `dir` otherwise. The manifest sync uses it
   * to validate a staged download merged with the cached copies before moving anything. */
  overlayDir?: string;
}

/** The data of every manifest after schema validation; the lists may be pruned (lenient mode). */
export interface Parsed {
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

/**
 * Phases 1-2: reads, parses and validates every manifest. Problems go to `issues`. In lenient mode
 * an array file keeps its valid entries. Returns `undefined` when the content cannot be built
 * (strict: a required file is unusable; lenient: world-areas.json is).
 */
export async function readAll(dir: string, opts: LoadOptions, lenient: boolean, issues: ContentIssue[]): Promise<Parsed | undefined> {
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
  if (await fileExists(await locate(dir, "items.json", opts.overlayDir))) {
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
