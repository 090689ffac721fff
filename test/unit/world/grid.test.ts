/** src/world/grid.ts: the spatial hash interest management gathers its candidates from. */
import assert from "node:assert/strict";
import { SpatialGrid } from "../../../src/world/grid.js";

describe("world/grid (SpatialGrid)", () => {
  const e = (id: string) => ({ id });
  const gathered = (grid: SpatialGrid<{ id: string }>, x: number, z: number, r: number) => {
    const cells: ReadonlyMap<string, { id: string }>[] = [];
    const n = grid.cellsNear(x, z, r, cells);
    const ids = cells.flatMap((c) => [...c.keys()]).sort();
    assert.equal(n, ids.length, "the count is what the cells hold");
    assert.deepEqual(ids, [...grid.near(x, z, r)].map((v) => v.id).sort(), "the same entities as near()");
    return ids;
  };

  it("cellsNear gathers the cells around a point: everything within the radius, counted, whatever moved or left", () => {
    const grid = new SpatialGrid<{ id: string }>(16);
    const at: Record<string, [number, number]> = { a: [0, 0], b: [10, -5], c: [-24, 24], d: [40, 0], e: [-100, -100] };
    const ents = Object.fromEntries(Object.keys(at).map((id) => [id, e(id)]));
    for (const [id, [x, z]] of Object.entries(at)) grid.set(ents[id]!, x, z);
    const near = gathered(grid, 0, 0, 24);
    for (const id of ["a", "b", "c"]) assert.ok(near.includes(id), `${id} is within 24 tiles`);
    assert.ok(!near.includes("e"), "far cells are not walked");
    grid.set(ents.a!, -100, -99);
    grid.delete("b");
    const after = gathered(grid, 0, 0, 24);
    assert.ok(!after.includes("a") && !after.includes("b"), "moved away and deleted");
    assert.deepEqual(gathered(grid, -100, -100, 2), ["a", "e"]);
    const reused: ReadonlyMap<string, { id: string }>[] = [new Map()];
    assert.equal(grid.cellsNear(1000, 1000, 5, reused), 0);
    assert.equal(reused.length, 0, "the output is cleared first");
  });
  it("counts jumps: a move farther than maxStep in one go, or leaving the grid; steps and arrivals are not jumps", () => {
    const grid = new SpatialGrid<{ id: string }>(16, 2);
    const a = e("a");
    grid.set(a, -1, 5);
    grid.set(e("b"), 3, 3);
    assert.equal(grid.jumps, 0, "arrivals");
    grid.set(a, 1, 3);
    grid.set(a, -1, 3);
    grid.set(a, -1, 3);
    assert.equal(grid.jumps, 0, "steps of up to 2 tiles, across cells and the axes");
    grid.set(a, 2, 3);
    assert.equal(grid.jumps, 1, "3 tiles at once");
    grid.set(a, 2, -40);
    assert.equal(grid.jumps, 2);
    grid.delete("b");
    assert.equal(grid.jumps, 3, "leaving");
    grid.delete("b");
    assert.equal(grid.jumps, 3, "what is not there does not leave");
    const plain = new SpatialGrid<{ id: string }>(16);
    plain.set(a, 0, 0);
    plain.set(a, 100, 100);
    assert.equal(plain.jumps, 0, "no maxStep: moves are not told apart");
  });
  it("ring gathers the occupied tiles at one Chebyshev distance, each once", () => {
    const grid = new SpatialGrid<{ id: string }>(16);
    // One entity on every tile of the 9 × 9 square around (3, -2), two on its centre.
    for (let dx = -4; dx <= 4; dx++) for (let dz = -4; dz <= 4; dz++) grid.set(e(`${dx},${dz}`), 3 + dx, -2 + dz);
    grid.set(e("again"), 3, -2);
    const out: (readonly { id: string }[])[] = [];
    for (let r = 0; r <= 5; r++) {
      const n = grid.ring(3, -2, r, out);
      const ids = out.slice(0, n).flatMap((tile) => tile.map((v) => v.id));
      const expected: string[] = [];
      for (let dx = -4; dx <= 4; dx++) for (let dz = -4; dz <= 4; dz++) if (Math.max(Math.abs(dx), Math.abs(dz)) === r) expected.push(`${dx},${dz}`);
      if (r === 0) expected.push("again");
      assert.deepEqual(ids.sort(), expected.sort(), `ring ${r}`);
      assert.equal(n, r === 0 ? 1 : r <= 4 ? 8 * r : 0, `ring ${r}: its occupied tiles`);
    }
  });
  it("a tile left empty holds nobody (at, ring); its array serves the next tile that gets its first entity", () => {
    const grid = new SpatialGrid<{ id: string }>(16, 2);
    const a = e("a");
    const b = e("b");
    grid.set(a, 5, 5);
    grid.set(b, 9, 9);
    const array = grid.at(5, 5);
    grid.set(a, 6, 5);
    assert.equal(grid.at(5, 5), undefined, "nobody there");
    const out: (readonly { id: string }[])[] = [];
    assert.equal(grid.ring(6, 5, 1, out), 0, "an empty tile is not an occupied one");
    assert.equal(grid.ring(6, 5, 0, out), 1);
    assert.equal(grid.at(6, 5), array, "the array it left went along, not a new one");
    assert.deepEqual(
      grid.at(6, 5)?.map((v) => v.id),
      ["a"],
    );
    // Onto an occupied tile and off again, leaving and arriving in every order.
    grid.set(a, 9, 9);
    assert.deepEqual(
      grid
        .at(9, 9)
        ?.map((v) => v.id)
        .sort(),
      ["a", "b"],
    );
    assert.equal(grid.at(6, 5), undefined);
    grid.set(b, 10, 9);
    grid.set(a, 9, 8);
    assert.deepEqual([grid.at(9, 9), grid.at(10, 9)?.map((v) => v.id), grid.at(9, 8)?.map((v) => v.id)], [undefined, ["b"], ["a"]]);
    grid.delete("b");
    grid.set(e("c"), 0, 0);
    assert.deepEqual([grid.at(10, 9), grid.at(0, 0)?.map((v) => v.id), grid.at(9, 8)?.map((v) => v.id)], [undefined, ["c"], ["a"]]);
    grid.set(e("d"), 20, 20); // nothing left empty since: an array of its own
    assert.deepEqual([grid.at(0, 0)?.map((v) => v.id), grid.at(20, 20)?.map((v) => v.id)], [["c"], ["d"]]);
  });
  it("tells every tile of ±32,767 apart, across the axes and at the edges, and measures steps across them", () => {
    const grid = new SpatialGrid<{ id: string }>(16, 2);
    const spots: [number, number][] = [];
    for (const x of [-32768, -32767, -17, -16, -1, 0, 1, 15, 16, 32766, 32767]) for (const z of [-32768, -1, 0, 1, 32767]) spots.push([x, z]);
    spots.forEach(([x, z], i) => grid.set(e(`s${i}`), x, z));
    spots.forEach(([x, z], i) =>
      assert.deepEqual(
        grid.at(x, z)?.map((v) => v.id),
        [`s${i}`],
        `(${x}, ${z}) holds its own`,
      ),
    );
    assert.equal(grid.jumps, 0);
    const a = e("a");
    grid.set(a, -1, -1);
    for (const [x, z] of [
      [0, 0],
      [1, -1],
      [-1, 0],
      [1, 1],
      [-1, -1],
    ] as const)
      grid.set(a, x, z);
    assert.equal(grid.jumps, 0, "steps of up to 2 tiles across the axes");
    grid.set(a, 32767, -1);
    grid.set(a, -32768, -1);
    grid.set(a, -32768, 32767);
    assert.equal(grid.jumps, 3, "from edge to edge");
    const cornerCell = spots.flatMap(([x, z], i) => (x <= -32767 && z === 32767 ? [`s${i}`] : []));
    assert.deepEqual(gathered(grid, -32768, 32767, 1), ["a", ...cornerCell].sort(), "the corner's cell");
  });
});
