/**
 * The world rooms' tick grid (`TICK_PHASE=auto`, the default;
 * docs/operations.md "Scaling: several processes and machines") on a real server with three worlds at TICK_MS=50: each world ticks on its own phase
 * (world 1 at 0 ms, 2 at 25 ms, 3 at 12 ms of each 50), one room-clock tick per world tick, and
 * disposing a room stops its ticks. Asserted on the slots the ticker computed (exact), never on
 * how late a loaded machine ran them.
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import type { WorldRoom } from "../../../rooms/WorldRoom.js";
import type { GameServer } from "../../../src/server/server.js";
import { tickPhaseMs } from "../../../src/world/tick-grid.js";
import { startTestServer } from "../../helpers/server.js";

const TICK_MS = 50;
/** How early (ms of `Date.now()`) a Node timer may fire before its slot: timers round to whole milliseconds. */
const EARLY_MS = 5;

interface TickRecord {
  /** The slot the ticker scheduled this tick for. */
  slot: number;
  /** `Date.now()` when the world stepped. */
  at: number;
  /** Room-clock ticks since the previous world tick. */
  clockTicks: number;
}

describe("world rooms: ticks on each world's phase (TICK_PHASE=auto)", function () {
  this.timeout(60_000);
  let server: GameServer;

  before(async () => {
    server = await startTestServer({ WORLDS: "1,2,3", TICK_MS: String(TICK_MS) });
  });
  after(async () => server?.close());

  const roomOf = async (world: number): Promise<WorldRoom> => {
    const listing = (await matchMaker.query({ name: "world" })).find((l) => l.metadata?.world === world);
    assert.ok(listing, `world ${world}'s room is listed`);
    return matchMaker.getLocalRoomById(listing.roomId) as WorldRoom;
  };

  /** The next `n` ticks of a world: its `step` and its room clock are watched meanwhile, then restored. */
  const record = async (world: number, n: number): Promise<TickRecord[]> => {
    const room = await roomOf(world);
    const w = server.worlds.get(world)!.world;
    const records: TickRecord[] = [];
    let clockTicks = 0;
    const clock = room.clock;
    const clockTick = clock.tick;
    const step = w.step;
    try {
      return await new Promise<TickRecord[]>((resolve) => {
        clock.tick = function (this: typeof clock) {
          clockTicks++;
          return clockTick.call(this);
        };
        w.step = function (this: typeof w) {
          records.push({ slot: room.ticker!.slot!, at: Date.now(), clockTicks });
          clockTicks = 0;
          step.call(this);
          if (records.length === n) resolve(records);
        };
      });
    } finally {
      clock.tick = clockTick;
      w.step = step;
    }
  };

  it("each world ticks on its own phase: every slot ≡ phase (mod TICK_MS), never early, the room clock ticked once per tick", async () => {
    const phases = new Map<number, number>();
    for (const world of [1, 2, 3]) {
      const phase = tickPhaseMs(world, TICK_MS);
      phases.set(world, phase);
      const ticks = await record(world, 6);
      for (const [i, t] of ticks.entries()) {
        assert.equal((((t.slot - phase) % TICK_MS) + TICK_MS) % TICK_MS, 0, `world ${world} tick ${i}: slot ${t.slot} on phase ${phase}`);
        assert.ok(t.at >= t.slot - EARLY_MS, `world ${world} tick ${i} ran at ${t.at}, before its slot ${t.slot}`);
        if (i > 0) {
          assert.ok(t.slot > ticks[i - 1]!.slot, "slots increase");
          // The first record's clock count includes ticks before the watch began.
          assert.equal(t.clockTicks, 1, `world ${world} tick ${i}: the room clock ticked once since the tick before`);
        }
      }
    }
    assert.deepEqual([...phases.values()], [0, 25, 12]);
  });

  it("disposing a world room stops its ticks", async () => {
    const room = await roomOf(3);
    const w = server.worlds.get(3)!.world;
    await record(3, 1);
    await room.disconnect();
    assert.equal(room.ticker!.slot, undefined, "the ticker stopped");
    const tick = w.tick;
    // A timer set now for three ticks' time: a next tick (due within one) would have fired before it.
    await new Promise((r) => setTimeout(r, 3 * TICK_MS));
    assert.equal(w.tick, tick, "world 3 no longer ticks");
    // The other worlds still do.
    assert.equal((await record(1, 2)).length, 2);
  });
});
