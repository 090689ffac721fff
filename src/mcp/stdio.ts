/**
 * `npm run mcp -- --url http://localhost:5555 --token <token> [--character <id>] [--world <n>]`:
 * an MCP server over stdio for clients that start servers as processes (desktop assistants, agent
 * frameworks). It is a proxy: every JSON-RPC message goes unchanged to the running game server's
 * Streamable HTTP endpoint `/mcp` with the token as `Authorization: Bearer`, and every answer and
 * notification comes back, so the tools, limits and refusals are exactly those of `/mcp`
 * (docs/agents.md#connecting). Nothing is written to stdout but protocol messages; notes go to stderr.
 */
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The `/mcp` URL of a game server for a character and world (both optional). */
export function mcpUrl(base: string, character?: string, world?: string): URL {
  const url = new URL("/mcp", base);
  if (character) url.searchParams.set("characterId", character);
  if (world) url.searchParams.set("world", world);
  return url;
}

/** Run the proxy until stdin closes or the server ends the session. */
export async function runStdioProxy(o: { url: string; token: string; character?: string; world?: string }): Promise<void> {
  const upstream = new StreamableHTTPClientTransport(mcpUrl(o.url, o.character, o.world), { requestInit: { headers: { authorization: `Bearer ${o.token}` } } });
  const local = new StdioServerTransport();
  let closing = false;
  const close = async () => {
    if (closing) return;
    closing = true;
    await upstream.terminateSession().catch(() => undefined);
    await upstream.close().catch(() => undefined);
    await local.close().catch(() => undefined);
    process.exit(0);
  };
  upstream.onmessage = (m) => void local.send(m).catch(() => undefined);
  upstream.onerror = (e) => process.stderr.write(`mcp proxy: ${e.message}\n`);
  upstream.onclose = () => void close();
  local.onmessage = (m: JSONRPCMessage) => {
    upstream.send(m).catch((e: Error) => {
      process.stderr.write(`mcp proxy: ${e.message}\n`);
      // A request the server did not answer gets an error answer, so the client is not left waiting.
      if ("id" in m && "method" in m)
        void local.send({ jsonrpc: "2.0", id: m.id, error: { code: -32000, message: e.message.slice(0, 300) } }).catch(() => undefined);
    });
  };
  local.onclose = () => void close();
  process.stdin.on("end", () => void close());
  await upstream.start();
  await local.start();
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({
    options: { url: { type: "string", default: "http://localhost:5555" }, token: { type: "string" }, character: { type: "string" }, world: { type: "string" } },
  });
  const token = values.token ?? "";
  if (!token) {
    process.stderr.write("usage: npm run mcp -- --url http://localhost:5555 --token <token> [--character <id>] [--world <n>]\n");
    process.exit(2);
  }
  void runStdioProxy({ url: values.url!, token, character: values.character, world: values.world });
}
