import assert from "node:assert/strict";
import { unwrap } from "../../../src/domain/errors.js";
import {
  canStep,
  chebyshev,
  MAX_MOVE_DISTANCE,
  NEIGHBOURS,
  MOVE_ERROR,
  stepAlong,
  validateMoveTarget,
  type BlockedFn,
  type WorldBounds,
} from "../../../src/domain/movement.js";
import { findPath, PATH_SEARCH_MARGIN, pathScratchBytes, searchPath, SHARED_TILES_MAX } from "../../../src/domain/path-search.js";
import type { Tile } from "../../../src/domain/types.js";

const BOUNDS: WorldBounds = { minX: -500, maxX: 500, minZ: -500, maxZ: 500 };
const open: BlockedFn = () => false;
const blockedSet = (tiles: [number, number][]): BlockedFn => {
  const set = new Set(tiles.map(([x, z]) => `${x},${z}`));
  return (x, z) => set.has(`${x},${z}`);
};
const code = (r: { ok: boolean; error?: { code: string } }) => (r.ok ? undefined : r.error!.code);

/** Every consecutive pair is one 8-connected step and no step cuts a blocked corner. */
function assertWalkable(start: Tile, path: readonly Tile[], blocked: BlockedFn): void {
  let prev = start;
  for (const t of path) {
    assert.equal(chebyshev(prev, t), 1, `step ${JSON.stringify(prev)} → ${JSON.stringify(t)}`);
    assert.ok(!blocked(t.x, t.z), `entered blocked ${JSON.stringify(t)}`);
    if (t.x !== prev.x && t.z !== prev.z) {
      assert.ok(!blocked(t.x, prev.z) && !blocked(prev.x, t.z), `cut a corner at ${JSON.stringify(t)}`);
    }
    prev = t;
  }
}

describe("domain/movement", () => {
  it("chebyshev counts diagonal steps as one", () => {
    assert.equal(chebyshev({ x: 0, z: 0 }, { x: 3, z: -7 }), 7);
    assert.equal(chebyshev({ x: 2, z: 2 }, { x: 2, z: 2 }), 0);
  });

  describe("validateMoveTarget", () => {
    const from = { x: 0, z: 0 };
    const cases: [string, { x: unknown; z: unknown }, BlockedFn, string | undefined][] = [
      ["200 tiles along x", { x: 200, z: 0 }, open, undefined],
      ["200 tiles diagonally", { x: -200, z: 200 }, open, undefined],
      ["201 tiles along x", { x: 201, z: 0 }, open, MOVE_ERROR.TOO_FAR],
      ["201 tiles along z", { x: 5, z: -201 }, open, MOVE_ERROR.TOO_FAR],
      ["a fractional x", { x: 1.5, z: 0 }, open, MOVE_ERROR.INVALID_TARGET],
      ["a string z", { x: 1, z: "2" }, open, MOVE_ERROR.INVALID_TARGET],
      ["NaN", { x: NaN, z: 0 }, open, MOVE_ERROR.INVALID_TARGET],
      ["outside the world", { x: 0, z: 501 }, open, MOVE_ERROR.OUT_OF_BOUNDS],
      ["a blocked tile", { x: 3, z: 3 }, blockedSet([[3, 3]]), MOVE_ERROR.BLOCKED],
      ["the current tile", { x: 0, z: 0 }, open, undefined],
    ];
    for (const [name, to, blocked, expected] of cases) {
      it(`${name} → ${expected ?? "ok"}`, () => assert.equal(code(validateMoveTarget(from, to, BOUNDS, blocked)), expected));
    }
    it("the limit is 200", () => assert.equal(MAX_MOVE_DISTANCE, 200));
  });

  describe("findPath", () => {
    it("goes straight in the open and excludes the start", () => {
      const { tiles, complete } = unwrap(findPath({ x: 0, z: 0 }, { x: 3, z: 0 }, open, BOUNDS));
      assert.deepEqual(tiles, [
        { x: 1, z: 0 },
        { x: 2, z: 0 },
        { x: 3, z: 0 },
      ]);
      assert.equal(complete, true);
    });
    it("takes the Chebyshev number of steps diagonally", () => {
      const { tiles } = unwrap(findPath({ x: 0, z: 0 }, { x: 5, z: 3 }, open, BOUNDS));
      assert.equal(tiles.length, 5);
      assertWalkable({ x: 0, z: 0 }, tiles, open);
      assert.deepEqual(tiles.at(-1), { x: 5, z: 3 });
    });
    it("returns an empty path when already there", () => {
      assert.deepEqual(unwrap(findPath({ x: 1, z: 1 }, { x: 1, z: 1 }, open, BOUNDS)), { tiles: [], complete: true });
    });
    it("walks around a wall", () => {
      // Wall at x = 2 from z = -3 to 3; the way round is past z = 4 or z = -4.
      const wall = blockedSet([-3, -2, -1, 0, 1, 2, 3].map((z) => [2, z] as [number, number]));
      const { tiles, complete } = unwrap(findPath({ x: 0, z: 0 }, { x: 4, z: 0 }, wall, BOUNDS));
      assert.equal(complete, true);
      assertWalkable({ x: 0, z: 0 }, tiles, wall);
      assert.deepEqual(tiles.at(-1), { x: 4, z: 0 });
      // Round the end of the wall without cutting its corner: (1,4) in 4 steps, (2,4), (3,4), then
      // 4 steps down to (4,0).
      assert.equal(tiles.length, 10);
    });
    it("does not cut corners past blocked tiles", () => {
      // Diagonal (0,0) → (1,1) is squeezed between two blocked tiles.
      const corners = blockedSet([
        [1, 0],
        [0, 1],
      ]);
      const { tiles } = unwrap(findPath({ x: 0, z: 0 }, { x: 1, z: 1 }, corners, BOUNDS));
      assert.ok(tiles.length > 1, "must not take the single diagonal step");
      assertWalkable({ x: 0, z: 0 }, tiles, corners);
    });
    it("refuses a diagonal even when only one side is blocked", () => {
      const oneSide = blockedSet([[1, 0]]);
      const { tiles } = unwrap(findPath({ x: 0, z: 0 }, { x: 1, z: 1 }, oneSide, BOUNDS));
      assert.deepEqual(tiles, [
        { x: 0, z: 1 },
        { x: 1, z: 1 },
      ]);
    });
    it("goes to the closest reachable tile when the target is enclosed", () => {
      const ring: [number, number][] = [];
      for (let x = 9; x <= 11; x++) for (let z = -1; z <= 1; z++) if (x !== 10 || z !== 0) ring.push([x, z]);
      const blocked = blockedSet(ring);
      const { tiles, complete } = unwrap(findPath({ x: 0, z: 0 }, { x: 10, z: 0 }, blocked, BOUNDS));
      assert.equal(complete, false);
      assert.equal(chebyshev(tiles.at(-1)!, { x: 10, z: 0 }), 2);
      assertWalkable({ x: 0, z: 0 }, tiles, blocked);
    });
    it("answers NO_PATH when boxed in", () => {
      const box: [number, number][] = [];
      for (let x = -1; x <= 1; x++) for (let z = -1; z <= 1; z++) if (x || z) box.push([x, z]);
      assert.equal(code(findPath({ x: 0, z: 0 }, { x: 5, z: 5 }, blockedSet(box), BOUNDS)), MOVE_ERROR.NO_PATH);
    });
    it("stops next to a blocked target (a tree) without flooding the map", () => {
      let calls = 0;
      const tree: BlockedFn = (x, z) => (calls++, x === 6 && z === 0);
      const { tiles, complete } = unwrap(findPath({ x: 0, z: 0 }, { x: 6, z: 0 }, tree, BOUNDS));
      assert.equal(complete, false);
      assert.deepEqual(tiles.at(-1), { x: 5, z: 0 });
      assert.ok(calls < 200, `blocked() called ${calls} times`);
    });
    it("refuses a target beyond 200 tiles with TOO_FAR", () => {
      assert.equal(code(findPath({ x: 0, z: 0 }, { x: 201, z: 0 }, open, BOUNDS)), MOVE_ERROR.TOO_FAR);
    });
    it("answers OUT_OF_BOUNDS for an end outside the world", () => {
      assert.equal(code(findPath({ x: 0, z: 0 }, { x: 0, z: 600 }, open, BOUNDS)), MOVE_ERROR.OUT_OF_BOUNDS);
    });
    it("stays within the node budget on a 200-tile unreachable search", () => {
      let calls = 0;
      const target = { x: 200, z: 0 };
      // The target sits inside a closed ring: the search would flood a huge area without a cap.
      const blocked: BlockedFn = (x, z) => {
        calls++;
        return chebyshev({ x, z }, target) === 1;
      };
      const started = process.hrtime.bigint();
      const r = unwrap(findPath({ x: 0, z: 0 }, target, blocked, BOUNDS, 40_000));
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      assert.equal(r.complete, false);
      // Each tile is asked about at most once; 40,000 expansions touch at most ~41,000 x 9 tiles.
      assert.ok(calls <= 41_000 * 9, `blocked() called ${calls} times`);
      assert.ok(ms < 1000, `took ${ms} ms`);
    });
    it("reaches a 200-tile target in the open", () => {
      const r = unwrap(findPath({ x: 0, z: 0 }, { x: 200, z: -150 }, open, BOUNDS));
      assert.equal(r.complete, true);
      assert.equal(r.tiles.length, 200);
    });
  });

  describe("findPath reusing its search buffers", () => {
    /** A seeded generator (mulberry32), so a failure can be replayed. */
    const rng = (seed: number) => () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const SMALL: WorldBounds = { minX: -60, maxX: 60, minZ: -60, maxZ: 60 };

    /**
     * The reference: breadth-first search over the same window, same moves (8-connected, no corner
     * cutting). Returns the fewest steps to the target, or, when it cannot be entered, the
     * (Chebyshev distance, steps) of the best tile findPath promises: closest to the target, then
     * fewest steps. A blocked target counts as reached from any tile next to it.
     */
    function reference(from: Tile, to: Tile, blocked: BlockedFn, bounds: WorldBounds) {
      const radius = chebyshev(from, to) + PATH_SEARCH_MARGIN;
      const x0 = Math.max(bounds.minX, from.x - radius);
      const x1 = Math.min(bounds.maxX, from.x + radius);
      const z0 = Math.max(bounds.minZ, from.z - radius);
      const z1 = Math.min(bounds.maxZ, from.z + radius);
      const free = (x: number, z: number) => x >= x0 && x <= x1 && z >= z0 && z <= z1 && !blocked(x, z);
      const goalH = blocked(to.x, to.z) ? 1 : 0;
      const dist = new Map<string, number>([[`${from.x},${from.z}`, 0]]);
      let frontier: Tile[] = [from];
      let best = { h: chebyshev(from, to), g: 0 };
      for (let g = 0; frontier.length > 0; g++) {
        const next: Tile[] = [];
        for (const t of frontier) {
          const h = chebyshev(t, to);
          if (h < best.h || (h === best.h && g < best.g)) best = { h, g };
          if (h <= goalH) return best;
          for (let dx = -1; dx <= 1; dx++)
            for (let dz = -1; dz <= 1; dz++) {
              if (!dx && !dz) continue;
              const nx = t.x + dx;
              const nz = t.z + dz;
              if (!free(nx, nz) || dist.has(`${nx},${nz}`)) continue;
              if (dx && dz && (!free(t.x + dx, t.z) || !free(t.x, t.z + dz))) continue;
              dist.set(`${nx},${nz}`, g + 1);
              next.push({ x: nx, z: nz });
            }
        }
        frontier = next;
      }
      return best;
    }

    it("gives shortest valid paths across hundreds of calls of different sizes on random maps", () => {
      const random = rng(20261122);
      for (let map = 0; map < 6; map++) {
        const walls = new Set<string>();
        for (let x = SMALL.minX; x <= SMALL.maxX; x++) for (let z = SMALL.minZ; z <= SMALL.maxZ; z++) if (random() < 0.08 + map * 0.05) walls.add(`${x},${z}`);
        const blocked: BlockedFn = (x, z) => walls.has(`${x},${z}`);
        for (let q = 0; q < 60; q++) {
          const from = { x: Math.floor(random() * 81) - 40, z: Math.floor(random() * 81) - 40 };
          if (blocked(from.x, from.z)) continue;
          // Mostly short moves, some long ones: each call sees a different window size.
          const reach = random() < 0.7 ? 1 + Math.floor(random() * 4) : 5 + Math.floor(random() * 30);
          const to = {
            x: Math.max(SMALL.minX, Math.min(SMALL.maxX, from.x + Math.floor(random() * (2 * reach + 1)) - reach)),
            z: Math.max(SMALL.minZ, Math.min(SMALL.maxZ, from.z + Math.floor(random() * (2 * reach + 1)) - reach)),
          };
          const what = `map ${map} query ${q}: ${JSON.stringify(from)} → ${JSON.stringify(to)}`;
          const want = reference(from, to, blocked, SMALL);
          const got = findPath(from, to, blocked, SMALL);
          if (!got.ok) {
            assert.equal(got.error.code, from.x === to.x && from.z === to.z ? undefined : MOVE_ERROR.NO_PATH, what);
            assert.equal(want.g, 0, `${what}: NO_PATH, but the reference moved`);
            continue;
          }
          const { tiles, complete } = got.value;
          assertWalkable(from, tiles, blocked);
          const end = tiles.at(-1) ?? from;
          assert.equal(chebyshev(end, to), want.h, `${what}: as close as possible`);
          assert.equal(tiles.length, want.g, `${what}: fewest steps`);
          assert.equal(complete, end.x === to.x && end.z === to.z, what);
        }
        // A long open-map path between the small ones (the largest window) changes nothing after it.
        assert.equal(unwrap(findPath({ x: 0, z: 0 }, { x: 200, z: -150 }, open, BOUNDS)).tiles.length, 200);
      }
    });

    it("paths share their tiles, frozen, one object per tile of the bounds; each path is an array of its own", () => {
      const a = unwrap(findPath({ x: 0, z: 0 }, { x: 6, z: 0 }, open, BOUNDS)).tiles;
      const b = unwrap(findPath({ x: 2, z: 0 }, { x: 9, z: 0 }, open, BOUNDS)).tiles;
      const c = searchPath({ x: 3, z: 0 }, { x: 5, z: 0 }, open, BOUNDS);
      assert.ok(Array.isArray(c));
      assert.notEqual(a, b);
      assert.equal(a[3], b[1], "(4, 0): the same tile object");
      assert.equal(c[1], a[4], "(5, 0)");
      assert.ok(a.every((t) => Object.isFrozen(t)));
      assert.throws(() => {
        (a[0] as { x: number }).x = 99;
      }, TypeError);
      assert.deepEqual(a[0], { x: 1, z: 0 });
      // Bounds too large for a table: tiles of their own, frozen alike, the same paths.
      const huge: WorldBounds = { minX: -2000, maxX: 2000, minZ: -2000, maxZ: 2000 };
      assert.ok((huge.maxX - huge.minX + 1) * (huge.maxZ - huge.minZ + 1) > SHARED_TILES_MAX);
      const d = unwrap(findPath({ x: 0, z: 0 }, { x: 6, z: 0 }, open, huge)).tiles;
      const e = unwrap(findPath({ x: 0, z: 0 }, { x: 6, z: 0 }, open, huge)).tiles;
      assert.deepEqual(d, a);
      assert.notEqual(d[0], e[0]);
      assert.ok(Object.isFrozen(d[0]));
    });

    it("searchPath answers findPath's refusals by their codes, and its paths", () => {
      assert.equal(searchPath({ x: 0, z: 0 }, { x: 201, z: 0 }, open, BOUNDS), MOVE_ERROR.TOO_FAR);
      assert.equal(searchPath({ x: 0, z: 0 }, { x: 0, z: 600 }, open, BOUNDS), MOVE_ERROR.OUT_OF_BOUNDS);
      const box: [number, number][] = [];
      for (let dx = -1; dx <= 1; dx++) for (let dz = -1; dz <= 1; dz++) if (dx || dz) box.push([dx, dz]);
      assert.equal(searchPath({ x: 0, z: 0 }, { x: 5, z: 5 }, blockedSet(box), BOUNDS), MOVE_ERROR.NO_PATH);
      assert.deepEqual(searchPath({ x: 1, z: 1 }, { x: 1, z: 1 }, open, BOUNDS), []);
      assert.deepEqual(searchPath({ x: 0, z: 0 }, { x: 2, z: 1 }, open, BOUNDS), unwrap(findPath({ x: 0, z: 0 }, { x: 2, z: 1 }, open, BOUNDS)).tiles);
    });

    it("allocates its buffers once for the largest window and keeps them", () => {
      unwrap(findPath({ x: -200, z: 0 }, { x: 0, z: 200 }, open, BOUNDS));
      const bytes = pathScratchBytes();
      const side = 2 * (200 + PATH_SEARCH_MARGIN) + 1;
      assert.equal(bytes, side * side * 13);
      for (let i = 0; i < 500; i++) {
        const d = (i % 50) + 1;
        const r = unwrap(findPath({ x: 0, z: 0 }, { x: d, z: -d }, open, BOUNDS));
        assert.equal(r.tiles.length, d);
      }
      assert.equal(pathScratchBytes(), bytes, "no new buffers for smaller searches");
    });
  });

  describe("canStep and NEIGHBOURS", () => {
    it("NEIGHBOURS are the eight offsets, straight ones first", () => {
      assert.equal(new Set(NEIGHBOURS.map(([dx, dz]) => `${dx},${dz}`)).size, 8);
      assert.ok(NEIGHBOURS.every(([dx, dz]) => chebyshev({ x: 0, z: 0 }, { x: dx, z: dz }) === 1));
      assert.ok(NEIGHBOURS.slice(0, 4).every(([dx, dz]) => dx === 0 || dz === 0));
    });

    const free = (blocked: [number, number][]) => {
      const b = blockedSet(blocked);
      return (x: number, z: number) => !b(x, z);
    };
    const cases: [string, [number, number][], number, number, boolean][] = [
      ["a straight step to a free tile", [], 1, 0, true],
      ["a straight step to a blocked tile", [[1, 0]], 1, 0, false],
      ["a diagonal with both sides free", [], 1, 1, true],
      ["a diagonal past one blocked side", [[1, 0]], 1, 1, false],
      ["a diagonal past the other blocked side", [[0, 1]], 1, 1, false],
      ["a diagonal to a blocked tile", [[1, 1]], 1, 1, false],
      ["a straight step beside a blocked diagonal", [[1, 1]], 1, 0, true],
    ];
    for (const [name, blocked, dx, dz, expected] of cases) it(name, () => assert.equal(canStep(0, 0, dx, dz, free(blocked)), expected));
  });

  describe("stepAlong", () => {
    const path: Tile[] = [
      { x: 1, z: 0 },
      { x: 2, z: 0 },
      { x: 3, z: 0 },
    ];
    const cases: [string, readonly Tile[], number, Tile | null, number][] = [
      ["walking moves one tile", path, 1, { x: 1, z: 0 }, 2],
      ["running moves two tiles", path, 2, { x: 2, z: 0 }, 1],
      ["running with one tile left moves one", path.slice(2), 2, { x: 3, z: 0 }, 0],
      ["an empty path stays put", [], 1, null, 0],
    ];
    for (const [name, p, speed, position, left] of cases) {
      it(name, () => {
        const s = stepAlong(p, speed);
        assert.deepEqual(s.position, position);
        assert.equal(s.remaining.length, left);
      });
    }
    it("throws for a speed of 0", () => assert.throws(() => stepAlong(path, 0), RangeError));
  });
});
