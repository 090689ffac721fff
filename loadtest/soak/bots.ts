/**
 * The soak's bots (loadtest/trade/bot.ts, half on the plain WebSocket, half on the SDK): joining as
 * admin with feathers and coins, teleporting home, where they stand, the NPCs and resources SDK bots
 * see (the plain-WebSocket bots borrow their ids), and reconnecting.
 */
import type { GameContent } from "../../src/content/load.js";
import type { Tile } from "../bot.js";
import { withTimeout } from "../lib/cli.js";
import { LOAD_ADMIN_CODE, loadToken } from "../lib/tokens.js";
import { Bot } from "../trade/bot.js";
import { rng } from "./options.js";
import { completedTrades, countFailure, stats } from "./stats.js";

export interface SoakBot {
  n: number;
  bot: Bot;
  token: string;
  home: Tile;
  busy: boolean;
  /** performance.now() of the last move or teleport sent, and of the last `player:sync` received. */
  movedAt: number;
  syncedAt: number;
  deaths: number;
}

export function watch(b: SoakBot) {
  b.bot.on("player:sync", () => (b.syncedAt = performance.now()));
  b.bot.on("tradeCompleted", (d) => typeof d?.tradeId === "string" && completedTrades.add(d.tradeId));
  b.bot.on("chat:message", (d) => {
    if (d?.type === "system" && /you are dead/i.test(d.text)) {
      b.deaths++;
      stats.deaths++;
    }
  });
}

export async function connectBot(n: number, home: Tile, url: string): Promise<SoakBot> {
  const token = loadToken(`soak-${n}-${Date.now()}`);
  const bot = await Bot.connect({ url, token, transport: n % 2 === 0 ? "json" : "sdk" });
  stats.joins++;
  const b: SoakBot = { n, bot, token, home, busy: false, movedAt: performance.now(), syncedAt: performance.now(), deaths: 0 };
  watch(b);
  await bot.command(`/admin ${LOAD_ADMIN_CODE}`, /Admin mode enabled/, 30_000);
  await bot.command(`/give feather 500`, /^Gave/, 30_000);
  await bot.command(`/coins 100000`, /Coins set/, 30_000);
  await teleport(b, home);
  return b;
}

export async function teleport(b: SoakBot, t: Tile) {
  b.movedAt = performance.now();
  await b.bot.command(`/tp ${t.x} ${t.z}`, /Teleported|Usage: \/tp|Not while trading|dead/i, 20_000);
}

/** Where the bot is: the SDK's synchronised state, else its last sync. */
export function position(b: SoakBot): Tile {
  const me = b.bot.sdkState?.players?.get?.(b.bot.id);
  if (me) return { x: me.x, z: me.z };
  const p = b.bot.state?.position;
  return p ? { x: Math.round(p.x), z: Math.round(p.z) } : b.home;
}

/** NPCs and resources some SDK bot sees (the plain-WebSocket bots borrow these ids). */
export const seen = new Map<string, { kind: "npc" | "resource"; x: number; z: number; aggressive: boolean; at: number }>();
export function learn(b: SoakBot, content: GameContent) {
  const st = b.bot.sdkState;
  if (!st) return;
  const now = performance.now();
  st.npcs?.forEach?.((v: any, id: string) => seen.set(id, { kind: "npc", x: v.x, z: v.z, aggressive: !!content.npcs.get(v.npcId)?.aggressive, at: now }));
  st.resources?.forEach?.((v: any, id: string) => !v.depleted && seen.set(id, { kind: "resource", x: v.x, z: v.z, aggressive: false, at: now }));
}
export function nearest(at: Tile, kind: "npc" | "resource", within: number): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const [id, e] of seen) {
    if (e.kind !== kind || e.aggressive) continue;
    const d = Math.max(Math.abs(e.x - at.x), Math.abs(e.z - at.z));
    if (d <= within && d < bestD) [best, bestD] = [id, d];
  }
  return best;
}

export async function ensureConnected(b: SoakBot) {
  if (b.bot.connected) return;
  try {
    await withTimeout(b.bot.reconnect(), 30_000, "reconnect");
    stats.reconnects.afterServerClose++;
  } catch (e) {
    countFailure(e, "reconnect");
  }
}

export async function reconnect(b: SoakBot) {
  if (b.bot.transport === "sdk" && rng() < 0.5) {
    await b.bot.resume();
    stats.reconnects.sdkResume++;
  } else {
    await b.bot.close();
    await b.bot.reconnect();
    if (b.bot.transport === "sdk") stats.reconnects.sdkFresh++;
    else stats.reconnects.json++;
  }
}

/** The first free tile in rings around `t` (up to 5 tiles out), else `t`. */
export function freeNear(content: GameContent, t: Tile): Tile {
  for (let r = 0; r < 6; r++)
    for (let dx = -r; dx <= r; dx++)
      for (let dz = -r; dz <= r; dz++) {
        const x = t.x + dx;
        const z = t.z + dz;
        if (content.inBounds(x, z) && !content.isBlocked(x, z)) return { x, z };
      }
  return t;
}
