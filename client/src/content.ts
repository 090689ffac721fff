/**
 * The game content the client draws and names things with, read from the server's public manifests
 * (`GET /manifests/<file>`, docs/content.md "Game content and manifests"). Nothing about the map is written
 * in the client: areas, biomes, buildings, stations and stores all come from here.
 */

export interface Bounds {
  minX: number;
  maxX: number;
  minZ: number;
  maxZ: number;
}
/** A straight fence one tile wide, `from` to `to` inclusive; its `gates` are tiles players walk through. */
export interface Fence {
  from: Tile;
  to: Tile;
  gates?: Tile[];
}
export interface Area {
  id: string;
  name: string;
  bounds: Bounds;
  biome: string;
  pvp: boolean;
  safeZone: boolean;
  /** Optional: fences block walking, not sight (docs/content.md "Game content and manifests"). */
  fences?: Fence[];
}
export interface Biome {
  id: string;
  name: string;
  groundColor: string;
}
export interface Building {
  id: string;
  name: string;
  x: number;
  z: number;
  footprint: { width: number; depth: number };
}
export interface Station {
  id: string;
  type: string;
  name: string;
  x: number;
  z: number;
  modelId: string;
}
export interface Store {
  id: string;
  name: string;
  x: number;
  z: number;
  stock: { itemId: string; quantity: number }[];
  buyMultiplier: number;
  sellMultiplier: number;
}
export interface ItemDef {
  id: string;
  name: string;
  value: number;
  stackable: boolean;
  tradeable?: boolean;
  equipSlot?: string;
  examine?: string;
}
export interface NpcDef {
  id: string;
  name: string;
  attackable: boolean;
  combatLevel: number;
}

/** The manifests as served, the parts the client reads. */
export interface Manifests {
  worldAreas: { worldBounds: Bounds; spawn: { x: number; z: number }; areas: Area[] };
  biomes: Biome[];
  buildings: Building[];
  stations: Station[];
  stores: Store[];
  items: ItemDef[];
  npcs: NpcDef[];
  modelBounds: { models: { id: string; footprint?: { width: number; depth: number } }[] };
}

export interface Tile {
  x: number;
  z: number;
}

/** The content in the shape the client uses: lookups by id and the blocked tiles of the map. */
export interface Content {
  bounds: Bounds;
  spawn: Tile;
  areas: Area[];
  biomeColor: (biome: string) => string;
  buildings: Building[];
  stations: (Station & { tiles: Tile[] })[];
  /** Every fence tile of every area, with its direction (for drawing) and whether it is a gate. */
  fenceTiles: (Tile & { alongX: boolean; gate: boolean })[];
  stores: Store[];
  items: ReadonlyMap<string, ItemDef>;
  npcs: ReadonlyMap<string, NpcDef>;
  /** `x,z` of every tile a building, station or fence (gates aside) covers: nobody walks there. */
  blocked: ReadonlySet<string>;
  itemName: (id: string) => string;
  areaAt: (x: number, z: number) => Area | undefined;
}

export const tileKey = (x: number, z: number): string => `${x},${z}`;

/**
 * The tiles a station covers: its model's footprint (model-bounds.json) centred on its tile, an
 * even side taking the extra tile toward +x/+z (docs/content.md "Game content and manifests").
 */
export function centredTiles(x: number, z: number, footprint: { width: number; depth: number }): Tile[] {
  const x0 = x - Math.floor((footprint.width - 1) / 2);
  const z0 = z - Math.floor((footprint.depth - 1) / 2);
  const out: Tile[] = [];
  for (let dx = 0; dx < footprint.width; dx++) for (let dz = 0; dz < footprint.depth; dz++) out.push({ x: x0 + dx, z: z0 + dz });
  return out;
}

/** Builds the lookups; pure, so the unit tests feed it manifests directly. */
export function buildContent(m: Manifests): Content {
  const footprints = new Map(m.modelBounds.models.map((b) => [b.id, b.footprint]));
  const blocked = new Set<string>();
  // A building's x, z is its minimum corner.
  for (const b of m.buildings)
    for (let dx = 0; dx < b.footprint.width; dx++) for (let dz = 0; dz < b.footprint.depth; dz++) blocked.add(tileKey(b.x + dx, b.z + dz));
  const stations = m.stations.map((s) => {
    const fp = footprints.get(s.modelId);
    const tiles = fp ? centredTiles(s.x, s.z, fp) : [{ x: s.x, z: s.z }];
    for (const t of tiles) blocked.add(tileKey(t.x, t.z));
    return { ...s, tiles };
  });
  const fenceTiles: Content["fenceTiles"] = [];
  for (const a of m.worldAreas.areas)
    for (const f of a.fences ?? []) {
      const n = Math.max(Math.abs(f.to.x - f.from.x), Math.abs(f.to.z - f.from.z));
      const [sx, sz] = [Math.sign(f.to.x - f.from.x), Math.sign(f.to.z - f.from.z)];
      for (let i = 0; i <= n; i++) {
        const t = { x: f.from.x + i * sx, z: f.from.z + i * sz };
        const gate = (f.gates ?? []).some((g) => g.x === t.x && g.z === t.z);
        fenceTiles.push({ ...t, alongX: f.from.z === f.to.z && f.from.x !== f.to.x, gate });
      }
    }
  // A tile that is a gate of one fence and a plain tile of another stays a fence (as on the server).
  for (const t of fenceTiles) if (!t.gate) blocked.add(tileKey(t.x, t.z));
  const items = new Map(m.items.map((i) => [i.id, i]));
  const colors = new Map(m.biomes.map((b) => [b.id, b.groundColor]));
  const areas = m.worldAreas.areas;
  return {
    bounds: m.worldAreas.worldBounds,
    spawn: m.worldAreas.spawn,
    areas,
    biomeColor: (id) => colors.get(id) ?? "#5a7a3a",
    buildings: m.buildings,
    stations,
    fenceTiles,
    stores: m.stores,
    items,
    npcs: new Map(m.npcs.map((n) => [n.id, n])),
    blocked,
    itemName: (id) => (id === "coins" ? "Coins" : (items.get(id)?.name ?? id)),
    areaAt: (x, z) => areas.find((a) => x >= a.bounds.minX && x <= a.bounds.maxX && z >= a.bounds.minZ && z <= a.bounds.maxZ),
  };
}

async function getJson<T>(base: string, file: string): Promise<T> {
  const r = await fetch(`${base}/manifests/${file}`);
  if (!r.ok) throw new Error(`manifest ${file}: HTTP ${r.status}`);
  return (await r.json()) as T;
}

/** Fetches every manifest the client needs from the server at `base` (its origin). */
export async function loadContent(base: string): Promise<Content> {
  const optional = <T>(p: Promise<T>, fallback: T) => p.catch(() => fallback);
  const [worldAreas, biomes, buildings, stations, stores, npcs, index, modelBounds] = await Promise.all([
    getJson<Manifests["worldAreas"]>(base, "world-areas.json"),
    getJson<Biome[]>(base, "biomes.json"),
    optional(getJson<Building[]>(base, "buildings.json"), []),
    optional(getJson<Station[]>(base, "stations.json"), []),
    getJson<Store[]>(base, "stores.json"),
    getJson<NpcDef[]>(base, "npcs.json"),
    getJson<{ files: string[] }>(base, "items.json"),
    optional(getJson<Manifests["modelBounds"]>(base, "model-bounds.json"), { models: [] }),
  ]);
  const items = (await Promise.all(index.files.map((f) => getJson<ItemDef[]>(base, f)))).flat();
  return buildContent({ worldAreas, biomes, buildings, stations, stores, items, npcs, modelBounds });
}
