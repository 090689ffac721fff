/**
 * `npm run example:mcp` (examples/mcp/): the two scripted MCP agents against a real server chop,
 * bank and trade; the stored bank and inventories say so.
 */
import assert from "node:assert/strict";
import { runMcpExample } from "../../../examples/mcp/agents.js";
import type { GameServer } from "../../../src/server/server.js";
import { startTestServer } from "../../helpers/server.js";

describe("example: scripted MCP agents", function () {
  this.timeout(90_000);
  let server: GameServer;
  before(async () => {
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  });
  after(async () => server?.close());

  it("chop, bank and trade through MCP", async () => {
    const lines: string[] = [];
    // Logs in every bank of the database (earlier suites may have left some): the run adds 2.
    const bankedLogs = async () =>
      Number(
        (await server.storage.orm.em.fork().getConnection().execute("select coalesce(sum(quantity), 0)::int as n from bank_items where item_id = 'logs'"))[0].n,
      );
    const before = await bankedLogs();
    const r = await runMcpExample({ url: server.url, logs: 3, price: 7, log: (l) => lines.push(l) });
    assert.equal(r.logsBanked, 2, lines.join("\n"));
    assert.equal((await bankedLogs()) - before, 2);
    assert.ok(lines.some((l) => /both accepted the confirm screen/.test(l)));
  });
});
