/** The refusal table (src/world/refusals.ts) and its documentation agree, both ways. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { REFUSAL, REFUSALS, refusal } from "../../../src/world/refusals.js";

/** The codes in the first column of the table under `heading` (backticked UPPER_SNAKE). */
function documentedCodes(file: string, heading: RegExp): string[] {
  const text = readFileSync(file, "utf8");
  const start = text.search(heading);
  assert.ok(start >= 0, `${file}: no section ${heading}`);
  const rows = text.slice(start).split("\n").slice(1);
  const table = rows.slice(rows.findIndex((l) => l.startsWith("|")));
  const codes: string[] = [];
  for (const line of table) {
    if (!line.startsWith("|")) break;
    const m = /^\|\s*`([A-Z_]+)`/.exec(line);
    if (m) codes.push(m[1]!);
  }
  return codes;
}

describe("world/refusals", () => {
  const codes = Object.keys(REFUSALS).sort();

  it("every code is UPPER_SNAKE, names itself in REFUSAL and has a default text", () => {
    for (const code of codes) {
      assert.match(code, /^[A-Z]+(_[A-Z]+)*$/);
      assert.equal((REFUSAL as Record<string, string>)[code], code);
      assert.ok(REFUSALS[code as keyof typeof REFUSALS].length > 0, code);
    }
    assert.deepEqual(refusal("TOO_FAR"), { code: "TOO_FAR", text: "That is too far away." });
  });

  for (const [file, heading] of [["docs/protocol.md", /^### Refusal codes/m]] as const) {
    it(`${file} lists exactly the codes of the table`, () => assert.deepEqual(documentedCodes(file, heading).sort(), codes));
  }
});
