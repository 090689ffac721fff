/**
 * Build-time assets (docs/content.md "Build-time assets"): the files the content refers to, downloaded from
 * the asset CDN into the world directory by `npm run build` (`scripts/assets.ts`).
 *
 * - Which files: every model id a manifest names (`modelId` fields of stations, buildings,
 *   vegetation and gathering nodes, and the ids of model-bounds.json) as `models/<id>.glb`, and
 *   every track of music.json at its `path` (`audio/music/<normal|combat>/<file>.mp3`). The content
 *   names no `world/` environment asset today; `world/<file>` paths are accepted the same way.
 * - Where: the CDN path below `PUBLIC_CDN_URL` is the path below the world directory
 *   (`{cdn}/models/nodes/tree.glb` -> `<WORLD>/models/nodes/tree.glb`), which is what the local CDN
 *   (`npm run cdn`) serves back.
 * - Revalidation: the ETag of each downloaded file is kept in `<WORLD>/.cache/asset-etags.json`
 *   and sent as `If-None-Match`; a 304 keeps the file. A file we hold without a stored ETag is
 *   downloaded again once.
 * - Writes: each file is written to a temporary file and renamed over the old one, so a crash or a
 *   failed download never leaves a torn file. A body that is not what its extension says (a glTF
 *   binary, an MP3) is refused and nothing is written.
 * - Failures: every file that could not be downloaded (an HTTP status other than 200/304, including
 *   a CDN that lacks it, a time-out, a refused body) is reported with its reason; the others are
 *   still written. The caller fails the build listing them (`AssetDownloadError`).
 */
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { ModelIdSchema } from "./schemas.js";
import { MusicListSchema } from "./world-schemas.js";
import { conditionalGet, pool, readEtagStore } from "./download.js";
import { fileExists, writeFileAtomic } from "./files.js";

/** Where asset ETags are kept, relative to the world directory. */
export const ASSET_ETAG_FILE = ".cache/asset-etags.json";
/** Time limit for one asset, headers and body together (models can be large). */
export const ASSET_TIMEOUT_MS = 120_000;
/** Assets downloaded at once. */
export const ASSET_CONCURRENCY = 4;

/** A CDN asset path: `models/<id>.glb`, `audio/music/<normal|combat>/<file>.mp3` or `world/<file>`. */
const ASSET_PATH = /^(models\/[a-z0-9_]+(\/[a-z0-9_]+)*\.glb|audio\/music\/(normal|combat)\/[a-z0-9_]+\.mp3|world\/[a-z0-9_-]+(\/[a-z0-9_-]+)*\.[a-z0-9]+)$/;

/** Whether `p` is an asset path the download and the local CDN accept (no `..`, no dotfiles). */
export function isAssetPath(p: string): boolean {
  return ASSET_PATH.test(p);
}

/** The assets the manifests in `manifestsDir` refer to, and problems with the references. */
export interface AssetList {
  /** Sorted CDN paths, each once. */
  files: string[];
  /** One line per reference that is not a valid asset (`stations.json: [2].modelId: ...`). */
  problems: string[];
}

/** Every `.json` below `dir` (relative, `/` separators), leaving out `.cache`. */
async function manifestFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && e.name.endsWith(".json"))
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)).split(path.sep).join("/"))
    .filter((rel) => !rel.split("/").some((seg) => seg.startsWith(".")))
    .sort();
}

/** Calls `visit(value, at)` for every `modelId` property anywhere in `json`. */
function eachModelId(json: unknown, at: string, visit: (value: unknown, at: string) => void): void {
  if (Array.isArray(json)) json.forEach((v, i) => eachModelId(v, `${at}[${i}]`, visit));
  else if (json && typeof json === "object")
    for (const [k, v] of Object.entries(json)) {
      const here = at ? `${at}.${k}` : k;
      if (k === "modelId") visit(v, here);
      else eachModelId(v, here, visit);
    }
}

/** Reads the manifests and lists the assets they name (see the module comment). */
export async function listAssets(manifestsDir: string): Promise<AssetList> {
  const files = new Set<string>();
  const problems: string[] = [];
  const addModel = (file: string, at: string, id: unknown) => {
    const r = ModelIdSchema.safeParse(id);
    if (r.success) files.add(`models/${r.data}.glb`);
    else problems.push(`${file}: ${at}: not a model id (${JSON.stringify(id)})`);
  };
  for (const file of await manifestFiles(manifestsDir)) {
    let json: unknown;
    try {
      json = JSON.parse(await readFile(path.join(manifestsDir, file), "utf8"));
    } catch (err) {
      problems.push(`${file}: not readable JSON (${(err as Error).message})`);
      continue;
    }
    if (file === "music.json") {
      const r = MusicListSchema.safeParse(json);
      if (r.success) for (const t of r.data) files.add(t.path);
      else problems.push(`music.json: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
    } else if (file === "model-bounds.json") {
      const models = (json as { models?: unknown }).models;
      if (Array.isArray(models)) models.forEach((m, i) => addModel(file, `models[${i}].id`, (m as { id?: unknown })?.id));
    } else {
      eachModelId(json, "", (v, at) => addModel(file, at, v));
    }
  }
  return { files: [...files].sort(), problems };
}

/** A body that is not what its extension says, or undefined when it looks right. */
export function badAssetBody(file: string, body: Uint8Array): string | undefined {
  if (file.endsWith(".glb")) {
    // glTF binary: magic "glTF", then version 2.
    const ok = body.length >= 12 && Buffer.from(body.subarray(0, 4)).toString("latin1") === "glTF";
    return ok ? undefined : "not a glTF binary (.glb)";
  }
  if (file.endsWith(".mp3")) {
    // An ID3 tag, or an MPEG audio frame sync (11 set bits).
    const id3 = body.length >= 3 && Buffer.from(body.subarray(0, 3)).toString("latin1") === "ID3";
    const frame = body.length >= 2 && body[0] === 0xff && (body[1]! & 0xe0) === 0xe0;
    return id3 || frame ? undefined : "not an MP3 file";
  }
  return undefined;
}

export interface AssetDownloadOptions {
  /** The world directory; assets land at `<worldDir>/<cdn path>`. */
  worldDir: string;
  /** `PUBLIC_CDN_URL`. */
  cdnUrl: string;
  /** CDN paths to download (from `listAssets`). */
  files: readonly string[];
  fetch?: typeof fetch;
  /** Time limit per file. Default `ASSET_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Files at once. Default `ASSET_CONCURRENCY`. */
  concurrency?: number;
}

export interface AssetReport {
  downloaded: string[];
  notModified: string[];
  failed: { file: string; reason: string }[];
}

/** Some assets could not be downloaded; `problems` has one line per file. */
export class AssetDownloadError extends Error {
  override readonly name = "AssetDownloadError";
  constructor(readonly problems: string[]) {
    super(`${problems.length} asset${problems.length === 1 ? "" : "s"} could not be downloaded:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  }
}

/** Downloads `files` from the CDN into the world directory (see the module comment). Never throws
 * for one file: failures are in the report. */
export async function downloadAssets(opts: AssetDownloadOptions): Promise<AssetReport> {
  const etagFile = path.join(opts.worldDir, ASSET_ETAG_FILE);
  const etags = await readEtagStore(etagFile);
  const base = opts.cdnUrl.endsWith("/") ? opts.cdnUrl : `${opts.cdnUrl}/`;
  const report: AssetReport = { downloaded: [], notModified: [], failed: [] };

  await pool(opts.files, opts.concurrency ?? ASSET_CONCURRENCY, async (file) => {
    if (!isAssetPath(file)) return void report.failed.push({ file, reason: "not an asset path" });
    const target = path.join(opts.worldDir, ...file.split("/"));
    // Revalidate only what we hold: a 304 for a missing file would leave nothing.
    const etag = etags[file] && (await fileExists(target)) ? etags[file] : undefined;
    let refused: string | undefined;
    const got = await conditionalGet(new URL(file, base), {
      etag,
      fetch: opts.fetch,
      signal: AbortSignal.timeout(opts.timeoutMs ?? ASSET_TIMEOUT_MS),
      check: (body) => {
        refused = badAssetBody(file, body);
        if (refused) throw new Error(refused);
      },
    });
    if (got.kind === "not-modified") return void report.notModified.push(file);
    if (got.kind === "failed") {
      const reason = got.reason === "invalid body" && refused ? refused : got.status === 404 ? "HTTP 404 (not on the CDN)" : got.reason;
      return void report.failed.push({ file, reason });
    }
    try {
      await writeFileAtomic(target, got.body);
    } catch (err) {
      return void report.failed.push({ file, reason: `could not write ${target}: ${(err as Error).message}` });
    }
    if (got.etag) etags[file] = got.etag;
    else delete etags[file];
    report.downloaded.push(file);
  });

  if (report.downloaded.length > 0) {
    const sorted = Object.fromEntries(Object.entries(etags).sort(([a], [b]) => a.localeCompare(b)));
    await writeFileAtomic(etagFile, JSON.stringify(sorted, null, 2) + "\n");
  }
  for (const list of [report.downloaded, report.notModified]) list.sort();
  report.failed.sort((a, b) => a.file.localeCompare(b.file));
  return report;
}
