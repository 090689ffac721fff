/** loadtest/trade/RESULTS.md, written by bench:trade (hand-written notes below its marker survive a new run). */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import type { ProtocolResult } from "./protocol.js";
import { log, ms, SETTLE_SECONDS, TICK_MS, WARMUP_SECONDS } from "./options.js";
import type { SettleLevel } from "./settle.js";

export function writeResults(r: {
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
