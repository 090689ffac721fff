/**
 * Local asset CDN for development (README.md#game-content-and-manifests), default port 8080:
 *   GET /manifests/<file>.json   from <WORLD>/manifests (ETag, 304, 5-minute cache)
 *   GET /models/<file>.glb       from <WORLD>/models
 *   GET /health                  { status: "ok", timestamp }
 * Public static content, so any origin may read it (`Access-Control-Allow-Origin: *`).
 *
 *   PORT_CDN=8080 WORLD=world tsx scripts/cdn.ts
 */
import path from "node:path";
import express from "express";
import { ConfigError, loadBuildEnv, type BuildEnv } from "../src/config.js";
import { createManifestRouter, createStaticRouter } from "../src/content/http.js";

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
app.use(
  "/models",
  createStaticRouter(path.join(world, "models"), { types: { ".glb": "model/gltf-binary" }, cacheControl: "public, max-age=3600, must-revalidate" }),
);
app.use((_req, res) => {
  res.status(404).json({ error: { code: "NOT_FOUND", message: "not found" } });
});

const server = app.listen(port, () => {
  console.log(`cdn: serving ${world} on http://localhost:${port} (/manifests, /models, /health)`);
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => server.close(() => process.exit(0)));
