/**
 * Two scripted agents that play through MCP with no language model (docs/agents.md#example):
 * each logs in anonymously, opens an MCP session over Streamable HTTP with the official SDK client,
 * and follows a fixed policy. The woodcutter chops `logs` logs, walks to the bank, deposits all but
 * one, and trades that log to the buyer for coins; the buyer walks to the bank and answers the
 * request. Every step logs the tool's outcome and status. It imports no server code.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

/** A tool's answer: how it ended, and the player's status. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = Record<string, any> & { outcome: string };

export interface ExampleOptions {
  url: string;
  /** Logs the woodcutter chops before banking (1 to 20). */
  logs?: number;
  /** Coins the buyer pays for the log. */
  price?: number;
  log?: (line: string) => void;
}

/** One MCP player: its client and a `call` that answers the structured result. */
class McpPlayer {
  private constructor(
    readonly name: string,
    readonly client: Client,
    readonly transport: StreamableHTTPClientTransport,
    private readonly log: (line: string) => void,
  ) {}

  static async login(url: string, name: string, log: (line: string) => void): Promise<McpPlayer> {
    const res = await fetch(`${url}/api/auth/anonymous`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ name }) });
    if (!res.ok) throw new Error(`${name}: anonymous login failed: ${res.status}`);
    const { token } = (await res.json()) as { token: string };
    const transport = new StreamableHTTPClientTransport(new URL("/mcp", url), { requestInit: { headers: { authorization: `Bearer ${token}` } } });
    const client = new Client({ name: `example-${name}`, version: "1.0.0" });
    await client.connect(transport);
    return new McpPlayer(name, client, transport, log);
  }

  async call(tool: string, args: Record<string, unknown> = {}): Promise<Answer> {
    const r = await this.client.callTool({ name: tool, arguments: args });
    const a = (r.structuredContent ?? { outcome: "error", detail: JSON.stringify(r.content) }) as Answer;
    const extra = a.code ? ` ${a.code}` : a.by ? ` by ${a.by}` : "";
    this.log(
      `${this.name}: ${tool} ${JSON.stringify(args)} -> ${a.outcome}${extra}${a.detail ? ` (${a.detail})` : ""}; at ${a.status?.tile}, ${a.status?.freeSlots} free`,
    );
    return a;
  }

  /** What observe sees, as JSON. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async look(): Promise<any> {
    return JSON.parse((await this.call("observe", { format: "json", perKind: 12 })).observation as string);
  }

  async inventory(): Promise<{ slot: number; itemId: string; quantity: number }[]> {
    const c = (await this.client.readResource({ uri: "game://inventory" })).contents[0]!;
    return (JSON.parse("text" in c ? c.text : "{}") as { inventory: { slot: number; itemId: string; quantity: number }[] }).inventory;
  }

  async close() {
    await this.transport.terminateSession().catch(() => undefined);
    await this.client.close();
  }
}

const must = (a: Answer, ...ok: string[]) => {
  if (!ok.includes(a.outcome)) throw new Error(`expected ${ok.join(" or ")}, got ${JSON.stringify(a)}`);
  return a;
};

/** Chop, bank, trade. Resolves with what the trade moved. */
export async function runMcpExample(o: ExampleOptions): Promise<{ logsBanked: number; coinsPaid: number }> {
  const log = o.log ?? ((l: string) => console.log(l));
  const want = Math.min(Math.max(o.logs ?? 3, 1), 20);
  const price = o.price ?? 5;
  const suffix = Math.random().toString(36).slice(2, 6);
  const cutter = await McpPlayer.login(o.url, `Cutter${suffix}`, log);
  const buyer = await McpPlayer.login(o.url, `Buyer${suffix}`, log);
  try {
    // 1. The woodcutter walks to the trees west of town and chops.
    const me = (await cutter.look()).self;
    log(`${cutter.name} is ${me.name} (${me.id}) at ${me.tile}`);
    must(await cutter.call("walk", { x: -16, z: -2, run: true }), "reached", "blocked");
    let chopped = 0;
    while (chopped < want) {
      const tree = (await cutter.look()).resources.find((r: { info: string; can: string[] }) => /woodcutting/.test(r.info) && r.can.includes("gather"));
      if (!tree) throw new Error("no standing tree in view");
      const r = must(await cutter.call("gather", { targetId: tree.id, count: want - chopped }), "completed", "target_gone", "inventory_full");
      chopped += Number(r.gained ?? 0);
      if (r.outcome === "inventory_full") break;
    }
    // 2. To the bank booth; deposit all logs but one (of the ones wanted: a gather that stops as a
    // log comes in may bring one more, which stays in the inventory).
    must(await cutter.call("walk_to", { targetId: "lumbrook_bank_booth", run: true }), "reached");
    const logsSlot = (await cutter.inventory()).find((i) => i.itemId === "logs")!.slot;
    const banking = Math.min(chopped, want) - 1;
    if (banking > 0) must(await cutter.call("bank_deposit", { slot: logsSlot, quantity: banking }), "completed");
    // 3. The buyer comes to the bank too; the woodcutter asks to trade.
    const buyerId = (await buyer.look()).self.id as string;
    must(await buyer.call("walk_to", { targetId: "lumbrook_bank_booth", run: true }), "reached");
    await buyer.call("chat", { text: `I'll buy a log for ${price} coins` });
    const asked = must(await cutter.call("trade_request", { targetPlayerId: buyerId, wait: 0 }), "in_progress", "completed");
    const tradeId = /request (\S+) from/.exec(String((await buyer.call("observe")).status.trade))?.[1];
    if (!tradeId) throw new Error("the buyer saw no trade request");
    must(await buyer.call("trade_respond", { tradeId, accept: true }), "completed");
    if (asked.outcome === "in_progress") must(await cutter.call("poll", { handle: asked.handle }), "completed");
    const slot = (await cutter.inventory()).find((i) => i.itemId === "logs")!.slot;
    must(await cutter.call("trade_offer", { tradeId, inventorySlot: slot, quantity: 1 }), "completed");
    must(await buyer.call("trade_offer", { tradeId, coins: price }), "completed");
    // Offer screen, then the confirmation screen: both accept each (in parallel: each waits for the other).
    for (const screen of ["offer", "confirm"]) {
      const [a, b] = await Promise.all([cutter.call("trade_accept", { tradeId }), buyer.call("trade_accept", { tradeId })]);
      must(a, "completed");
      must(b, "completed");
      log(`both accepted the ${screen} screen`);
    }
    return { logsBanked: Math.max(Math.min(chopped, want) - 1, 0), coinsPaid: price };
  } finally {
    await cutter.close().catch(() => undefined);
    await buyer.close().catch(() => undefined);
  }
}
