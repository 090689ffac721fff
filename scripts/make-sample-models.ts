/**
 * Generates the small original sample models under `world/models/` (plain boxes sized like the
 * stations they stand for), so the model bounds manifest has real input. Re-running overwrites
 * them with identical geometry.
 *
 *   tsx scripts/make-sample-models.ts [modelsDir]
 */
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Document, NodeIO } from "@gltf-transform/core";

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

/** The shipped sample models: id (path below world/models without .glb) and size in metres. */
export const SAMPLE_MODELS: readonly { id: string; size: { x: number; y: number; z: number } }[] = [
  { id: "stations/furnace", size: { x: 2.27, y: 1.9, z: 2.18 } },
  { id: "stations/anvil", size: { x: 0.9, y: 0.75, z: 0.5 } },
  { id: "stations/bank_booth", size: { x: 1.6, y: 1.4, z: 0.8 } },
  { id: "stations/range", size: { x: 1.2, y: 1.0, z: 0.9 } },
  { id: "stations/altar", size: { x: 1.3, y: 1.1, z: 0.9 } },
];

async function main(): Promise<void> {
  const dir = path.resolve(process.argv[2] ?? path.join(process.env.WORLD ?? "world", "models"));
  for (const m of SAMPLE_MODELS) await writeBoxGlb(path.join(dir, `${m.id}.glb`), m.size);
  console.log(`wrote ${SAMPLE_MODELS.length} sample models to ${dir}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) await main();
