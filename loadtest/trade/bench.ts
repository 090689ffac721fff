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
 * The parts are in loadtest/trade/ (settle.ts, protocol.ts, results.ts).
 */
import { rmSync, writeFileSync } from "node:fs";
import { cpus, tmpdir, totalmem } from "node:os";
import { join } from "node:path";
import { syncItemDefinitions } from "../../src/storage/item-definitions.js";
import { loadContent } from "../../src/content/load.js";
import type { ItemLookup } from "../../src/domain/inventory.js";
import { openStorage } from "../../src/storage/orm.js";
import { tempWorld } from "../lib/processes.js";
import { BOTS, DB_URL, freshSchema, log, ms, SECONDS, sql, TICK_MS, totals, violations, WARMUP_SECONDS } from "./options.js";
import { benchProtocol, startServer } from "./protocol.js";
import { writeResults } from "./results.js";
import { benchSettlement } from "./settle.js";
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

await main();
process.exit(0);
