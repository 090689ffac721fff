import assert from "node:assert/strict";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { ModelBoundsError, computeModelBounds, footprintOf } from "../../../src/content/bounds.js";
import { ModelBoundsManifestSchema } from "../../../src/content/world-schemas.js";
import { writeBoxGlb } from "../../../scripts/make-sample-models.js";

const near = (actual: number, expected: number, what: string) => assert.ok(Math.abs(actual - expected) < 1e-4, `${what}: ${actual} != ${expected}`);

describe("model bounds", () => {
  let dir: string;
  const now = new Date("2026-01-02T03:04:05.000Z");

  before(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), "model-bounds-test-"));
    await writeBoxGlb(path.join(dir, "stations/furnace.glb"), { x: 2.27, y: 1.6, z: 2.18 });
    await writeBoxGlb(path.join(dir, "props/crate.glb"), { x: 1.3, y: 1, z: 0.6 });
    await writeBoxGlb(path.join(dir, "props/pebble.glb"), { x: 0.3, y: 0.1, z: 0.2 });
    await writeBoxGlb(path.join(dir, "moved.glb"), { x: 1, y: 1, z: 1 }, { translation: [5, 0, 0], scale: [2, 2, 2] });
    await writeFile(path.join(dir, "README.txt"), "not a model");
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("reads every .glb recursively with ids, asset paths, bounds and dimensions", async () => {
    const manifest = await computeModelBounds(dir, [], { now });
    ModelBoundsManifestSchema.parse(manifest);
    assert.equal(manifest.generatedAt, "2026-01-02T03:04:05.000Z");
    assert.equal(manifest.tileSize, 1);
    assert.deepEqual(
      manifest.models.map((m) => m.id),
      ["moved", "props/crate", "props/pebble", "stations/furnace"],
    );
    const furnace = manifest.models.find((m) => m.id === "stations/furnace")!;
    assert.equal(furnace.assetPath, "asset://models/stations/furnace.glb");
    near(furnace.bounds.min.x, -1.135, "min.x");
    near(furnace.bounds.max.z, 1.09, "max.z");
    near(furnace.bounds.min.y, 0, "min.y");
    near(furnace.dimensions.x, 2.27, "dimensions.x");
    near(furnace.dimensions.y, 1.6, "dimensions.y");
    near(furnace.dimensions.z, 2.18, "dimensions.z");
  });

  it("rounds a 2.27 x 2.18 model to a 2 by 2 footprint at scale 1 and never below 1 tile", async () => {
    const manifest = await computeModelBounds(dir, [{ modelId: "stations/furnace", modelScale: 1 }], { now });
    assert.deepEqual(manifest.models.find((m) => m.id === "stations/furnace")!.footprint, { width: 2, depth: 2 });
    assert.deepEqual(manifest.models.find((m) => m.id === "props/pebble")!.footprint, { width: 1, depth: 1 });
  });

  it("multiplies by the model scale its stations share", async () => {
    const manifest = await computeModelBounds(
      dir,
      [
        { modelId: "props/crate", modelScale: 2 },
        { modelId: "props/crate", modelScale: 2 },
        { modelId: "stations/furnace", modelScale: 1.5 },
      ],
      { now },
    );
    // 1.3 * 2 = 2.6 -> 3; 0.6 * 2 = 1.2 -> 1
    assert.deepEqual(manifest.models.find((m) => m.id === "props/crate")!.footprint, { width: 3, depth: 1 });
    // 2.27 * 1.5 = 3.405 -> 3; 2.18 * 1.5 = 3.27 -> 3
    assert.deepEqual(manifest.models.find((m) => m.id === "stations/furnace")!.footprint, { width: 3, depth: 3 });
    // Scale does not change the measured dimensions.
    near(manifest.models.find((m) => m.id === "props/crate")!.dimensions.x, 1.3, "crate x");
  });

  it("refuses stations giving one model two scales, naming both", async () => {
    await assert.rejects(
      computeModelBounds(dir, [
        { id: "crate_a", modelId: "props/crate", modelScale: 1.5 },
        { id: "crate_b", modelId: "props/crate", modelScale: 2 },
      ]),
      (err: Error) =>
        err instanceof ModelBoundsError &&
        err.message ===
          'stations.json: station "crate_a" has modelScale 1.5 but station "crate_b" 2 for the same model "props/crate": stations sharing a model need the same modelScale',
    );
  });

  it("uses accessor min/max by default and node transforms on request", async () => {
    const raw = (await computeModelBounds(dir, [], { now })).models.find((m) => m.id === "moved")!;
    near(raw.dimensions.x, 1, "raw x");
    near(raw.bounds.min.x, -0.5, "raw min.x");
    const world = (await computeModelBounds(dir, [], { now, applyNodeTransforms: true })).models.find((m) => m.id === "moved")!;
    near(world.dimensions.x, 2, "world x");
    near(world.bounds.min.x, 4, "world min.x");
    assert.deepEqual(world.footprint, { width: 2, depth: 2 });
  });

  it("computes footprints by rounding to the nearest tile", () => {
    const cases: [number, number, number, number, number][] = [
      [2.27, 2.18, 1, 2, 2],
      [2.5, 0.49, 1, 3, 1],
      [0.1, 0.1, 1, 1, 1],
      [1.2, 0.8, 2.5, 3, 2],
    ];
    for (const [x, z, scale, width, depth] of cases) assert.deepEqual(footprintOf({ x, y: 1, z }, scale), { width, depth }, `${x} x ${z} @ ${scale}`);
  });

  it("treats a models directory that does not exist as holding no models", async () => {
    const manifest = await computeModelBounds(path.join(dir, "no-such-dir"), [{ modelId: "stations/furnace", modelScale: 1 }], { now });
    assert.deepEqual(manifest.models, []);
    ModelBoundsManifestSchema.parse(manifest);
  });

  it("names the file of a model it cannot read", async () => {
    const bad = await mkdtemp(path.join(os.tmpdir(), "model-bounds-bad-"));
    try {
      await mkdir(path.join(bad, "broken"), { recursive: true });
      await writeFile(path.join(bad, "broken/junk.glb"), "definitely not glTF");
      await assert.rejects(
        computeModelBounds(bad, []),
        (err: Error) =>
          err instanceof ModelBoundsError && err.message.startsWith("broken/junk.glb: ") && err.problems.length === 1 && err.problems[0] === err.message,
      );
    } finally {
      await rm(bad, { recursive: true, force: true });
    }
  });
});
