/**
 * Build-time assets (docs/content.md "Build-time assets"): scripts/assets.ts and src/content/assets.ts
 * against the real development CDN (scripts/cdn.ts, started on a free loopback port and serving a
 * source world), downloading into a fresh world directory.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { get } from "node:http";
import { join } from "node:path";
import { ASSET_ETAG_FILE, downloadAssets, listAssets } from "../../../src/content/assets.js";

/** Node arguments that run a TypeScript script in this very process (no tsx wrapper process that
 * a kill would leave its child behind). */
const TS = ["--import", "tsx"];

/** Runs a script under tsx with only `env` (plus PATH and HOME); resolves with its code and output. */
function runScript(script: string, env: NodeJS.ProcessEnv): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...TS, script], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.on("exit", (code) => resolve({ code, out, err }));
  });
}

/** Status of a GET sent with `rawPath` exactly as written (fetch would normalise `..` and `%2e%2e`). */
function rawStatus(base: string, rawPath: string): Promise<number> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    get({ hostname, port, path: rawPath }, (res) => {
      res.resume();
      resolve(res.statusCode!);
    }).on("error", reject);
  });
}

/** A fake MP3: an ID3 tag header and some bytes. */
const mp3 = (seed: string) => Buffer.concat([Buffer.from("ID3\x04\x00\x00\x00\x00\x00\x00", "latin1"), Buffer.from(seed)]);

describe("build-time assets", function () {
  this.timeout(120_000);
  let source: string; // what the CDN serves
  let target: string; // where the build downloads
  let cdn: ChildProcess;
  let cdnUrl: string;
  let tracks: string[];

  before(async () => {
    source = mkdtempSync(join(tmpdir(), "assets-src-"));
    cpSync("world/manifests", join(source, "manifests"), { recursive: true });
    cpSync("world/models", join(source, "models"), { recursive: true });
    tracks = (JSON.parse(readFileSync("world/manifests/music.json", "utf8")) as { path: string }[]).map((t) => t.path);
    for (const t of tracks) {
      mkdirSync(join(source, t, ".."), { recursive: true });
      writeFileSync(join(source, t), mp3(t));
    }
    cdn = spawn(process.execPath, [...TS, "scripts/cdn.ts"], {
      env: { PATH: process.env.PATH, HOME: process.env.HOME, WORLD: source, PORT_CDN: "0", HOST_CDN: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    cdnUrl = await new Promise<string>((resolve, reject) => {
      cdn.stdout!.on("data", (d: Buffer) => {
        log += d.toString();
        const m = /on (http:\/\/127\.0\.0\.1:\d+)/.exec(log);
        if (m) resolve(m[1]!);
      });
      cdn.stderr!.on("data", (d: Buffer) => (log += d.toString()));
      cdn.on("exit", () => reject(new Error(`cdn exited:\n${log}`)));
    });
  });

  after(() => {
    cdn?.kill("SIGKILL");
    rmSync(source, { recursive: true, force: true });
  });

  beforeEach(() => {
    target = mkdtempSync(join(tmpdir(), "assets-dst-"));
    cpSync("world/manifests", join(target, "manifests"), { recursive: true });
  });
  afterEach(() => rmSync(target, { recursive: true, force: true }));

  it("lists every model the manifests name and every music track", async () => {
    const list = await listAssets(join(target, "manifests"));
    assert.deepEqual(list.problems, []);
    const models = readdirSync("world/models", { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".glb"))
      .map((f) => `models/${f.split("\\").join("/")}`);
    assert.ok(models.length > 0);
    assert.deepEqual(list.files, [...models, ...tracks].sort());
  });

  it("a bad model reference is a problem, not a download", async () => {
    const stations = JSON.parse(readFileSync(join(target, "manifests/stations.json"), "utf8"));
    stations[0].modelId = "../../etc/passwd";
    writeFileSync(join(target, "manifests/stations.json"), JSON.stringify(stations));
    const list = await listAssets(join(target, "manifests"));
    assert.equal(list.problems.length, 1, list.problems.join("\n"));
    assert.match(list.problems[0]!, /^stations\.json: \[0\]\.modelId: not a model id/);
    assert.ok(!list.files.some((f) => f.includes("..")));
  });

  it("downloads each file once, then revalidates with ETags (304) and fetches only what changed", async () => {
    const { files } = await listAssets(join(target, "manifests"));
    const first = await downloadAssets({ worldDir: target, cdnUrl, files });
    assert.deepEqual(first.failed, []);
    assert.deepEqual(first.downloaded, files);
    for (const f of files) assert.deepEqual(readFileSync(join(target, f)), readFileSync(join(source, f)), f);
    const etags = JSON.parse(readFileSync(join(target, ASSET_ETAG_FILE), "utf8"));
    assert.deepEqual(Object.keys(etags).sort(), files);

    // Count the conditional requests the CDN sees, through a fetch wrapper.
    const conditional: string[] = [];
    const counting: typeof fetch = (input, init) => {
      if ((init?.headers as Record<string, string>)["if-none-match"]) conditional.push(input instanceof Request ? input.url : String(input));
      return fetch(input, init);
    };
    const second = await downloadAssets({ worldDir: target, cdnUrl, files, fetch: counting });
    assert.deepEqual(second, { downloaded: [], notModified: files, failed: [] });
    assert.equal(conditional.length, files.length);

    const changed = tracks[0]!;
    writeFileSync(join(source, changed), mp3("a new version"));
    const third = await downloadAssets({ worldDir: target, cdnUrl, files });
    assert.deepEqual(third.downloaded, [changed]);
    assert.deepEqual(readFileSync(join(target, changed)), mp3("a new version"));
    assert.equal(third.notModified.length, files.length - 1);
  });

  it("a file the CDN lacks and a body that is not what it says are failures; nothing torn is written, the rest arrives", async () => {
    const { files } = await listAssets(join(target, "manifests"));
    await downloadAssets({ worldDir: target, cdnUrl, files });
    const missing = tracks[1]!;
    const corrupt = files.find((f) => f.endsWith(".glb"))!;
    const goodModel = readFileSync(join(target, corrupt));
    const savedTrack = readFileSync(join(source, missing));
    const savedModel = readFileSync(join(source, corrupt));
    rmSync(join(source, missing));
    writeFileSync(join(source, corrupt), "<html>502 Bad Gateway</html>");
    rmSync(join(target, ASSET_ETAG_FILE)); // everything is downloaded again
    try {
      const r = await downloadAssets({ worldDir: target, cdnUrl, files });
      assert.deepEqual(
        r.failed,
        [
          { file: missing, reason: "HTTP 404 (not on the CDN)" },
          { file: corrupt, reason: "not a glTF binary (.glb)" },
        ].sort((a, b) => a.file.localeCompare(b.file)),
      );
      assert.equal(r.downloaded.length, files.length - 2);
      // The model already held stays as it was; no temporary file is left behind.
      assert.deepEqual(readFileSync(join(target, corrupt)), goodModel);
      const leftovers = readdirSync(target, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".tmp"));
      assert.deepEqual(leftovers, []);
    } finally {
      writeFileSync(join(source, missing), savedTrack);
      writeFileSync(join(source, corrupt), savedModel);
    }
  });

  it("scripts/assets.ts (npm run assets): downloads, then reports everything not modified; a failed file fails it with one line per file", async () => {
    const env = { WORLD: target, PUBLIC_CDN_URL: cdnUrl, NODE_ENV: "production" };
    const first = await runScript("scripts/assets.ts", env);
    assert.equal(first.code, 0, first.out + first.err);
    const { files } = await listAssets(join(target, "manifests"));
    assert.match(first.out, new RegExp(`${files.length} files from .*: ${files.length} downloaded, 0 not modified, 0 failed`));
    const second = await runScript("scripts/assets.ts", env);
    assert.match(second.out, new RegExp(`0 downloaded, ${files.length} not modified, 0 failed`), second.out + second.err);

    const gone = [tracks[2]!, tracks[3]!];
    const saved = gone.map((t) => readFileSync(join(source, t)));
    for (const t of gone) rmSync(join(source, t));
    rmSync(join(target, ASSET_ETAG_FILE));
    try {
      const failed = await runScript("scripts/assets.ts", env);
      assert.equal(failed.code, 1, failed.out + failed.err);
      assert.match(failed.err, /2 assets could not be downloaded/);
      for (const t of gone) assert.ok(failed.err.includes(`  ${t}: HTTP 404 (not on the CDN)`), failed.err);
    } finally {
      gone.forEach((t, i) => writeFileSync(join(source, t), saved[i]!));
    }
  });

  it("SKIP_ASSETS=true downloads nothing; no PUBLIC_CDN_URL is an error in production and a warning in development", async () => {
    const skipped = await runScript("scripts/assets.ts", { WORLD: target, PUBLIC_CDN_URL: cdnUrl, SKIP_ASSETS: "true", NODE_ENV: "production" });
    assert.equal(skipped.code, 0, skipped.err);
    assert.match(skipped.out, /SKIP_ASSETS=true, asset download skipped/);
    assert.ok(!existsSync(join(target, "models")));
    assert.ok(!existsSync(join(target, ASSET_ETAG_FILE)));

    const prod = await runScript("scripts/assets.ts", { WORLD: target, NODE_ENV: "production" });
    assert.equal(prod.code, 1);
    assert.match(prod.err, /PUBLIC_CDN_URL is not set/);
    const dev = await runScript("scripts/assets.ts", { WORLD: target, NODE_ENV: "development" });
    assert.equal(dev.code, 0, dev.err);
    assert.match(dev.err, /PUBLIC_CDN_URL is not set; no assets downloaded/);
    assert.ok(!existsSync(join(target, "models")));
  });

  it("the development CDN serves /audio/music and /world from the world directory with ETags, and nothing outside them", async () => {
    const track = tracks[0]!;
    const r = await fetch(`${cdnUrl}/${track}`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "audio/mpeg");
    const etag = r.headers.get("etag")!;
    await r.arrayBuffer();
    assert.equal((await fetch(`${cdnUrl}/${track}`, { headers: { "if-none-match": etag } })).status, 304);
    mkdirSync(join(source, "world", "sky"), { recursive: true });
    writeFileSync(join(source, "world", "sky", "day.png"), "png bytes");
    assert.equal(await (await fetch(`${cdnUrl}/world/sky/day.png`)).text(), "png bytes");
    assert.equal(await rawStatus(cdnUrl, "/manifests/npcs.json"), 200);
    for (const p of [
      "/world/../manifests/npcs.json",
      "/world/%2e%2e/manifests/npcs.json",
      "/audio/music/%2e%2e/%2e%2e/manifests/npcs.json",
      "/.cache/asset-etags.json",
      "/db/x",
    ])
      assert.equal(await rawStatus(cdnUrl, p), 404, p);
  });
});
