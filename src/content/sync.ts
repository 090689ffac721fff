/**
 * Manifest pipeline of SPEC.md "Startup behaviour (manifests)": fetch the manifests from
 * `{cdnUrl}/manifests/` into the local manifests directory, revalidating with ETags.
 *
 * - production or CI: every file in `MANIFEST_FILES` is requested with `If-None-Match` (the ETag
 *   stored in `<dir>/.cache/etags.json`); 304 keeps the cached file, 200 replaces it atomically
 *   (temporary file in the same directory, then rename), anything else keeps the cached copy.
 * - development and test: nothing is fetched when the required manifests are all present locally;
 *   otherwise they are fetched from `cdnUrl`, and when that leaves required manifests missing
 *   the production CDN (`fallbackCdnUrl`) is tried for what failed.
 * - `skip` (SKIP_MANIFESTS): no fetch and no check at all.
 * Afterwards, missing required manifests stop start-up with `ManifestSyncError` listing them.
 */
import { randomBytes } from "node:crypto";
import { mkdir, open, readFile, readdir, rename, stat, unlink } from "node:fs/promises";
import path from "node:path";
import { MANIFEST_FILES, missingRequired } from "./load.js";

export { MANIFEST_FILES, REQUIRED_MANIFESTS, missingRequired } from "./load.js";

/** Where ETags of cached manifests are kept, relative to the manifests directory. */
export const ETAG_FILE = ".cache/etags.json";

/** The subset of a pino logger the sync uses. */
export interface SyncLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface SyncOptions {
  /** Local manifests directory (`<WORLD>/manifests`). */
  dir: string;
  /** `PUBLIC_CDN_URL`; manifests are at `{cdnUrl}/manifests/<file>`. */
  cdnUrl?: string;
  /** Production CDN used in development when the local CDN fails and required files are missing. */
  fallbackCdnUrl?: string;
  mode: "development" | "production" | "test";
  ci: boolean;
  /** `SKIP_MANIFESTS`: bypass fetching and validation. */
  skip: boolean;
  fetch?: typeof fetch;
  /** Time limit per file, headers and body together. Default 10 s. */
  timeoutMs?: number;
  /** Files fetched at once. Default 6. */
  concurrency?: number;
  logger?: SyncLogger;
  /** Files to sync; defaults to `MANIFEST_FILES`. */
  files?: readonly string[];
}

export interface SyncReport {
  /** `skipped` (SKIP_MANIFESTS), `local` (dev, nothing fetched), `cdn`, `fallback` (production
   * CDN used in dev), `cache` (CDN unreachable, cached copies used). */
  source: "skipped" | "local" | "cdn" | "fallback" | "cache";
  fetched: string[];
  notModified: string[];
  failed: { file: string; reason: string }[];
}

/** Required manifests are still missing after the sync. */
export class ManifestSyncError extends Error {
  override readonly name = "ManifestSyncError";
  constructor(readonly missing: readonly string[]) {
    super(`required manifests missing: ${missing.join(", ")}`);
  }
}

const TEMP_RE = /^\..+\.\d+\.[0-9a-f]{12}\.tmp$/;

/**
 * Writes `data` to `target` so that readers see either the old or the new file, never a part:
 * the bytes go to a temporary file in the same directory, are flushed, and are renamed over it.
 */
export async function writeFileAtomic(target: string, data: string | Uint8Array): Promise<void> {
  const dir = path.dirname(target);
  await mkdir(dir, { recursive: true });
  const tmp = path.join(dir, `.${path.basename(target)}.${process.pid}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    const handle = await open(tmp, "wx");
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, target);
  } catch (err) {
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
}

/** Removes temporary files a crashed writer left under `dir`. */
async function removeStaleTemps(dir: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  await Promise.all(entries.filter((e) => TEMP_RE.test(path.basename(e))).map((e) => unlink(path.join(dir, e)).catch(() => undefined)));
}

async function readEtags(dir: string): Promise<Record<string, string>> {
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(dir, ETAG_FILE), "utf8"));
    if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
      return Object.fromEntries(Object.entries(parsed).filter((e): e is [string, string] => typeof e[1] === "string"));
  } catch {
    // No or unreadable ETag store: every file is fetched in full.
  }
  return {};
}

async function fileExists(p: string): Promise<boolean> {
  return stat(p).then(
    (s) => s.isFile(),
    () => false,
  );
}

/** Runs `task` over `items` with at most `limit` in flight. */
async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await task(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
}

interface PassResult {
  fetched: string[];
  notModified: string[];
  failed: { file: string; reason: string }[];
  /** At least one request got an HTTP answer. */
  reachable: boolean;
}

/** One pass over `files` against one CDN. Never throws for a single file. */
async function fetchPass(baseUrl: string, files: readonly string[], opts: SyncOptions, etags: Record<string, string>): Promise<PassResult> {
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const base = baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`;
  const result: PassResult = { fetched: [], notModified: [], failed: [], reachable: false };

  await pool(files, opts.concurrency ?? 6, async (file) => {
    const target = path.join(opts.dir, file);
    const headers: Record<string, string> = { accept: "application/json" };
    const known = etags[file];
    // Only revalidate what we actually hold: a 304 for a missing file would leave nothing.
    if (known && (await fileExists(target))) headers["if-none-match"] = known;
    try {
      const res = await doFetch(new URL(`manifests/${file}`, base), { headers, signal: AbortSignal.timeout(timeoutMs) });
      result.reachable = true;
      if (res.status === 304) {
        await res.body?.cancel();
        result.notModified.push(file);
        return;
      }
      if (res.status !== 200) {
        await res.body?.cancel();
        result.failed.push({ file, reason: `HTTP ${res.status}` });
        return;
      }
      // Reading the whole body first means a connection cut mid-body throws here, before any write.
      const body = new Uint8Array(await res.arrayBuffer());
      JSON.parse(Buffer.from(body).toString("utf8"));
      await writeFileAtomic(target, body);
      const etag = res.headers.get("etag");
      if (etag) etags[file] = etag;
      else delete etags[file];
      result.fetched.push(file);
    } catch (err) {
      const e = err as Error;
      result.failed.push({ file, reason: e.name === "SyntaxError" ? "invalid JSON body" : e.name === "TimeoutError" ? "timed out" : e.message });
    }
  });
  return result;
}

/**
 * Brings the local manifests directory up to date according to SPEC.md and returns what happened.
 * Throws `ManifestSyncError` when required manifests are missing afterwards (unless `skip`).
 */
export async function syncManifests(opts: SyncOptions): Promise<SyncReport> {
  const log = opts.logger;
  if (opts.skip) {
    log?.warn({}, "SKIP_MANIFESTS: manifest fetch and validation skipped");
    return { source: "skipped", fetched: [], notModified: [], failed: [] };
  }
  await mkdir(opts.dir, { recursive: true });
  await removeStaleTemps(opts.dir);
  const files = opts.files ?? MANIFEST_FILES;
  const always = opts.mode === "production" || opts.ci;

  if (!always && (await missingRequired(opts.dir)).length === 0) {
    log?.info({ dir: opts.dir }, "local manifests present; fetch skipped (development)");
    return { source: "local", fetched: [], notModified: [], failed: [] };
  }

  const etags = await readEtags(opts.dir);
  const report: SyncReport = { source: "cache", fetched: [], notModified: [], failed: [] };
  const merge = (r: PassResult) => {
    report.fetched.push(...r.fetched);
    report.notModified.push(...r.notModified);
    report.failed = r.failed;
  };

  if (opts.cdnUrl) {
    const first = await fetchPass(opts.cdnUrl, files, opts, etags);
    merge(first);
    if (first.reachable) report.source = "cdn";
    else log?.warn({ cdnUrl: opts.cdnUrl, reason: first.failed[0]?.reason }, "CDN unreachable; using cached manifests");
  } else {
    report.failed = files.map((file) => ({ file, reason: "no CDN configured" }));
    if (always) log?.warn({}, "PUBLIC_CDN_URL not set; using cached manifests");
  }

  if (!always && opts.fallbackCdnUrl && opts.fallbackCdnUrl !== opts.cdnUrl && (await missingRequired(opts.dir)).length > 0) {
    log?.warn({ fallbackCdnUrl: opts.fallbackCdnUrl }, "required manifests missing; bootstrapping from the production CDN");
    const second = await fetchPass(opts.fallbackCdnUrl, report.failed.map((f) => f.file), opts, etags);
    merge(second);
    if (second.reachable) report.source = "fallback";
  }

  if (report.fetched.length > 0) await writeFileAtomic(path.join(opts.dir, ETAG_FILE), JSON.stringify(etags, null, 2) + "\n");
  log?.info(
    { source: report.source, fetched: report.fetched.length, notModified: report.notModified.length, failed: report.failed.length },
    "manifests synced",
  );

  const missing = await missingRequired(opts.dir);
  if (missing.length > 0) throw new ManifestSyncError(missing);
  return report;
}
