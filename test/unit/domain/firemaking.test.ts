import assert from "node:assert/strict";
import { loadContent } from "../../../src/content/load.js";
import { FIREMAKING_ERROR, lightLogs, type LogsDef } from "../../../src/domain/firemaking.js";

describe("domain/firemaking lightLogs", () => {
  const oak: LogsDef = { level: 15, xp: 60, burnTicks: 100 };
  const cases: [string, number, LogsDef, { xp: number; burnTicks: number } | string][] = [
    ["below the level", 14, oak, FIREMAKING_ERROR.LEVEL_TOO_LOW],
    ["at the level", 15, oak, { xp: 60, burnTicks: 100 }],
    ["above it", 99, { level: 1, xp: 40, burnTicks: 80 }, { xp: 40, burnTicks: 80 }],
  ];
  for (const [name, level, logs, expected] of cases) {
    it(name, () => {
      const r = lightLogs(level, logs);
      if (typeof expected === "string") assert.equal(!r.ok && r.error.code, expected);
      else assert.deepEqual(r.ok && r.value, expected);
    });
  }
  it("says which level is needed", () => {
    const r = lightLogs(1, oak);
    assert.equal(!r.ok && r.error.message, "You need firemaking level 15 to burn those.");
  });

  it("the shipped logs carry their firemaking table in the item manifests", async () => {
    const content = await loadContent("world/manifests");
    const table = Object.fromEntries([...content.items.values()].filter((i) => i.firemaking).map((i) => [i.id, i.firemaking]));
    assert.deepEqual(table, {
      logs: { level: 1, xp: 40, burnTicks: 100 },
      oak_logs: { level: 15, xp: 60, burnTicks: 100 },
      willow_logs: { level: 30, xp: 90, burnTicks: 100 },
    });
  });
});
