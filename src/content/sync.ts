/**
 * Manifest pipeline (docs/content.md#game-content-and-manifests): fetch the manifests from
 * `{cdnUrl}/manifests/` into the local manifests directory, revalidating with ETags.
 *
 * - production or CI: every file in `MANIFEST_FILES` (and every file the `items.json` index names)
 *   is requested with `If-None-Match` (the ETag stored in `<dir>/.cache/etags.json`); 304 keeps the
 *   cached file, 200 is downloaded, anything else keeps the cached copy.
 * - development and test: nothing is fetched when the required manifests are all present locally;
 *   otherwise they are fetched from `cdnUrl`, and only when that CDN is down (no answer, or only
 *   5xx answers) or not configured, and required manifests are still missing, the production CDN
 *   (`fallbackCdnUrl`) is tried for what failed (docs/content.md#game-content-and-manifests). A local CDN that answers 404 is up:
 *   its missing files stop start-up rather than silently pulling production content.
 * - `skip` (SKIP_MANIFESTS): no fetch and no required-file check; refused in production.
 *
 * Downloads never touch the cache directly. Outline of one sync:
 *   1. finish or discard an update a crash interrupted (see 4);
 *   2. download each changed file into the staging directory `<dir>/.cache/staging/`, 6 at a time,
 *      each within 10 s, the whole sync within `SYNC_DEADLINE_MS` (60 s);
 *   3. validate the staged files merged with the cached ones using the real loader (schemas and
 *      cross references). When that fails (a content problem or any other error), nothing is
 *      applied: a warning lists the problems, the cached copies and their ETags stay, and start-up
 *      continues on the cache;
 *   4. otherwise write a commit marker listing the staged files and the new ETags, rename each
 *      staged file over its cached copy, store the ETags and remove the staging directory. A crash
 *      after the marker is rolled forward by the next start; a crash before it leaves the cache as
 *      it was.
 * Afterwards, missing required manifests stop start-up with `ManifestSyncError` listing them.
 */
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { conditionalGet, pool, readEtagStore } from "./download.js";
import { fileExists, removeStaleTemps, writeFileAtomic } from "./files.js";
import { ContentError, loadContent, type GameContent } from "./load.js";
import { MANIFEST_FILES, itemIndexFiles, missingRequired } from "./manifests.js";

/** Where ETags of cached manifests are kept, relative to the manifests directory. */
export const ETAG_FILE = ".cache/etags.json";
/** Where a sync downloads before validating, relative to the manifests directory. */
export const STAGING_DIR = ".cache/staging";
/** Inside the staging directory: written once the staged set is valid; its presence means "apply". */
export const COMMIT_MARKER = "COMMIT";

/** Time limit for one file, headers and body together. */
export const FILE_TIMEOUT_MS = 10_000;
/** Time limit for a whole sync (every pass, every file). What has not arrived by then counts as
 * failed, so the cached copy is used. */
export const SYNC_DEADLINE_MS = 60_000;
/** Files fetched at once. */
export const FETCH_CONCURRENCY = 6;

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
  /** Production CDN used in development when the local CDN is down and required files are missing. */
  fallbackCdnUrl?: string;
  mode: "development" | "production" | "test";
  ci: boolean;
  /** `SKIP_MANIFESTS`: bypass fetching and the required-file check (refused in production). */
  skip: boolean;
  fetch?: typeof fetch;
  /** Time limit per file, headers and body together. Default `FILE_TIMEOUT_MS`. */
  timeoutMs?: number;
  /** Time limit of the whole sync. Default `SYNC_DEADLINE_MS`. */
  deadlineMs?: number;
  /** Files fetched at once. Default `FETCH_CONCURRENCY`. */
  concurrency?: number;
  logger?: SyncLogger;
  /** Files to sync; defaults to `MANIFEST_FILES`. */
  files?: readonly string[];
}

export interface SyncReport {
  /** `skipped` (SKIP_MANIFESTS), `local` (dev, nothing fetched), `cdn`, `fallback` (production
   * CDN used in dev), `cache` (CDN unreachable, or its files rejected: cached copies used). */
  source: "skipped" | "local" | "cdn" | "fallback" | "cache";
  /** Files downloaded and applied. */
  fetched: string[];
  notModified: string[];
  failed: { file: string; reason: string }[];
  /** When the downloaded files failed validation: one line per problem. Nothing was applied. */
  rejected: string[];
  /** When this sync applied downloaded files: the content it validated them with, built from
   * exactly the files now in the directory, so start-up need not load it again. Otherwise
   * (nothing fetched, nothing applied, or skipped) undefined: load the directory. */
  content?: GameContent;
}

/** The manifest stage cannot go on; `problems` holds one readable line per problem. */
export class ManifestSyncError extends Error {
  override readonly name = "ManifestSyncError";
  readonly problems: string[];
  /** Required manifests still missing (empty when the error is about something else). */
  readonly missing: readonly string[];
  constructor(message: string, problems: string[], missing: readonly string[] = []) {
    super(message);
    this.problems = problems;
    this.missing = missing;
  }

  /** Required manifests are missing after the sync; `rejected` explains a refused download. */
  static missingRequired(missing: readonly string[], rejected: readonly string[] = []): ManifestSyncError {
    return new ManifestSyncError(
      `required manifests missing: ${missing.join(", ")}`,
      [...missing.map((m) => `required manifest missing: ${m}`), ...rejected.map((r) => `manifest from the CDN rejected: ${r}`)],
      missing,
    );
  }
}

/** The one line logged and thrown when SKIP_MANIFESTS is set in production. */
export const SKIP_REFUSED_IN_PRODUCTION =
  "SKIP_MANIFESTS=true is refused in production (NODE_ENV=production): manifests must be fetched and validated; unset SKIP_MANIFESTS";

async function readEtags(dir: string): Promise<Record<string, string>> {
  return readEtagStore(path.join(dir, ETAG_FILE));
}

/** What the commit marker holds: the staged files to move and the complete ETag store after. */
interface CommitPlan {
  files: string[];
  etags: Record<string, string>;
}

/** Moves the staged files of `plan` into place (one rename each), stores the ETags and removes the
 * staging directory. Idempotent: files already moved are skipped, so a roll-forward can repeat it. */
async function applyStaged(dir: string, plan: CommitPlan): Promise<void> {
  const staging = path.join(dir, STAGING_DIR);
  for (const file of plan.files) {
    const from = path.join(staging, file);
    if (!(await fileExists(from))) continue;
    const to = path.join(dir, file);
    await mkdir(path.dirname(to), { recursive: true });
    await rename(from, to);
  }
  await writeFileAtomic(path.join(dir, ETAG_FILE), JSON.stringify(plan.etags, null, 2) + "\n");
  await rm(staging, { recursive: true, force: true });
}

/** Step 1: a staging directory with a commit marker was validated and is rolled forward; one
 * without is an interrupted download and is discarded. */
async function recoverStaging(dir: string, log: SyncLogger | undefined): Promise<void> {
  const staging = path.join(dir, STAGING_DIR);
  let plan: CommitPlan | undefined;
  try {
    const parsed = JSON.parse(await readFile(path.join(staging, COMMIT_MARKER), "utf8")) as CommitPlan;
    if (Array.isArray(parsed.files) && parsed.etags && typeof parsed.etags === "object") plan = parsed;
  } catch {
    // No marker (or a torn one, which the atomic write makes impossible): nothing was applied.
  }
  if (plan) {
    log?.warn({ files: plan.files.length }, "completing a manifest update a previous run left half applied");
    await applyStaged(dir, plan);
  } else {
    await rm(staging, { recursive: true, force: true });
  }
}

interface SyncState {
  opts: SyncOptions;
  staging: string;
  deadline: AbortSignal;
  /** ETags of the cached copies. */
  etags: Record<string, string>;
  /** ETags of the staged files; `null`: the CDN sent none. */
  stagedEtags: Map<string, string | null>;
  fetched: Set<string>;
  notModified: Set<string>;
  failed: Map<string, string>;
}

/** Step 2 for one CDN: downloads `files` into the staging directory. Never throws for a single
 * file. Returns whether the CDN is up (answered at least once with a status below 500). */
async function fetchPass(baseUrl: string, files: readonly string[], s: SyncState): Promise<boolean> {
  const { opts } = s;
  const doFetch = opts.fetch ?? fetch;
  const timeoutMs = opts.timeoutMs ?? FILE_TIMEOUT_MS;
  const base = baseUrl.endsWith("/") ? baseUrl : `${baseUrl}/`;
  let up = false;

  await pool(files, opts.concurrency ?? FETCH_CONCURRENCY, async (file) => {
    if (s.deadline.aborted) return void s.failed.set(file, "sync deadline exceeded");
    const known = s.etags[file];
    // Only revalidate what we actually hold: a 304 for a missing file would leave nothing.
    const etag = known && (await fileExists(path.join(opts.dir, file))) ? known : undefined;
    const got = await conditionalGet(new URL(`manifests/${file}`, base), {
      etag,
      accept: "application/json",
      fetch: doFetch,
      signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), s.deadline]),
      check: (body) => void JSON.parse(Buffer.from(body).toString("utf8")),
    });
    if (got.status !== undefined && got.status < 500) up = true;
    if (got.kind === "not-modified") {
      s.notModified.add(file);
      s.failed.delete(file);
      return;
    }
    if (got.kind === "failed") {
      s.failed.set(file, s.deadline.aborted ? "sync deadline exceeded" : got.reason === "invalid body" ? "invalid JSON body" : got.reason);
      return;
    }
    try {
      await writeFileAtomic(path.join(s.staging, file), got.body);
      s.stagedEtags.set(file, got.etag);
      s.fetched.add(file);
      s.failed.delete(file);
    } catch (err) {
      s.failed.set(file, (err as Error).message);
    }
  });
  return up;
}

/** `fetchPass` plus the item files the (staged or cached) `items.json` index names beyond `files`. */
async function fetchWithIndex(baseUrl: string, files: readonly string[], s: SyncState): Promise<boolean> {
  let up = await fetchPass(baseUrl, files, s);
  let index: string[] | undefined;
  for (const from of [s.staging, s.opts.dir]) {
    try {
      index = itemIndexFiles(JSON.parse(await readFile(path.join(from, "items.json"), "utf8")));
      break;
    } catch {
      // Not there (or not JSON): look in the cache, then give up; the loader names the problem.
    }
  }
  const extra = (index ?? []).filter((f) => !files.includes(f));
  if (extra.length > 0) up = (await fetchPass(baseUrl, extra, s)) || up;
  return up;
}

/**
 * Brings the local manifests directory up to date according to docs/content.md#game-content-and-manifests and returns what happened.
 * Throws `ManifestSyncError` when required manifests are missing afterwards, or when `skip` is set
 * in production.
 */
export async function syncManifests(opts: SyncOptions): Promise<SyncReport> {
  const log = opts.logger;
  if (opts.skip) {
    if (opts.mode === "production") {
      log?.warn({}, SKIP_REFUSED_IN_PRODUCTION);
      throw new ManifestSyncError(SKIP_REFUSED_IN_PRODUCTION, [SKIP_REFUSED_IN_PRODUCTION]);
    }
    log?.warn({}, "SKIP_MANIFESTS: manifest fetch and required-file check bypassed, content loaded leniently (test environments only)");
    return { source: "skipped", fetched: [], notModified: [], failed: [], rejected: [] };
  }
  await mkdir(opts.dir, { recursive: true });
  await removeStaleTemps(opts.dir);
  await recoverStaging(opts.dir, log);
  const always = opts.mode === "production" || opts.ci;

  if (!always && (await missingRequired(opts.dir)).length === 0) {
    log?.info({ dir: opts.dir }, "local manifests present; fetch skipped (development)");
    return { source: "local", fetched: [], notModified: [], failed: [], rejected: [] };
  }

  const files = opts.files ?? MANIFEST_FILES;
  const staging = path.join(opts.dir, STAGING_DIR);
  await mkdir(staging, { recursive: true });
  const s: SyncState = {
    opts,
    staging,
    deadline: AbortSignal.timeout(opts.deadlineMs ?? SYNC_DEADLINE_MS),
    etags: await readEtags(opts.dir),
    stagedEtags: new Map(),
    fetched: new Set(),
    notModified: new Set(),
    failed: new Map(),
  };
  let source: SyncReport["source"] = "cache";
  let rejected: string[] = [];
  let committing = false;
  let applied: GameContent | undefined;

  try {
    let cdnUp = false;
    if (opts.cdnUrl) {
      cdnUp = await fetchWithIndex(opts.cdnUrl, files, s);
      if (cdnUp) source = "cdn";
      else log?.warn({ cdnUrl: opts.cdnUrl, reason: s.failed.values().next().value }, "CDN unreachable; using cached manifests");
    } else {
      for (const file of files) s.failed.set(file, "no CDN configured");
      if (always) log?.warn({}, "PUBLIC_CDN_URL not set; using cached manifests");
    }

    // docs/content.md#game-content-and-manifests: development only, only when the local CDN is down (or none is configured),
    // and only while required manifests are missing.
    if (!always && !cdnUp && opts.fallbackCdnUrl && opts.fallbackCdnUrl !== opts.cdnUrl && (await missingRequired(opts.dir, staging)).length > 0) {
      log?.warn({ fallbackCdnUrl: opts.fallbackCdnUrl }, "local CDN down and required manifests missing; bootstrapping from the production CDN");
      if (await fetchWithIndex(opts.fallbackCdnUrl, [...s.failed.keys()], s)) source = "fallback";
    }

    if (s.fetched.size > 0) {
      // Step 3: the staged files merged with the cache must load exactly as start-up will load them.
      let validated: GameContent | undefined;
      try {
        validated = await loadContent(opts.dir, { overlayDir: staging });
      } catch (err) {
        // Whatever stops the load (a content problem, or anything else the staged set provokes)
        // rejects the set: a bad push must never stop a server that has a cache.
        rejected = err instanceof ContentError ? err.problems : [`validation stopped: ${(err as Error).message}`];
        log?.warn({ problems: rejected, files: [...s.fetched] }, "manifests from the CDN failed validation; nothing applied, keeping the cached copies");
        source = "cache";
      }
      if (rejected.length === 0) {
        // Step 4.
        const etags = { ...s.etags };
        for (const [file, etag] of s.stagedEtags) {
          if (etag) etags[file] = etag;
          else delete etags[file];
        }
        const plan: CommitPlan = { files: [...s.fetched], etags };
        await writeFileAtomic(path.join(staging, COMMIT_MARKER), JSON.stringify(plan));
        committing = true;
        await applyStaged(opts.dir, plan);
        // The directory now holds the very files the validation read (staged ones moved in place).
        applied = validated;
      }
    }
  } finally {
    // A committed plan stays for the roll-forward if applying it failed; anything else goes.
    if (!committing) await rm(staging, { recursive: true, force: true });
  }

  const report: SyncReport = {
    source,
    fetched: rejected.length > 0 ? [] : [...s.fetched],
    notModified: [...s.notModified],
    failed: [...s.failed].map(([file, reason]) => ({ file, reason })),
    rejected,
    content: applied,
  };
  log?.info(
    { source, fetched: report.fetched.length, notModified: report.notModified.length, failed: report.failed.length, rejected: rejected.length },
    "manifests synced",
  );

  const missing = await missingRequired(opts.dir);
  if (missing.length > 0) throw ManifestSyncError.missingRequired(missing, rejected);
  return report;
}
