/**
 * Generates the small original sample models under `world/models/` (plain boxes sized like the
 * things they stand for), so the model bounds manifest has real input for every model id the
 * manifests name. Re-running overwrites them with identical geometry.
 *
 *   tsx scripts/make-sample-models.ts [modelsDir]
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Document, NodeIO } from "@gltf-transform/core";
import { loadBuildEnv } from "../src/config.js";

export interface BoxOptions {
  /** Node translation, metres. */
  translation?: [number, number, number];
  /** Node scale. */
  scale?: [number, number, number];
}

/** A glTF document holding one axis-aligned box `size` metres, standing on y = 0, centred on x/z. */
export function boxDocument(size: { x: number; y: number; z: number }, opts: BoxOptions = {}): Document {
  const doc = new Document();
  const buffer = doc.createBuffer();
  const hx = size.x / 2;
  const hz = size.z / 2;
  // prettier-ignore
  const positions = new Float32Array([
    -hx, 0, -hz,  hx, 0, -hz,  hx, size.y, -hz,  -hx, size.y, -hz,
    -hx, 0,  hz,  hx, 0,  hz,  hx, size.y,  hz,  -hx, size.y,  hz,
  ]);
  // prettier-ignore
  const indices = new Uint16Array([
    0, 2, 1, 0, 3, 2,  4, 5, 6, 4, 6, 7,  0, 1, 5, 0, 5, 4,
    3, 6, 2, 3, 7, 6,  1, 2, 6, 1, 6, 5,  0, 4, 7, 0, 7, 3,
  ]);
  const position = doc.createAccessor("position").setType("VEC3").setArray(positions).setBuffer(buffer);
  const index = doc.createAccessor("index").setType("SCALAR").setArray(indices).setBuffer(buffer);
  const prim = doc.createPrimitive().setAttribute("POSITION", position).setIndices(index);
  const mesh = doc.createMesh("box").addPrimitive(prim);
  const node = doc.createNode("box").setMesh(mesh);
  if (opts.translation) node.setTranslation(opts.translation);
  if (opts.scale) node.setScale(opts.scale);
  doc.getRoot().setDefaultScene(doc.createScene("scene").addChild(node));
  return doc;
}

/** Writes a box model as binary glTF. */
export async function writeBoxGlb(file: string, size: { x: number; y: number; z: number }, opts: BoxOptions = {}): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await new NodeIO().write(file, boxDocument(size, opts));
}

/**
 * The shipped sample models: id (path below world/models without .glb) and size in metres. One for
 * every model id the manifests name (stations, buildings, gathering nodes, vegetation), so the
 * loader's model check passes. Buildings are sized to the footprint buildings.json gives them.
 */
export const SAMPLE_MODELS: readonly { id: string; size: { x: number; y: number; z: number } }[] = [
  // Stations: the furnace is the 2.27 by 2.18 example (2 by 2 tiles).
  { id: "stations/furnace", size: { x: 2.27, y: 1.9, z: 2.18 } },
  { id: "stations/anvil", size: { x: 0.9, y: 0.75, z: 0.5 } },
  { id: "stations/bank_booth", size: { x: 1.6, y: 1.4, z: 0.8 } },
  { id: "stations/range", size: { x: 1.2, y: 1.0, z: 0.9 } },
  { id: "stations/altar", size: { x: 1.3, y: 1.1, z: 0.9 } },
  // Buildings.
  { id: "buildings/bank", size: { x: 5.8, y: 4.2, z: 4.9 } },
  { id: "buildings/shop", size: { x: 4.9, y: 3.5, z: 3.9 } },
  { id: "buildings/smithy", size: { x: 5.9, y: 3.8, z: 3.9 } },
  { id: "buildings/cookhouse", size: { x: 4.9, y: 3.4, z: 3.9 } },
  { id: "buildings/chapel", size: { x: 7.9, y: 6.0, z: 5.9 } },
  { id: "buildings/cottage", size: { x: 3.9, y: 3.2, z: 3.6 } },
  { id: "buildings/hut", size: { x: 3.8, y: 2.8, z: 3.1 } },
  { id: "buildings/ruin", size: { x: 5.9, y: 7.5, z: 5.9 } },
  // Gathering nodes.
  { id: "nodes/tree", size: { x: 0.9, y: 3.8, z: 0.9 } },
  { id: "nodes/oak_tree", size: { x: 1.4, y: 4.6, z: 1.4 } },
  { id: "nodes/willow_tree", size: { x: 1.3, y: 5.2, z: 1.3 } },
  { id: "nodes/copper_rock", size: { x: 0.9, y: 0.7, z: 0.8 } },
  { id: "nodes/tin_rock", size: { x: 0.9, y: 0.7, z: 0.8 } },
  { id: "nodes/iron_rock", size: { x: 1.0, y: 0.8, z: 0.9 } },
  { id: "nodes/coal_rock", size: { x: 1.0, y: 0.8, z: 0.9 } },
  { id: "nodes/fishing_spot", size: { x: 0.9, y: 0.1, z: 0.9 } },
  // Vegetation (decorative, never blocks).
  { id: "vegetation/grass_tuft", size: { x: 0.3, y: 0.25, z: 0.3 } },
  { id: "vegetation/wildflowers", size: { x: 0.4, y: 0.3, z: 0.4 } },
  { id: "vegetation/fern", size: { x: 0.6, y: 0.5, z: 0.6 } },
  { id: "vegetation/bramble", size: { x: 0.8, y: 0.6, z: 0.7 } },
  { id: "vegetation/dune_grass", size: { x: 0.4, y: 0.5, z: 0.4 } },
  { id: "vegetation/reeds", size: { x: 0.3, y: 1.2, z: 0.3 } },
  { id: "vegetation/heather", size: { x: 0.5, y: 0.35, z: 0.5 } },
  { id: "vegetation/dead_shrub", size: { x: 0.6, y: 0.7, z: 0.6 } },
  { id: "vegetation/charred_stump", size: { x: 0.5, y: 0.6, z: 0.5 } },
];

async function main(): Promise<void> {
  const dir = path.resolve(process.argv[2] ?? path.join(loadBuildEnv().worldDir, "models"));
  for (const m of SAMPLE_MODELS) await writeBoxGlb(path.join(dir, `${m.id}.glb`), m.size);
  console.log(`wrote ${SAMPLE_MODELS.length} sample models to ${dir}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
