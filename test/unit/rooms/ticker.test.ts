/**
 * The world room's tick timer (rooms/world/ticker.ts) on a stand-in room and a wall clock the test
 * sets: `auto` ticks on the world's slots, ticks the room clock first, takes the next free slot
 * after an overrun and counts the skipped ones, reports an exception as Colyseus's `setTimestep`
 * does and keeps ticking, stops for good; `off` is Colyseus's simulation interval. The timers are
 * real (short ticks); each wait is for a tick or for a timer set after the ticker's.
 */
import assert from "node:assert/strict";
import { TimestepException, type RoomException, type RoomMethodName } from "@colyseus/core";
import { startTicker, type TickedRoom, type Ticker } from "../../../rooms/world/ticker.js";

const TICK_MS = 20;
/** World 2's phase: half a tick. */
const PHASE = 10;
/** A wall-clock time on the grid at phase 0 (the test's own clock). */
const T0 = 1_000_000;

/** A room with what the ticker uses: the calls it got, in order. */
function standInRoom() {
  const log: string[] = [];
  const exceptions: [RoomException, RoomMethodName][] = [];
  const room = {
    log,
    exceptions,
    _simulationInterval: undefined as unknown,
    clock: { tick: () => log.push("clock") },
    onUncaughtException: (e: RoomException, m: RoomMethodName) => exceptions.push([e, m]),
    setSimulationInterval: (cb?: unknown, delay?: number) => log.push(`interval ${typeof cb} ${delay}`),
  };
  return room;
}

/** Resolves after `ms` of real time; any timer due earlier (a ticker's) has fired by then. */
const after = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("world room ticker", () => {
  let ticker: Ticker | undefined;
  afterEach(() => ticker?.stop());

  it("auto: ticks on the world's slots, the room clock first, one tick per slot while ticks end in time", async () => {
    const room = standInRoom();
    let t = T0 + 3;
    const slots: number[] = [];
    const handles: unknown[] = [];
    let done!: () => void;
    const three = new Promise<void>((r) => (done = r));
    ticker = startTicker(
      room as unknown as TickedRoom,
      () => {
        room.log.push("tick");
        slots.push(ticker!.slot!);
        handles.push(room._simulationInterval);
        t = ticker!.slot! + 3; // each tick ends 3 ms into its slot
        if (slots.length === 3) done();
      },
      { tickMs: TICK_MS, tickPhase: "auto", worldNumber: 2, now: () => t },
    );
    assert.equal(ticker.slot, T0 + PHASE, "the first slot of world 2's phase from now on");
    await three;
    assert.deepEqual(slots, [T0 + PHASE, T0 + PHASE + TICK_MS, T0 + PHASE + 2 * TICK_MS]);
    assert.deepEqual(room.log, ["clock", "tick", "clock", "tick", "clock", "tick"]);
    // Colyseus's timestep handle is the ticker's current timeout (Node's Timeout objects).
    assert.ok(
      handles.every((h) => h !== null && typeof h === "object" && "refresh" in h),
      "Colyseus sees a timestep while the ticker runs",
    );
    assert.deepEqual(room.exceptions, []);
  });

  it("auto: a tick that overruns makes the next one take the next free slot and counts the skipped slots", async () => {
    const room = standInRoom();
    let t = T0;
    const slots: number[] = [];
    const skipped: number[] = [];
    let done!: () => void;
    const three = new Promise<void>((r) => (done = r));
    ticker = startTicker(
      room as unknown as TickedRoom,
      () => {
        slots.push(ticker!.slot!);
        // The first tick ends 45 ms after its slot: past the next two.
        t = ticker!.slot! + (slots.length === 1 ? 45 : 1);
        if (slots.length === 3) done();
      },
      { tickMs: TICK_MS, tickPhase: "auto", worldNumber: 2, now: () => t, metrics: { tickSlotsSkipped: { inc: (n: number) => skipped.push(n) } } },
    );
    await three;
    assert.deepEqual(slots, [T0 + PHASE, T0 + PHASE + 3 * TICK_MS, T0 + PHASE + 4 * TICK_MS]);
    assert.deepEqual(skipped, [2]);
  });

  it("auto: an exception goes to onUncaughtException as a TimestepException of setTimestep, and ticking goes on", async () => {
    const room = standInRoom();
    const boom = new Error("boom");
    let n = 0;
    let done!: () => void;
    const third = new Promise<void>((r) => (done = r));
    ticker = startTicker(
      room as unknown as TickedRoom,
      () => {
        n++;
        if (n === 2) throw boom;
        if (n === 3) done();
      },
      { tickMs: TICK_MS, tickPhase: "auto", worldNumber: 1 },
    );
    await third;
    assert.equal(room.exceptions.length, 1);
    const [error, method] = room.exceptions[0]!;
    assert.ok(error instanceof TimestepException);
    assert.equal(error.cause, boom);
    assert.equal(method, "setTimestep");
  });

  it("auto: stop clears the timer and Colyseus's timestep handle; no tick runs after it, even when stopped during a tick", async () => {
    for (const during of [false, true]) {
      const room = standInRoom();
      let ticks = 0;
      let done!: () => void;
      const first = new Promise<void>((r) => (done = r));
      const running = startTicker(
        room as unknown as TickedRoom,
        () => {
          ticks++;
          if (during) running.stop();
          done();
        },
        { tickMs: TICK_MS, tickPhase: "auto", worldNumber: 1 },
      );
      await first;
      if (!during) running.stop();
      assert.equal(running.slot, undefined);
      assert.equal(room._simulationInterval, undefined);
      // A timer set now for two ticks' time: a next tick (due within one) would fire before it.
      await after(2 * TICK_MS);
      assert.equal(ticks, 1, during ? "stopped during the tick" : "stopped between ticks");
    }
  });

  it("off: Colyseus's simulation interval at TICK_MS, cleared by stop", () => {
    const room = standInRoom();
    ticker = startTicker(room as unknown as TickedRoom, () => undefined, { tickMs: TICK_MS, tickPhase: "off", worldNumber: 2 });
    assert.equal(ticker.slot, undefined);
    ticker.stop();
    assert.deepEqual(room.log, [`interval function ${TICK_MS}`, "interval undefined undefined"]);
  });
});
