/**
 * One MCP session's server (docs/agents.md): the tools of `tools-*.ts` over the session's player,
 * each answer carrying how the action ended and the player's short status, and the resources
 * `game://character`, `game://inventory`, `game://skills` and `game://world/areas`, whose
 * subscribers are notified (`notifications/resources/updated`) when a `player:sync` changes them.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { GameContent } from "../content/load.js";
import type { Logger } from "../logger.js";
import { VERSION } from "../http/app.js";
import { statusOf, type Outcome } from "./outcome.js";
import type { GameSession } from "./session.js";
import { AGENT_TOOLS } from "./tools-agent.js";
import { SESSION_TOOLS } from "./tools-session.js";
import { TRADE_TOOLS } from "./tools-trade.js";
import { WORLD_TOOLS } from "./tools-world.js";
import type { ToolContext, ToolDef } from "./tools.js";

/** Every tool, in the order `tools/list` gives them. */
export const MCP_TOOLS: readonly ToolDef[] = [...SESSION_TOOLS, ...WORLD_TOOLS, ...TRADE_TOOLS, ...AGENT_TOOLS];

/** What a tool answers: the outcome and the status, as JSON text and as structured content. */
export function toolResult(session: GameSession, o: Outcome): CallToolResult {
  const result = { ...o, status: statusOf(session) };
  const text = typeof o.observation === "string" ? o.observation : JSON.stringify(result);
  return { content: [{ type: "text", text }], structuredContent: result, isError: o.outcome === "refused" };
}

/** The resources a session offers, each read from the player's latest private state. */
function resources(session: GameSession, content: GameContent): Record<string, { name: string; description: string; read(): unknown }> {
  const me = () => session.me!;
  const itemName = (id: string) => content.items.get(id)?.name ?? id;
  return {
    "game://character": {
      name: "character",
      description: "Who you are: name, id, tile, health, combat level, coins, goal and pause, trade flag",
      read: () => {
        const m = me();
        return {
          id: m.id,
          name: m.name,
          isAgent: m.isAgent,
          position: m.position,
          health: m.health,
          maxHealth: m.maxHealth,
          combatLevel: m.combatLevel,
          coins: m.coins,
          goal: m.goal,
          goalsPaused: m.goalsPaused,
          inTrade: m.inTrade,
        };
      },
    },
    "game://inventory": {
      name: "inventory",
      description: "Inventory slots (28), worn equipment, coins and bank, with item names",
      read: () => {
        const m = me();
        return {
          inventory: m.inventory.map((i) => ({ ...i, name: itemName(i.itemId) })),
          freeSlots: 28 - m.inventory.length,
          equipment: m.equipment,
          coins: m.coins,
          bank: m.bank,
        };
      },
    },
    "game://skills": { name: "skills", description: "Level and XP of every skill", read: () => ({ combatLevel: me().combatLevel, skills: me().skills }) },
    "game://world/areas": {
      name: "world areas",
      description: "The world's areas: id, name, bounds, safe zone, PvP",
      read: () => content.areas.map((a) => ({ id: a.id, name: a.name, description: a.description, bounds: a.bounds, safeZone: a.safeZone, pvp: a.pvp })),
    },
  };
}

/** Build the MCP server of one session; `ctx` is what its tools work with. */
export function sessionServer(ctx: ToolContext, logger: Logger): McpServer {
  const { session } = ctx;
  const mcp = new McpServer(
    { name: "realm-server", version: VERSION },
    {
      capabilities: { resources: { subscribe: true } },
      instructions:
        "You play one character of a RuneScape-like world. Call observe first; every tool answers with an outcome and your status. " +
        "Ids come from observe. Long actions answer in_progress with a handle to poll. While status.paused is true, only observe, chat, friends and goal_get work.",
    },
  );
  for (const def of MCP_TOOLS) {
    mcp.registerTool(def.name, { title: def.title, description: def.description, inputSchema: def.input }, async (args: Record<string, unknown>) => {
      if (session.closed)
        return toolResult(session, {
          outcome: "refused",
          code: "DISCONNECTED",
          detail: `the world closed this player's connection: ${session.closed.code} ${session.closed.reason}`,
        });
      if (def.acts && session.me?.goalsPaused) {
        return toolResult(session, {
          outcome: "refused",
          code: "GOALS_PAUSED",
          detail: "your owner paused your goals (goal/stop): observe, chat and wait for resume",
        });
      }
      try {
        return toolResult(session, await def.run(ctx, args));
      } catch (e) {
        logger.error({ err: e, tool: def.name }, "mcp: tool failed");
        return toolResult(session, { outcome: "refused", code: "INTERNAL", detail: "the tool failed; nothing more is known" });
      }
    });
  }

  const all = resources(session, ctx.content);
  const subscribed = new Map<string, string>();
  for (const [uri, r] of Object.entries(all)) {
    mcp.registerResource(r.name, uri, { description: r.description, mimeType: "application/json" }, () => ({
      contents: [{ uri, mimeType: "application/json", text: JSON.stringify(r.read()) }],
    }));
  }
  mcp.server.setRequestHandler(SubscribeRequestSchema, (req) => {
    const r = all[req.params.uri];
    if (r) subscribed.set(req.params.uri, JSON.stringify(r.read()));
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, (req) => {
    subscribed.delete(req.params.uri);
    return {};
  });
  // A subscribed resource whose content changed with an event is announced once.
  session.onChange(() => {
    for (const [uri, before] of subscribed) {
      const now = JSON.stringify(all[uri]!.read());
      if (now === before) continue;
      subscribed.set(uri, now);
      mcp.server.sendResourceUpdated({ uri }).catch(() => undefined);
    }
  });
  return mcp;
}
