/**
 * Writes `<WORLD>/manifests/model-bounds.json` from every `.glb` under `<WORLD>/models/`
 * (SPEC.md "Model bounds manifest"). Runs before build and dev (`npm run bounds`).
 *
 *   tsx scripts/model-bounds.ts [--watch]
 *
 * - `SKIP_ASSETS=true`: does nothing and exits 0.
 * - No `models/` directory: no models, so the manifest lists none.
 * - The file is rewritten only when some model entry changed, so `generatedAt` does not churn.
 * - `--watch`: re-runs when a `.glb` under the models directory or `manifests/stations.json` (whose
 *   `modelScale` sizes the footprints) changes, debounced 200 ms. The whole world directory is
 *   watched, so a models directory created later is seen too.
 */
import { watch } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { computeModelBounds } from "../src/content/bounds.js";
import { formatPath } from "../src/content/load.js";
import { ModelBoundsManifestSchema, StationListSchema, type ModelBoundsManifest } from "../src/content/schemas.js";
import { writeFileAtomic } from "../src/content/sync.js";

const world = path.resolve(process.env.WORLD ?? "world");
const modelsDir = path.join(world, "models");
const manifestsDir = path.join(world, "manifests");
const stationsFile = path.join(manifestsDir, "stations.json");
const outFile = path.join(manifestsDir, "model-bounds.json");
const rel = (p: string) => path.relative(process.cwd(), p) || ".";

async function readJson(file: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new Error(`${rel(file)}: invalid JSON: ${(err as Error).message}`);
  }
}

/** The stations' model scales; a malformed stations.json is named with its first bad field. */
async function readStations() {
  const raw = await readJson(stationsFile);
  if (raw === undefined) return [];
  const parsed = StationListSchema.safeParse(raw);
  if (!parsed.success) {
    const i = parsed.error.issues[0]!;
    throw new Error(`${rel(stationsFile)}: ${formatPath(i.path)}: ${i.message}`);
  }
  return parsed.data;
}

/** One generation pass; returns whether the file was written. */
async function generate(): Promise<boolean> {
  const manifest = await computeModelBounds(modelsDir, await readStations(), {
    onSkip: (file, reason) => console.warn(`model-bounds: skipped ${file}: ${reason}`),
  });
  const previous = ModelBoundsManifestSchema.safeParse(await readJson(outFile).catch(() => undefined));
  if (previous.success && sameModels(previous.data, manifest)) {
    console.log(`model-bounds: ${manifest.models.length} models, unchanged`);
    return false;
  }
  await mkdir(manifestsDir, { recursive: true });
  await writeFileAtomic(outFile, JSON.stringify(manifest, null, 2) + "\n");
  console.log(`model-bounds: wrote ${manifest.models.length} models to ${rel(outFile)}`);
  return true;
}

function sameModels(a: ModelBoundsManifest, b: ModelBoundsManifest): boolean {
  return a.tileSize === b.tileSize && JSON.stringify(a.models) === JSON.stringify(b.models);
}

/** Whether a changed path (relative to the world directory) can change the manifest. */
function relevant(name: string): boolean {
  const p = name.split(path.sep).join("/");
  return (p.startsWith("models/") && p.toLowerCase().endsWith(".glb")) || p === "manifests/stations.json";
}

async function main(): Promise<void> {
  if (["true", "1", "yes"].includes(process.env.SKIP_ASSETS ?? "")) {
    console.log("model-bounds: SKIP_ASSETS=true, skipped");
    return;
  }
  const watching = process.argv.includes("--watch");
  try {
    await generate();
  } catch (err) {
    if (!watching) throw err;
    console.error(`model-bounds: ${(err as Error).message}`);
  }
  if (!watching) return;

  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  watch(world, { recursive: true }, (_event, name) => {
    if (!name || !relevant(String(name))) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(() => generate().then(() => undefined, (err: Error) => console.error(`model-bounds: ${err.message}`)));
    }, 200);
  });
  console.log(`model-bounds: watching ${rel(modelsDir)} (.glb) and ${rel(stationsFile)}`);
}

main().catch((err: Error) => {
  console.error(`model-bounds: ${err.message}`);
  process.exit(1);
});
