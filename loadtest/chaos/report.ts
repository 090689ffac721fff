/**
 * The checks of the chaos run, made with everything stopped (docs/chaos.md "What it checks"), and
 * its report:
 *
 * 1. conservation: every item id (and coins) over every stored character (inventory, equipment,
 *    bank, coins) plus the ground in storage equals the start;
 * 2. one world at a time: no item change (`player:sync`) and no `tradeCompleted` reached a bot from
 *    a world after another world had loaded its character;
 * 3. audits: every trade a bot saw complete has its `completed` audit record.
 */
import type { ChaosBot, DoublePlay } from "./bot.js";
import type { Totals } from "./database.js";
import type { FaultEvent } from "./faults.js";
import type { GroundCount } from "./ground.js";

export interface ChaosFacts {
  seconds: number;
  start: Totals;
  end: Totals;
  groundAtStart: GroundCount;
  groundAtEnd: GroundCount;
  /** Trade id → the world a bot saw it complete in. */
  tradesSeen: Map<string, string>;
  audits: Set<string>;
  doublePlays: DoublePlay[];
  openDeaths: number;
  outcomes: Map<string, number>;
  faults: FaultEvent[];
  faultErrors: string[];
  bots: ChaosBot[];
  /** `<process>: <log line>` → count. */
  watched: Map<string, number>;
  /** Longest time each process reported `storage: "down"` on /status, with its pool then. */
  storageDown: string[];
  uncleanExits: string[];
  logFile: string;
}

export interface ChaosResult {
  violations: string[];
  report: string;
  tradesCompleted: number;
  faults: number;
  /** Item id → end minus start (only those that changed). */
  delta: Totals;
}

const sum = (a: Totals, b: Totals): Totals => {
  const out: Totals = { ...a };
  for (const [k, v] of Object.entries(b)) out[k] = (out[k] ?? 0) + v;
  return out;
};

const fmtMap = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v}`)
    .join(", ") || "none";

/** Check the facts; the report names every violation with its figures. */
export function check(f: ChaosFacts): ChaosResult {
  const violations: string[] = [];
  const before = sum(f.start, f.groundAtStart.totals);
  const after = sum(f.end, f.groundAtEnd.totals);
  const delta: Totals = {};
  const items = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
  for (const id of items) {
    const d = (after[id] ?? 0) - (before[id] ?? 0);
    if (d !== 0) delta[id] = d;
  }
  const created = Object.values(delta)
    .filter((d) => d > 0)
    .reduce((a, b) => a + b, 0);
  const lost = -Object.values(delta)
    .filter((d) => d < 0)
    .reduce((a, b) => a + b, 0);
  if (created + lost > 0)
    violations.push(
      `conservation: ${created} items created and ${lost} lost (${Object.entries(delta)
        .map(([k, d]) => `${k} ${d > 0 ? "+" : ""}${d}`)
        .join(", ")})`,
    );

  const missing = [...f.tradesSeen.keys()].filter((id) => !f.audits.has(id));
  if (missing.length > 0)
    violations.push(`audits: ${missing.length} trades seen completed have no completed audit record (e.g. ${missing.slice(0, 3).join(", ")})`);

  const dp = new Map<string, DoublePlay>();
  // The first of each kind per character and stale world: the later ones repeat it.
  for (const d of f.doublePlays) if (!dp.has(`${d.character} ${d.event} ${d.stale}`)) dp.set(`${d.character} ${d.event} ${d.stale}`, d);
  for (const d of dp.values()) {
    const near = f.faults.filter((e) => e.at >= d.loadedAt - 20_000 && e.at <= d.at).map((e) => `${e.kind} ${e.target} ${((e.at - d.at) / 1000).toFixed(1)} s`);
    violations.push(
      `one world at a time: ${d.character} got ${d.event} from ${d.stale} ${d.at - d.loadedAt} ms after ${d.current} had loaded it (faults in the 20 s before: ${near.join(", ") || "none"})`,
    );
  }
  if (f.openDeaths > 0) violations.push(`${f.openDeaths} death locks left open (bots never fight)`);

  const kinds = new Map<string, number>();
  for (const e of f.faults) kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
  const leftovers = f.bots.flatMap((b) => b.leftovers);
  const trades = [...f.outcomes].filter(([k]) => k.startsWith("trade:")).map(([k, v]) => [k.slice(6), v] as const);
  const other = [...f.outcomes].filter(([k]) => !k.startsWith("trade:"));
  const refusals = new Map<string, number>();
  for (const b of f.bots) for (const [k, v] of b.refusals) refusals.set(k, (refusals.get(k) ?? 0) + v);
  const lines = [
    `chaos run: ${f.bots.length} bots, ${f.seconds.toFixed(0)} s`,
    `trades completed (seen by the bots): ${f.tradesSeen.size}; completed audit records: ${f.audits.size}`,
    `trade outcomes: ${fmtMap(new Map(trades))}`,
    `other outcomes: ${fmtMap(new Map(other))}`,
    `faults injected: ${f.faults.length} (${fmtMap(kinds)})${f.faultErrors.length ? `; injector errors: ${f.faultErrors.join(" | ")}` : ""}`,
    `bot sessions: ${f.bots.reduce((a, b) => a + b.sessions.length, 0)}; joins refused or failed: ${fmtMap(refusals)}`,
    `ground in storage: start ${f.groundAtStart.sources.join(", ")}; end ${f.groundAtEnd.sources.join(", ")}` +
      (f.groundAtEnd.sources.every((s) => s.startsWith("world_chunks: 0 rows")) ? " (no piles persisted: the ground counts 0)" : ""),
    `piles the bots dropped and never got back: ${leftovers.length}${leftovers.length ? ` (${leftovers.map((l) => `${l.itemId}×${l.quantity}@${l.instance}`).join(", ")})` : ""}`,
    `server log lines: ${fmtMap(f.watched)}; processes that did not stop by themselves at SIGTERM: ${f.uncleanExits.join(", ") || "none"}`,
    `longest time a process said its storage was down (GET /status): ${f.storageDown.join(", ") || "never"}`,
    `server logs: ${f.logFile}`,
    "items (start → end, ground included):",
    ...items.map(
      (id) =>
        `  ${id.padEnd(20)} ${String(before[id] ?? 0).padStart(7)} → ${String(after[id] ?? 0).padStart(7)}${delta[id] ? `  (${delta[id] > 0 ? "+" : ""}${delta[id]})` : ""}`,
    ),
    violations.length === 0 ? "violations: none" : `VIOLATIONS (${violations.length}):`,
    ...violations.slice(0, 40).map((v) => `  - ${v}`),
    ...(violations.length > 40 ? [`  … and ${violations.length - 40} more`] : []),
  ];
  return { violations, report: lines.join("\n"), tradesCompleted: f.tradesSeen.size, faults: f.faults.length, delta };
}
