/**
 * Local asset CDN for development (SPEC.md "Asset CDN paths"), default port 8080:
 *   GET /manifests/<file>.json   from <WORLD>/manifests (ETag, 304, 5-minute cache)
 *   GET /models/<file>.glb       from <WORLD>/models
 *   GET /health                  { status: "ok", timestamp }
 * Public static content, so any origin may read it (`Access-Control-Allow-Origin: *`).
 *
 *   PORT_CDN=8080 WORLD=world tsx scripts/cdn.ts
 */
import path from "node:path";
import express from "express";
import { createManifestRouter, createStaticRouter } from "../src/content/http.js";

const port = Number(process.env.PORT_CDN ?? 8080);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`cdn: PORT_CDN must be a port number, got "${process.env.PORT_CDN}"`);
  process.exit(1);
}
const world = path.resolve(process.env.WORLD ?? "world");

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
