/** The npm scripts run on the Node version the stack needs (package.json engines; STACK-NOTES.md). */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";

describe("Node version of the npm scripts", () => {
  it("runs on Node 22 or later, as package.json's engines field requires (the platform's optional node package puts it on the npm scripts' PATH)", () => {
    const engines: string = JSON.parse(readFileSync("package.json", "utf8")).engines.node;
    const wanted = Number(/>=\s*(\d+)/.exec(engines)![1]);
    const major = Number(process.versions.node.split(".")[0]);
    assert.ok(major >= wanted, `node ${process.version} does not satisfy engines ${engines}`);
  });
});
