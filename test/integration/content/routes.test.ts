import assert from "node:assert/strict";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import express from "express";
import { SKILLS } from "../../../src/domain/types.js";
import {
  MANIFEST_CACHE_CONTROL,
  SkillUnlocksResponseSchema,
  WorldAreasResponseSchema,
  createDataRouter,
  createManifestRouter,
} from "../../../src/http/content.js";
import { loadContent } from "../../../src/content/load.js";

const SHIPPED = fileURLToPath(new URL("../../../world/manifests", import.meta.url));

interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** Sends the path exactly as written (no URL normalisation, unlike fetch). */
function request(port: number, rawPath: string, opts: { method?: string; headers?: Record<string, string> } = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: "127.0.0.1", port, path: rawPath, method: opts.method ?? "GET", headers: opts.headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks).toString("utf8") }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("manifest and data routes", () => {
  let root: string;
  let server: http.Server;
  let port: number;

  before(async () => {
    // <root>/manifests is served; <root>/secret.json and <root>/config must stay out of reach.
    root = await mkdtemp(path.join(os.tmpdir(), "manifest-http-"));
    const dir = path.join(root, "manifests");
    await cp(SHIPPED, dir, { recursive: true });
    await writeFile(path.join(root, "secret.json"), '{"secret": true}');
    await mkdir(path.join(root, "config"));
    await writeFile(path.join(root, "config", "settings.json"), '{"secret": true}');
    await mkdir(path.join(dir, ".cache"), { recursive: true });
    await writeFile(path.join(dir, ".cache", "etags.json"), "{}");
    await writeFile(path.join(dir, ".etags.json"), "{}");
    await symlink(path.join(root, "secret.json"), path.join(dir, "linked.json"));

    const content = await loadContent(SHIPPED);
    const app = express();
    app.use("/manifests", createManifestRouter(dir));
    app.use(createDataRouter(content));
    app.use((_req, res) => {
      res.status(404).json({ error: { code: "NOT_FOUND", message: "not found" } });
    });
    server = app.listen(0, "127.0.0.1");
    await new Promise((resolve) => server.once("listening", resolve));
    port = (server.address() as AddressInfo).port;
  });
  after(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rm(root, { recursive: true, force: true });
  });

  it("serves a manifest with JSON type, cache header and a strong ETag", async () => {
    const res = await request(port, "/manifests/npcs.json");
    assert.equal(res.status, 200);
    assert.equal(res.headers["content-type"], "application/json; charset=utf-8");
    assert.equal(res.headers["cache-control"], MANIFEST_CACHE_CONTROL);
    assert.equal(res.headers["cache-control"], "public, max-age=300, must-revalidate");
    assert.match(String(res.headers.etag), /^"[^"]+"$/);
    assert.equal(res.body, await readFile(path.join(SHIPPED, "npcs.json"), "utf8"));
    const nested = await request(port, "/manifests/items/food.json");
    assert.equal(nested.status, 200);
    assert.notEqual(nested.headers.etag, res.headers.etag);
  });

  it("answers 304 to a matching If-None-Match (plain, weak, in a list, or *) and 200 to a stale one", async () => {
    const { headers } = await request(port, "/manifests/biomes.json");
    const etag = String(headers.etag);
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, "*"]) {
      const res = await request(port, "/manifests/biomes.json", { headers: { "if-none-match": inm } });
      assert.equal(res.status, 304, inm);
      assert.equal(res.body, "");
      assert.equal(res.headers.etag, etag);
      assert.equal(res.headers["cache-control"], MANIFEST_CACHE_CONTROL);
    }
    const stale = await request(port, "/manifests/biomes.json", { headers: { "if-none-match": '"stale"' } });
    assert.equal(stale.status, 200);
  });

  it("answers HEAD with headers only", async () => {
    const res = await request(port, "/manifests/stores.json", { method: "HEAD" });
    assert.equal(res.status, 200);
    assert.equal(res.body, "");
    assert.ok(Number(res.headers["content-length"]) > 0);
  });

  const refused = [
    "/manifests/../secret.json",
    "/manifests/../config/settings.json",
    "/manifests/..%2fsecret.json",
    "/manifests/%2e%2e%2fsecret.json",
    "/manifests/%2E%2E%2Fsecret.json",
    "/manifests/%2e%2e/secret.json",
    "/manifests/items/..%2f..%2fsecret.json",
    "/manifests/..%5csecret.json",
    "/manifests/%252e%252e%252fsecret.json",
    "/manifests//etc/passwd",
    "/manifests/%2fetc%2fpasswd",
    "/manifests/%2Fetc/passwd",
    "/manifests/.etags.json",
    "/manifests/.cache/etags.json",
    "/manifests/%2ecache/etags.json",
    "/manifests/npcs.json%00.txt",
    "/manifests/linked.json",
    "/manifests/missing.json",
    "/manifests/items",
    "/manifests/items/",
    "/manifests/",
    "/manifests/%zz.json",
  ];
  for (const p of refused)
    it(`refuses ${p} through the application's 404`, async () => {
      const res = await request(port, p);
      assert.equal(res.status, 404);
      assert.deepEqual(JSON.parse(res.body), { error: { code: "NOT_FOUND", message: "not found" } });
    });

  it("does not serve other methods", async () => {
    assert.equal((await request(port, "/manifests/npcs.json", { method: "POST" })).status, 404);
  });

  it("GET /api/data/skill-unlocks answers every lowercase skill with entries sorted by level", async () => {
    const res = await request(port, "/api/data/skill-unlocks");
    assert.equal(res.status, 200);
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    const body = SkillUnlocksResponseSchema.parse(JSON.parse(res.body));
    assert.deepEqual(Object.keys(body).sort(), [...SKILLS].sort());
    for (const skill of SKILLS) {
      const levels = body[skill].map((u) => u.level);
      assert.deepEqual(
        levels,
        [...levels].sort((a, b) => a - b),
        skill,
      );
    }
  });

  it("GET /api/v1/world/areas lists the areas with bounds and flags", async () => {
    const res = await request(port, "/api/v1/world/areas");
    assert.equal(res.status, 200);
    const areas = WorldAreasResponseSchema.parse(JSON.parse(res.body));
    assert.ok(areas.some((a) => a.safeZone && a.bounds.minX <= 0 && a.bounds.maxX >= 0 && a.bounds.minZ <= 0 && a.bounds.maxZ >= 0));
    assert.ok(areas.some((a) => a.pvp));
    assert.deepEqual(Object.keys(areas[0]!).sort(), ["biome", "bounds", "description", "difficulty", "id", "name", "pvp", "safeZone"]);
  });
});
