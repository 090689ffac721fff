/**
 * Soak run (`npm run soak`), outside CI: the compiled server (`dist/`, as `npm run build` makes it)
 * on PostgreSQL, driven for a long time by bots that mix everything players do, then checked.
 *
 *   npm run soak -- [--bots 300] [--minutes 10] [--db postgres://…/soak] [--json out.json]
 *                   [--save-interval 10] [--seed 1]
 *
 * The database named by `--db` (default postgres://postgres@127.0.0.1:5432/soak) is DROPPED and
 * created again; its name must contain "soak" so a real or shared database is never touched.
 *
 * Bots (loadtest/trade/bot.ts, half on the plain WebSocket, half on the Colyseus SDK, which may
 * only `join` the world room) walk, chat, fight and gather near non-aggressive NPCs, trade in
 * pairs (most complete, some are declined or cancelled), walk into the PvP Ashlands to die there
 * (bandits and other dying bots kill them: real deaths), drop and come back (SDK reconnection with
 * the reconnection token, fresh SDK joins, new plain sockets), and now and then send hostile
 * payloads on both transports and bad REST bodies.
 *
 * Checks (each PASS/FAIL; the process exits 1 on any FAIL): no 5xx seen by any bot; the server did
 * not crash and exits 0 on SIGTERM; no "uncaught"/"unhandled" or error-level line in its output;
 * every trade a bot saw completed has exactly one audit row, with outcome completed; no stored
 * quantity below 1 or above its stack cap, no negative coins; storage equal to each bot's last
 * `player:sync` (see `storageMatchesSync`); RSS growth under 10 % over the second half of the run.
 */
import { spawnSync } from "node:child_process";
import { cpSync, createWriteStream, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { signServerToken } from "../src/auth/tokens.js";
import { loadContent, type GameContent } from "../src/content/load.js";
import { MAX_STACK } from "../src/domain/types.js";
import { openStorage } from "../src/storage/orm.js";
import { seededRng, withTimeout, type Tile } from "./bot.js";
import { buildDist, PROD_NODE_OPTIONS, ROOT, startLoadServer, type LoadServer } from "./server.js";
import { Bot, tradeOnce } from "./trade/bot.js";

const JWT_SECRET = "soak-secret-0123456789-abcdefghijklmnopq";
const ADMIN_CODE = "soak-admin-code";
const MEMORY_LIMIT = 0.1;

const { values: args } = parseArgs({
  options: {
    bots: { type: "string", default: "300" },
    minutes: { type: "string", default: "10" },
    db: { type: "string", default: "postgres://postgres@127.0.0.1:5432/soak" },
    json: { type: "string" },
    "save-interval": { type: "string", default: "10" },
    seed: { type: "string", default: "1" },
    /** Use dist/ as it is (development only: the soak's point is to run what `npm run build` makes). */
    "skip-build": { type: "boolean", default: false },
  },
});
const BOTS = int(args.bots!, 2, 2_000, "--bots");
const MINUTES = Number(args.minutes);
if (!(MINUTES >= 1 && MINUTES <= 240)) throw new Error("--minutes must be from 1 to 240");
const RUN_MS = MINUTES * 60_000;
const rng = seededRng(int(args.seed!, 0, 1e9, "--seed"));

function int(v: string, min: number, max: number, name: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}`);
  return n;
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)]!;
const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

// ------------------------------------------------------------------ database

function prepareDatabase(url: string) {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  if (!/soak/i.test(name) || !/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`--db: the database is dropped, so its name must contain "soak" (got "${name}")`);
  u.pathname = "/postgres";
  for (const q of [`drop database if exists "${name}" with (force)`, `create database "${name}"`]) {
    const r = spawnSync("psql", [u.toString(), "-v", "ON_ERROR_STOP=1", "-qc", q], { encoding: "utf8", timeout: 60_000 });
    if (r.status !== 0) throw new Error(`psql ${q}: ${r.stderr}`);
  }
}

// ------------------------------------------------------------------ server

interface ServerRun extends LoadServer {
  /** Lines matching "uncaught", "unhandled" or at pino level error/fatal (first 50). */
  bad: string[];
  badCount: number;
  rss: { t: number; rss: number }[];
}

/** A pino line at level error (50) or fatal (60), or any line naming an uncaught exception or unhandled rejection. */
export function isBadLine(line: string): boolean {
  if (/uncaught|unhandled/i.test(line)) return true;
  const m = /"level":\s*(\d+)/.exec(line);
  return m !== null && Number(m[1]) >= 50;
}

async function startServer(world: string, databaseUrl: string): Promise<ServerRun> {
  // Filled in by the output handler during the whole run; the process fields are added once it is up.
  const run = { bad: [] as string[], badCount: 0, rss: [] } as Omit<ServerRun, keyof LoadServer>;
  // The whole server log is kept in the run's world directory, for reading after a failure.
  const logFile = createWriteStream(join(world, "server.log"));
  log(`server log: ${join(world, "server.log")}`);
  const server = await startLoadServer({
    world,
    nodeArgs: [...PROD_NODE_OPTIONS, "dist/src/main.js"],
    env: { DATABASE_URL: databaseUrl, JWT_SECRET, ADMIN_CODE, SAVE_INTERVAL: args["save-interval"] },
    onLine: (line) => {
      logFile.write(`${line}\n`);
      if (isBadLine(line)) {
        run.badCount++;
        if (run.bad.length < 50) run.bad.push(line.slice(0, 2_000));
      }
    },
  });
  return Object.assign(run, server);
}

function rssOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

// ------------------------------------------------------------------ bots

interface SoakBot {
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

const stats = {
  http: {} as Record<string, number>,
  fivexx: [] as string[],
  joins: 0,
  joinFailures: [] as string[],
  moves: 0,
  chats: 0,
  attacks: 0,
  gathers: 0,
  deathRuns: 0,
  deaths: 0,
  reconnects: { sdkResume: 0, sdkFresh: 0, json: 0, afterServerClose: 0 },
  hostile: { ws: 0, sdk: 0, rest: 0 },
  trades: {} as Record<string, number>,
};
/** Trade ids some bot received `tradeCompleted` for. */
const completedTrades = new Set<string>();

/**
 * Colyseus's MATCHMAKE_EXPIRED (524): its documented answer to a reconnection whose seat is gone
 * (expired, or the character joined again elsewhere). The SDK reports the status as the error's
 * code, so it stays as Colyseus defines it; it is a refusal of the client's request, not a failure.
 */
const MATCHMAKE_EXPIRED = 524;
const isFailure = (status: number) => status >= 500 && status !== MATCHMAKE_EXPIRED;

function countStatus(status: number, what: string) {
  stats.http[status] = (stats.http[status] ?? 0) + 1;
  if (isFailure(status) && stats.fivexx.length < 50) {
    stats.fivexx.push(`${status} ${what}`);
    if (stats.fivexx.length <= 5) log(`5xx: ${status} ${what}`);
  }
}

/** A failed connection: count the HTTP status it names, if any (upgrade refusals and SDK matchmaking errors carry it). */
function countFailure(e: unknown, what: string) {
  const msg = String((e as Error)?.message ?? e);
  const code = (e as { code?: unknown })?.code;
  const m = /(?:server response|status(?: code)?):? (\d{3})\b/i.exec(msg);
  const status = typeof code === "number" && code >= 400 && code < 600 ? code : m ? Number(m[1]) : undefined;
  if (status !== undefined) countStatus(status, `${what}: ${msg}`);
  if (stats.joinFailures.length < 30) stats.joinFailures.push(`${what}: ${msg}`);
}

function watch(b: SoakBot) {
  b.bot.on("player:sync", () => (b.syncedAt = performance.now()));
  b.bot.on("tradeCompleted", (d) => typeof d?.tradeId === "string" && completedTrades.add(d.tradeId));
  b.bot.on("chat:message", (d) => {
    if (d?.type === "system" && /you are dead/i.test(d.text)) {
      b.deaths++;
      stats.deaths++;
    }
  });
}

async function connectBot(n: number, home: Tile, url: string): Promise<SoakBot> {
  const token = signServerToken(JWT_SECRET, { sub: `soak-${n}-${Date.now()}` }).token;
  const bot = await Bot.connect({ url, token, transport: n % 2 === 0 ? "json" : "sdk" });
  stats.joins++;
  const b: SoakBot = { n, bot, token, home, busy: false, movedAt: performance.now(), syncedAt: performance.now(), deaths: 0 };
  watch(b);
  await bot.command(`/admin ${ADMIN_CODE}`, /Admin mode enabled/, 30_000);
  await bot.command(`/give feather 500`, /^Gave/, 30_000);
  await bot.command(`/coins 100000`, /Coins set/, 30_000);
  await teleport(b, home);
  return b;
}

async function teleport(b: SoakBot, t: Tile) {
  b.movedAt = performance.now();
  await b.bot.command(`/tp ${t.x} ${t.z}`, /Teleported|Usage: \/tp|Not while trading|dead/i, 20_000);
}

/** Where the bot is: the SDK's synchronised state, else its last sync. */
function position(b: SoakBot): Tile {
  const me = b.bot.sdkState?.players?.get?.(b.bot.id);
  if (me) return { x: me.x, z: me.z };
  const p = b.bot.state?.position;
  return p ? { x: Math.round(p.x), z: Math.round(p.z) } : b.home;
}

/** NPCs and resources some SDK bot sees (the plain-WebSocket bots borrow these ids). */
const seen = new Map<string, { kind: "npc" | "resource"; x: number; z: number; aggressive: boolean; at: number }>();
function learn(b: SoakBot, content: GameContent) {
  const st = b.bot.sdkState;
  if (!st) return;
  const now = performance.now();
  st.npcs?.forEach?.((v: any, id: string) => seen.set(id, { kind: "npc", x: v.x, z: v.z, aggressive: !!content.npcs.get(v.npcId)?.aggressive, at: now }));
  st.resources?.forEach?.((v: any, id: string) => !v.depleted && seen.set(id, { kind: "resource", x: v.x, z: v.z, aggressive: false, at: now }));
}
function nearest(at: Tile, kind: "npc" | "resource", within: number): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const [id, e] of seen) {
    if (e.kind !== kind || e.aggressive) continue;
    const d = Math.max(Math.abs(e.x - at.x), Math.abs(e.z - at.z));
    if (d <= within && d < bestD) [best, bestD] = [id, d];
  }
  return best;
}

/** Hostile payloads: wrong types, huge numbers, deep nesting, prototype keys, unicode, unknown events. */
function hostilePayload(): [string, unknown] {
  let deep: any = {};
  for (let i = 0; i < 200; i++) deep = { a: deep };
  const event = pick([
    "player:move",
    "player:action",
    "player:chat",
    "inventory:use",
    "bank:deposit",
    "bank:withdraw",
    "tradeRequest",
    "tradeAddItem",
    "tradeAccept",
    "no:such:event",
    "__proto__",
  ]);
  const data = pick<unknown>([
    { x: 1e308, z: -1e308 },
    { x: "1", z: null },
    { x: Number.MAX_SAFE_INTEGER + 2, z: 0.5 },
    JSON.parse('{"__proto__": {"admin": true}, "constructor": {"prototype": {"x": 1}}}'),
    deep,
    { text: "\u0000\uFFFF\uD800 ".repeat(100) },
    { text: "x".repeat(100_000) },
    { slot: -1, quantity: -5 },
    { slot: 27, quantity: 2_147_483_648 },
    { itemId: "coins", quantity: 1e9 },
    { action: "attack", targetId: { $ne: null } },
    { tradeId: "", inventorySlot: [1, 2], quantity: "all", coins: -1 },
    [1, 2, 3],
    "string payload",
    null,
    12345,
  ]);
  return [event, data];
}

async function hostileRest(b: SoakBot, url: string) {
  const bodies: [string, string, string | undefined, string][] = [
    ["POST", "/api/v1/player", '{"name": 12345}', "application/json"],
    ["POST", "/api/v1/player", '{"name": "', "application/json"],
    ["POST", "/api/character", '{"__proto__": {"admin": true}, "name": "\u0000\u202e"}', "application/json"],
    ["POST", "/api/character", JSON.stringify({ name: "a".repeat(5_000), templateId: { x: 1 } }), "application/json"],
    ["PATCH", `/api/character/${encodeURIComponent(b.bot.id)}`, '{"name": ["x"]}', "application/json"],
    ["PATCH", "/api/character/%00%ff", '{"name": "Zed"}', "application/json"],
    ["POST", `/api/character/${encodeURIComponent(b.bot.id)}/agent`, '{"isAgent": "yes"}', "application/json"],
    ["POST", "/api/v1/player", "name=x", "application/x-www-form-urlencoded"],
    ["POST", "/ws/matchmake/create/world", "{}", "application/json"],
    ["POST", "/ws/matchmake/joinOrCreate/trade", '{"session": {"id": "forged"}}', "application/json"],
    ["GET", "/api/v1/player", undefined, "application/json"],
  ];
  const [method, path, body, type] = pick(bodies);
  try {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${b.token}`, "content-type": type },
      body,
      signal: AbortSignal.timeout(20_000),
    });
    await r.arrayBuffer();
    countStatus(r.status, `${method} ${path}`);
    stats.hostile.rest++;
  } catch (e) {
    countFailure(e, `${method} ${path}`);
  }
}

async function ensureConnected(b: SoakBot) {
  if (b.bot.connected) return;
  try {
    await withTimeout(b.bot.reconnect(), 30_000, "reconnect");
    stats.reconnects.afterServerClose++;
  } catch (e) {
    countFailure(e, "reconnect");
  }
}

async function reconnect(b: SoakBot) {
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

/** Walk into the PvP Ashlands next to the bandits, fight them and the other bots there, until dead (or 90 s). */
async function dieOnce(b: SoakBot, content: GameContent, dying: Set<SoakBot>) {
  const bandit = content.npcs.get("ash_bandit");
  const spawnAt = bandit?.spawns[0] ?? { x: 0, z: 100 };
  stats.deathRuns++;
  const before = b.deaths;
  const t = freeNear(content, { x: spawnAt.x + Math.floor(rng() * 5) - 2, z: spawnAt.z + Math.floor(rng() * 5) - 2 });
  await teleport(b, t);
  dying.add(b);
  try {
    const until = performance.now() + 90_000;
    while (b.deaths === before && performance.now() < until && b.bot.connected) {
      const others = [...dying].filter((o) => o !== b && o.bot.connected);
      const bandits = [...seen].filter(([, e]) => e.aggressive && Math.max(Math.abs(e.x - t.x), Math.abs(e.z - t.z)) <= 10);
      const target = others.length > 0 && rng() < 0.5 ? pick(others).bot.id : bandits.length > 0 ? pick(bandits)[0] : undefined;
      if (target) {
        b.bot.send("player:action", { action: "attack", targetId: target });
        stats.attacks++;
      }
      await sleep(3_000);
    }
  } finally {
    dying.delete(b);
  }
  if (b.bot.connected) await teleport(b, b.home);
}

function freeNear(content: GameContent, t: Tile): Tile {
  for (let r = 0; r < 6; r++)
    for (let dx = -r; dx <= r; dx++)
      for (let dz = -r; dz <= r; dz++) {
        const x = t.x + dx;
        const z = t.z + dz;
        if (content.inBounds(x, z) && !content.isBlocked(x, z)) return { x, z };
      }
  return t;
}

/** One bot's life until `end`: an action every 1-2 s, weighted. */
async function live(b: SoakBot, url: string, content: GameContent, end: number, dying: Set<SoakBot>) {
  while (performance.now() < end) {
    await sleep(1_000 + rng() * 1_000);
    if (b.busy) continue;
    if (!b.bot.connected) {
      await ensureConnected(b);
      continue;
    }
    b.busy = true;
    try {
      learn(b, content);
      const r = rng();
      const at = position(b);
      if (r < 0.45) {
        const x = b.home.x + Math.floor(rng() * 9) - 4;
        const z = b.home.z + Math.floor(rng() * 9) - 4;
        if (content.inBounds(x, z) && !content.isBlocked(x, z)) {
          b.movedAt = performance.now();
          b.bot.send("player:move", { x, z, run: rng() < 0.5 });
          stats.moves++;
        }
      } else if (r < 0.6) {
        const id = nearest(at, "npc", 8);
        if (id) {
          b.movedAt = performance.now(); // attacking walks to the target
          b.bot.send("player:action", { action: "attack", targetId: id });
          stats.attacks++;
        }
      } else if (r < 0.75) {
        const id = nearest(at, "resource", 8);
        if (id) {
          b.movedAt = performance.now();
          b.bot.send("player:action", { action: "gather", targetId: id });
          stats.gathers++;
        }
      } else if (r < 0.82) {
        b.bot.send("player:chat", { text: `soak ${b.n} says hello ${Math.floor(rng() * 1000)}` });
        stats.chats++;
      } else if (r < 0.84) {
        // Hostile input, on this bot's transport, and a bad REST body.
        const [event, data] = hostilePayload();
        if (b.bot.transport === "json" && rng() < 0.3)
          b.bot.sendRawFrame(pick(["{", "null", '{"event": 5}', "\u0000".repeat(64), Buffer.from([0xff, 0x00, 0x13])]));
        else b.bot.send(event, data);
        stats.hostile[b.bot.transport === "json" ? "ws" : "sdk"]++;
        await hostileRest(b, url);
      } else if (r < 0.85) {
        await withTimeout(reconnect(b), 40_000, "reconnect");
        await teleport(b, b.home); // back home from wherever the rejoin put it
      } else if (r < 0.854) {
        await dieOnce(b, content, dying);
      } else if (r < 0.87) {
        try {
          const res = await fetch(`${url}/api/v1/player`, { headers: { authorization: `Bearer ${b.token}` }, signal: AbortSignal.timeout(20_000) });
          await res.arrayBuffer();
          countStatus(res.status, "GET /api/v1/player");
        } catch (e) {
          countFailure(e, "GET /api/v1/player");
        }
      }
      // else: idle this turn
    } catch (e) {
      countFailure(e, `bot ${b.n}`);
    } finally {
      b.busy = false;
    }
  }
}

/** Every 2 s, pair idle bots of the same home (a few per round): most trades complete, some are declined or cancelled. */
async function trader(bots: SoakBot[], content: GameContent, end: number) {
  const inFlight = new Set<Promise<void>>();
  const byHome = new Map<string, SoakBot[]>();
  for (const b of bots) {
    const k = `${b.home.x},${b.home.z}`;
    byHome.set(k, [...(byHome.get(k) ?? []), b]);
  }
  const groups = [...byHome.values()].filter((g) => g.length >= 2);
  while (performance.now() < end) {
    await sleep(2_000);
    const rounds = Math.max(1, Math.round(bots.length / 40));
    for (let i = 0; i < rounds; i++) {
      const g = pick(groups);
      const idle = g.filter((b) => !b.busy && b.bot.connected);
      if (idle.length < 2) continue;
      const a = idle[0]!;
      const b = idle[1]!;
      a.busy = b.busy = true;
      const p = (async () => {
        const kind = rng() < 0.7 ? "complete" : rng() < 0.5 ? "decline" : "cancel";
        try {
          await teleport(a, a.home);
          await teleport(b, freeNear(content, { x: a.home.x + 1, z: a.home.z }));
          const feathers = (x: Bot) => x.inventory.find((s) => s.itemId === "feather");
          const r = await tradeOnce(a.bot, b.bot, {
            offerA: (x) => {
              const f = feathers(x);
              return { items: f ? [{ inventorySlot: f.slot, quantity: 1 + Math.floor(rng() * Math.min(3, f.quantity)) }] : [], coins: 0 };
            },
            offerB: (x) => ({ items: [], coins: Math.min(x.coins, 1 + Math.floor(rng() * 100)) }),
            decline: kind === "decline",
            onStarted: kind === "cancel" ? (id) => setTimeout(() => a.bot.send("tradeCancel", { tradeId: id }), 200 + rng() * 800) : undefined,
            timeoutMs: 30_000,
          });
          const k = r.reason ? `${r.outcome}:${r.reason}` : r.outcome;
          stats.trades[k] = (stats.trades[k] ?? 0) + 1;
        } catch (e) {
          countFailure(e, "trade");
        } finally {
          a.busy = b.busy = false;
        }
      })();
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }
  await Promise.all([...inFlight]);
}

// ------------------------------------------------------------------ checks

interface Check {
  name: string;
  pass: boolean;
  detail: string;
  failures?: string[];
}

type Sql = <T = any>(q: string, params?: unknown[]) => Promise<T[]>;

async function checkTradesAudited(sql: Sql): Promise<Check> {
  const ids = [...completedTrades];
  const rows = await sql<{ id: string; outcome: string }>(`select id, outcome from trade_audits`);
  const byId = new Map<string, string[]>();
  for (const r of rows) byId.set(r.id, [...(byId.get(r.id) ?? []), r.outcome]);
  const bad = ids
    .filter((id) => (byId.get(id) ?? []).length !== 1 || byId.get(id)![0] !== "completed")
    .map((id) => `${id}: ${JSON.stringify(byId.get(id) ?? [])}`);
  const [{ n }] = await sql<{ n: number }>(`select count(*)::int n from trade_audits where outcome = 'completed'`);
  return {
    name: "every completed trade audited",
    pass: bad.length === 0,
    detail: `${ids.length} completed trades seen by bots, ${n} completed audit rows, ${bad.length} without exactly one completed audit`,
    failures: bad.slice(0, 20),
  };
}

async function checkStacks(sql: Sql, content: GameContent): Promise<Check> {
  const bad: string[] = [];
  const stackable = (id: string) => content.items.get(id)?.stackable;
  for (const [table, slotCol, stacksAnything] of [
    ["inventory_items", "slot", false],
    ["equipment_items", "slot_type", false],
    ["bank_items", "item_id", true],
  ] as const) {
    const rows = await sql<{ character_id: string; s: string; item_id: string; quantity: number }>(
      `select character_id, ${slotCol}::text s, item_id, quantity from ${table}`,
    );
    for (const r of rows) {
      const cap = stacksAnything || stackable(r.item_id) ? MAX_STACK : 1;
      if (!(r.quantity >= 1 && r.quantity <= cap)) bad.push(`${table} ${r.character_id} ${r.s}: ${r.quantity} × ${r.item_id} (cap ${cap})`);
      if (!content.items.has(r.item_id)) bad.push(`${table} ${r.character_id} ${r.s}: unknown item ${r.item_id}`);
    }
  }
  for (const r of await sql<{ id: string; coins: number }>(`select id, coins from characters where coins < 0 or coins > ${MAX_STACK}`))
    bad.push(`characters ${r.id}: coins ${r.coins}`);
  const [{ n }] = await sql<{ n: number }>(
    `select (select count(*) from inventory_items) + (select count(*) from equipment_items) + (select count(*) from bank_items) n`,
  );
  return {
    name: "no stack above its cap, no quantity < 1, no negative coins",
    pass: bad.length === 0,
    detail: `${n} stored stacks checked, ${bad.length} bad`,
    failures: bad.slice(0, 20),
  };
}

/**
 * Storage after the clean shutdown against each bot's last `player:sync`:
 * - items (inventory slot by slot, equipment slot by slot, bank item by item) and coins: EQUAL;
 * - XP of every skill: stored ≥ synced (XP only grows; the last hit may land after the last sync);
 * - position: equal to the synced tile when the bot sent no move, attack, gather or teleport
 *   after its last sync; otherwise (movement is not synced) only a free tile inside the world.
 */
async function storageMatchesSync(sql: Sql, bots: SoakBot[], content: GameContent): Promise<Check> {
  const bad: string[] = [];
  const chars = new Map((await sql<any>(`select * from characters`)).map((r) => [r.id, r]));
  const group = async (table: string) => {
    const m = new Map<string, any[]>();
    for (const r of await sql<any>(`select * from ${table}`)) m.set(r.character_id, [...(m.get(r.character_id) ?? []), r]);
    return m;
  };
  const inv = await group("inventory_items");
  const eq = await group("equipment_items");
  const bank = await group("bank_items");
  let positionsExact = 0;
  for (const b of bots) {
    const s = b.bot.state;
    const id = b.bot.id;
    const row = chars.get(id);
    if (!s || !row) {
      bad.push(`bot ${b.n} (${id || "no id"}): ${!s ? "never synced" : "no stored character"}`);
      continue;
    }
    const who = `bot ${b.n} ${id}`;
    if (Number(row.coins) !== s.coins) bad.push(`${who}: coins stored ${row.coins}, synced ${s.coins}`);
    const key = (xs: string[]) => xs.sort().join(" | ");
    const invStored = key((inv.get(id) ?? []).map((r) => `${r.slot}:${r.item_id}×${r.quantity}`));
    const invSynced = key((s.inventory ?? []).map((r: any) => `${r.slot}:${r.itemId}×${r.quantity}`));
    if (invStored !== invSynced) bad.push(`${who}: inventory stored [${invStored}] synced [${invSynced}]`);
    const eqStored = key((eq.get(id) ?? []).map((r) => `${r.slot_type}:${r.item_id}×${r.quantity}`));
    const eqSynced = key(
      Object.entries(s.equipment ?? {})
        .filter(([, v]) => v)
        .map(([k, v]: [string, any]) => `${k}:${v.itemId}×${v.quantity ?? 1}`),
    );
    if (eqStored !== eqSynced) bad.push(`${who}: equipment stored [${eqStored}] synced [${eqSynced}]`);
    const bankStored = key((bank.get(id) ?? []).map((r) => `${r.item_id}×${r.quantity}`));
    const bankSynced = key((s.bank ?? []).map((r: any) => `${r.itemId}×${r.quantity}`));
    if (bankStored !== bankSynced) bad.push(`${who}: bank stored [${bankStored}] synced [${bankSynced}]`);
    for (const [skill, v] of Object.entries(s.skills ?? {}) as [string, { xp: number }][]) {
      const stored = Number(row[`${skill}_xp`]);
      if (!(stored >= v.xp)) bad.push(`${who}: ${skill} xp stored ${stored} < synced ${v.xp}`);
    }
    const x = Math.round(Number(row.position_x));
    const z = Math.round(Number(row.position_z));
    if (b.movedAt < b.syncedAt) {
      positionsExact++;
      if (x !== Math.round(s.position.x) || z !== Math.round(s.position.z))
        bad.push(`${who}: position stored ${x},${z}, synced ${s.position.x},${s.position.z} (no move since)`);
    } else if (!content.inBounds(x, z)) bad.push(`${who}: stored position ${x},${z} outside the world`);
  }
  return {
    name: "storage equals each bot's last player:sync",
    pass: bad.length === 0,
    detail: `${bots.length} bots: items, equipment, bank and coins equal, XP ≥ synced; position exact for ${positionsExact} that had not moved since their last sync; ${bad.length} mismatches`,
    failures: bad.slice(0, 20),
  };
}

/**
 * RSS after warm-up: the first half of the run is warm-up; the mean RSS over the first tenth of
 * the run after it (minute 5-6 of 10) is compared with the mean over the last tenth (minute 9-10).
 * A least-squares slope over the whole second half is reported beside it.
 */
export function memoryCheck(samples: { t: number; rss: number }[], runMs: number): Check & { growth: number; slopePerMinute: number } {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const a = samples.filter((s) => s.t >= runMs / 2 && s.t < runMs / 2 + runMs / 10).map((s) => s.rss);
  const b = samples.filter((s) => s.t >= runMs - runMs / 10 && s.t <= runMs).map((s) => s.rss);
  const half = samples.filter((s) => s.t >= runMs / 2 && s.t <= runMs);
  if (a.length === 0 || b.length === 0)
    return { name: "memory flat after warm-up", pass: false, detail: "not enough RSS samples", growth: NaN, slopePerMinute: NaN };
  const growth = mean(b) / mean(a) - 1;
  const mt = mean(half.map((s) => s.t));
  const mr = mean(half.map((s) => s.rss));
  const slope =
    half.reduce((n, s) => n + (s.t - mt) * (s.rss - mr), 0) /
    Math.max(
      1,
      half.reduce((n, s) => n + (s.t - mt) ** 2, 0),
    );
  const slopePerMinute = (slope * 60_000) / mr;
  const mb = (x: number) => `${(x / 1048576).toFixed(1)} MB`;
  const min = (x: number) => (x / 60_000).toFixed(1);
  return {
    name: "memory flat after warm-up (RSS growth < 10 %)",
    pass: growth < MEMORY_LIMIT,
    detail: `mean RSS min ${min(runMs / 2)}-${min(runMs / 2 + runMs / 10)} ${mb(mean(a))} → min ${min(runMs - runMs / 10)}-${min(runMs)} ${mb(mean(b))}: ${(growth * 100).toFixed(1)} % (linear fit over the second half ${(slopePerMinute * 100).toFixed(2)} %/min); peak ${mb(Math.max(...samples.map((s) => s.rss)))}`,
    growth,
    slopePerMinute,
  };
}

// ------------------------------------------------------------------ main

async function main() {
  const started = Date.now();
  log(
    `soak: ${BOTS} bots for ${MINUTES} min against the compiled server on ${args.db!.replace(/:[^:@/]*@/, ":***@")} (${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version})`,
  );
  prepareDatabase(args.db!);
  if (!args["skip-build"]) buildDist();
  const world = mkdtempSync(join(tmpdir(), "soak-world-"));
  cpSync(join(ROOT, "world/manifests"), join(world, "manifests"), { recursive: true });
  const content = await loadContent(join(world, "manifests"));
  const server = await startServer(world, args.db!);
  process.on("exit", () => server.proc.exitCode === null && server.proc.signalCode === null && server.proc.kill("SIGKILL"));
  let crashed: string | undefined;
  let stopping = false;
  void server.exited.then(({ code, signal }) => {
    if (!stopping) crashed = `server exited during the run: code ${code}, signal ${signal}\n${server.tail.slice(-20).join("\n")}`;
  });
  const budget = setTimeout(
    () => {
      console.error("soak exceeded its time budget; killing the server");
      server.proc.kill("SIGKILL");
      process.exit(2);
    },
    RUN_MS * 2 + 20 * 60_000,
  );
  budget.unref();

  // Homes: free tiles next to non-aggressive NPC spawns, 6 bots to a home.
  const spawns = [...content.npcs.values()].filter((d) => !d.aggressive && d.spawns.length > 0).flatMap((d) => d.spawns.map((s) => ({ x: s.x, z: s.z })));
  const safe = spawns.filter(
    (s) => ![...content.npcs.values()].some((d) => d.aggressive && d.spawns.some((a) => Math.max(Math.abs(a.x - s.x), Math.abs(a.z - s.z)) < 25)),
  );
  const homes = Array.from({ length: Math.ceil(BOTS / 6) }, (_, i) =>
    freeNear(content, { x: safe[i % safe.length]!.x + 2, z: safe[i % safe.length]!.z + 2 + Math.floor(i / safe.length) * 3 }),
  );

  const t0 = performance.now();
  const rssTimer = setInterval(() => {
    const rss = rssOf(server.proc.pid!);
    if (rss !== undefined) server.rss.push({ t: performance.now() - t0, rss });
  }, 5_000);

  const bots: SoakBot[] = [];
  const queue = Array.from({ length: BOTS }, (_, n) => n);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        try {
          bots.push(await connectBot(n, homes[Math.floor(n / 6)]!, server.url));
        } catch (e) {
          countFailure(e, `join bot ${n}`);
        }
      }
    }),
  );
  log(`${bots.length}/${BOTS} bots joined in ${((performance.now() - t0) / 1000).toFixed(0)} s; running until minute ${MINUTES} of the run`);
  if (bots.length < BOTS * 0.9) throw new Error(`too many bots failed to join: ${stats.joinFailures.slice(0, 5).join("; ")}`);

  const end = t0 + RUN_MS;
  const dying = new Set<SoakBot>();
  const progress = setInterval(() => {
    const last = server.rss.at(-1);
    log(
      `  ${((performance.now() - t0) / 60_000).toFixed(1)} min: rss ${last ? (last.rss / 1048576).toFixed(0) : "?"} MB, connected ${bots.filter((b) => b.bot.connected).length}, ` +
        `moves ${stats.moves}, trades ${JSON.stringify(stats.trades)}, deaths ${stats.deaths}/${stats.deathRuns}, reconnects ${JSON.stringify(stats.reconnects)}, http ${JSON.stringify(stats.http)}`,
    );
  }, 30_000);
  await Promise.all([...bots.map((b) => live(b, server.url, content, end, dying)), trader(bots, content, end)]);
  clearInterval(progress);
  clearInterval(rssTimer);

  // Quiesce: everyone connected, nothing sent for a few seconds, then the clean shutdown.
  if (!crashed) await Promise.all(bots.map((b) => ensureConnected(b)));
  await sleep(5_000);
  log(`stopping: SIGTERM to the server (${bots.filter((b) => b.bot.connected).length}/${bots.length} bots connected)`);
  stopping = true;
  for (const b of bots) b.bot.stopReconnecting();
  server.proc.kill("SIGTERM");
  const exit = await Promise.race([server.exited, sleep(30_000).then(() => undefined)]);
  if (!exit) server.proc.kill("SIGKILL");
  // A socket the server already dropped may never report its close: bound the wait.
  await Promise.all(bots.map((b) => withTimeout(b.bot.close(), 5_000, "close").catch(() => undefined)));

  const checks: Check[] = [];
  const fivexx = Object.entries(stats.http).filter(([s]) => isFailure(Number(s)));
  checks.push({
    name: "no 5xx (524, an expired reconnection seat, is a refusal)",
    pass: fivexx.length === 0,
    detail: `HTTP statuses seen by bots: ${JSON.stringify(stats.http)}`,
    failures: stats.fivexx.slice(0, 20),
  });
  checks.push({
    name: "no crash; clean shutdown exits 0",
    pass: !crashed && exit?.code === 0,
    detail: crashed ? "crashed" : exit ? `exit code ${exit.code}, signal ${exit.signal}` : "did not exit within 30 s of SIGTERM",
    failures: crashed ? [crashed] : exit?.code === 0 ? [] : server.tail.slice(-20),
  });
  checks.push({
    name: "no uncaught/unhandled or error-level log line",
    pass: server.badCount === 0,
    detail: `${server.badCount} such lines`,
    failures: server.bad.slice(0, 20),
  });
  const storage = await openStorage({ url: args.db!, migrate: false, poolMax: 2 });
  try {
    const sql: Sql = (q, params = []) => storage.orm.em.fork().getConnection().execute(q, params) as never;
    checks.push(await checkTradesAudited(sql));
    checks.push(await checkStacks(sql, content));
    checks.push(await storageMatchesSync(sql, bots, content));
  } finally {
    await storage.close();
  }
  const mem = memoryCheck(server.rss, RUN_MS);
  checks.push(mem);

  console.log("\nsoak summary");
  console.log(
    `  bots ${bots.length} (${bots.filter((b) => b.bot.transport === "json").length} plain WebSocket, ${bots.filter((b) => b.bot.transport === "sdk").length} SDK), ${MINUTES} min, wall ${((Date.now() - started) / 60_000).toFixed(1)} min`,
  );
  console.log(`  moves ${stats.moves}, attacks ${stats.attacks}, gathers ${stats.gathers}, chats ${stats.chats}`);
  console.log(`  trades ${JSON.stringify(stats.trades)} (completed ids seen: ${completedTrades.size})`);
  console.log(
    `  deaths ${stats.deaths} (death runs ${stats.deathRuns}), reconnects ${JSON.stringify(stats.reconnects)}, hostile ${JSON.stringify(stats.hostile)}`,
  );
  if (stats.joinFailures.length) console.log(`  connection/action failures (first ${stats.joinFailures.length}): ${stats.joinFailures.slice(0, 5).join("; ")}`);
  console.log("");
  for (const c of checks) {
    console.log(`  ${c.pass ? "PASS" : "FAIL"}  ${c.name.padEnd(60)} ${c.detail}`);
    if (!c.pass) for (const f of c.failures ?? []) console.log(`          ${f}`);
  }
  const pass = checks.every((c) => c.pass);
  console.log(`\n  ${pass ? "PASS" : "FAIL"}: ${checks.filter((c) => c.pass).length}/${checks.length} checks passed`);
  if (args.json)
    writeFileSync(
      args.json,
      JSON.stringify(
        {
          date: new Date().toISOString(),
          machine: { cpu: `${cpus().length} × ${cpus()[0]?.model}`, memoryGb: Math.round(totalmem() / 2 ** 30), node: process.version },
          bots: BOTS,
          joined: bots.length,
          minutes: MINUTES,
          saveIntervalSeconds: Number(args["save-interval"]),
          stats,
          completedTrades: completedTrades.size,
          rss: server.rss.map((s) => ({ t: Math.round(s.t), mb: Math.round((s.rss / 1048576) * 10) / 10 })),
          checks,
          pass,
        },
        null,
        2,
      ) + "\n",
    );
  // A failed run keeps its world directory (server.log) for reading.
  if (pass) rmSync(world, { recursive: true, force: true });
  else log(`kept ${world} (server.log) for reading`);
  return pass;
}

let finished = false;
// Never end silently with code 0 because a wait lost its last handle.
process.on("exit", (code) => {
  if (!finished && code === 0) {
    console.error("soak: the event loop emptied before the checks ran");
    process.exitCode = 2;
  }
});
main().then(
  (pass) => {
    finished = true;
    process.exit(pass ? 0 : 1);
  },
  (e) => {
    console.error(e);
    process.exit(2);
  },
);
