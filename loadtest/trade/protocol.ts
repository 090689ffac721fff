/**
 * Part 2 of bench:trade: the real server process and pairs of plain-WebSocket bots trading complete
 * two-screen trades as fast as the protocol allows.
 */
import { tmpdir } from "node:os";
import { mkdirSync } from "node:fs";
import { startLoadServer, type LoadServer } from "../lib/targets.js";
import { LOAD_ADMIN_CODE, LOAD_SECRETS, loadToken } from "../lib/tokens.js";
import { Bot } from "./bot.js";
import { tradeOnce, type TradeResult } from "./trade-once.js";
import { cpuSnapshot, pgDelta, type CpuSnapshot } from "./cpu.js";
import { BOTS, DB_URL, log, PAIR_COOLDOWN_MS, pctOf as pct, PROFILE, SECONDS, TICK_MS, WARMUP_SECONDS } from "./options.js";

export interface ServerProc extends LoadServer {
  output: () => string;
}

export async function startServer(world: string): Promise<ServerProc> {
  const profileDir = `${tmpdir()}/trade-bench-profiles`;
  if (PROFILE) mkdirSync(profileDir, { recursive: true });
  let out = "";
  const server = await startLoadServer({
    world,
    nodeArgs: [...(PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), "--import", "tsx", "src/main.ts"],
    env: { DATABASE_URL: DB_URL, ...LOAD_SECRETS, TICK_MS },
    onLine: (line) => void (out += `${line}\n`),
    readyMs: 120_000,
  });
  return Object.assign(server, { output: () => out });
}

export interface ProtocolResult {
  bots: number;
  seconds: number;
  completed: number;
  perSecond: number;
  settleP50: number;
  settleP99: number;
  totalP50: number;
  totalP99: number;
  outcomes: Record<string, number>;
  allCompleted: number;
  /** CPU seconds used during the measured window by the server, this (bot) process and PostgreSQL. */
  cpu: { server: number; bots: number; postgres: number; others: number };
}

export async function benchProtocol(url: string, serverPid: number, afterSetup: () => Promise<void>): Promise<ProtocolResult & { botIds: string[] }> {
  const bots: Bot[] = [];
  for (let i = 0; i < BOTS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, BOTS - i) }, (_, k) => Bot.connect({ url, token: loadToken(`bench-bot-${i + k}-${Date.now()}`) })),
    );
    await Promise.all(
      batch.map(async (b) => {
        await b.command(`/admin ${LOAD_ADMIN_CODE}`, /Admin mode enabled/, 30_000);
        await b.command(`/give feather 1000000`, /^Gave/, 30_000);
        await b.command(`/coins 1000000`, /Coins set/, 30_000);
      }),
    );
    bots.push(...batch);
  }
  log(`  ${bots.length} bots connected and supplied`);
  await afterSetup();

  const idle = new Set(bots);
  const readyAt = new Map<string, number>(); // pair → earliest next request
  const results: { at: number; r: TradeResult }[] = [];
  const t0 = performance.now();
  const measureFrom = t0 + WARMUP_SECONDS * 1000;
  const stopAt = measureFrom + SECONDS * 1000;
  const inFlight = new Set<Promise<void>>();
  let wake: (() => void) | undefined;

  const feathersOf = (b: Bot) => b.inventory.find((s) => s.itemId === "feather")!;
  const start = (a: Bot, b: Bot) => {
    idle.delete(a);
    idle.delete(b);
    const key = a.id < b.id ? `${a.id}|${b.id}` : `${b.id}|${a.id}`;
    const p = tradeOnce(a, b, {
      offerA: (x) => ({ items: [{ inventorySlot: feathersOf(x).slot, quantity: 1 }], coins: 0 }),
      offerB: () => ({ items: [], coins: 1 }),
      timeoutMs: 30_000,
    }).then((r) => {
      results.push({ at: performance.now(), r });
      readyAt.set(key, Date.now() + PAIR_COOLDOWN_MS);
      idle.add(a);
      idle.add(b);
      inFlight.delete(p);
      wake?.();
    });
    inFlight.add(p);
  };

  let cpuAtStart: CpuSnapshot | undefined;
  while (performance.now() < stopAt) {
    if (!cpuAtStart && performance.now() >= measureFrom) cpuAtStart = cpuSnapshot(serverPid);
    // Pair idle bots whose pair is out of its cooldown; rotate partners.
    const free = [...idle];
    for (let i = free.length - 1; i > 0; i--) {
      const j = Math.floor(Math.random() * (i + 1));
      [free[i], free[j]] = [free[j]!, free[i]!];
    }
    const now = Date.now();
    const used = new Set<Bot>();
    for (const a of free) {
      if (used.has(a)) continue;
      for (const b of free) {
        if (b === a || used.has(b)) continue;
        const key = a.id < b.id ? `${a.id}|${b.id}` : `${b.id}|${a.id}`;
        if ((readyAt.get(key) ?? 0) > now) continue;
        readyAt.set(key, Number.POSITIVE_INFINITY);
        used.add(a);
        used.add(b);
        start(a, b);
        break;
      }
    }
    await new Promise<void>((r) => {
      wake = r;
      setTimeout(r, 20);
    });
  }
  const cpuAtEnd = cpuSnapshot(serverPid);
  await Promise.all([...inFlight]);

  const window = results.filter((x) => x.at >= measureFrom && x.at <= stopAt);
  const done = window.filter((x) => x.r.outcome === "completed");
  const outcomes: Record<string, number> = {};
  for (const { r } of results) {
    const k = r.reason ? `${r.outcome}:${r.reason}` : r.outcome;
    outcomes[k] = (outcomes[k] ?? 0) + 1;
  }
  const settle = done.map((x) => x.r.settleMs!).filter((x) => Number.isFinite(x));
  const total = done.map((x) => x.r.totalMs!).filter((x) => Number.isFinite(x));
  const botIds = bots.map((b) => b.id);
  const stalled: Record<string, number> = {};
  for (const { r } of results) if (r.outcome === "timeout") stalled[r.lastEvent ?? "?"] = (stalled[r.lastEvent ?? "?"] ?? 0) + 1;
  if (Object.keys(stalled).length > 0) log(`  timed-out trades by the last event seen: ${JSON.stringify(stalled)}`);
  const dropped = bots.filter((b) => b.closedWith !== undefined);
  if (dropped.length > 0)
    log(`  ${dropped.length} bots were disconnected by the server during the run (close codes ${[...new Set(dropped.map((b) => b.closedWith))].join(", ")})`);
  await Promise.all(bots.map((b) => b.close()));
  return {
    bots: BOTS,
    seconds: SECONDS,
    completed: done.length,
    perSecond: done.length / SECONDS,
    settleP50: pct(settle, 50),
    settleP99: pct(settle, 99),
    totalP50: pct(total, 50),
    totalP99: pct(total, 99),
    outcomes,
    allCompleted: results.filter((x) => x.r.outcome === "completed").length,
    cpu: {
      server: cpuAtEnd.server - cpuAtStart!.server,
      bots: cpuAtEnd.bots - cpuAtStart!.bots,
      postgres: pgDelta(cpuAtStart!, cpuAtEnd),
      others: cpuAtEnd.all - cpuAtStart!.all - (cpuAtEnd.server - cpuAtStart!.server) - (cpuAtEnd.bots - cpuAtStart!.bots) - pgDelta(cpuAtStart!, cpuAtEnd),
    },
    botIds,
  };
}
