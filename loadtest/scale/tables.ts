/** The table bench:scale prints at the end: one row per ladder step. */
import { f, type Row } from "../lib/report.js";
import type { Step } from "./figures.js";
import { TWO_REDIS } from "./options.js";

function failures(s: Step): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(s.join.outcomes)) if (k !== "joined") parts.push(`${v} ${k}`);
  if (s.prepareFailed) parts.push(`${s.prepareFailed} characters not made`);
  if (s.join.placeFailed) parts.push(`${s.join.placeFailed} not placed`);
  for (const [k, v] of Object.entries(s.closed)) parts.push(`${v} closed ${k}`);
  if (s.moveVisible.lost) parts.push(`${s.moveVisible.lost} moves lost`);
  const unseen = s.worlds.reduce((n, w) => n + w.unseen, 0);
  if (unseen) parts.push(`mover unseen ${unseen}×`);
  const saves = s.procs.reduce((n, p) => n + p.saveFailures, 0);
  if (saves) parts.push(`${saves} save failures`);
  const errors = s.procs.reduce((n, p) => n + p.errorLines, 0);
  if (errors) parts.push(`${errors} error lines`);
  for (const w of s.worlds)
    if (w.listed === undefined || Math.abs(w.listed - w.connected) > Math.max(2, w.connected * 0.02))
      parts.push(`world ${w.world} lists ${f(w.listed)} players for ${w.connected} bots`);
  return parts.join(", ") || "none";
}

export function rows(steps: Step[]): Row[] {
  return steps.map((s) => ({
    processes: s.phase === "one" ? "1 (world 1)" : TWO_REDIS ? "2 (A: w1, B: w2)" : "2, no Redis",
    clients: s.phase === "one" ? String(s.total) : `${s.total} (${s.worlds.map((w) => w.bots).join("+")})`,
    "CPU % per process": s.procs.map((p) => f(p.cpuAvg)).join(" / "),
    "CPU % total": f(s.cpuTotal),
    "RSS MB": s.procs.map((p) => f(p.rssPeakMb)).join(" / "),
    "tick p99 ms": s.procs.map((p) => f(p.tickP99Ms)).join(" / "),
    "move→visible p50/p99 ms": `${f(s.moveVisible.p50Ms)} / ${f(s.moveVisible.p99Ms)}`,
    "p99 per world": s.worlds.length > 1 ? s.worlds.map((w) => f(w.p99Ms)).join(" / ") : "",
    samples: String(s.moveVisible.samples),
    joined: String(s.worlds.reduce((n, w) => n + w.connected, 0)),
    "bots CPU %": f(s.bots.cpuAvg),
    "PG / Redis CPU %": `${f(s.postgresCpu)} / ${f(s.redisCpu)}`,
    "machine busy % (other)": s.machineBusy ? `${s.machineBusy.busy}/${s.machineBusy.of} (${f(s.otherCpu)})` : "–",
    failures: failures(s),
    "at the bar": s.pass ? "yes" : "no",
  }));
}
