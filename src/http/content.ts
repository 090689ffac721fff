/**
 * HTTP surface of the content: the `/manifests/` file route (docs/rest.md#http-api) and the public data
 * endpoints built from loaded content. Routers only; the app factory mounts them.
 */
import { createHash } from "node:crypto";
import { readFile, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { Router, type Request, type Response, type NextFunction } from "express";
import { z } from "zod";
import { SKILLS } from "../domain/types.js";
import type { RouteModule } from "./app.js";
import type { GameContent } from "../content/load.js";
import { UNLOCK_TYPES } from "../content/schemas.js";

/** docs/rest.md#http-api: manifests may be cached 300 seconds. */
export const MANIFEST_CACHE_CONTROL = "public, max-age=300, must-revalidate";

export interface StaticRouterOptions {
  /** Served extensions and their content types, e.g. `{ ".json": "application/json; charset=utf-8" }`. */
  types: Readonly<Record<string, string>>;
  cacheControl: string;
}

/**
 * The path below the mount point as safe relative segments, or `undefined` when it must not be
 * served: empty segments (`//`, absolute paths), segments that decode to `.`/`..`/dotfiles or
 * contain a separator or NUL (`%2e%2e%2f`, `..%5c`), bad percent-encoding, other extensions.
 */
export function safeSegments(rawPath: string, extensions: readonly string[]): string[] | undefined {
  if (!rawPath.startsWith("/")) return undefined;
  const segments: string[] = [];
  for (const raw of rawPath.slice(1).split("/")) {
    let seg: string;
    try {
      seg = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    if (seg === "" || seg.startsWith(".") || /[/\\\0:]/.test(seg)) return undefined;
    segments.push(seg);
  }
  const last = segments.at(-1);
  if (!last || !extensions.includes(path.extname(last).toLowerCase())) return undefined;
  return segments;
}

/** Strong ETag of a body. */
export function strongEtag(body: Uint8Array): string {
  return `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;
}

/** RFC 9110 If-None-Match evaluation (weak comparison). */
function matchesIfNoneMatch(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const strip = (t: string) => t.trim().replace(/^W\//, "");
  return header.split(",").some((t) => t.trim() === "*" || strip(t) === strip(etag));
}

/**
 * Serves regular files below `root` with strong ETags, conditional GET and the given cache
 * header. Anything it will not serve (traversal, dotfiles, unknown extensions, missing files)
 * goes to `next()`, so the application's 404 handler answers.
 */
export function createStaticRouter(root: string, opts: StaticRouterOptions): Router {
  const router = Router();
  const extensions = Object.keys(opts.types);
  const cache = new Map<string, { key: string; etag: string }>();
  let realRoot: string | undefined;

  router.use(async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== "GET" && req.method !== "HEAD") return next();
    const segments = safeSegments(req.path, extensions);
    if (!segments) return next();
    try {
      realRoot ??= await realpath(root);
      // A symlink inside the tree must not lead outside it.
      const file = await realpath(path.join(realRoot, ...segments));
      const rel = path.relative(realRoot, file);
      if (rel.startsWith("..") || path.isAbsolute(rel)) return next();
      const info = await stat(file);
      if (!info.isFile()) return next();
      const body = await readFile(file);
      const key = `${info.mtimeMs}:${info.size}:${info.ino}`;
      let etag = cache.get(file)?.key === key ? cache.get(file)!.etag : undefined;
      if (!etag) {
        etag = strongEtag(body);
        cache.set(file, { key, etag });
      }
      res.setHeader("ETag", etag);
      res.setHeader("Cache-Control", opts.cacheControl);
      res.setHeader("X-Content-Type-Options", "nosniff");
      if (matchesIfNoneMatch(req.get("if-none-match"), etag)) {
        res.status(304).end();
        return;
      }
      res.status(200);
      res.setHeader("Content-Type", opts.types[path.extname(file).toLowerCase()]!);
      res.setHeader("Content-Length", String(body.length));
      res.end(req.method === "HEAD" ? undefined : body);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR" || code === "ENAMETOOLONG") return next();
      next(err);
    }
  });
  return router;
}

/** Router for `/manifests`: JSON files under `dir`, cached 300 s with ETag revalidation. */
export function createManifestRouter(dir: string): Router {
  return createStaticRouter(dir, { types: { ".json": "application/json; charset=utf-8" }, cacheControl: MANIFEST_CACHE_CONTROL });
}

/** One unlock entry in `GET /api/data/skill-unlocks`. */
export const SkillUnlockEntryResponseSchema = z.object({
  level: z.int().min(1),
  description: z.string(),
  type: z.enum(UNLOCK_TYPES),
});
/** `GET /api/data/skill-unlocks`: lowercase skill name to unlocks sorted by level. */
export const SkillUnlocksResponseSchema = z.record(z.enum(SKILLS), z.array(SkillUnlockEntryResponseSchema));
export type SkillUnlocksResponse = z.infer<typeof SkillUnlocksResponseSchema>;

/** One area in `GET /api/v1/world/areas`. */
export const WorldAreaResponseSchema = z.object({
  id: z.string(),
  name: z.string(),
  description: z.string(),
  bounds: z.object({ minX: z.int(), maxX: z.int(), minZ: z.int(), maxZ: z.int() }),
  safeZone: z.boolean(),
  pvp: z.boolean(),
  difficulty: z.int().min(0).max(3),
  biome: z.string(),
});
/** `GET /api/v1/world/areas`. */
export const WorldAreasResponseSchema = z.array(WorldAreaResponseSchema);
export type WorldAreasResponse = z.infer<typeof WorldAreasResponseSchema>;

/** Builds the bodies once; the content does not change while the process runs. */
export function dataResponses(content: GameContent): { skillUnlocks: SkillUnlocksResponse; areas: WorldAreasResponse } {
  const skillUnlocks = Object.fromEntries(
    SKILLS.map((s) => [s, content.skillUnlocks[s].map(({ level, description, type }) => ({ level, description, type }))]),
  ) as SkillUnlocksResponse;
  const areas = content.areas.map(({ id, name, description, bounds, safeZone, pvp, difficulty, biome }) => ({
    id,
    name,
    description,
    bounds: { ...bounds },
    safeZone,
    pvp,
    difficulty,
    biome,
  }));
  return { skillUnlocks, areas };
}

/** Public routes `GET /api/data/skill-unlocks` and `GET /api/v1/world/areas`; mount at `/`. */
export function createDataRouter(content: GameContent): Router {
  const router = Router();
  const bodies = dataResponses(content);
  router.get("/api/data/skill-unlocks", (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=300");
    res.json(bodies.skillUnlocks);
  });
  router.get("/api/v1/world/areas", (_req, res) => {
    res.setHeader("Cache-Control", "public, max-age=300");
    res.json(bodies.areas);
  });
  return router;
}

/** OpenAPI entries of the content routes mounted outside the API modules (data, areas, manifests). */
export const contentApiDocs: RouteModule = (api) => {
  api.document({
    method: "get",
    path: "/api/data/skill-unlocks",
    summary: "Skill unlocks keyed by lowercase skill name (public)",
    tags: ["data"],
    responses: { 200: { description: "Skill unlock set", schema: SkillUnlocksResponseSchema } },
  });
  api.document({
    method: "get",
    path: "/api/v1/world/areas",
    summary: "All world areas",
    tags: ["world"],
    responses: { 200: { description: "Areas", schema: WorldAreasResponseSchema } },
  });
  api.document({
    method: "get",
    path: "/manifests/{file}",
    summary: "Game content manifests (Cache-Control: public, max-age=300, must-revalidate; ETag)",
    tags: ["data"],
    responses: { 200: { description: "Manifest JSON" }, 304: { description: "Not modified" }, 404: { description: "No such manifest" } },
  });
};
