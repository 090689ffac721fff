/**
 * `GameContent`: the read-only view of the manifests that the world and the HTTP layer consume, and
 * the tile helpers its lookups use (the loader builds it from manifests that passed every check).
 */
import { inBounds, type WorldBounds } from "../domain/movement.js";
import type { ItemDef, SkillName, Tile } from "../domain/types.js";
import type {
  Ammunition,
  CharacterTemplate,
  CookingRecipe,
  GatheringNode,
  ItemCategory,
  ItemManifestEntry,
  NpcDef,
  Prayer,
  SkillUnlock,
  SmithingRecipe,
  StarterKit,
  ToolDef,
} from "./schemas.js";
import type { Biome, Building, ModelBoundsManifest, MusicTrack, ResourceNode, Station, StationType, Store, Vegetation, WorldArea } from "./world-schemas.js";

export type ContentItem = ItemManifestEntry & { category: ItemCategory };
/** Compile-time proof that content items are domain items. */
const _itemIsItemDef: (i: ContentItem) => ItemDef = (i) => i;
void _itemIsItemDef;

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
  for (const b of buildings) for (let dx = 0; dx < b.footprint.width; dx++) for (let dz = 0; dz < b.footprint.depth; dz++) out.add(tileKey(b.x + dx, b.z + dz));
  return out;
}

/**
 * `isBlocked` for the hot paths (A* asks it for every cell it visits): one byte per tile of the
 * world bounds instead of a string key per lookup; tiles outside the bounds fall back to the set.
 */
export function blockedLookup(bounds: WorldBounds, blocked: ReadonlySet<string>): (x: number, z: number) => boolean {
  const width = bounds.maxX - bounds.minX + 1;
  const grid = new Uint8Array(width * (bounds.maxZ - bounds.minZ + 1));
  for (const key of blocked) {
    const [x, z] = key.split(",").map(Number) as [number, number];
    if (inBounds(bounds, x, z)) grid[(z - bounds.minZ) * width + (x - bounds.minX)] = 1;
  }
  return (x, z) => {
    const tx = toTile(x);
    const tz = toTile(z);
    return inBounds(bounds, tx, tz) ? grid[(tz - bounds.minZ) * width + (tx - bounds.minX)] === 1 : blocked.has(tileKey(tx, tz));
  };
}
