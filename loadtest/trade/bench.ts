/**
 * Trade benchmark (`npm run bench:trade`), against real PostgreSQL.
 *
 * 1. Bare settlement: `settleTrade` on trades built with the domain transitions, without any
 *    protocol, at 1, 8, 16 and 32 concurrent workers (each on its own pair of characters):
 *    settlements per second and latency p50/p99.
 * 2. Protocol: the real server process (`src/main.ts`, DATABASE_URL) and pairs of plain-WebSocket
 *    bots trading complete two-screen trades as fast as the protocol allows (each pair at most
 *    once per 3 s, so bots rotate partners): completed trades per second, settlement latency
 *    (the later confirmation-screen accept to the later `tradeCompleted`) and whole-trade latency.
 * 3. Invariants after the server stopped: totals of every item id and coins unchanged, slot and
 *    stack bounds, one `completed` audit record per completed trade.
 *
 * Settings (environment): BENCH_DATABASE_URL (else TEST_DATABASE_URL; never DATABASE_URL) — its
 * public schema is DROPPED and rebuilt; BENCH_BOTS (default 100), BENCH_SECONDS (20),
 * BENCH_SETTLE_SECONDS (4 per level), BENCH_TICK_MS (600), BENCH_PROFILE=1 (CPU profile of the
 * server into $TMPDIR/trade-bench-profiles/), BENCH_ONLY=settle (part 1 only, nothing written).
 * Results go to loadtest/trade/RESULTS.md.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { cpus, tmpdir, totalmem } from "node:os";
import { signServerToken } from "../../src/auth/tokens.js";
import { syncItemDefinitions } from "../../src/storage/item-definitions.js";
import { CharacterRepository } from "../../src/storage/characters/repository.js";
import { loadContent } from "../../src/content/load.js";
import { inventoryFromSlots, type ItemLookup } from "../../src/domain/inventory.js";
import { type Trade } from "../../src/domain/trade/trade.js";
import { acceptTrade, createTrade, respondToRequest, setOfferCoins, setOfferItem } from "../../src/domain/trade/transitions.js";
import { openStorage, type Storage } from "../../src/storage/orm.js";
import { settleTrade } from "../../src/trade/settlement.js";
import { tempWorld } from "../../test/helpers/process.js";
import { startLoadServer, type LoadServer } from "../server.js";
import { Bot, tradeOnce, type TradeResult } from "./bot.js";

// Never DATABASE_URL: the benchmark drops the schema. TEST_DATABASE_URL is disposable by convention (the tests drop it too).
const DB_URL = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
const BOTS = Number(process.env.BENCH_BOTS ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const WARMUP_SECONDS = 3;
const SETTLE_SECONDS = Number(process.env.BENCH_SETTLE_SECONDS ?? 4);
const TICK_MS = process.env.BENCH_TICK_MS ?? "600";
const PROFILE = process.env.BENCH_PROFILE === "1";
const JWT_SECRET = "bench-secret-0123456789-abcdefghijklmnop";
const ADMIN_CODE = "bench-admin-code";
const PAIR_COOLDOWN_MS = 3_000 + 50;

if (!DB_URL) {
  console.error("bench:trade needs a disposable PostgreSQL database: set BENCH_DATABASE_URL (its public schema is dropped and rebuilt).");
  process.exit(1);
}

const log = (...a: unknown[]) => console.log(...a);
const pct = (xs: number[], p: number) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};
const ms = (x: number) => `${x.toFixed(1)} ms`;

async function freshSchema(): Promise<Storage> {
  const boot = await openStorage({ url: DB_URL, migrate: false, poolMax: 2 });
  await boot.orm.em.getConnection().execute("drop schema if exists public cascade; create schema public;");
  await boot.close();
  return openStorage({ url: DB_URL, poolMax: 40 });
}

async function sql<T = any>(s: Storage, q: string, params: unknown[] = []): Promise<T[]> {
  return s.orm.em.fork().getConnection().execute<T[]>(q, params);
}

async function totals(s: Storage): Promise<Record<string, number>> {
  const rows = await sql<{ item_id: string; total: string }>(
    s,
    `select item_id, sum(quantity)::bigint total from (
       select item_id, quantity from inventory_items union all select item_id, quantity from equipment_items
       union all select item_id, quantity from bank_items union all select 'coins', coins from characters) t
     group by item_id order by item_id`,
  );
  return Object.fromEntries(rows.map((r) => [r.item_id, Number(r.total)]));
}

async function violations(s: Storage, items: ItemLookup): Promise<string[]> {
  const out: string[] = [];
  for (const r of await sql(s, `select character_id, count(*)::int n from inventory_items group by character_id having count(*) > 28`))
    out.push(`${r.character_id}: ${r.n} slots`);
  for (const r of await sql(
    s,
    `select character_id, slot, item_id, quantity from inventory_items where slot < 0 or slot > 27 or quantity < 1 or quantity > 2147483647`,
  ))
    out.push(`${r.character_id} slot ${r.slot}: ${r.quantity}`);
  for (const r of await sql(s, `select id, coins from characters where coins < 0 or coins > 2147483647`)) out.push(`${r.id}: coins ${r.coins}`);
  for (const r of await sql(s, `select character_id, slot, item_id, quantity from inventory_items where quantity > 1`))
    if (!items(r.item_id)?.stackable) out.push(`${r.character_id} slot ${r.slot}: ${r.quantity} × ${r.item_id}`);
  return out;
}

// ------------------------------------------------------------------------------ 1. bare settlement

interface SettleLevel {
  concurrency: number;
  settlements: number;
  perSecond: number;
  p50: number;
  p99: number;
  failed: number;
  /** CPU seconds other processes used meanwhile (contention from outside the benchmark). */
  others: number;
  /** CPU milliseconds per settlement: this process (client side) and PostgreSQL. */
  clientMs: number;
  postgresMs: number;
}

/** A trade in state `settling` where `from` gives one feather (slot 0) and `to` gives one coin. */
function settlingTrade(id: string, from: string, to: string, items: ItemLookup, feathers: number, coins: number): Trade {
  const inv = inventoryFromSlots([{ slot: 0, itemId: "feather", quantity: feathers }]);
  if (!inv.ok) throw new Error(inv.error.message);
  const held = { inventory: inv.value, coins };
  const ctx = { items, holdingsOf: () => held };
  const must = <T>(r: { ok: boolean; value?: T; error?: { message: string } }): T => {
    if (!r.ok) throw new Error(r.error!.message);
    return r.value!;
  };
  const now = Date.now();
  let s = must(createTrade({ id, a: { playerId: from, name: "A", level: 3 }, b: { playerId: to, name: "B", level: 3 }, now }));
  s = must(respondToRequest(s, { playerId: to, accept: true }, now)).trade;
  s = must(setOfferItem(s, { playerId: from, slot: 0, quantity: 1 }, now, ctx)).trade;
  s = must(setOfferCoins(s, { playerId: to, coins: 1 }, now, ctx)).trade;
  for (let i = 0; i < 2; i++) {
    s = must(acceptTrade(s, { playerId: from }, now, ctx)).trade;
    s = must(acceptTrade(s, { playerId: to }, now, ctx)).trade;
  }
  return s;
}

async function benchSettlement(storage: Storage, items: ItemLookup): Promise<SettleLevel[]> {
  const repo = new CharacterRepository(storage.orm as never);
  const pairs: [string, string][] = [];
  for (let i = 0; i < 32; i++) {
    const mk = async () =>
      (
        await repo.create({
          accountId: `bench-settle-${i}-${Math.random()}`,
          coins: 1_000_000,
          inventory: [{ slot: 0, itemId: "feather", quantity: 1_000_000 }],
        })
      ).id;
    pairs.push([await mk(), await mk()]);
  }
  const before = await totals(storage);
  const levels: SettleLevel[] = [];
  let seq = 0;
  for (const concurrency of [1, 8, 16, 32]) {
    const lat: number[] = [];
    let failed = 0;
    const until = performance.now() + SETTLE_SECONDS * 1000;
    const t0 = performance.now();
    const cpu0 = cpuSnapshot(0);
    await Promise.all(
      pairs.slice(0, concurrency).map(async ([x, y]) => {
        // Holdings only need to cover the offer (the transaction re-checks the real rows); the
        // trades are built once per direction and copied with a new id, so the timing is the settlement's.
        const templates = [settlingTrade("t", x, y, items, 1, 1), settlingTrade("t", y, x, items, 1, 1)];
        for (let n = 0; performance.now() < until; n++) {
          const s = { ...templates[n % 2]!, id: `settle-${seq++}` };
          const t = performance.now();
          const r = await settleTrade(storage.orm, s, items);
          lat.push(performance.now() - t);
          if (!r.ok) failed++;
        }
      }),
    );
    const elapsed = (performance.now() - t0) / 1000;
    const cpu1 = cpuSnapshot(0);
    const others = cpu1.all - cpu0.all - (cpu1.bots - cpu0.bots) - pgDelta(cpu0, cpu1);
    const level = {
      concurrency,
      settlements: lat.length,
      perSecond: lat.length / elapsed,
      p50: pct(lat, 50),
      p99: pct(lat, 99),
      failed,
      others,
      clientMs: ((cpu1.bots - cpu0.bots) * 1000) / lat.length,
      postgresMs: (pgDelta(cpu0, cpu1) * 1000) / lat.length,
    };
    levels.push(level);
    log(
      `  settleTrade ×${concurrency}: ${level.perSecond.toFixed(0)}/s, p50 ${ms(level.p50)}, p99 ${ms(level.p99)}, failed ${failed}; ` +
        `CPU: this process ${(cpu1.bots - cpu0.bots).toFixed(1)} s, PostgreSQL ${pgDelta(cpu0, cpu1).toFixed(1)} s, others ${others.toFixed(1)} s of ${(2 * elapsed).toFixed(0)}`,
    );
  }
  const after = await totals(storage);
  if (JSON.stringify(before) !== JSON.stringify(after)) throw new Error(`bare settlement changed totals: ${JSON.stringify(before)} → ${JSON.stringify(after)}`);
  return levels;
}

// ------------------------------------------------------------------------------ 2. protocol

interface ServerProc extends LoadServer {
  output: () => string;
}

async function startServer(world: string): Promise<ServerProc> {
  const profileDir = `${tmpdir()}/trade-bench-profiles`;
  if (PROFILE) mkdirSync(profileDir, { recursive: true });
  let out = "";
  const server = await startLoadServer({
    world,
    nodeArgs: [...(PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), "--import", "tsx", "src/main.ts"],
    env: { DATABASE_URL: DB_URL, JWT_SECRET, ADMIN_CODE, TICK_MS },
    onLine: (line) => void (out += `${line}\n`),
    readyMs: 120_000,
  });
  return Object.assign(server, { output: () => out });
}

interface ProtocolResult {
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

async function benchProtocol(url: string, serverPid: number, afterSetup: () => Promise<void>): Promise<ProtocolResult & { botIds: string[] }> {
  const bots: Bot[] = [];
  for (let i = 0; i < BOTS; i += 10) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(10, BOTS - i) }, (_, k) =>
        Bot.connect({ url, token: signServerToken(JWT_SECRET, { sub: `bench-bot-${i + k}-${Date.now()}` }).token }),
      ),
    );
    await Promise.all(
      batch.map(async (b) => {
        await b.command(`/admin ${ADMIN_CODE}`, /Admin mode enabled/, 30_000);
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

// ------------------------------------------------------------------------------ main

async function main() {
  log(`trade benchmark: ${cpus().length} cores (${cpus()[0]?.model}), ${(totalmem() / 2 ** 30).toFixed(0)} GB, Node ${process.version}`);
  log(`database: ${DB_URL!.replace(/:[^:@/]*@/, ":***@")}`);
  const content = await loadContent("world/manifests");
  const items: ItemLookup = (id) => content.items.get(id);

  log("1. bare settlement (no protocol)");
  let storage = await freshSchema();
  await syncItemDefinitions(storage.orm as never, content);
  const settle = await benchSettlement(storage, items);
  if (process.env.BENCH_ONLY === "settle") {
    await storage.close();
    return;
  }
  // Start the protocol phase on empty tables.
  const tables = [...storage.orm.getMetadata().getAll().values()].map((m) => `"${m.tableName}"`);
  await sql(storage, `truncate table ${[...new Set(tables)].join(", ")} restart identity cascade`);
  await storage.close();

  log(`2. protocol: ${BOTS} plain-WebSocket bots, ${WARMUP_SECONDS} s warm-up + ${SECONDS} s measured, TICK_MS ${TICK_MS}`);
  const world = tempWorld();
  const server = await startServer(world);
  storage = await openStorage({ url: DB_URL, poolMax: 4 });
  let protocol: Awaited<ReturnType<typeof benchProtocol>>;
  let before: Record<string, number> = {};
  try {
    protocol = await benchProtocol(server.url, server.proc.pid!, async () => {
      before = await totals(storage);
    });
  } finally {
    const alive = server.proc.exitCode === null && server.proc.signalCode === null;
    server.proc.kill("SIGTERM");
    await server.exited;
    rmSync(world, { recursive: true, force: true });
    const logFile = join(tmpdir(), "trade-bench-server.log");
    writeFileSync(logFile, server.output());
    log(`  server ${alive ? "was still running at the end" : "HAD EXITED before the end"}; its log (warnings and errors): ${logFile}`);
  }
  log(
    `  ${protocol.perSecond.toFixed(0)} completed trades/s; settlement p50 ${ms(protocol.settleP50)}, p99 ${ms(protocol.settleP99)}; ` +
      `whole trade p50 ${ms(protocol.totalP50)}, p99 ${ms(protocol.totalP99)}; outcomes ${JSON.stringify(protocol.outcomes)}`,
  );
  const c = protocol.cpu;
  log(
    `  CPU in the window: server ${c.server.toFixed(1)} s, bots ${c.bots.toFixed(1)} s, PostgreSQL ${c.postgres.toFixed(1)} s, other processes ${c.others.toFixed(1)} s (of ${2 * SECONDS} available)`,
  );

  log("3. invariants");
  const after = await totals(storage);
  const bad = await violations(storage, items);
  const audited = Number((await sql(storage, `select count(*)::int n from trade_audits where outcome = 'completed'`))[0].n);
  const sorted = (o: Record<string, number>) => JSON.stringify(Object.fromEntries(Object.entries(o).sort()));
  const inv = {
    totals: sorted(after) === sorted(before),
    bounds: bad.length === 0,
    audits: audited === protocol.allCompleted,
  };
  log(
    `  totals unchanged: ${inv.totals}; bounds: ${inv.bounds}${bad.length ? ` (${bad.slice(0, 3).join("; ")})` : ""}; completed audits ${audited} = completed trades ${protocol.allCompleted}: ${inv.audits}`,
  );
  if (!inv.totals) log(`  before ${sorted(before)}\n  after  ${sorted(after)}`);
  await storage.close();

  const best = settle.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  const ratio = best.perSecond / protocol.perSecond;
  log(
    `protocol overhead: bare settlement ${best.perSecond.toFixed(0)}/s (×${best.concurrency}) vs ${protocol.perSecond.toFixed(0)} trades/s over the socket = ${ratio.toFixed(1)}×`,
  );
  writeResults({ settle, protocol, inv, ratio, best, audited });
  if (!inv.totals || !inv.bounds || !inv.audits) process.exit(2);
}

interface CpuSnapshot {
  server: number;
  bots: number;
  /** CPU seconds of PostgreSQL processes that exist at both snapshots (or started after the first), see `cpuDelta`. */
  postgres: number;
  pg: Map<string, number>;
  /** Every process on the machine (from /proc/stat). */
  all: number;
}

/** CPU seconds (user + system) used so far by a process, from /proc (NaN when unreadable). */
function procCpu(pid: number | string): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

/** Server process, this process, and every PostgreSQL process (local server) now. */
function cpuSnapshot(serverPid: number): CpuSnapshot {
  const pg = new Map<string, number>();
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, "utf8").trim() === "postgres") pg.set(pid, procCpu(pid) || 0);
    } catch {
      /* gone */
    }
  }
  const postgres = [...pg.values()].reduce((a, b) => a + b, 0);
  const [user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
  const all = (user! + nice! + system! + irq! + softirq! + (steal ?? 0)) / 100;
  return { server: procCpu(serverPid), bots: procCpu(process.pid), postgres, pg, all };
}

/** PostgreSQL CPU between two snapshots, per process (a backend that exited in between is not subtracted). */
function pgDelta(a: CpuSnapshot, b: CpuSnapshot): number {
  let d = 0;
  for (const [pid, t] of b.pg) d += t - (a.pg.get(pid) ?? 0);
  return d;
}

function writeResults(r: {
  settle: SettleLevel[];
  protocol: ProtocolResult;
  inv: { totals: boolean; bounds: boolean; audits: boolean };
  ratio: number;
  best: SettleLevel;
  audited: number;
}) {
  const p = r.protocol;
  const perTrade = (cpuSeconds: number) => ms((cpuSeconds * 1000) / Math.max(1, p.completed));
  const lines = [
    "# Trade benchmark results",
    "",
    `Run ${new Date().toISOString()} with \`npm run bench:trade\` on ${cpus().length} cores (${cpus()[0]?.model}), Node ${process.version}, PostgreSQL on the same machine.`,
    "Client bots, the server process and PostgreSQL share the cores, with whatever else runs on the machine",
    "(its CPU use is measured and shown: other engineers' test and load runs shared this machine).",
    "",
    "## Bare settlement (`settleTrade`, no protocol)",
    "",
    "| concurrent | settlements | per second | p50 | p99 | failed | CPU per settlement: client / PostgreSQL | CPU used by other processes |",
    "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ...r.settle.map(
      (l) =>
        `| ${l.concurrency} | ${l.settlements} | ${l.perSecond.toFixed(0)} | ${ms(l.p50)} | ${ms(l.p99)} | ${l.failed} | ` +
        `${l.clientMs.toFixed(2)} / ${l.postgresMs.toFixed(2)} ms | ${l.others.toFixed(1)} s of ${2 * SETTLE_SECONDS} |`,
    ),
    "",
    "## Over the socket (server process, plain-WebSocket bots)",
    "",
    `${p.bots} bots, ${p.seconds} s measured after a ${WARMUP_SECONDS} s warm-up, TICK_MS ${TICK_MS}; each trade: request, accept, one offer each`,
    "(1 feather against 1 coin), accept on the offer screen, accept on the confirmation screen.",
    "",
    "| completed trades/s | settlement p50 | settlement p99 | whole trade p50 | whole trade p99 |",
    "|---:|---:|---:|---:|---:|",
    `| ${p.perSecond.toFixed(0)} | ${ms(p.settleP50)} | ${ms(p.settleP99)} | ${ms(p.totalP50)} | ${ms(p.totalP99)} |`,
    "",
    `CPU during the measured ${p.seconds} s (2 cores = ${2 * p.seconds} CPU-seconds available): server ${p.cpu.server.toFixed(1)} s, ` +
      `bots ${p.cpu.bots.toFixed(1)} s, PostgreSQL ${p.cpu.postgres.toFixed(1)} s; per completed trade: server ${perTrade(p.cpu.server)}, ` +
      `bots ${perTrade(p.cpu.bots)}, PostgreSQL ${perTrade(p.cpu.postgres)}. Other processes on the machine used ${p.cpu.others.toFixed(1)} s.`,
    "",
    "Settlement latency: from the later of the two confirmation-screen accepts to the later `tradeCompleted`.",
    `Outcomes over the whole run: \`${JSON.stringify(p.outcomes)}\`.`,
    "",
    `Protocol overhead: ${r.best.perSecond.toFixed(0)} bare settlements/s (×${r.best.concurrency}) against ${p.perSecond.toFixed(0)} trades/s end to end = **${r.ratio.toFixed(1)}×**.`,
    "",
    "## Invariants after the run",
    "",
    `- totals of every item id and of coins unchanged: ${r.inv.totals ? "yes" : "**NO**"}`,
    `- no inventory over 28 slots, no negative or over-cap stack: ${r.inv.bounds ? "yes" : "**NO**"}`,
    `- completed audit records (${r.audited}) = completed trades (${p.allCompleted}): ${r.inv.audits ? "yes" : "**NO**"}`,
    "",
  ];
  // Hand-written notes below the marker survive a new run.
  const file = "loadtest/trade/RESULTS.md";
  const marker = "<!-- notes: kept across runs -->";
  const old = existsSync(file) ? readFileSync(file, "utf8") : "";
  const notes = old.includes(marker) ? old.slice(old.indexOf(marker)) : `${marker}\n`;
  writeFileSync(file, `${lines.join("\n")}\n${notes}`);
  log("wrote loadtest/trade/RESULTS.md");
}

await main();
process.exit(0);
