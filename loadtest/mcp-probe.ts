/**
 * MCP probe (docs/agents.md#measurements): one MCP client on a running server measures the size of
 * `observe` (text and JSON) and the time from a tool call to its result, at rest or while a
 * benchmark loads the server (`npm run bench:world -- --crowd --bots 1000 --runtime tsx`).
 *
 *   npx tsx loadtest/mcp-probe.ts --url http://127.0.0.1:5555 [--calls 40] [--token T] [--at 0,0]
 *
 * Without `--token` it logs in anonymously. It walks to `--at` (the crowd's spawn by default) first.
 */
import { parseArgs } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { pct as nearestRank, round1 } from "./lib/report.js";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: "http://127.0.0.1:5555" },
    calls: { type: "string", default: "40" },
    token: { type: "string" },
    at: { type: "string", default: "0,0" },
  },
});
const url = values.url!;
const calls = Math.max(5, Number(values.calls));

async function token(): Promise<string> {
  if (values.token) return values.token;
  const r = await fetch(`${url}/api/auth/anonymous`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
  if (!r.ok) throw new Error(`anonymous login: ${r.status}`);
  return ((await r.json()) as { token: string }).token;
}

const pct = (xs: number[], p: number) =>
  round1(
    nearestRank(
      [...xs].sort((a, b) => a - b),
      p,
    ),
  );

const transport = new StreamableHTTPClientTransport(new URL("/mcp", url), { requestInit: { headers: { authorization: `Bearer ${await token()}` } } });
const client = new Client({ name: "mcp-probe", version: "1.0.0" });
await client.connect(transport);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const call = async (name: string, args: Record<string, unknown> = {}): Promise<{ ms: number; r: any }> => {
  const t0 = performance.now();
  const r = await client.callTool({ name, arguments: args });
  return { ms: performance.now() - t0, r: r.structuredContent };
};

const [x, z] = values.at!.split(",").map(Number) as [number, number];
const walked = await call("walk", { x, z, run: true });
console.log(`walk to (${x}, ${z}): ${walked.r.outcome} in ${Math.round(walked.ms)} ms`);

const times: Record<string, number[]> = { observe: [], "observe json": [], chat: [], "walk 1 tile": [] };
const sizes = { text: [] as number[], json: [] as number[], players: [] as number[] };
for (let i = 0; i < calls; i++) {
  const o = await call("observe");
  times.observe!.push(o.ms);
  sizes.text.push(String(o.r.observation).length);
  const j = await call("observe", { format: "json" });
  times["observe json"]!.push(j.ms);
  sizes.json.push(String(j.r.observation).length);
  const seen = JSON.parse(j.r.observation);
  sizes.players.push(seen.players.length + (seen.more.players ?? 0));
  times.chat!.push((await call("chat", { text: `probe ${i}` })).ms);
  const here = o.r.status.tile as [number, number];
  const step = await call("walk", { x: here[0] + (i % 2 === 0 ? 1 : -1), z: here[1] });
  if (step.r.outcome === "reached") times["walk 1 tile"]!.push(step.ms);
  await new Promise((r) => setTimeout(r, 100)); // stay far under the flood limit
}
console.log(
  `observe size (characters): text max ${Math.max(...sizes.text)}, json max ${Math.max(...sizes.json)}; players in view up to ${Math.max(...sizes.players)}`,
);
for (const [name, xs] of Object.entries(times))
  console.log(`${name.padEnd(12)} n=${xs.length} p50 ${pct(xs, 50)} ms, p95 ${pct(xs, 95)} ms, max ${pct(xs, 100)} ms`);
await transport.terminateSession().catch(() => undefined);
await client.close();
