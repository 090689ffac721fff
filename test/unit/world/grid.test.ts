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
});
