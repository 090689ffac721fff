/**
 * Loads the game content manifests from a directory, validates each file against its schema,
 * checks every cross reference between files, and returns plain data with pure lookups.
 * No Colyseus, no database: the world room and the HTTP layer consume `GameContent`.
 *
 * Outline of `loadContent` (one module a phase):
 *   1. read and JSON-parse every manifest that exists (required ones must), `read.ts`;
 *   2. validate each against its zod schema; all schema problems are reported together, `read.ts`;
 *   3. check cross references (item ids, biome ids, node types, model ids, positions...), `check.ts`;
 *   4. build maps and lookups, `game-content.ts`.
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
import { inBounds } from "../domain/movement.js";
import { SKILLS, type SkillName } from "../domain/types.js";
import { crossCheck, type Checked } from "./check.js";
import { tileLookups, toTile, type GameContent } from "./game-content.js";
import { ContentError, type ContentIssue } from "./issues.js";
import { readAll, type LoadOptions, type Parsed } from "./read.js";
import type { SkillUnlock } from "./schemas.js";
import type { Station } from "./world-schemas.js";

// What the loader's callers take with it: the content type and the error it throws.
export type { GameContent } from "./game-content.js";
export { ContentError, formatIssue } from "./issues.js";

/** What a lenient load produced, and what it left out. */
export interface LenientLoad {
  content: GameContent;
  /** Every problem found; the entries (or files) concerned were left out. */
  skipped: readonly ContentIssue[];
}

/** Reads all manifests of `dir`, validates them and builds the content. Throws `ContentError`
 * listing every problem (file, field path, message). */
export async function loadContent(dir: string, opts: LoadOptions = {}): Promise<GameContent> {
  const issues: ContentIssue[] = [];
  const parsed = await readAll(dir, opts, false, issues);
  if (!parsed || issues.length > 0) throw new ContentError(issues);
  const checked = crossCheck(parsed, true);
  if (checked.issues.length > 0) throw new ContentError(checked.issues);
  return buildContent(parsed, checked);
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
      return { content: buildContent(parsed, checked), skipped };
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

/** Phase 4: the read-only content from checked manifests. */
function buildContent(p: Parsed, c: Checked): GameContent {
  const skillUnlocks = {} as Record<SkillName, SkillUnlock[]>;
  for (const s of SKILLS) skillUnlocks[s] = [...(p.unlocks?.[s] ?? [])].sort((a, b) => a.level - b.level);
  const { worldBounds, spawn, areas } = p.worldAreas;
  const { blockedTiles, fenceTiles, gateTiles, areaAt } = c;
  const stations = p.stations.filter((s) => c.stationTiles.has(s.id));

  const { isBlocked, blocksSight, blocksNpc } = tileLookups(worldBounds, blockedTiles, fenceTiles, gateTiles);
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
    fenceTiles,
    gateTiles,
    stationTiles: c.stationTiles,
    areaAt,
    isPvp: (x, z) => areaAt(x, z)?.pvp ?? false,
    isSafe: (x, z) => areaAt(x, z)?.safeZone ?? false,
    isBlocked,
    blocksSight,
    blocksNpc,
    inBounds: (x, z) => inBounds(worldBounds, toTile(x), toTile(z)),
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
