/**
 * src/storage/json-text.ts, the writer of the batched progress save's rows (docs/persistence.md
 * "Batched saves"): what it writes is, character for character, what `JSON.stringify` writes for
 * the same objects — numbers of every kind, strings that need escaping or are not ASCII, null,
 * booleans, objects and dates, fields without JSON left out — and it holds across texts that grow
 * its buffer and texts written one after the other.
 */
import assert from "node:assert/strict";
import { JsonText, jsonKey } from "../../../src/storage/json-text.js";

/** `rows` through the writer: a JSON array of objects, each field by its key. */
function written(w: JsonText, rows: readonly Record<string, unknown>[]): string {
  w.begin();
  w.punct("[");
  rows.forEach((row, i) => {
    if (i > 0) w.punct(",");
    w.punct("{");
    for (const [name, v] of Object.entries(row)) w.field(jsonKey(name), v);
    w.punct("}");
  });
  w.punct("]");
  return w.text();
}

const NUMBERS = [0, -0, 1, -1, 7, 10, 99, 100, 12_345, -98_765, 2 ** 31, -(2 ** 31), 200_000_000, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER];
const OTHER_NUMBERS = [0.5, -3.25, 1e-7, 1.5e300, 2 ** 53, 2 ** 53 + 2, 1e21, -1e21, Number.MAX_VALUE, Number.MIN_VALUE, NaN, Infinity, -Infinity];
const STRINGS = [
  "",
  "plain ascii, with spaces ~ and !#$%&'()*+,-./:;<=>?@[]^_`{|}",
  'a "quote"',
  "a back\\slash",
  "new\nline, tab\t, return\r, bell\u0007, nul\u0000, unit\u001f, del\u007f",
  "é ü ß ñ — “curly” 漢字",
  "emoji 🎉 and a lone surrogate \ud800 and another \udfff",
  "</script>",
  "x".repeat(70_000), // past the first buffer
];

describe("storage/json-text", () => {
  it("writes numbers as JSON.stringify does: whole ones as digits, others as String gives them, NaN and infinities as null", () => {
    const w = new JsonText();
    for (const n of [...NUMBERS, ...OTHER_NUMBERS]) {
      const row = { n };
      assert.equal(written(w, [row]), JSON.stringify([row]), String(n));
    }
  });

  it("writes strings as JSON.stringify escapes them, ASCII or not", () => {
    const w = new JsonText();
    for (const s of STRINGS) {
      const row = { s, after: 1 };
      assert.equal(written(w, [row]), JSON.stringify([row]), s.slice(0, 40));
    }
    // Non-ASCII early in a text, ASCII after it: the whole text is read back as UTF-8.
    const rows = [{ s: "é" }, { s: "plain" }];
    assert.equal(written(w, rows), JSON.stringify(rows));
  });

  it("writes null, booleans, objects and dates as JSON.stringify does, and leaves out fields without JSON", () => {
    const w = new JsonText();
    const goal = { id: 'g "1"', type: "gather", description: "it's é", progress: 3, nested: { a: [1, null, "x"] } };
    const rows: Record<string, unknown>[] = [
      { id: "first", goal, paused: true, other: false, none: null, at: new Date(1_234_567_890_123) },
      { gone: undefined, id: "second", fn: () => 1, sym: Symbol("s"), noJson: { toJSON: () => undefined }, last: 0 },
      { gone: undefined },
      {},
    ];
    assert.equal(written(w, rows), JSON.stringify(rows));
  });

  it("keeps the JSON of an object value for its key between rows of one text (`memo`), and writes another value afresh", () => {
    const w = new JsonText();
    const now = new Date(5_000);
    const memo = { value: undefined as unknown, text: "" };
    const key = jsonKey("at");
    w.begin();
    w.punct("[");
    for (const at of [now, now, new Date(6_000), null]) {
      w.punct("{");
      w.field(key, at, memo);
      w.punct("}");
      w.punct(",");
    }
    w.punct("{");
    w.punct("}");
    w.punct("]");
    assert.equal(w.text(), JSON.stringify([{ at: now }, { at: now }, { at: new Date(6_000) }, { at: null }, {}]));
  });

  it("writes many rows, one text after another, each as JSON.stringify would", () => {
    const w = new JsonText();
    for (let round = 0; round < 3; round++) {
      const rows = Array.from({ length: 300 }, (_, i) => ({
        id: `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`,
        x: (i % 40) - 20 + round,
        y: 10 + i / 4,
        xp: i * 1_234_567,
        goal: i % 3 === 0 ? null : { description: `goal "${i}" ${i % 5 === 0 ? "é" : ""}`, progress: i },
        paused: i % 2 === 0,
        owner: i % 7 === 0 ? null : "proc-a",
        epoch: String(1_000 + i),
      }));
      assert.equal(written(w, rows), JSON.stringify(rows), `round ${round}`);
    }
  });
});
