/**
 * src/storage/batches.ts: a call that finds no batch in flight runs at once, by itself; calls made
 * while one is in flight go together as the next, in the order asked, at most `max` at a time; a
 * batch in flight past `holdMs` no longer holds the next back; a key's Error fails that call alone,
 * a run that throws fails its batch only; `uniqueRounds` never puts a key twice in one round.
 */
import assert from "node:assert/strict";
import { batchedInFlight, uniqueRounds } from "../../../src/storage/batches.js";

/** A run whose batches the test answers when it chooses. */
function controlled<V>() {
  const runs: { keys: readonly string[]; answer: (values: readonly (V | Error)[]) => void; fail: (e: Error) => void }[] = [];
  let ran: () => void = () => undefined;
  const run = (keys: readonly string[]) =>
    new Promise<readonly (V | Error)[]>((answer, fail) => {
      runs.push({ keys, answer, fail });
      ran();
    });
  /** Resolves once `n` batches have started. */
  const started = (n: number) =>
    new Promise<void>((resolve) => {
      const check = () => (runs.length >= n ? resolve() : (ran = check));
      check();
    });
  return { runs, run, started };
}

describe("storage/batches", () => {
  it("a lone call runs at once, by itself", async () => {
    const c = controlled<number>();
    const one = batchedInFlight(c.run);
    const answer = one("a");
    await c.started(1);
    assert.deepEqual(c.runs[0]!.keys, ["a"]);
    c.runs[0]!.answer([1]);
    assert.equal(await answer, 1);
  });

  it("calls made while a batch is in flight wait for it, then go together in the order asked", async () => {
    const c = controlled<string>();
    // Held as long as the test needs (never past the hold on a loaded machine).
    const one = batchedInFlight(c.run, { holdMs: 60_000 });
    const first = one("a");
    await c.started(1);
    const later = ["b", "c", "b", "d"].map((k) => one(k));
    // Many turns of the event loop: nothing more runs while the first batch is in flight.
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(c.runs.length, 1);
    c.runs[0]!.answer(["A"]);
    await c.started(2);
    assert.deepEqual(c.runs[1]!.keys, ["b", "c", "b", "d"], "asked twice, passed twice");
    c.runs[1]!.answer(["B1", "C", "B2", "D"]);
    assert.deepEqual(await Promise.all([first, ...later]), ["A", "B1", "C", "B2", "D"]);
  });

  it("at most max keys in one run", async () => {
    const c = controlled<number>();
    const one = batchedInFlight(c.run, { max: 2 });
    const first = one("a");
    await c.started(1);
    const later = ["b", "c", "d"].map((k) => one(k));
    c.runs[0]!.answer([0]);
    await c.started(3);
    assert.deepEqual(
      c.runs.slice(1).map((r) => r.keys),
      [["b", "c"], ["d"]],
    );
    c.runs[1]!.answer([1, 2]);
    c.runs[2]!.answer([3]);
    assert.deepEqual(await Promise.all([first, ...later]), [0, 1, 2, 3]);
  });

  it("a batch in flight past holdMs no longer holds the next back; its own calls still wait for it", async () => {
    const c = controlled<number>();
    const one = batchedInFlight(c.run, { holdMs: 5 });
    const stuck = one("stuck");
    await c.started(1);
    const next = one("b");
    // Not answered: the next batch goes once the hold is over.
    await c.started(2);
    assert.deepEqual(c.runs[1]!.keys, ["b"]);
    c.runs[1]!.answer([2]);
    assert.equal(await next, 2);
    c.runs[0]!.answer([1]);
    assert.equal(await stuck, 1);
  });

  it("a key's Error fails that call alone; a run that throws fails its batch, and the next batch runs", async () => {
    const c = controlled<number>();
    const one = batchedInFlight(c.run);
    const first = one("a");
    await c.started(1);
    const [b, bad] = [one("b"), one("bad")];
    c.runs[0]!.fail(new Error("connection lost"));
    await assert.rejects(first, /connection lost/);
    await c.started(2);
    c.runs[1]!.answer([2, new Error("no such key")]);
    assert.equal(await b, 2);
    await assert.rejects(bad, /no such key/);
    const after = one("c");
    await c.started(3);
    c.runs[2]!.answer([3]);
    assert.equal(await after, 3);
  });

  it("uniqueRounds: no key twice in a round; first occurrences first, each round in the order given", () => {
    assert.deepEqual(
      uniqueRounds(["a", "b", "a", "c", "a", "b"], (k) => k),
      [[0, 1, 3], [2, 5], [4]],
    );
    assert.deepEqual(
      uniqueRounds([], (k: string) => k),
      [],
    );
  });
});
