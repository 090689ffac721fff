/**
 * Local asset CDN for development (docs/content.md#game-content-and-manifests), default port 8080:
 *   GET /manifests/<file>.json   from <WORLD>/manifests (ETag, 304, 5-minute cache)
 *   GET /models/<file>.glb       from <WORLD>/models
 *   GET /audio/music/{normal|combat}/<file>.mp3   from <WORLD>/audio/music
 *   GET /world/<file>            from <WORLD>/world (environment assets)
 *   GET /health                  { status: "ok", timestamp }
 * The same paths `npm run assets` downloads into the world directory (docs/content.md "Build-time assets"),
 * every file with an ETag and 304 answers.
 * Public static content, so any origin may read it (`Access-Control-Allow-Origin: *`).
 *
 *   PORT_CDN=8080 WORLD=world tsx scripts/cdn.ts     (HOST_CDN=127.0.0.1 to listen on loopback only)
 */
import path from "node:path";
import express from "express";
import { ConfigError, loadBuildEnv, type BuildEnv } from "../src/config.js";
import { createManifestRouter, createStaticRouter } from "../src/http/content.js";

let env: BuildEnv;
try {
  env = loadBuildEnv();
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(`cdn: ${err.message}`);
  process.exit(1);
}
const port = env.cdnPort;
const world = path.resolve(env.worldDir);

const ASSET_CACHE_CONTROL = "public, max-age=3600, must-revalidate";
/** File types served under /world/. */
const WORLD_ASSET_TYPES = {
  ".glb": "model/gltf-binary",
  ".gltf": "model/gltf+json",
  ".bin": "application/octet-stream",
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".webp": "image/webp",
  ".ktx2": "image/ktx2",
  ".hdr": "image/vnd.radiance",
  ".json": "application/json; charset=utf-8",
  ".mp3": "audio/mpeg",
  ".ogg": "audio/ogg",
};

const app = express();
app.disable("x-powered-by");
app.use((_req, res, next) => {
  res.setHeader("Access-Control-Allow-Origin", "*");
  next();
});
app.get("/health", (_req, res) => {
  res.json({ status: "ok", timestamp: new Date().toISOString() });
});
app.use("/manifests", createManifestRouter(path.join(world, "manifests")));
app.use("/models", createStaticRouter(path.join(world, "models"), { types: { ".glb": "model/gltf-binary" }, cacheControl: ASSET_CACHE_CONTROL }));
app.use("/audio/music", createStaticRouter(path.join(world, "audio", "music"), { types: { ".mp3": "audio/mpeg" }, cacheControl: ASSET_CACHE_CONTROL }));
app.use("/world", createStaticRouter(path.join(world, "world"), { types: WORLD_ASSET_TYPES, cacheControl: ASSET_CACHE_CONTROL }));
app.use((_req, res) => {
  res.status(404).json({ error: { code: "NOT_FOUND", message: "not found" } });
});

const onListening = () => {
  // The port actually bound (PORT_CDN=0 picks a free one).
  const bound = (server.address() as { port: number }).port;
  console.log(`cdn: serving ${world} on http://${env.cdnHost ?? "localhost"}:${bound} (/manifests, /models, /audio/music, /world, /health)`);
};
const server = env.cdnHost ? app.listen(port, env.cdnHost, onListening) : app.listen(port, onListening);
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)));
