/**
 * `npm run bounds` / `npm run bounds:watch` (scripts/model-bounds.ts) run as the real script in a
 * child process against a world directory built in the test.
 */
import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, readlink, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ModelBoundsManifestSchema, type ModelBoundsManifest } from "../../../src/content/world-schemas.js";
import { writeBoxGlb } from "../../../scripts/make-sample-models.js";

interface Run {
  proc: ChildProcess;
  output: () => string;
  /** Resolves when the output so far holds `count` lines matching `re`. */
  waitFor(re: RegExp, count?: number): Promise<void>;
  exited: Promise<number | null>;
}

function runScript(world: string, args: string[] = [], env: NodeJS.ProcessEnv = {}): Run {
  const proc = spawn(process.execPath, ["--import", "tsx", "scripts/model-bounds.ts", ...args], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, WORLD: world, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters = new Set<() => void>();
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) w();
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  const exited = new Promise<number | null>((resolve) => proc.on("exit", (code) => resolve(code)));
  return {
    proc,
    output: () => out,
    exited,
    waitFor(re, count = 1) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (out.split("\n").filter((l) => re.test(l)).length >= count) {
            waiters.delete(check);
            resolve();
          }
        };
        waiters.add(check);
        check();
        void exited.then(() => {
          if (waiters.delete(check)) reject(new Error(`exited before ${count} x ${re}:\n${out}`));
        });
      });
    },
  };
}

async function runToEnd(world: string, env: NodeJS.ProcessEnv = {}): Promise<{ code: number | null; output: string }> {
  const run = runScript(world, [], env);
  const code = await run.exited;
  return { code, output: run.output() };
}

/** Number of inotify watches a process holds (Linux: one `inotify wd:` line per watch). */
async function inotifyWatches(pid: number): Promise<number> {
  let n = 0;
  for (const fd of await readdir(`/proc/${pid}/fd`)) {
    const target = await readlink(`/proc/${pid}/fd/${fd}`).catch(() => "");
    if (target !== "anon_inode:inotify") continue;
    n += (await readFile(`/proc/${pid}/fdinfo/${fd}`, "utf8")).split("\n").filter((l) => l.startsWith("inotify wd:")).length;
  }
  return n;
}

const STATIONS = [{ id: "smithy_furnace", type: "furnace", name: "Furnace", x: 0, z: 0, modelId: "stations/furnace", modelScale: 1 }];

describe("model-bounds script", function () {
  this.timeout(60_000);
  let world: string;
  const outFile = () => path.join(world, "manifests", "model-bounds.json");
  const manifest = async (): Promise<ModelBoundsManifest> => ModelBoundsManifestSchema.parse(JSON.parse(await readFile(outFile(), "utf8")));

  beforeEach(async () => {
    world = await mkdtemp(path.join(os.tmpdir(), "bounds-script-"));
    await mkdir(path.join(world, "manifests"));
    await writeFile(path.join(world, "manifests", "stations.json"), JSON.stringify(STATIONS));
  });
  afterEach(async () => {
    await rm(world, { recursive: true, force: true });
  });

  it("SKIP_ASSETS=true skips it: exit 0, nothing written", async () => {
    await writeBoxGlb(path.join(world, "models", "stations", "furnace.glb"), { x: 2.27, y: 1.9, z: 2.18 });
    const { code, output } = await runToEnd(world, { SKIP_ASSETS: "true" });
    assert.equal(code, 0, output);
    assert.match(output, /SKIP_ASSETS=true, skipped/);
    await assert.rejects(stat(outFile()), { code: "ENOENT" });
  });

  it("reads WORLD and SKIP_ASSETS with the server's config rules: a bad value stops it naming the setting", async () => {
    for (const [env, problem] of [
      [{ SKIP_ASSETS: "maybe" }, /^ {2}- SKIP_ASSETS: /m],
      [{ WORLD: "" }, /^ {2}- WORLD: /m],
    ] as const) {
      const { code, output } = await runToEnd(world, env);
      assert.equal(code, 1, output);
      assert.match(output, /model-bounds: Invalid configuration:/);
      assert.match(output, problem);
      await assert.rejects(stat(outFile()), { code: "ENOENT" });
    }
    // The spellings the config accepts.
    for (const v of ["1", "yes"]) assert.match((await runToEnd(world, { SKIP_ASSETS: v })).output, /SKIP_ASSETS=true, skipped/);
  });

  it("a world without a models directory gets a manifest listing no models", async () => {
    const { code, output } = await runToEnd(world);
    assert.equal(code, 0, output);
    const m = await manifest();
    assert.deepEqual(m.models, []);
    assert.equal(m.tileSize, 1);
  });

  it("rewrites the file only when its content changes: models or a station's modelScale", async () => {
    await writeBoxGlb(path.join(world, "models", "stations", "furnace.glb"), { x: 2.27, y: 1.9, z: 2.18 });
    assert.equal((await runToEnd(world)).code, 0);
    const first = await readFile(outFile(), "utf8");
    assert.deepEqual(
      (await manifest()).models.map((x) => [x.id, x.footprint]),
      [["stations/furnace", { width: 2, depth: 2 }]],
    );

    const again = await runToEnd(world);
    assert.match(again.output, /1 models, unchanged/);
    assert.equal(await readFile(outFile(), "utf8"), first, "generatedAt did not churn");

    await writeFile(path.join(world, "manifests", "stations.json"), JSON.stringify([{ ...STATIONS[0], modelScale: 2 }]));
    assert.match((await runToEnd(world)).output, /wrote 1 models/);
    // 2.27 * 2 = 4.54 -> 5; 2.18 * 2 = 4.36 -> 4
    assert.deepEqual((await manifest()).models[0]!.footprint, { width: 5, depth: 4 });

    await writeBoxGlb(path.join(world, "models", "props", "crate.glb"), { x: 1.3, y: 1, z: 0.6 });
    assert.match((await runToEnd(world)).output, /wrote 2 models/);
    assert.deepEqual(
      (await manifest()).models.map((x) => x.id),
      ["props/crate", "stations/furnace"],
    );
  });

  it("a malformed stations.json fails naming the file and field", async () => {
    await writeFile(path.join(world, "manifests", "stations.json"), JSON.stringify([{ ...STATIONS[0], modelScale: "big" }]));
    const { code, output } = await runToEnd(world);
    assert.equal(code, 1);
    assert.match(output, /model-bounds: .*stations\.json: \[0\]\.modelScale: /);
  });

  it("stations giving one model two scales fail naming both: the manifest holds one footprint per model", async () => {
    await writeBoxGlb(path.join(world, "models", "stations", "furnace.glb"), { x: 2.27, y: 1.9, z: 2.18 });
    await writeFile(
      path.join(world, "manifests", "stations.json"),
      JSON.stringify([STATIONS[0], { ...STATIONS[0], id: "second_furnace", x: 4, modelScale: 2 }]),
    );
    const { code, output } = await runToEnd(world);
    assert.equal(code, 1, output);
    assert.match(
      output,
      /model-bounds: stations\.json: station "smithy_furnace" has modelScale 1 but station "second_furnace" 2 for the same model "stations\/furnace"/,
    );
    await assert.rejects(stat(outFile()), { code: "ENOENT" });
  });

  it("watch mode watches models/ and manifests/ only, not the rest of the world (the embedded database under db/)", async function () {
    if (process.platform !== "linux") this.skip();
    // A database-like tree: 20 directories of 10 files.
    for (let d = 0; d < 20; d++) {
      await mkdir(path.join(world, "db", `base${d}`), { recursive: true });
      for (let f = 0; f < 10; f++) await writeFile(path.join(world, "db", `base${d}`, `${f}`), "page");
    }
    await writeBoxGlb(path.join(world, "models", "stations", "furnace.glb"), { x: 2.27, y: 1.9, z: 2.18 });
    const run = runScript(world, ["--watch"]);
    try {
      await run.waitFor(/model-bounds: watching/);
      // world, manifests, and models with stations/ and its one file: a handful, not the 221 of db/.
      const watches = await inotifyWatches(run.proc.pid!);
      assert.ok(watches >= 3 && watches <= 8, `${watches} inotify watches`);
    } finally {
      run.proc.kill("SIGTERM");
      await run.exited;
    }
  });

  it("watch mode notices models/ removed and created again", async () => {
    await writeBoxGlb(path.join(world, "models", "stations", "furnace.glb"), { x: 2.27, y: 1.9, z: 2.18 });
    const run = runScript(world, ["--watch"]);
    try {
      await run.waitFor(/model-bounds: watching/);
      assert.equal((await manifest()).models.length, 1);
      await rm(path.join(world, "models"), { recursive: true });
      await run.waitFor(/wrote 0 models/);
      await writeBoxGlb(path.join(world, "models", "props", "crate.glb"), { x: 1.3, y: 1, z: 0.6 });
      await run.waitFor(/wrote 1 models/, 2);
      assert.deepEqual(
        (await manifest()).models.map((m) => m.id),
        ["props/crate"],
      );
    } finally {
      run.proc.kill("SIGTERM");
      await run.exited;
    }
  });

  it("watch mode re-runs on a stations.json change and on a new model, even in a models directory created later", async () => {
    const run = runScript(world, ["--watch"]);
    try {
      await run.waitFor(/model-bounds: watching/);
      assert.deepEqual((await manifest()).models, []);

      await writeBoxGlb(path.join(world, "models", "stations", "furnace.glb"), { x: 2.27, y: 1.9, z: 2.18 });
      await run.waitFor(/wrote 1 models/);
      assert.deepEqual((await manifest()).models[0]!.footprint, { width: 2, depth: 2 });

      await writeFile(path.join(world, "manifests", "stations.json"), JSON.stringify([{ ...STATIONS[0], modelScale: 2 }]));
      await run.waitFor(/wrote 1 models/, 2);
      assert.deepEqual((await manifest()).models[0]!.footprint, { width: 5, depth: 4 });
    } finally {
      run.proc.kill("SIGTERM");
      await run.exited;
    }
  });
});
