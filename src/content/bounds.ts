/**
 * Model bounds manifest (docs/content.md#game-content-and-manifests): scans every `.glb` under the models
 * directory, takes the minimum and maximum of the POSITION accessors, and derives each model's
 * footprint in tiles for pathing.
 *
 * - By default the bounds are the union of the POSITION accessors' min/max in mesh space: node
 *   transforms are ignored, so models are expected to be authored at their final size with the
 *   identity transform. `applyNodeTransforms: true` instead measures the default scene in world
 *   space (node translation, rotation and scale applied).
 * - The footprint is `dimensions.x * scale` by `dimensions.z * scale`, rounded to the nearest
 *   whole tile and at least 1, where `scale` is the `modelScale` of the stations using the model
 *   (1 when none does). Stations sharing a model must share its scale, so that the footprint
 *   written here is the one the loader places (it checks the same rule).
 * - Model id: the path below the models directory without `.glb`, with `/` separators
 *   (`stations/furnace`); `assetPath` is `asset://models/<relative path>`.
 */
import { readdir } from "node:fs/promises";
import path from "node:path";
import { NodeIO, getBounds, type Document } from "@gltf-transform/core";
import { TILE_SIZE, footprintOf, stationModelScales, type StationScale } from "./footprint.js";
import type { ModelBoundsEntry, ModelBoundsManifest } from "./world-schemas.js";

export { TILE_SIZE, footprintOf } from "./footprint.js";

/** What the footprint needs from a station: its model and scale (and its id, to name it). */
export type ModelScaleRef = StationScale;

export interface ModelBoundsOptions {
  /** Measure in world space through the scene graph. Default false (accessor min/max). */
  applyNodeTransforms?: boolean;
  /** Timestamp written as `generatedAt`. */
  now?: Date;
  /** Called for a model without geometry, which is left out. */
  onSkip?: (file: string, reason: string) => void;
}

/** A model that could not be read, or stations giving one model two scales; the message (and the
 * one line of `problems`) names the file. */
export class ModelBoundsError extends Error {
  override readonly name = "ModelBoundsError";
  readonly problems: string[];
  constructor(message: string) {
    super(message);
    this.problems = [message];
  }
}

/**
 * The one scale of each model used by stations (`stationModelScales`).
 * @throws ModelBoundsError when two stations give the same model different scales.
 */
function modelScales(stations: readonly ModelScaleRef[]): Map<string, number> {
  const { scales, conflicts } = stationModelScales(stations);
  const [c] = conflicts;
  if (c) {
    const name = (r: ModelScaleRef) => (r.id ? `station "${r.id}"` : "a station");
    throw new ModelBoundsError(
      `stations.json: ${name(c.first)} has modelScale ${c.first.modelScale} but ${name(c.station)} ${c.station.modelScale} for the same model ` +
        `"${c.station.modelId}": stations sharing a model need the same modelScale`,
    );
  }
  return scales;
}

type Vec3 = { x: number; y: number; z: number };

/** Rounds away float32 noise (2.2699999 -> 2.27). */
const r4 = (v: number) => Math.round(v * 1e4) / 1e4 + 0;

/** Union of the POSITION accessors' min/max over every primitive, or undefined without geometry. */
function accessorBounds(doc: Document): { min: Vec3; max: Vec3 } | undefined {
  const min = [Infinity, Infinity, Infinity];
  const max = [-Infinity, -Infinity, -Infinity];
  for (const mesh of doc.getRoot().listMeshes())
    for (const prim of mesh.listPrimitives()) {
      const pos = prim.getAttribute("POSITION");
      if (!pos || pos.getCount() === 0) continue;
      const lo = pos.getMinNormalized([]);
      const hi = pos.getMaxNormalized([]);
      for (let i = 0; i < 3; i++) {
        min[i] = Math.min(min[i]!, lo[i]!);
        max[i] = Math.max(max[i]!, hi[i]!);
      }
    }
  if (!min.every(Number.isFinite)) return undefined;
  return { min: { x: min[0]!, y: min[1]!, z: min[2]! }, max: { x: max[0]!, y: max[1]!, z: max[2]! } };
}

/** World-space bounds of the default (or first) scene. */
function sceneBounds(doc: Document): { min: Vec3; max: Vec3 } | undefined {
  const root = doc.getRoot();
  const scene = root.getDefaultScene() ?? root.listScenes()[0];
  if (!scene) return undefined;
  const b = getBounds(scene);
  if (![...b.min, ...b.max].every(Number.isFinite)) return undefined;
  return { min: { x: b.min[0], y: b.min[1], z: b.min[2] }, max: { x: b.max[0], y: b.max[1], z: b.max[2] } };
}

/** Relative paths of every `.glb` below `dir`, sorted, with `/` separators. A directory that
 * does not exist holds no models. */
export async function listGlbFiles(dir: string): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { recursive: true, withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return [];
    throw err;
  }
  return entries
    .filter((e) => e.isFile() && e.name.toLowerCase().endsWith(".glb"))
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .sort();
}

/** Reads every model under `modelsDir` and builds the model bounds manifest (an empty model list
 * when the directory does not exist). @throws ModelBoundsError for a model it cannot read, or
 * stations giving one model two scales. */
export async function computeModelBounds(modelsDir: string, stations: readonly ModelScaleRef[], opts: ModelBoundsOptions = {}): Promise<ModelBoundsManifest> {
  const scales = modelScales(stations);

  const io = new NodeIO();
  const models: ModelBoundsEntry[] = [];
  for (const rel of await listGlbFiles(modelsDir)) {
    let doc: Document;
    try {
      doc = await io.read(path.join(modelsDir, rel));
    } catch (err) {
      throw new ModelBoundsError(`${rel}: cannot read model: ${(err as Error).message}`);
    }
    const b = opts.applyNodeTransforms ? sceneBounds(doc) : accessorBounds(doc);
    if (!b) {
      opts.onSkip?.(rel, "no POSITION data");
      continue;
    }
    const id = rel.replace(/\.glb$/i, "");
    const bounds = { min: { x: r4(b.min.x), y: r4(b.min.y), z: r4(b.min.z) }, max: { x: r4(b.max.x), y: r4(b.max.y), z: r4(b.max.z) } };
    const dimensions = { x: r4(b.max.x - b.min.x), y: r4(b.max.y - b.min.y), z: r4(b.max.z - b.min.z) };
    models.push({ id, assetPath: `asset://models/${rel}`, bounds, dimensions, footprint: footprintOf(dimensions, scales.get(id) ?? 1) });
  }
  return { generatedAt: (opts.now ?? new Date()).toISOString(), tileSize: TILE_SIZE as 1, models };
}
