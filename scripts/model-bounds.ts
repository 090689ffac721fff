/**
 * Writes `<WORLD>/manifests/model-bounds.json` from every `.glb` under `<WORLD>/models/`
 * (docs/content.md#game-content-and-manifests). Runs before build and dev (`npm run bounds`).
 *
 *   tsx scripts/model-bounds.ts [--watch]
 *
 * - `WORLD` and `SKIP_ASSETS` are read by `loadBuildEnv` (src/config.ts), with the server's rules;
 *   a bad value stops the script with one line per problem. `SKIP_ASSETS=true`: does nothing and
 *   exits 0.
 * - No `models/` directory: no models, so the manifest lists none.
 * - The file is rewritten only when some model entry changed, so `generatedAt` does not churn.
 * - `--watch`: re-runs, debounced 200 ms, when anything under `models/` changes or
 *   `manifests/stations.json` (whose `modelScale` sizes the footprints) does. Only those are
 *   watched: `models/` recursively, `manifests/` and the world directory itself not (the latter to
 *   see `models/` or `manifests/` created or replaced later). The rest of the world directory
 *   (the embedded database under `db/`, written constantly) is not watched.
 */
import { watch, type FSWatcher } from "node:fs";
import { mkdir, readFile } from "node:fs/promises";
import path from "node:path";
import { loadBuildEnv } from "../src/config.js";
import { computeModelBounds } from "../src/content/bounds.js";
import { formatPath } from "../src/content/issues.js";
import { ModelBoundsManifestSchema, StationListSchema, type ModelBoundsManifest } from "../src/content/world-schemas.js";
import { writeFileAtomic } from "../src/content/files.js";

/** The files and directories of one world. */
interface WorldPaths {
  world: string;
  modelsDir: string;
  manifestsDir: string;
  stationsFile: string;
  outFile: string;
}

function worldPaths(worldDir: string, manifestsDir: string): WorldPaths {
  const world = path.resolve(worldDir);
  const manifests = path.resolve(manifestsDir);
  return {
    world,
    modelsDir: path.join(world, "models"),
    manifestsDir: manifests,
    stationsFile: path.join(manifests, "stations.json"),
    outFile: path.join(manifests, "model-bounds.json"),
  };
}

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
async function readStations(stationsFile: string) {
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
async function generate({ modelsDir, manifestsDir, stationsFile, outFile }: WorldPaths): Promise<boolean> {
  const manifest = await computeModelBounds(modelsDir, await readStations(stationsFile), {
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

/**
 * A watcher on `dir` that can be started again: `start()` replaces the current one, and a
 * directory that does not exist (yet) is simply not watched until the next `start()`.
 */
function rewatchable(dir: string, recursive: boolean, onEvent: (name: string) => void): { start(): void } {
  let current: FSWatcher | undefined;
  return {
    start() {
      current?.close();
      current = undefined;
      try {
        const w = watch(dir, { recursive }, (_event, name) => onEvent(name ? String(name) : ""));
        // The directory went away (removed or renamed): the world watcher restarts this one when
        // it is back.
        w.on("error", () => w.close());
        current = w;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    },
  };
}

/** `--watch`: re-runs `generate` after changes under `models/` or to `manifests/stations.json`. */
async function watchWorld(paths: WorldPaths): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let running = Promise.resolve();
  const schedule = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(() =>
        generate(paths).then(
          () => undefined,
          (err: Error) => console.error(`model-bounds: ${err.message}`),
        ),
      );
    }, 200);
  };
  const models = rewatchable(paths.modelsDir, true, schedule);
  const manifests = rewatchable(paths.manifestsDir, false, (name) => {
    if (name === "stations.json") schedule();
  });
  // The world directory itself, not recursively: it sees models/ or manifests/ appear or change.
  await mkdir(paths.manifestsDir, { recursive: true });
  const watchers = new Map([
    [path.relative(paths.world, paths.modelsDir), models],
    [path.relative(paths.world, paths.manifestsDir), manifests],
  ]);
  watch(paths.world, (_event, name) => {
    const w = name ? watchers.get(String(name)) : undefined;
    if (!w) return;
    w.start();
    schedule();
  });
  models.start();
  manifests.start();
  console.log(`model-bounds: watching ${rel(paths.modelsDir)} and ${rel(paths.stationsFile)}`);
}

async function main(): Promise<void> {
  const env = loadBuildEnv();
  if (env.skipAssets) {
    console.log("model-bounds: SKIP_ASSETS=true, skipped");
    return;
  }
  const paths = worldPaths(env.worldDir, env.manifestsDir);
  const watching = process.argv.includes("--watch");
  try {
    await generate(paths);
  } catch (err) {
    if (!watching) throw err;
    console.error(`model-bounds: ${(err as Error).message}`);
  }
  if (watching) await watchWorld(paths);
}

main().catch((err: Error) => {
  console.error(`model-bounds: ${err.message}`);
  process.exit(1);
});
