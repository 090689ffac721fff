import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { cp, mkdtemp, readFile, readdir, rm, stat, writeFile, mkdir } from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadContent } from "../../../src/content/load.js";
import { MANIFEST_FILES } from "../../../src/content/manifests.js";
import {
  COMMIT_MARKER,
  ETAG_FILE,
  ManifestSyncError,
  SKIP_REFUSED_IN_PRODUCTION,
  STAGING_DIR,
  syncManifests,
  type SyncLogger,
  type SyncOptions,
} from "../../../src/content/sync.js";

const SHIPPED = fileURLToPath(new URL("../../../world/manifests", import.meta.url));

/** A CDN serving in-memory manifests with strong ETags, and knobs for failures. */
interface FakeCdn {
  url: string;
  files: Map<string, string>;
  requests: { file: string; ifNoneMatch: string | undefined }[];
  /** Files answered with half the body, then a destroyed socket. */
  halfBody: Set<string>;
  /** Files never answered. */
  hang: Set<string>;
  /** When set, every manifest request is answered with this status. */
  status?: number;
  /**
   * Slow bodies: a 200 sends its headers and half its body at once; the rest follows only while
   * `limit` responses are unfinished (or every one of `total` requests has arrived), one response
   * every `delayMs`, oldest first. `peakOpen` counts responses whose body was not yet completed.
   */
  gate?: { limit: number; total: number; delayMs: number };
  peakOpen: number;
  close(): Promise<void>;
}

const etagOf = (body: string) => `"${createHash("sha256").update(body).digest("hex").slice(0, 20)}"`;

async function startCdn(files: Map<string, string>): Promise<FakeCdn> {
  const cdn = { files, requests: [], halfBody: new Set<string>(), hang: new Set<string>(), peakOpen: 0 } as unknown as FakeCdn;
  const open: { res: http.ServerResponse; rest: Buffer }[] = [];
  let received = 0;
  let releasing = false;
  /** Finishes the oldest open body after `delayMs`, while the gate says so. */
  const pump = () => {
    const gate = cdn.gate!;
    if (releasing || open.length === 0 || (open.length < gate.limit && received < gate.total)) return;
    releasing = true;
    setTimeout(() => {
      releasing = false;
      const next = open.shift()!;
      next.res.end(next.rest);
      pump();
    }, gate.delayMs);
  };
  const server = http.createServer((req, res) => {
    const { pathname } = new URL(req.url ?? "/", "http://cdn");
    const file = pathname.replace(/^\/manifests\//, "");
    cdn.requests.push({ file, ifNoneMatch: req.headers["if-none-match"] });
    if (cdn.hang.has(file)) return;
    if (cdn.status !== undefined) {
      res.writeHead(cdn.status, { "content-type": "text/plain" }).end("unavailable");
      return;
    }
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
    else if (cdn.gate) {
      received++;
      res.write(bytes.subarray(0, bytes.length >> 1));
      open.push({ res, rest: bytes.subarray(bytes.length >> 1) });
      cdn.peakOpen = Math.max(cdn.peakOpen, open.length);
      pump();
    } else res.end(bytes);
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

/** A logger that keeps what it was given. */
function memoryLogger(): SyncLogger & { warnings: { obj: object; msg?: string }[] } {
  const warnings: { obj: object; msg?: string }[] = [];
  return { warnings, info: () => undefined, warn: (obj, msg) => void warnings.push({ obj, msg }) };
}

const edit = (cdn: FakeCdn, file: string, change: (json: any) => void) => {
  const json = JSON.parse(cdn.files.get(file)!);
  change(json);
  cdn.files.set(file, JSON.stringify(json, null, 2));
};

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

  it("a first fetch from a CDN lacking a required manifest applies nothing and stops start-up, naming it", async () => {
    cdn.files.delete("npcs.json");
    await assert.rejects(syncManifests(opts({})), (err: unknown) => {
      assert.ok(err instanceof ManifestSyncError);
      assert.ok(err.missing.includes("npcs.json"));
      assert.ok(err.problems.includes("required manifest missing: npcs.json"), err.problems.join("\n"));
      assert.ok(err.problems.includes("manifest from the CDN rejected: npcs.json: required manifest is missing"), err.problems.join("\n"));
      return true;
    });
    assert.deepEqual(
      (await allFiles(dir)).filter((f) => f.endsWith(".json")),
      [],
    );
  });

  it("a CDN that later lacks a required manifest keeps the cached one", async () => {
    await syncManifests(opts({}));
    const old = cdn.files.get("npcs.json")!;
    cdn.files.delete("npcs.json");
    const report = await syncManifests(opts({}));
    assert.deepEqual(report.failed, [{ file: "npcs.json", reason: "HTTP 404" }]);
    assert.equal(await readFile(path.join(dir, "npcs.json"), "utf8"), old);
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
    assert.deepEqual(
      report.failed.map((f) => f.file),
      ["npcs.json"],
    );
    assert.equal(await readFile(path.join(dir, "npcs.json"), "utf8"), old);
    assert.deepEqual(
      (await allFiles(dir)).filter((f) => f.endsWith(".tmp")),
      [],
    );
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

  it("bounds concurrency, counting a request in flight until its body has been read", async () => {
    // The CDN finishes a body only while 3 are unfinished (or all requests have arrived), one every
    // 20 ms: a client that freed its slot on the headers would have a 4th request open meanwhile.
    cdn.gate = { limit: 3, total: MANIFEST_FILES.length, delayMs: 20 };
    const report = await syncManifests(opts({ concurrency: 3 }));
    assert.equal(report.fetched.length, MANIFEST_FILES.length);
    assert.equal(cdn.requests.length, MANIFEST_FILES.length);
    assert.equal(cdn.peakOpen, 3);
  });

  it("the same slow-body CDN sees more at once when the client allows more", async () => {
    cdn.gate = { limit: 5, total: MANIFEST_FILES.length, delayMs: 20 };
    await syncManifests(opts({ concurrency: 5 }));
    assert.equal(cdn.peakOpen, 5);
  });

  it("removes temporary files a crashed writer left behind", async () => {
    await mkdir(path.join(dir, "items"), { recursive: true });
    const stale = path.join(dir, "items", ".food.json.4242.0123456789ab.tmp");
    await writeFile(stale, '{"half": ');
    await syncManifests(opts({}));
    assert.deepEqual(
      (await allFiles(dir)).filter((f) => f.endsWith(".tmp")),
      [],
    );
  });

  it("SKIP_MANIFESTS bypasses fetch and checks outside production", async () => {
    for (const mode of ["test", "development"] as const) {
      const report = await syncManifests(opts({ mode, skip: true, cdnUrl: await deadUrl() }));
      assert.equal(report.source, "skipped");
    }
    assert.deepEqual(await allFiles(path.dirname(dir)), []);
  });

  it("SKIP_MANIFESTS is refused in production with a warning and one clear problem line", async () => {
    const log = memoryLogger();
    await assert.rejects(syncManifests(opts({ skip: true, logger: log })), (err: unknown) => {
      assert.ok(err instanceof ManifestSyncError);
      assert.deepEqual(err.problems, [SKIP_REFUSED_IN_PRODUCTION]);
      assert.match(err.message, /SKIP_MANIFESTS=true is refused in production/);
      return true;
    });
    assert.ok(log.warnings.some((w) => w.msg === SKIP_REFUSED_IN_PRODUCTION));
    assert.equal(cdn.requests.length, 0);
  });

  it("returns the content it validated when it applied downloads: what loading the directory afterwards gives", async () => {
    edit(cdn, "biomes.json", (b) => (b[0].description = "Freshly mown."));
    const first = await syncManifests(opts({}));
    assert.ok(first.content, "content of the applied set");
    const onDisk = await loadContent(dir);
    assert.equal(first.content.biomes.get(JSON.parse(cdn.files.get("biomes.json")!)[0].id)?.description, "Freshly mown.");
    assert.deepEqual([...first.content.files].sort(), [...onDisk.files].sort());
    for (const key of [
      "items",
      "npcs",
      "biomes",
      "stores",
      "areas",
      "worldBounds",
      "stations",
      "stationTiles",
      "blockedTiles",
      "skillUnlocks",
      "starterKit",
      "modelBounds",
    ] as const)
      assert.deepEqual(first.content[key], onDisk[key], key);

    // Nothing fetched (every file 304), a rejected set, or local files in development: the caller loads.
    assert.equal((await syncManifests(opts({}))).content, undefined);
    edit(cdn, "npcs.json", (npcs) => (npcs[2].maxHit = "lots"));
    const rejected = await syncManifests(opts({}));
    assert.equal(rejected.rejected.length, 1);
    assert.equal(rejected.content, undefined);
    assert.equal((await syncManifests(opts({ mode: "development" }))).content, undefined);
  });

  describe("validation before anything is applied", () => {
    it("a schema-invalid file keeps the previous cache and its ETags, warns, and start-up proceeds", async () => {
      await syncManifests(opts({}));
      const before = await readFile(path.join(dir, "npcs.json"), "utf8");
      const etagsBefore = await readFile(path.join(dir, ETAG_FILE), "utf8");
      edit(cdn, "npcs.json", (npcs) => (npcs[2].maxHit = "lots"));
      const log = memoryLogger();
      const report = await syncManifests(opts({ logger: log }));
      assert.equal(report.source, "cache");
      assert.deepEqual(report.fetched, []);
      assert.equal(report.rejected.length, 1);
      assert.match(report.rejected[0]!, /^npcs\.json: \[2\]\.maxHit: /);
      assert.ok(log.warnings.some((w) => /failed validation/.test(w.msg ?? "") && (w.obj as { problems: string[] }).problems[0] === report.rejected[0]));
      assert.equal(await readFile(path.join(dir, "npcs.json"), "utf8"), before);
      assert.equal(await readFile(path.join(dir, ETAG_FILE), "utf8"), etagsBefore);
      assert.ok((await loadContent(dir)).npcs.size >= 6);
      assert.deepEqual(
        (await allFiles(dir)).filter((f) => f.includes("staging") || f.endsWith(".tmp")),
        [],
      );

      // Still offered next time (the stored ETag is the old one), still refused.
      cdn.requests.length = 0;
      const again = await syncManifests(opts({}));
      assert.equal(cdn.requests.find((r) => r.file === "npcs.json")?.ifNoneMatch, etagOf(before));
      assert.equal(again.rejected.length, 1);
    });

    it("a dangling cross reference keeps the previous cache", async () => {
      await syncManifests(opts({}));
      const before = await readFile(path.join(dir, "stores.json"), "utf8");
      edit(cdn, "stores.json", (stores) => (stores[0].stock[2].itemId = "golden_net"));
      const report = await syncManifests(opts({}));
      assert.deepEqual(report.rejected, ['stores.json: [0].stock[2].itemId: unknown item "golden_net"']);
      assert.equal(await readFile(path.join(dir, "stores.json"), "utf8"), before);
      assert.ok((await loadContent(dir)).stores.size >= 1);
    });

    it("world bounds too large to build keep the previous cache instead of stopping start-up", async () => {
      await syncManifests(opts({}));
      const before = await readFile(path.join(dir, "world-areas.json"), "utf8");
      edit(cdn, "world-areas.json", (w) => (w.worldBounds = { minX: -1e9, maxX: 1e9, minZ: -1e9, maxZ: 1e9 }));
      const log = memoryLogger();
      const report = await syncManifests(opts({ logger: log }));
      assert.equal(report.source, "cache");
      assert.deepEqual(report.rejected, ["world-areas.json: worldBounds: the world may be at most 4096 tiles wide and 4096 deep"]);
      assert.ok(log.warnings.some((w) => /failed validation/.test(w.msg ?? "")));
      assert.equal(await readFile(path.join(dir, "world-areas.json"), "utf8"), before);
      assert.deepEqual(
        (await allFiles(dir)).filter((f) => f.includes("staging")),
        [],
      );
    });

    it("any error while validating the staged set rejects it and keeps the cache, not only content problems", async () => {
      await syncManifests(opts({}));
      // The cache holds a directory where prayers.json should be, and the CDN no longer has that
      // file: reading it fails with EISDIR, which is no ContentError.
      await rm(path.join(dir, "prayers.json"));
      await mkdir(path.join(dir, "prayers.json"));
      cdn.files.delete("prayers.json");
      const before = await readFile(path.join(dir, "biomes.json"), "utf8");
      edit(cdn, "biomes.json", (b) => (b[0].description = "Freshly mown."));
      const log = memoryLogger();
      const report = await syncManifests(opts({ logger: log }));
      assert.equal(report.source, "cache");
      assert.deepEqual(report.fetched, []);
      assert.equal(report.rejected.length, 1);
      assert.match(report.rejected[0]!, /^validation stopped: EISDIR/);
      assert.ok(log.warnings.some((w) => /failed validation/.test(w.msg ?? "")));
      assert.equal(await readFile(path.join(dir, "biomes.json"), "utf8"), before);
      assert.deepEqual(
        (await allFiles(dir)).filter((f) => f.includes("staging")),
        [],
      );
    });

    it("a mid-deploy mix is not half-applied: nothing moves until the whole set agrees", async () => {
      await syncManifests(opts({}));
      const oldBiomes = await readFile(path.join(dir, "biomes.json"), "utf8");
      const oldNpcs = await readFile(path.join(dir, "npcs.json"), "utf8");
      // The new release: a new item, dropped by chickens, and a reworded biome. The CDN has the
      // new npcs.json and biomes.json, but still the old items/food.json.
      const newFood = JSON.parse(cdn.files.get("items/food.json")!);
      newFood.push({ id: "raw_eel", name: "Raw eel", examine: "Slippery.", value: 9, stackable: false, tradeable: true });
      edit(cdn, "biomes.json", (b) => (b[0].description = "Freshly mown."));
      edit(cdn, "npcs.json", (npcs) => npcs.find((n: any) => n.id === "chicken").drops.table.push({ itemId: "raw_eel", min: 1, max: 1, weight: 1 }));

      const mid = await syncManifests(opts({}));
      assert.deepEqual(mid.rejected, [
        `npcs.json: [${JSON.parse(oldNpcs).findIndex((n: any) => n.id === "chicken")}].drops.table[1].itemId: unknown item "raw_eel"`,
      ]);
      assert.equal(await readFile(path.join(dir, "biomes.json"), "utf8"), oldBiomes);
      assert.equal(await readFile(path.join(dir, "npcs.json"), "utf8"), oldNpcs);

      // The deploy completes: everything is applied together.
      cdn.files.set("items/food.json", JSON.stringify(newFood));
      const done = await syncManifests(opts({}));
      assert.deepEqual(done.rejected, []);
      assert.deepEqual([...done.fetched].sort(), ["biomes.json", "items/food.json", "npcs.json"]);
      const content = await loadContent(dir);
      assert.equal(content.items.get("raw_eel")?.name, "Raw eel");
      assert.equal(content.biomes.get(JSON.parse(oldBiomes)[0].id)?.description, "Freshly mown.");
    });

    it("an update validated but cut short by a crash is completed on the next start; an unvalidated one is discarded", async () => {
      await syncManifests(opts({}));
      const staging = path.join(dir, STAGING_DIR);
      const oldBiomes = await readFile(path.join(dir, "biomes.json"), "utf8");

      // Downloaded but never validated: discarded, the cache stays.
      await mkdir(staging, { recursive: true });
      await writeFile(path.join(staging, "biomes.json"), "[]");
      await syncManifests(opts({ cdnUrl: await deadUrl() }));
      assert.equal(await readFile(path.join(dir, "biomes.json"), "utf8"), oldBiomes);
      await assert.rejects(stat(staging), { code: "ENOENT" });

      // Validated and marked, one file moved, then the crash: the next start moves the rest.
      edit(cdn, "biomes.json", (b) => (b[0].description = "Freshly mown."));
      edit(cdn, "stores.json", (st) => (st[0].name = "Lumbrook Goods"));
      const etags = JSON.parse(await readFile(path.join(dir, ETAG_FILE), "utf8"));
      etags["biomes.json"] = etagOf(cdn.files.get("biomes.json")!);
      etags["stores.json"] = etagOf(cdn.files.get("stores.json")!);
      await mkdir(staging, { recursive: true });
      await writeFile(path.join(staging, "stores.json"), cdn.files.get("stores.json")!);
      await writeFile(path.join(dir, "biomes.json"), cdn.files.get("biomes.json")!);
      await writeFile(path.join(staging, COMMIT_MARKER), JSON.stringify({ files: ["biomes.json", "stores.json"], etags }));
      cdn.requests.length = 0;
      const report = await syncManifests(opts({}));
      assert.equal(await readFile(path.join(dir, "stores.json"), "utf8"), cdn.files.get("stores.json"));
      assert.equal(await readFile(path.join(dir, "biomes.json"), "utf8"), cdn.files.get("biomes.json"));
      assert.deepEqual(report.fetched, []);
      assert.equal(report.notModified.length, MANIFEST_FILES.length);
      await assert.rejects(stat(staging), { code: "ENOENT" });
    });
  });

  describe("development fallback (docs/content.md#game-content-and-manifests)", () => {
    let production: FakeCdn;
    beforeEach(async () => {
      production = await startCdn(await shippedFiles());
    });
    afterEach(async () => {
      await production.close();
    });

    it("is not used when the local CDN is up but answers 404: the missing files are named", async () => {
      cdn.files.clear();
      await assert.rejects(syncManifests(opts({ mode: "development", fallbackCdnUrl: production.url })), (err: unknown) => {
        assert.ok(err instanceof ManifestSyncError);
        assert.deepEqual([...err.missing], ["npcs.json", "world-areas.json", "biomes.json", "stores.json", "items.json (or items/*.json)"]);
        return true;
      });
      assert.equal(cdn.requests.length, MANIFEST_FILES.length);
      assert.equal(production.requests.length, 0);
    });

    it("is used when the local CDN answers only 5xx (down)", async () => {
      cdn.status = 503;
      const report = await syncManifests(opts({ mode: "development", fallbackCdnUrl: production.url }));
      assert.equal(report.source, "fallback");
      assert.equal(production.requests.length, MANIFEST_FILES.length);
    });

    it("is used when no local CDN is configured", async () => {
      const report = await syncManifests(opts({ mode: "development", cdnUrl: undefined, fallbackCdnUrl: production.url }));
      assert.equal(report.source, "fallback");
      assert.ok((await loadContent(dir)).items.size >= 60);
    });

    it("is not used when the local manifests are complete", async () => {
      await cp(SHIPPED, dir, { recursive: true });
      const report = await syncManifests(opts({ mode: "development", cdnUrl: await deadUrl(), fallbackCdnUrl: production.url }));
      assert.equal(report.source, "local");
      assert.equal(production.requests.length, 0);
    });
  });

  describe("items.json index", () => {
    it("development does not skip the fetch when the index names a file that is missing locally", async () => {
      await cp(SHIPPED, dir, { recursive: true });
      await rm(path.join(dir, "items/food.json"));
      const report = await syncManifests(opts({ mode: "development" }));
      assert.equal(report.source, "cdn");
      assert.ok(report.fetched.includes("items/food.json"));
      assert.ok((await loadContent(dir)).items.has("shrimp"));
    });

    it("fetches item files the index names beyond the standard five", async () => {
      cdn.files.set(
        "items/gems.json",
        JSON.stringify([{ id: "uncut_jade", name: "Uncut jade", examine: "Green.", value: 40, stackable: false, tradeable: true }]),
      );
      edit(cdn, "items.json", (index) => index.files.push("items/gems.json"));
      const report = await syncManifests(opts({}));
      assert.ok(report.fetched.includes("items/gems.json"));
      assert.equal((await loadContent(dir)).items.get("uncut_jade")?.category, "misc");
    });
  });

  describe("time limits", () => {
    it("bounds the whole sync: files still pending at the deadline fail and queued ones never start", async () => {
      cdn.hang.add("items.json");
      const t0 = Date.now();
      await assert.rejects(syncManifests(opts({ concurrency: 1, timeoutMs: 30_000, deadlineMs: 400 })), ManifestSyncError);
      assert.ok(Date.now() - t0 < 10_000, `took ${Date.now() - t0} ms`);
      assert.deepEqual(
        cdn.requests.map((r) => r.file),
        ["items.json"],
      );
    });

    it("reports every file the deadline cut off, and keeps the cache", async () => {
      await syncManifests(opts({}));
      for (const f of ["npcs.json", "stores.json"]) cdn.hang.add(f);
      const report = await syncManifests(opts({ timeoutMs: 30_000, deadlineMs: 400 }));
      assert.equal(report.source, "cdn");
      for (const f of ["npcs.json", "stores.json"])
        assert.deepEqual(
          report.failed.find((x) => x.file === f),
          { file: f, reason: "sync deadline exceeded" },
        );
      assert.ok((await loadContent(dir)).npcs.size >= 6);
    });
  });
});
