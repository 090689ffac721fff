/**
 * Zod schemas of the manifests that lay out the world: biomes, music, vegetation, the areas and
 * world bounds, stations, buildings, stores, placed resource nodes, and the model bounds. The
 * shared building blocks and the schemas of items and skills are in `schemas.ts`, whose
 * conventions (ids, tiles, ticks, chances) hold here too.
 */
import { z } from "zod";
import { BoundsSchema, Chance, IdSchema, ModelIdSchema, PosInt, Text, TileSchema } from "./schemas.js";

// ---------------------------------------------------------------------------------------------
// biomes.json, music.json, vegetation.json

const Color = z.string().regex(/^#[0-9a-f]{6}$/, "must be #rrggbb");
export const BiomeSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1),
  description: Text,
  groundColor: Color,
  fogColor: Color,
  /** 0 = flat, 1 = mountainous; used by the client terrain. */
  roughness: Chance,
});
export type Biome = z.infer<typeof BiomeSchema>;
export const BiomeListSchema = z.array(BiomeSchema);

export const MusicTrackSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1),
  category: z.enum(["normal", "combat"]),
  /** CDN path, `audio/music/<category>/<file>.mp3`. */
  path: z.string().regex(/^audio\/music\/(normal|combat)\/[a-z0-9_]+\.mp3$/),
  durationSeconds: PosInt,
});
export type MusicTrack = z.infer<typeof MusicTrackSchema>;
export const MusicListSchema = z.array(MusicTrackSchema);

export const VegetationSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1),
  /** Biome ids where the client scatters it. */
  biomes: z.array(IdSchema).min(1),
  /** Instances per tile, on average. */
  density: Chance,
  modelId: ModelIdSchema,
  minScale: z.number().positive(),
  maxScale: z.number().positive(),
  /** Decorative vegetation never blocks movement; trees that matter are resource nodes. */
  blocksMovement: z.literal(false),
});
export type Vegetation = z.infer<typeof VegetationSchema>;
export const VegetationListSchema = z.array(VegetationSchema);

// ---------------------------------------------------------------------------------------------
// world-areas.json

/**
 * A straight fence one tile wide, `from` to `to` inclusive, along x (same `z`) or along z (same
 * `x`); corners are shared tiles of two fences. A fence tile blocks walking (players and NPCs) but
 * not sight: arrows fly over it (docs/combat.md#fences). `gates` are tiles of the fence
 * that players walk through and NPCs do not (a chicken pen keeps its chickens).
 */
export const FenceSchema = z
  .strictObject({
    from: TileSchema,
    to: TileSchema,
    gates: z.array(TileSchema).optional(),
  })
  .refine((f) => f.from.x === f.to.x || f.from.z === f.to.z, { message: "a fence runs along x or along z: from and to must share x or z" });
export type Fence = z.infer<typeof FenceSchema>;

export const AreaSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1).max(60),
  description: Text,
  bounds: BoundsSchema,
  /** No player-versus-player combat and no NPC aggression. */
  safeZone: z.boolean(),
  /** Players may attack each other. */
  pvp: z.boolean(),
  difficulty: z.int().min(0).max(3),
  biome: IdSchema,
  musicTrack: IdSchema,
  /** Fences inside the area (optional): every tile of each lies within `bounds`. */
  fences: z.array(FenceSchema).optional(),
});
export type WorldArea = z.infer<typeof AreaSchema>;

/** Largest world side in tiles. The loader keeps one byte per tile of the world for pathing
 * (4096 x 4096 is 16 MiB), so a pushed world-areas.json cannot make it allocate without limit. */
export const MAX_WORLD_SIDE = 4096;

/** World bounds: a tile rectangle at most `MAX_WORLD_SIDE` tiles on each side. */
export const WorldBoundsSchema = BoundsSchema.refine((b) => b.maxX - b.minX < MAX_WORLD_SIDE && b.maxZ - b.minZ < MAX_WORLD_SIDE, {
  message: `the world may be at most ${MAX_WORLD_SIDE} tiles wide and ${MAX_WORLD_SIDE} deep`,
});

/** `world-areas.json`: world bounds, the spawn tile, and non-overlapping areas. */
export const WorldAreasSchema = z.strictObject({
  /** Every position must lie inside these bounds (at most `MAX_WORLD_SIDE` tiles a side). */
  worldBounds: WorldBoundsSchema,
  tileSize: z.literal(1),
  /** Where new characters appear (default position 0, 0; docs/rest.md#rules-that-hold-everywhere). */
  spawn: TileSchema,
  areas: z.array(AreaSchema).min(1),
});
export type WorldAreas = z.infer<typeof WorldAreasSchema>;

// ---------------------------------------------------------------------------------------------
// stations.json, buildings.json, stores.json

export const STATION_TYPES = ["bank", "range", "furnace", "anvil", "altar"] as const;
export type StationType = (typeof STATION_TYPES)[number];
export const StationSchema = z.strictObject({
  id: IdSchema,
  type: z.enum(STATION_TYPES),
  name: z.string().min(1),
  x: z.int(),
  z: z.int(),
  modelId: ModelIdSchema,
  /** Scale applied to the model; the model-bounds footprint multiplies by it. Stations sharing a
   * model must give it the same scale (one footprint per model). */
  modelScale: z.number().positive().max(10),
});
export type Station = z.infer<typeof StationSchema>;
export const StationListSchema = z.array(StationSchema);

/** A solid building: `x, z` is its minimum corner and it covers `width` x `depth` tiles. */
export const BuildingSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1),
  x: z.int(),
  z: z.int(),
  footprint: z.strictObject({ width: z.int().min(1).max(32), depth: z.int().min(1).max(32) }),
  modelId: ModelIdSchema,
});
export type Building = z.infer<typeof BuildingSchema>;
export const BuildingListSchema = z.array(BuildingSchema);

export const StoreStockSchema = z.strictObject({
  itemId: IdSchema,
  /** Normal stock level. */
  quantity: PosInt,
  /** Ticks to restore one unit towards `quantity`. */
  restockTicks: PosInt,
});
export const StoreSchema = z.strictObject({
  id: IdSchema,
  name: z.string().min(1),
  /** Tile of the shop counter; trading needs the player within 2 tiles. */
  x: z.int(),
  z: z.int(),
  /** A player buying pays `ceil(value * buyMultiplier)` coins. */
  buyMultiplier: z.number().min(0.1).max(10),
  /** A player selling receives `floor(value * sellMultiplier)` coins. */
  sellMultiplier: z.number().min(0).max(1),
  /** Whether the store buys items it does not stock (a general store does). */
  buysAnything: z.boolean(),
  stock: z.array(StoreStockSchema).min(1),
});
export type Store = z.infer<typeof StoreSchema>;
export const StoreListSchema = z.array(StoreSchema);

// ---------------------------------------------------------------------------------------------
// resources.json (placed gathering nodes)

/** A placed resource node; `type` is a gathering node id. */
export const ResourceNodeSchema = z.strictObject({ id: IdSchema, type: IdSchema, x: z.int(), z: z.int() });
export type ResourceNode = z.infer<typeof ResourceNodeSchema>;
export const ResourceNodeListSchema = z.array(ResourceNodeSchema);

// ---------------------------------------------------------------------------------------------
// model-bounds.json (generated by scripts/model-bounds.ts)

const Vec3 = z.strictObject({ x: z.number(), y: z.number(), z: z.number() });
export const ModelBoundsEntrySchema = z.strictObject({
  id: ModelIdSchema,
  assetPath: z.string().startsWith("asset://models/"),
  bounds: z.strictObject({ min: Vec3, max: Vec3 }),
  dimensions: Vec3,
  footprint: z.strictObject({ width: PosInt, depth: PosInt }),
});
export const ModelBoundsManifestSchema = z.strictObject({
  generatedAt: z.iso.datetime(),
  tileSize: z.literal(1),
  models: z.array(ModelBoundsEntrySchema),
});
export type ModelBoundsEntry = z.infer<typeof ModelBoundsEntrySchema>;
export type ModelBoundsManifest = z.infer<typeof ModelBoundsManifestSchema>;
