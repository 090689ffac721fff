/**
 * The manifest files: which exist, which are required, where each is read from (a staged download
 * over the cached copies), and which required ones are missing (docs/content.md#game-content-and-manifests).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { fileExists } from "./files.js";
import { ItemsIndexSchema } from "./schemas.js";

/** The five files that can stand in for `items.json` (docs/content.md#game-content-and-manifests). */
export const ITEM_FILES = ["items/food.json", "items/weapons.json", "items/tools.json", "items/resources.json", "items/misc.json"] as const;

/** Required manifests besides the items (docs/content.md#game-content-and-manifests). */
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

/** Where a manifest is read from: `overlayDir` when it holds the file, `dir` otherwise. */
export async function locate(dir: string, file: string, overlayDir?: string): Promise<string> {
  if (overlayDir) {
    const staged = path.join(overlayDir, file);
    if (await fileExists(staged)) return staged;
  }
  return path.join(dir, file);
}

/** The item files an `items.json` index names, or `undefined` when it is not a valid index. */
export function itemIndexFiles(json: unknown): string[] | undefined {
  const parsed = ItemsIndexSchema.safeParse(json);
  return parsed.success ? parsed.data.files : undefined;
}

/**
 * Required manifests absent from `dir` (docs/content.md#game-content-and-manifests), seen through `overlayDir` when given.
 * Items count as present when `items.json` is a list, when it is an index and every file it names
 * exists (each missing one is reported as `items/food.json (listed in items.json)`), or, without
 * `items.json`, when all five `items/*.json` files exist (otherwise `items.json (or items/*.json)`).
 * An `items.json` that is neither is malformed rather than missing: the loader names its problem.
 */
export async function missingRequired(dir: string, overlayDir?: string): Promise<string[]> {
  const has = async (f: string) => fileExists(await locate(dir, f, overlayDir));
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
