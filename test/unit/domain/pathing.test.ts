import assert from "node:assert/strict";
import { chebyshev, DEFAULT_MAX_PATH_NODES, type BlockedFn, type WorldBounds } from "../../../src/domain/movement.js";
import { findPath } from "../../../src/domain/path-search.js";
import { MoveQueue, pathNodeLimit, PATH_NODES_BASE, PATH_NODES_PER_TICK, PATH_NODES_PER_TILE, Regions, type MoveRequest } from "../../../src/domain/pathing.js";

const BOUNDS: WorldBounds = { minX: -50, maxX: 50, minZ: -50, maxZ: 50 };
/** A closed ring of walls around (20, 20): its inside (Chebyshev 0..2 from the centre) is enclosed. */
const ringAround =
  (cx: number, cz: number, r = 3): BlockedFn =>
  (x, z) =>
    chebyshev({ x, z }, { x: cx, z: cz }) === r;

describe("domain/pathing", () => {
  describe("Regions", () => {
    it("puts the inside of a closed ring in its own region and the ring itself in none", () => {
      const regions = Regions.build(BOUNDS, ringAround(20, 20));
      assert.equal(regions.count, 2);
      assert.equal(regions.regionOf(20, 20), regions.regionOf(22, 22));
      assert.notEqual(regions.regionOf(20, 20), regions.regionOf(0, 0));
      assert.equal(regions.regionOf(23, 20), 0, "a wall tile");
      assert.equal(regions.regionOf(0, 51), 0, "outside the bounds");
      assert.equal(regions.reachable({ x: 0, z: 0 }, { x: 20, z: 20 }), false);
      assert.equal(regions.reachable({ x: 0, z: 0 }, { x: 40, z: -40 }), true);
      assert.equal(regions.reachable({ x: 21, z: 21 }, { x: 19, z: 22 }), true, "inside to inside");
    });

    it("a gap of one diagonal does not connect (no corner cutting), a straight gap does", () => {
      // Ring with the corner (23, 23) open: reaching it from (22, 22) needs a diagonal past two walls.
      const corner: BlockedFn = (x, z) => ringAround(20, 20)(x, z) && !(x === 23 && z === 23);
      assert.equal(Regions.build(BOUNDS, corner).reachable({ x: 0, z: 0 }, { x: 20, z: 20 }), false);
      const r = findPath({ x: 0, z: 0 }, { x: 20, z: 20 }, corner, BOUNDS);
      assert.equal(r.ok && r.value.complete, false, "A* agrees: the inside cannot be entered");
      const door: BlockedFn = (x, z) => ringAround(20, 20)(x, z) && !(x === 23 && z === 20);
      assert.equal(Regions.build(BOUNDS, door).reachable({ x: 0, z: 0 }, { x: 20, z: 20 }), true);
    });

    it("a blocked target counts as reached from a free tile next to it; `adjacent` does the same for a free one", () => {
      const regions = Regions.build(BOUNDS, ringAround(20, 20));
      assert.equal(regions.reachable({ x: 0, z: 0 }, { x: 23, z: 20 }), true, "a wall tile, reached from outside");
      assert.equal(regions.reachable({ x: 0, z: 0 }, { x: 22, z: 20 }), false, "a free tile inside");
      assert.equal(regions.reachable({ x: 0, z: 0 }, { x: 22, z: 20 }, true), false, "next to it is the wall or inside");
      assert.equal(regions.reachable({ x: 0, z: 0 }, { x: 24, z: 20 }, true), true);
      assert.equal(regions.reachable({ x: 23, z: 20 }, { x: 0, z: 0 }), true, "from a blocked tile (an admin teleport) the search decides");
    });
  });

  describe("pathNodeLimit", () => {
    it("grows with the distance and stops at the search cap", () => {
      assert.equal(pathNodeLimit(0), PATH_NODES_BASE);
      assert.equal(pathNodeLimit(10), PATH_NODES_BASE + 10 * PATH_NODES_PER_TILE);
      assert.ok(pathNodeLimit(200) <= DEFAULT_MAX_PATH_NODES);
      assert.ok(pathNodeLimit(200) > pathNodeLimit(100));
      assert.equal(pathNodeLimit(1e9), DEFAULT_MAX_PATH_NODES);
    });

    it("a search given the limit expands no more tiles than that, even when it cannot arrive", () => {
      // The target is enclosed: without region check the search floods until its budget is spent.
      const stats = { expanded: 0 };
      const limit = pathNodeLimit(20);
      const r = findPath({ x: 0, z: 0 }, { x: 20, z: 20 }, ringAround(20, 20), BOUNDS, limit, stats);
      assert.ok(r.ok && !r.value.complete);
      assert.equal(stats.expanded, limit);
      findPath({ x: 0, z: 0 }, { x: 5, z: 0 }, () => false, BOUNDS, limit, stats);
      assert.equal(stats.expanded, 6, "an open straight line expands the start and each tile on it");
    });
  });

  describe("MoveQueue", () => {
    const req = (x: number, z = 0, run = false): MoveRequest => ({ x, z, run });

    it("keeps only the latest target of a mover, in its original place in the line", () => {
      const q = new MoveQueue(100, 10);
      q.request("a", req(1));
      q.request("b", req(2));
      q.request("a", req(3));
      assert.equal(q.size, 2);
      const seen: [string, number][] = [];
      const report = q.runTick(
        () => 1,
        (id, r) => (seen.push([id, r.x]), 1),
      );
      assert.deepEqual(seen, [
        ["a", 3],
        ["b", 2],
      ]);
      assert.deepEqual(report, { served: ["a", "b"], expanded: 2, deferred: 0 });
      assert.equal(q.size, 0);
    });

    it("sixty requests of one mover between two ticks cost one search", () => {
      const q = new MoveQueue(100, 10);
      let searches = 0;
      for (let i = 0; i < 60; i++) q.request("spammer", req(i));
      const report = q.runTick(
        () => 10,
        () => (searches++, 10),
      );
      assert.equal(searches, 1);
      assert.equal(report.expanded, 10);
    });

    it("stops a tick when the next search's limit no longer fits, charges what was really expanded, and serves the rest next tick first", () => {
      const q = new MoveQueue(25, 10);
      for (const id of ["a", "b", "c", "d"]) q.request(id, req(0));
      // a uses 10, b uses 4 (it arrived early): 11 left, c's limit of 10 fits, then 1 left.
      const used: Record<string, number> = { a: 10, b: 4, c: 10, d: 10 };
      const t1 = q.runTick(
        () => 10,
        (id) => used[id]!,
      );
      assert.deepEqual(t1, { served: ["a", "b", "c"], expanded: 24, deferred: 1 });
      q.request("e", req(0));
      const t2 = q.runTick(
        () => 10,
        (id) => used[id] ?? 1,
      );
      assert.deepEqual(t2, { served: ["d", "e"], expanded: 11, deferred: 0 });
    });

    it("caps each search at perSearch and never charges more than the cap", () => {
      const q = new MoveQueue(30, 10);
      q.request("a", req(0));
      let given = 0;
      const r = q.runTick(
        () => 1_000,
        (_id, _r, max) => ((given = max), 999),
      );
      assert.equal(given, 10);
      assert.equal(r.expanded, 10);
    });

    it("drops requests of movers that are gone, without a search", () => {
      const q = new MoveQueue(100, 10);
      q.request("gone", req(0));
      q.request("here", req(0));
      const r = q.runTick(
        (id) => (id === "gone" ? undefined : 1),
        () => 1,
      );
      assert.deepEqual(r, { served: ["here"], expanded: 1, deferred: 0 });
      q.request("x", req(0));
      q.cancel("x");
      assert.equal(q.get("x"), undefined);
    });

    it("a served or cancelled mover's next request goes to the end of the line, behind those waiting", () => {
      const q = new MoveQueue(3, 1);
      for (const id of ["a", "b", "c", "d", "e"]) q.request(id, req(0));
      const order = () =>
        q.runTick(
          () => 1,
          () => 1,
        ).served;
      assert.deepEqual(order(), ["a", "b", "c"]);
      q.request("a", req(1)); // served: to the end
      q.cancel("d");
      q.request("d", req(2)); // cancelled while waiting: to the end, after a
      q.request("e", req(3)); // still waiting: keeps its place
      assert.equal(q.size, 3);
      assert.deepEqual(order(), ["e", "a", "d"]);
      assert.equal(q.get("d"), undefined);
      assert.equal(q.size, 0);
    });

    it("keeps arrival order through many requests, cancels and ticks (a long line), as a Map in insertion order would", () => {
      // Fewer served a tick than asked: the line grows past the ring's first sizes, wherever its head is.
      const q = new MoveQueue(25, 1);
      const model = new Map<string, number>();
      let seed = 7;
      const random = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
      for (let round = 0; round < 200; round++) {
        for (let k = 0; k < 40; k++) {
          const id = `m${Math.floor(random() * (40 + 2 * round))}`;
          if (random() < 0.15) {
            q.cancel(id);
            model.delete(id);
          } else {
            q.request(id, req(round));
            model.set(id, round);
          }
        }
        const gone = `m${Math.floor(random() * (40 + 2 * round))}`;
        // The model, a Map in insertion order: the gone mover dropped where it is reached, 25 served.
        const want: [string, number][] = [];
        for (const [id, target] of [...model]) {
          if (id === gone) {
            model.delete(id);
            continue;
          }
          if (want.length === 25) break;
          want.push([id, target]);
          model.delete(id);
        }
        const seen: [string, number][] = [];
        const r = q.runTick(
          (id) => (id === gone ? undefined : 1),
          (id, x) => (seen.push([id, x.x]), 1),
        );
        assert.deepEqual(
          r.served,
          want.map(([id]) => id),
          `round ${round}`,
        );
        assert.deepEqual(seen, want, "each with its latest target");
        assert.equal(q.size, model.size, `round ${round}: waiting`);
        assert.equal(r.deferred, model.size);
      }
    });

    it("a request made during a tick's search joins the end of the line and is reached in that tick", () => {
      const q = new MoveQueue(100, 10);
      q.request("a", req(0));
      q.request("b", req(0));
      const r = q.runTick(
        () => 1,
        (id) => {
          if (id === "a") q.request("c", req(5));
          return 1;
        },
      );
      assert.deepEqual(r.served, ["a", "b", "c"]);
    });

    it("refuses a per-tick budget smaller than one search", () => {
      assert.throws(() => new MoveQueue(5, 10), RangeError);
      assert.throws(() => new MoveQueue(10, 0), RangeError);
      assert.equal(new MoveQueue().perTick, PATH_NODES_PER_TICK);
    });
  });
});
