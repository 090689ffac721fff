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
import type {
  Biome,
  Building,
  Fence,
  ModelBoundsManifest,
  MusicTrack,
  ResourceNode,
  Station,
  StationType,
  Store,
  Vegetation,
  WorldArea,
} from "./world-schemas.js";

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
  /** Tiles nobody may stand on or walk through, keyed `${x},${z}`: those covered by buildings, by
   * station footprints and by fences (gates aside). A station blocks the footprint
   * model-bounds.json gives its model (the model's dimensions times the stations' one
   * `modelScale`, centred on its tile, see `centredFootprintTiles`), or its own tile when the
   * model has no bounds entry. */
  readonly blockedTiles: ReadonlySet<string>;
  /** The fence tiles of every area (`fences` in world-areas.json), gates aside: blocked for
   * walking, not for sight. A subset of `blockedTiles`. */
  readonly fenceTiles: ReadonlySet<string>;
  /** The gates of those fences: free for players, blocked for NPCs. */
  readonly gateTiles: ReadonlySet<string>;
  /** Tiles each station covers, keyed by station id. */
  readonly stationTiles: ReadonlyMap<string, readonly Tile[]>;
  /** The area containing the position, if any. */
  areaAt(x: number, z: number): WorldArea | undefined;
  isPvp(x: number, z: number): boolean;
  isSafe(x: number, z: number): boolean;
  /** May nobody stand on or walk through the tile (building, station, fence)? */
  isBlocked(x: number, z: number): boolean;
  /** Does the tile cut a line of sight: a building or a station, not a fence (arrows fly over). */
  blocksSight(x: number, z: number): boolean;
  /** May an NPC not enter the tile: a blocked tile or a gate (NPCs do not open gates). */
  blocksNpc(x: number, z: number): boolean;
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
 * The tiles of a fence: `from` to `to` inclusive along its one axis, gates included (a fence that
 * is not straight gives its `from` tile only; the schema refuses it).
 */
export function fenceTilesOf(f: Fence): Tile[] {
  if (f.from.x !== f.to.x && f.from.z !== f.to.z) return [{ ...f.from }];
  const n = Math.max(Math.abs(f.to.x - f.from.x), Math.abs(f.to.z - f.from.z));
  const sx = Math.sign(f.to.x - f.from.x);
  const sz = Math.sign(f.to.z - f.from.z);
  const out: Tile[] = [];
  for (let i = 0; i <= n; i++) out.push({ x: f.from.x + i * sx, z: f.from.z + i * sz });
  return out;
}

/** Bits of a tile in the `tileLookups` grid. */
const WALK = 1;
const SIGHT = 2;
const NPC = 4;

/** The tile lookups of `GameContent`. */
export interface TileLookups {
  readonly isBlocked: (x: number, z: number) => boolean;
  readonly blocksSight: (x: number, z: number) => boolean;
  readonly blocksNpc: (x: number, z: number) => boolean;
}

/**
 * The tile lookups for the hot paths (A* asks `isBlocked` for every cell it visits): one byte of
 * flags per tile of the world bounds instead of a string key per lookup; tiles outside the bounds
 * fall back to the sets. `blocked` holds every walking-blocked tile (fences included), `fences` the
 * ones among them that do not block sight, `gates` the tiles only NPCs may not enter.
 */
export function tileLookups(bounds: WorldBounds, blocked: ReadonlySet<string>, fences: ReadonlySet<string>, gates: ReadonlySet<string>): TileLookups {
  const width = bounds.maxX - bounds.minX + 1;
  const grid = new Uint8Array(width * (bounds.maxZ - bounds.minZ + 1));
  const mark = (keys: ReadonlySet<string>, set: number, clear = 0) => {
    for (const key of keys) {
      const [x, z] = key.split(",").map(Number) as [number, number];
      if (inBounds(bounds, x, z)) {
        const i = (z - bounds.minZ) * width + (x - bounds.minX);
        grid[i] = (grid[i]! | set) & ~clear;
      }
    }
  };
  mark(blocked, WALK | SIGHT | NPC);
  mark(fences, 0, SIGHT);
  mark(gates, NPC);
  /** The flags of tile (x, z) inside the bounds, or -1 outside them (no allocation: A* calls it). */
  const at = (tx: number, tz: number): number => (inBounds(bounds, tx, tz) ? grid[(tz - bounds.minZ) * width + (tx - bounds.minX)]! : -1);
  return {
    isBlocked: (x, z) => {
      const f = at(toTile(x), toTile(z));
      return f >= 0 ? (f & WALK) !== 0 : blocked.has(tileKey(toTile(x), toTile(z)));
    },
    blocksSight: (x, z) => {
      const f = at(toTile(x), toTile(z));
      if (f >= 0) return (f & SIGHT) !== 0;
      const k = tileKey(toTile(x), toTile(z));
      return blocked.has(k) && !fences.has(k);
    },
    blocksNpc: (x, z) => {
      const f = at(toTile(x), toTile(z));
      if (f >= 0) return (f & NPC) !== 0;
      const k = tileKey(toTile(x), toTile(z));
      return blocked.has(k) || gates.has(k);
    },
  };
}
