/**
 * Writes `<WORLD>/manifests/model-bounds.json` from every `.glb` under `<WORLD>/models/`
 * (SPEC.md "Model bounds manifest"). Runs before build and dev (`npm run bounds`).
 *
 *   tsx scripts/model-bounds.ts [--watch]
 *
 * - `SKIP_ASSETS=true`: does nothing and exits 0.
 * - The file is rewritten only when some model entry changed, so `generatedAt` does not churn.
 * - `--watch`: re-runs when a `.glb` under the models directory changes (debounced 200 ms).
 */
import { watch } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { computeModelBounds } from "../src/content/bounds.js";
import { ModelBoundsManifestSchema, StationListSchema, type ModelBoundsManifest } from "../src/content/schemas.js";
import { writeFileAtomic } from "../src/content/sync.js";

const world = process.env.WORLD ?? "world";
const modelsDir = path.resolve(world, "models");
const manifestsDir = path.resolve(world, "manifests");
const outFile = path.join(manifestsDir, "model-bounds.json");

async function readJson(file: string): Promise<unknown> {
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw new Error(`${path.relative(process.cwd(), file)}: ${(err as Error).message}`);
  }
}

/** One generation pass; returns whether the file was written. */
async function generate(): Promise<boolean> {
  const stationsRaw = await readJson(path.join(manifestsDir, "stations.json"));
  const stations = stationsRaw === undefined ? [] : StationListSchema.parse(stationsRaw);
  const manifest = await computeModelBounds(modelsDir, stations, {
    onSkip: (file, reason) => console.warn(`model-bounds: skipped ${file}: ${reason}`),
  });
  const previous = ModelBoundsManifestSchema.safeParse(await readJson(outFile));
  if (previous.success && sameModels(previous.data, manifest)) {
    console.log(`model-bounds: ${manifest.models.length} models, unchanged`);
    return false;
  }
  await writeFileAtomic(outFile, JSON.stringify(manifest, null, 2) + "\n");
  console.log(`model-bounds: wrote ${manifest.models.length} models to ${path.relative(process.cwd(), outFile)}`);
  return true;
}

function sameModels(a: ModelBoundsManifest, b: ModelBoundsManifest): boolean {
  return a.tileSize === b.tileSize && JSON.stringify(a.models) === JSON.stringify(b.models);
}

async function main(): Promise<void> {
  if (process.env.SKIP_ASSETS === "true") {
    console.log("model-bounds: SKIP_ASSETS=true, skipped");
    return;
  }
  await generate();
  if (!process.argv.includes("--watch")) return;

  console.log(`model-bounds: watching ${path.relative(process.cwd(), modelsDir)} for .glb changes`);
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  watch(modelsDir, { recursive: true }, (_event, name) => {
    if (name && !String(name).toLowerCase().endsWith(".glb")) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(() => generate().then(() => undefined, (err: Error) => console.error(`model-bounds: ${err.message}`)));
    }, 200);
  });
}

main().catch((err: Error) => {
  console.error(`model-bounds: ${err.message}`);
  process.exit(1);
});
