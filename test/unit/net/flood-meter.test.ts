import assert from "node:assert/strict";
import { FloodMeter } from "../../../src/net/flood.js";
import { FLOOD_SECONDS_BEFORE_CLOSE, MAX_MESSAGES_PER_SECOND } from "../../../src/events.js";

/** A meter on a clock the test moves. */
function meter(limit = MAX_MESSAGES_PER_SECOND, closeAfter = FLOOD_SECONDS_BEFORE_CLOSE) {
  const clock = { t: 10_000 };
  return { clock, m: new FloodMeter(limit, closeAfter, () => clock.t) };
}

/** Send `n` messages spread evenly over one second starting now; returns how many were dropped. */
function second(f: ReturnType<typeof meter>, n: number): { dropped: number; closeAt: number | undefined } {
  let dropped = 0;
  let closeAt: number | undefined;
  const start = f.clock.t;
  for (let i = 0; i < n; i++) {
    f.clock.t = start + Math.floor((i * 1000) / n);
    if (f.m.count()) {
      dropped++;
      if (closeAt === undefined && f.m.shouldClose()) closeAt = i;
    }
  }
  f.clock.t = start + 1000;
  return { dropped, closeAt };
}

describe("net/flood FloodMeter", () => {
  it("the contract's numbers: 60 per second, closed after 3 seconds of flooding", () => {
    assert.equal(MAX_MESSAGES_PER_SECOND, 60);
    assert.equal(FLOOD_SECONDS_BEFORE_CLOSE, 3);
  });

  it("lets 60 messages in one second through and drops the 61st", () => {
    const f = meter();
    for (let i = 0; i < 60; i++) assert.equal(f.m.count(), false, `message ${i + 1}`);
    assert.equal(f.m.count(), true);
    assert.equal(f.m.shouldClose(), false);
  });

  it("a new one-second window starts fresh", () => {
    const f = meter();
    for (let i = 0; i < 61; i++) f.m.count();
    f.clock.t += 1000;
    assert.equal(f.m.count(), false);
  });

  it("one burst of 70 drops 10 and never asks to close", () => {
    const f = meter();
    const r = second(f, 70);
    assert.equal(r.dropped, 10);
    assert.equal(r.closeAt, undefined);
    // Back to a normal rate: nothing dropped, nothing closed.
    for (let s = 0; s < 5; s++) assert.deepEqual(second(f, 10), { dropped: 0, closeAt: undefined });
  });

  it("100 per second asks to close during the third flooded second, not before", () => {
    const f = meter();
    assert.equal(second(f, 100).closeAt, undefined, "first second");
    assert.equal(second(f, 100).closeAt, undefined, "second second");
    const third = second(f, 100);
    assert.equal(third.closeAt, 60, "the first excess message of the third second");
  });

  it("flooding seconds must be consecutive: a quiet second resets the run", () => {
    const f = meter();
    second(f, 100);
    second(f, 100);
    second(f, 5);
    assert.equal(second(f, 100).closeAt, undefined);
    assert.equal(second(f, 100).closeAt, undefined);
    assert.notEqual(second(f, 100).closeAt, undefined);
  });

  it("a gap longer than a window breaks the run", () => {
    const f = meter();
    second(f, 100);
    second(f, 100);
    f.clock.t += 5_000; // silence
    assert.equal(second(f, 100).closeAt, undefined);
  });

  it("honours a custom limit and close delay", () => {
    const f = meter(5, 1);
    for (let i = 0; i < 5; i++) assert.equal(f.m.count(), false);
    assert.equal(f.m.count(), true);
    assert.equal(f.m.shouldClose(), true);
  });
});
