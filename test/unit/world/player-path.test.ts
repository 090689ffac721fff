/**
 * `Player.path` walked by a cursor (`stepPath`, `pathLength`): every tick of a walk lands where
 * `stepAlong` of what is left would, `path` reads what is left, and an array read from `path`
 * is never changed afterwards — paths are replaced, never changed in place — whatever the player
 * walks or is given next. And the world's walk (`Movement.advance`) goes by it.
 */
import assert from "node:assert/strict";
import { stepAlong } from "../../../src/domain/movement.js";
import type { Tile } from "../../../src/domain/types.js";
import { Player } from "../../../src/world/player.js";
import { characterRecord } from "../../helpers/records.js";

const line = (n: number, z = 0): Tile[] => Array.from({ length: n }, (_, i) => ({ x: i + 1, z }));

describe("world/player path", () => {
  it("each step lands where stepAlong of the path left would, walking or running, paths of every length", () => {
    for (const speed of [1, 2, 3]) {
      for (let n = 0; n <= 7; n++) {
        const p = new Player(characterRecord("walker"));
        p.path = line(n);
        let left: readonly Tile[] = line(n);
        for (let tick = 0; tick < 9; tick++) {
          const want = stepAlong(left, speed);
          const at = p.stepPath(speed);
          assert.deepEqual(at ?? null, want.position, `speed ${speed}, ${n} tiles, tick ${tick}`);
          left = want.remaining;
          assert.equal(p.pathLength, left.length);
          if (tick % 2 === 1) assert.deepEqual(p.path, left, "reading it gives what is left");
        }
        assert.deepEqual(p.path, []);
      }
    }
  });

  it("an array read from path is never changed by later steps or a new path", () => {
    const p = new Player(characterRecord("walker"));
    const given = line(6);
    p.path = given;
    assert.equal(p.path, given, "the array set, as long as nothing was walked");
    p.stepPath(2);
    const read = p.path;
    const copy = read.map((t) => ({ ...t }));
    p.stepPath(1);
    p.stepPath(2);
    assert.deepEqual(read, copy, "unchanged by the steps after it was read");
    assert.deepEqual(given, line(6), "the array first set is unchanged too");
    assert.deepEqual(p.path, [{ x: 6, z: 0 }]);
    p.path = line(3, 5);
    assert.deepEqual(read, copy, "unchanged by a new path");
    assert.equal(p.stepPath(1)?.z, 5, "a new path starts from its first tile");
    assert.equal(p.pathLength, 2);
  });

  it("refuses a step of no tiles, as stepAlong does", () => {
    const p = new Player(characterRecord("walker"));
    p.path = line(2);
    assert.throws(() => p.stepPath(0), RangeError);
    assert.throws(() => p.stepPath(1.5), RangeError);
    assert.equal(p.pathLength, 2);
  });
});
