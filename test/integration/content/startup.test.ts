/**
 * The manifest stage wired into the real server: `startServer` (the composition root main.ts
 * uses) with a CDN started in the test, SKIP_MANIFESTS through the server, the content routes
 * through the real app, and the real entry point refusing malformed content.
 */
import assert from "node:assert/strict";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import express from "express";
import { pino } from "pino";
import { SKILLS } from "../../../src/domain/types.js";
import { MANIFEST_CACHE_CONTROL, SkillUnlocksResponseSchema, WorldAreasResponseSchema, createManifestRouter } from "../../../src/http/content.js";
import { MANIFEST_FILES } from "../../../src/content/manifests.js";
import { ETAG_FILE, ManifestSyncError, SKIP_REFUSED_IN_PRODUCTION } from "../../../src/content/sync.js";
import { startServer, type GameServer } from "../../../src/server/server.js";
import { startProcess, tempWorld } from "../../helpers/process.js";
import { testConfig } from "../../helpers/server.js";
import { pgliteStorage } from "../../helpers/storage.js";

const SHIPPED = fileURLToPath(new URL("../../../world/manifests", import.meta.url));

/** A pino logger whose JSON lines are kept for the test to read. */
function memoryLogger() {
  const lines: any[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split("\n")) if (l.trim()) lines.push(JSON.parse(l));
      done();
    },
  });
  return { logger: pino({ level: "info", base: undefined }, stream), lines };
}

/** A CDN made of the repository's own manifest router (as `npm run cdn` serves it), over `root`,
 * recording each request's file, If-None-Match and status. */
async function startCdn(root: string) {
  const requests: { file: string; ifNoneMatch?: string; status: number }[] = [];
  const app = express();
  app.use((req, res, next) => {
    res.on("finish", () =>
      requests.push({ file: req.originalUrl.replace(/^\/manifests\//, ""), ifNoneMatch: req.get("if-none-match"), status: res.statusCode }),
    );
    next();
  });
  app.use("/manifests", createManifestRouter(root));
  app.use((_req, res) => void res.status(404).end());
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function editJson(file: string, change: (json: any) => void): Promise<void> {
  const json = JSON.parse(await readFile(file, "utf8"));
  change(json);
  await writeFile(file, JSON.stringify(json, null, 2));
}

describe("manifest stage of the real server", function () {
  this.timeout(120_000);
  let tmp: string;
  let world: string;
  let cdnRoot: string;
  let cdn: Awaited<ReturnType<typeof startCdn>>;
  let server: GameServer | undefined;

  beforeEach(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), "manifest-startup-"));
    world = path.join(tmp, "world");
    cdnRoot = path.join(tmp, "cdn");
    await cp(SHIPPED, cdnRoot, { recursive: true });
    cdn = await startCdn(cdnRoot);
  });
  afterEach(async () => {
    await server?.close();
    server = undefined;
    await cdn.close();
    await rm(tmp, { recursive: true, force: true });
  });

  /** Production refuses the test suite's admin code (a known default): a code that passes the rules. */
  const PRODUCTION_ADMIN_CODE = "production-like-admin-code-42";

  /** Starts the server in production against the test CDN, on the shared test storage. */
  async function startProduction(extra: NodeJS.ProcessEnv = {}) {
    const { logger, lines } = memoryLogger();
    const config = testConfig({
      NODE_ENV: "production",
      // Required by the production config rules; unused, the test storage is injected.
      DATABASE_URL: "postgres://unused@127.0.0.1:9/unused",
      ADMIN_CODE: PRODUCTION_ADMIN_CODE,
      PUBLIC_CDN_URL: cdn.url,
      WORLD: world,
      ...extra,
    });
    server = await startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1", logger });
    return { server, lines };
  }
  const synced = (lines: any[]) => lines.find((l) => l.msg === "manifests synced");

  it("production: the first start fetches every manifest from the CDN, the second revalidates with 304s", async () => {
    const first = await startProduction();
    assert.equal(cdn.requests.length, MANIFEST_FILES.length);
    for (const r of cdn.requests) {
      assert.equal(r.status, 200, r.file);
      assert.equal(r.ifNoneMatch, undefined, r.file);
    }
    assert.deepEqual(
      { ...synced(first.lines), level: undefined, time: undefined },
      {
        level: undefined,
        time: undefined,
        msg: "manifests synced",
        source: "cdn",
        fetched: MANIFEST_FILES.length,
        notModified: 0,
        failed: 0,
        rejected: 0,
      },
    );
    for (const f of MANIFEST_FILES) assert.equal(await readFile(path.join(world, "manifests", f), "utf8"), await readFile(path.join(cdnRoot, f), "utf8"), f);
    const etags = JSON.parse(await readFile(path.join(world, "manifests", ETAG_FILE), "utf8"));
    assert.equal(Object.keys(etags).length, MANIFEST_FILES.length);
    assert.ok(first.server.content.items.size >= 60);
    // The content the sync validated before moving the files in is the one the server runs on.
    assert.equal(first.lines.find((l) => l.msg === "stage 2/6 manifests ready")?.contentLoadedBy, "sync");
    await first.server.close();
    server = undefined;

    cdn.requests.length = 0;
    const second = await startProduction();
    assert.equal(cdn.requests.length, MANIFEST_FILES.length);
    for (const r of cdn.requests) {
      assert.equal(r.status, 304, r.file);
      assert.equal(r.ifNoneMatch, etags[r.file], r.file);
    }
    assert.equal(synced(second.lines).notModified, MANIFEST_FILES.length);
    assert.equal(synced(second.lines).fetched, 0);
    assert.ok(second.lines.some((l) => l.msg === "stage 2/6 manifests ready" && l.items === first.server.content.items.size));
    // Nothing was applied, so start-up loaded the cache itself.
    assert.equal(second.lines.find((l) => l.msg === "stage 2/6 manifests ready")?.contentLoadedBy, "start-up");
  });

  it("production: a bad CDN push does not stop the server; it starts on the cached copy and warns", async () => {
    await (await startProduction()).server.close();
    server = undefined;
    const cached = await readFile(path.join(world, "manifests", "npcs.json"), "utf8");
    await editJson(path.join(cdnRoot, "npcs.json"), (npcs) => (npcs[0].drops.table[0].itemId = "golden_goose"));

    const { server: s, lines } = await startProduction();
    assert.equal(await readFile(path.join(world, "manifests", "npcs.json"), "utf8"), cached);
    const warning = lines.find((l) => l.level === 40 && /failed validation/.test(l.msg));
    assert.ok(warning, JSON.stringify(lines));
    assert.deepEqual(warning.problems, ['npcs.json: [0].drops.table[0].itemId: unknown item "golden_goose"']);
    assert.equal(synced(lines).source, "cache");
    assert.equal(await fetch(`${s.url}/manifests/npcs.json`).then((r) => r.text()), cached);
  });

  it("production: a pushed world-areas.json with bounds of a billion tiles does not stop the server", async () => {
    await (await startProduction()).server.close();
    server = undefined;
    const cached = await readFile(path.join(world, "manifests", "world-areas.json"), "utf8");
    await editJson(path.join(cdnRoot, "world-areas.json"), (w) => (w.worldBounds = { minX: -1e9, maxX: 1e9, minZ: -1e9, maxZ: 1e9 }));

    const { server: s, lines } = await startProduction();
    assert.equal(await readFile(path.join(world, "manifests", "world-areas.json"), "utf8"), cached);
    const warning = lines.find((l) => l.level === 40 && /failed validation/.test(l.msg));
    assert.ok(warning, JSON.stringify(lines));
    assert.match(warning.problems[0], /^world-areas\.json: worldBounds: /);
    assert.equal(synced(lines).source, "cache");
    assert.deepEqual(s.content.worldBounds, JSON.parse(cached).worldBounds);
  });

  it("production refuses SKIP_MANIFESTS before touching anything", async () => {
    const { logger, lines } = memoryLogger();
    const config = testConfig({
      NODE_ENV: "production",
      DATABASE_URL: "postgres://unused@127.0.0.1:9/unused",
      ADMIN_CODE: PRODUCTION_ADMIN_CODE,
      SKIP_MANIFESTS: "true",
      WORLD: world,
    });
    await assert.rejects(startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1", logger }), (err: unknown) => {
      assert.ok(err instanceof ManifestSyncError);
      assert.deepEqual(err.problems, [SKIP_REFUSED_IN_PRODUCTION]);
      return true;
    });
    assert.ok(lines.some((l) => l.level === 40 && l.msg === SKIP_REFUSED_IN_PRODUCTION));
    assert.ok(!lines.some((l) => /stage 3/.test(l.msg)));
  });

  it("SKIP_MANIFESTS in tests: no fetch, and a broken entry is left out with a warning instead of stopping start-up", async () => {
    await cp(SHIPPED, path.join(world, "manifests"), { recursive: true });
    let broken = "";
    await editJson(path.join(world, "manifests", "npcs.json"), (npcs) => {
      broken = npcs[3].id;
      npcs[3].maxHit = "lots";
    });
    const { logger, lines } = memoryLogger();
    const config = testConfig({ SKIP_MANIFESTS: "true", WORLD: world, PUBLIC_CDN_URL: cdn.url });
    server = await startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1", logger });
    assert.equal(cdn.requests.length, 0);
    assert.equal(server.content.npcs.has(broken), false);
    assert.ok(server.content.npcs.size >= 6);
    const skipped = lines.filter((l) => /SKIP_MANIFESTS: manifest problem ignored/.test(l.msg));
    assert.equal(skipped.length, 1);
    assert.match(skipped[0].problem, /^npcs\.json: \[3\]\.maxHit: /);
  });

  describe("content routes through the real app", () => {
    let s: GameServer;
    beforeEach(async () => {
      s = (await startProduction()).server;
    });

    it("GET /manifests/{file}: JSON, 5-minute cache, ETag and conditional GET; traversal is 404", async () => {
      const r = await fetch(`${s.url}/manifests/items/food.json`);
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
      assert.equal(r.headers.get("cache-control"), MANIFEST_CACHE_CONTROL);
      const etag = r.headers.get("etag")!;
      assert.match(etag, /^"[^"]+"$/);
      assert.equal(await r.text(), await readFile(path.join(cdnRoot, "items/food.json"), "utf8"));
      const again = await fetch(`${s.url}/manifests/items/food.json`, { headers: { "if-none-match": etag } });
      assert.equal(again.status, 304);
      for (const p of ["/manifests/%2e%2e%2fdb", "/manifests/..%2f..%2fpackage.json", "/manifests/.cache/etags.json", "/manifests/%2Fetc%2Fpasswd"]) {
        const bad = await fetch(`${s.url}${p}`);
        assert.equal(bad.status, 404, p);
        assert.equal((await bad.json()).error.code, "NOT_FOUND", p);
      }
    });

    it("GET /api/data/skill-unlocks is public and keyed by every lowercase skill, sorted by level", async () => {
      const r = await fetch(`${s.url}/api/data/skill-unlocks`);
      assert.equal(r.status, 200);
      const body = SkillUnlocksResponseSchema.parse(await r.json());
      assert.deepEqual(Object.keys(body), [...SKILLS]);
      for (const skill of SKILLS) {
        assert.ok(body[skill].length > 0, skill);
        const levels = body[skill].map((u) => u.level);
        assert.deepEqual(
          levels,
          [...levels].sort((a, b) => a - b),
          skill,
        );
      }
      assert.deepEqual(body, JSON.parse(JSON.stringify(Object.fromEntries(SKILLS.map((k) => [k, s.content.skillUnlocks[k]])))));
    });

    it("GET /api/v1/world/areas lists every area with bounds, safe zone, PvP, difficulty and biome", async () => {
      const r = await fetch(`${s.url}/api/v1/world/areas`);
      assert.equal(r.status, 200);
      const areas = WorldAreasResponseSchema.parse(await r.json());
      assert.deepEqual(
        areas.map((a) => a.id),
        s.content.areas.map((a) => a.id),
      );
      assert.ok(areas.some((a) => a.safeZone && !a.pvp));
      assert.ok(areas.some((a) => a.pvp));
    });
  });
});

describe("manifest stage of the real entry point", function () {
  this.timeout(90_000);

  it("a malformed manifest makes the process exit non-zero, naming the file and the field", async () => {
    const world = tempWorld();
    try {
      await editJson(path.join(world, "manifests", "npcs.json"), (npcs) => (npcs[2].maxHit = "lots"));
      const child = startProcess({ NODE_ENV: "development", WORLD: world, LOG_LEVEL: "info" });
      const { code } = await child.exited;
      assert.notEqual(code, 0, child.output());
      assert.ok(code !== null, "exited by itself, not by a signal");
      assert.match(child.output(), /npcs\.json: \[2\]\.maxHit: /);
      // It stopped at the manifest stage, before storage.
      assert.doesNotMatch(child.output(), /stage 3\/6/);
    } finally {
      await rm(world, { recursive: true, force: true });
    }
  });
});
