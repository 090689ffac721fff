/**
 * MCP clients for tests: the SDK's own `Client` over Streamable HTTP (`/mcp`) or over stdio (the
 * `npm run mcp` proxy started as a process), with `call` answering a tool's structured result.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";

/** A tool's answer: its outcome fields and the status (tests read arbitrary JSON). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type ToolAnswer = Record<string, any> & { outcome: string; status: Record<string, any> };

export interface McpJoin {
  token: string;
  characterId?: string;
  world?: number;
  /** Connect through the stdio proxy (`src/mcp/stdio.ts`) instead of Streamable HTTP. */
  stdio?: boolean;
}

/** An MCP client playing one character. */
export class McpAgent {
  private constructor(
    readonly client: Client,
    readonly transport: Transport,
  ) {}

  static async connect(url: string, join: McpJoin): Promise<McpAgent> {
    const q = new URLSearchParams();
    if (join.characterId) q.set("characterId", join.characterId);
    if (join.world !== undefined) q.set("world", String(join.world));
    const endpoint = `${url}/mcp${q.size ? `?${q}` : ""}`;
    const transport: Transport = join.stdio
      ? new StdioClientTransport({
          command: process.execPath,
          args: ["--import", "tsx", "src/mcp/stdio.ts", "--url", url, "--token", join.token, ...(join.characterId ? ["--character", join.characterId] : [])],
          stderr: "pipe",
        })
      : new StreamableHTTPClientTransport(new URL(endpoint), { requestInit: { headers: { authorization: `Bearer ${join.token}` } } });
    const client = new Client({ name: "realm-test", version: "1.0.0" });
    await client.connect(transport);
    return new McpAgent(client, transport);
  }

  /** Call a tool and return its structured result. */
  async call(name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const r = await this.client.callTool({ name, arguments: args });
    if (r.structuredContent) return r.structuredContent as ToolAnswer;
    const text = (r.content as { type: string; text: string }[])[0]?.text ?? "";
    return { outcome: r.isError ? "error" : "text", text, status: {} };
  }

  /** A resource's JSON content. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async resource(uri: string): Promise<any> {
    const c = (await this.client.readResource({ uri })).contents[0]!;
    return JSON.parse("text" in c ? c.text : "null");
  }

  /** The raw result of a tool call (content, isError). */
  raw(name: string, args: unknown) {
    return this.client.callTool({ name, arguments: args as Record<string, unknown> });
  }

  async close(): Promise<void> {
    if (this.transport instanceof StreamableHTTPClientTransport) await this.transport.terminateSession().catch(() => undefined);
    await this.client.close().catch(() => undefined);
  }
}
