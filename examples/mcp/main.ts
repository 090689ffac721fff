/**
 * `npm run example:mcp -- [--url http://localhost:5555] [--logs 3] [--price 5]`: two scripted agents
 * play through MCP against a running server (`npm start`): chop, bank, trade (docs/agents.md#example).
 */
import { parseArgs } from "node:util";
import { runMcpExample } from "./agents.js";

const { values } = parseArgs({
  options: { url: { type: "string", default: "http://localhost:5555" }, logs: { type: "string", default: "3" }, price: { type: "string", default: "5" } },
});

runMcpExample({ url: values.url!, logs: Number(values.logs), price: Number(values.price) })
  .then((r) => console.log(`done: ${r.logsBanked} logs banked, one log sold for ${r.coinsPaid} coins`))
  .catch((e: Error) => {
    console.error(`example:mcp: ${e.message}`);
    process.exit(1);
  });
