import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, readdir, rm, stat, writeFile, mkdir } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadContent } from "../../src/content/load.js";
import { ETAG_FILE, MANIFEST_FILES, ManifestSyncError, syncManifests, type SyncOptions } from "../../src/content/sync.js";

const SHIPPED = fileURLToPath(new URL("../../world/manifests", import.meta.url));

/** A CDN serving in-memory manifests with strong ETags, and knobs for failures. */
interface FakeCdn {
  url: string;
  files: Map<string, string>;
  requests: { file: string; ifNoneMatch: string | undefined }[];
  /** Files answered with half the body, then a destroyed socket. */
  halfBody: Set<string>;
  /** Files never answered. */
  hang: Set<string>;
  close(): Promise<void>;
}

const etagOf = (body: string) => `"${createHash("sha256").update(body).digest("hex").slice(0, 20)}"`;

async function startCdn(files: Map<string, string>): Promise<FakeCdn> {
  const cdn = { files, requests: [], halfBody: new Set<string>(), hang: new Set<string>() } as unknown as FakeCdn;
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? "/", "http://cdn");
    const file = pathname.replace(/^\/manifests\//, "");
    cdn.requests.push({ file, ifNoneMatch: req.headers["if-none-match"] });
    if (cdn.hang.has(file)) return;
    const body = pathname.startsWith("/manifests/") ? cdn.files.get(file) : undefined;
    if (body === undefined) {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    const etag = etagOf(body);
    if (req.headers["if-none-match"] === etag) {
      res.writeHead(304, { etag }).end();
      return;
    }
    const bytes = Buffer.from(body);
    res.writeHead(200, { "content-type": "application/json; charset=utf-8", "content-length": bytes.length, etag });
    if (cdn.halfBody.has(file)) res.write(bytes.subarray(0, bytes.length >> 1), () => res.socket?.destroy());
    else res.end(bytes);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cdn.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  cdn.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return cdn;
}

/** A URL where nothing listens: a server is started and closed at once. */
async function deadUrl(): Promise<string> {
  const cdn = await startCdn(new Map());
  await cdn.close();
  return cdn.url;
}

async function shippedFiles(): Promise<Map<string, string>> {
  const map = new Map<string, string>();
  for (const f of MANIFEST_FILES) map.set(f, await readFile(path.join(SHIPPED, f), "utf8"));
  return map;
}

async function allFiles(dir: string): Promise<string[]> {
  return (await readdir(dir, { recursive: true })).map(String);
}

describe("manifest sync", function () {
  let dir: string;
  let cdn: FakeCdn;
  const opts = (extra: Partial<SyncOptions>): SyncOptions => ({ dir, cdnUrl: cdn.url, mode: "production", ci: false, skip: false, ...extra });

  beforeEach(async () => {
    dir = path.join(await mkdtemp(path.join(os.tmpdir(), "manifest-sync-")), "manifests");
    cdn = await startCdn(await shippedFiles());
  });
  afterEach(async () => {
    await cdn.close();
    await rm(path.dirname(dir), { recursive: true, force: true });
  });

  it("production: first fetch downloads every manifest, stores ETags, and the result loads", async () => {
    const report = await syncManifests(opts({}));
    assert.equal(report.source, "cdn");
    assert.equal(report.fetched.length, MANIFEST_FILES.length);
    assert.ok(MANIFEST_FILES.length >= 25);
    assert.deepEqual(report.notModified, []);
    assert.deepEqual(report.failed, []);
    assert.ok(cdn.requests.every((r) => r.ifNoneMatch === undefined));
    for (const f of MANIFEST_FILES) assert.equal(await readFile(path.join(dir, f), "utf8"), cdn.files.get(f));
    const etags = JSON.parse(await readFile(path.join(dir, ETAG_FILE), "utf8"));
    assert.equal(etags["npcs.json"], etagOf(cdn.files.get("npcs.json")!));
    assert.ok((await loadContent(dir)).items.size >= 60);
  });

  it("production: revalidates with If-None-Match and keeps files on 304", async () => {
    await syncManifests(opts({}));
    const before = await stat(path.join(dir, "npcs.json"));
    cdn.requests.length = 0;
    const report = await syncManifests(opts({}));
    assert.equal(report.source, "cdn");
    assert.deepEqual(report.fetched, []);
    assert.equal(report.notModified.length, MANIFEST_FILES.length);
    assert.equal(cdn.requests.length, MANIFEST_FILES.length);
    for (const r of cdn.requests) assert.equal(r.ifNoneMatch, etagOf(cdn.files.get(r.file)!), r.file);
    assert.equal((await stat(path.join(dir, "npcs.json"))).mtimeMs, before.mtimeMs);
  });

  it("production: re-downloads exactly the file that changed", async () => {
    await syncManifests(opts({}));
    const changed = JSON.parse(cdn.files.get("biomes.json")!);
    changed[0].description = "Freshly mown.";
    cdn.files.set("biomes.json", JSON.stringify(changed));
    const report = await syncManifests(opts({}));
    assert.deepEqual(report.fetched, ["biomes.json"]);
    assert.equal(report.notModified.length, MANIFEST_FILES.length - 1);
    assert.equal(await readFile(path.join(dir, "biomes.json"), "utf8"), cdn.files.get("biomes.json"));
  });

  it("CI in development mode also always fetches", async () => {
    await cp(SHIPPED, dir, { recursive: true });
    const report = await syncManifests(opts({ mode: "development", ci: true }));
    assert.equal(report.source, "cdn");
    assert.equal(cdn.requests.length, MANIFEST_FILES.length);
  });

  it("CDN down with a cache: uses the cached copies", async () => {
    await syncManifests(opts({}));
    const report = await syncManifests(opts({ cdnUrl: await deadUrl() }));
    assert.equal(report.source, "cache");
    assert.equal(report.failed.length, MANIFEST_FILES.length);
    assert.equal(await readFile(path.join(dir, "npcs.json"), "utf8"), cdn.files.get("npcs.json"));
  });

  it("CDN down without a cache: throws listing the missing required manifests", async () => {
    await assert.rejects(syncManifests(opts({ cdnUrl: await deadUrl() })), (err: unknown) => {
      assert.ok(err instanceof ManifestSyncError);
      assert.deepEqual([...err.missing], ["npcs.json", "world-areas.json", "biomes.json", "stores.json", "items.json (or items/*.json)"]);
      assert.match(err.message, /required manifests missing: npcs\.json, world-areas\.json, biomes\.json, stores\.json, items\.json/);
      return true;
    });
  });

  it("development: skips the fetch when local manifests exist", async () => {
    await cp(SHIPPED, dir, { recursive: true });
    const report = await syncManifests(opts({ mode: "development" }));
    assert.equal(report.source, "local");
    assert.equal(cdn.requests.length, 0);
  });

  it("development: fetches when none exist", async () => {
    const report = await syncManifests(opts({ mode: "development" }));
    assert.equal(report.source, "cdn");
    assert.equal(report.fetched.length, MANIFEST_FILES.length);
  });

  it("development: falls back to the production CDN when the local CDN is down and required files are missing", async () => {
    const report = await syncManifests(opts({ mode: "development", cdnUrl: await deadUrl(), fallbackCdnUrl: cdn.url }));
    assert.equal(report.source, "fallback");
    assert.equal(report.fetched.length, MANIFEST_FILES.length);
    assert.deepEqual(report.failed, []);
    assert.ok((await loadContent(dir)).npcs.size >= 6);
  });

  it("production does not use the development fallback", async () => {
    await assert.rejects(syncManifests(opts({ cdnUrl: await deadUrl(), fallbackCdnUrl: cdn.url })), ManifestSyncError);
    assert.equal(cdn.requests.length, 0);
  });

  it("a required manifest the CDN lacks stops start-up, naming it", async () => {
    cdn.files.delete("npcs.json");
    await assert.rejects(syncManifests(opts({})), (err: unknown) => {
      assert.ok(err instanceof ManifestSyncError);
      assert.deepEqual([...err.missing], ["npcs.json"]);
      return true;
    });
  });

  it("an optional manifest the CDN lacks is reported as failed and does not stop start-up", async () => {
    cdn.files.delete("music.json");
    const report = await syncManifests(opts({}));
    assert.deepEqual(report.failed, [{ file: "music.json", reason: "HTTP 404" }]);
  });

  it("a connection cut mid-body leaves the old file intact and no temporary files", async () => {
    await syncManifests(opts({}));
    const old = cdn.files.get("npcs.json")!;
    cdn.files.set("npcs.json", JSON.stringify(JSON.parse(old).slice(0, 3)));
    cdn.halfBody.add("npcs.json");
    const report = await syncManifests(opts({}));
    assert.deepEqual(report.failed.map((f) => f.file), ["npcs.json"]);
    assert.equal(await readFile(path.join(dir, "npcs.json"), "utf8"), old);
    assert.deepEqual((await allFiles(dir)).filter((f) => f.endsWith(".tmp")), []);
  });

  it("a 200 with a body that is not JSON keeps the old file", async () => {
    await syncManifests(opts({}));
    const old = cdn.files.get("stores.json")!;
    cdn.files.set("stores.json", "<html>maintenance</html>");
    const report = await syncManifests(opts({}));
    assert.deepEqual(report.failed, [{ file: "stores.json", reason: "invalid JSON body" }]);
    assert.equal(await readFile(path.join(dir, "stores.json"), "utf8"), old);
  });

  it("bounds the time per file", async () => {
    cdn.hang.add("prayers.json");
    const report = await syncManifests(opts({ timeoutMs: 300 }));
    assert.deepEqual(report.failed, [{ file: "prayers.json", reason: "timed out" }]);
    assert.equal(report.fetched.length, MANIFEST_FILES.length - 1);
  });

  it("bounds concurrency", async () => {
    let inFlight = 0;
    let peak = 0;
    const countingFetch: typeof fetch = async (input, init) => {
      peak = Math.max(peak, ++inFlight);
      try {
        return await fetch(input, init);
      } finally {
        inFlight--;
      }
    };
    await syncManifests(opts({ fetch: countingFetch, concurrency: 3 }));
    assert.ok(peak <= 3 && peak >= 1, `peak ${peak}`);
  });

  it("removes temporary files a crashed writer left behind", async () => {
    await mkdir(path.join(dir, "items"), { recursive: true });
    const stale = path.join(dir, "items", ".food.json.4242.0123456789ab.tmp");
    await writeFile(stale, '{"half": ');
    await syncManifests(opts({}));
    assert.deepEqual((await allFiles(dir)).filter((f) => f.endsWith(".tmp")), []);
  });

  it("SKIP_MANIFESTS bypasses fetch and checks", async () => {
    const report = await syncManifests(opts({ skip: true, cdnUrl: await deadUrl() }));
    assert.equal(report.source, "skipped");
    assert.deepEqual(await allFiles(path.dirname(dir)), []);
  });
});
