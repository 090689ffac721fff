/**
 * Footprints in tiles, shared by the model-bounds build step (`bounds.ts`) and the content loader
 * (`load.ts`). No glTF code here: the loader runs in production, where the glTF library (a build
 * tool) is not installed.
 *
 * One source: the build step writes each model's footprint (dimensions times the scale its
 * stations give it) into model-bounds.json, and the loader places stations with that footprint.
 * Both hold to the same rule, so the manifest can say one footprint per model: stations sharing a
 * model share its `modelScale` (`stationModelScales`).
 */

/** Tile edge in metres (docs/content.md#game-content-and-manifests: `tileSize` 1.0). */
export const TILE_SIZE = 1.0;

/** Footprint in tiles of a model of the given dimensions (metres) at a scale: each side rounded to
 * the nearest whole tile, at least 1 (e.g. 2.27 by 2.18 gives 2 by 2). */
export function footprintOf(dimensions: { x: number; y?: number; z: number }, scale: number): { width: number; depth: number } {
  const tiles = (m: number) => Math.max(1, Math.round((m * scale) / TILE_SIZE));
  return { width: tiles(dimensions.x), depth: tiles(dimensions.z) };
}

/**
 * The tiles a footprint covers when its model stands centred on tile `(x, z)`: `width` tiles along
 * x from `x - floor((width - 1) / 2)`, likewise `depth` along z, so an odd side is centred and an
 * even side takes the extra tile on the positive side (2 wide at x 6 covers x 6 and 7).
 */
export function centredFootprintTiles(x: number, z: number, footprint: { width: number; depth: number }): { x: number; z: number }[] {
  const x0 = x - Math.floor((footprint.width - 1) / 2);
  const z0 = z - Math.floor((footprint.depth - 1) / 2);
  const out: { x: number; z: number }[] = [];
  for (let dx = 0; dx < footprint.width; dx++) for (let dz = 0; dz < footprint.depth; dz++) out.push({ x: x0 + dx, z: z0 + dz });
  return out;
}

/** What the footprint rules need from a station. */
export interface StationScale {
  id?: string;
  modelId: string;
  modelScale: number;
}

/**
 * The scale of each model used by stations (its first station's), and every later station that
 * gives its model another scale, with that first station: the rule is one scale per model.
 */
export function stationModelScales<S extends StationScale>(
  stations: readonly S[],
): { scales: Map<string, number>; conflicts: { index: number; station: S; first: S }[] } {
  const first = new Map<string, S>();
  const conflicts: { index: number; station: S; first: S }[] = [];
  stations.forEach((s, index) => {
    const f = first.get(s.modelId);
    if (!f) first.set(s.modelId, s);
    else if (f.modelScale !== s.modelScale) conflicts.push({ index, station: s, first: f });
  });
  return { scales: new Map([...first].map(([id, s]) => [id, s.modelScale])), conflicts };
}
