/**
 * A ladder of bench:scale: sizes tried one after the other in one phase until one does not pass the
 * bar (or the budget would run out), and the capacity it shows.
 */
import { ladderCapacity, type Capacity } from "../capacity.js";
import { f } from "../lib/report.js";
import type { Step } from "./figures.js";
import { DURATION_S, JOINED_SHARE, WARMUP_S } from "./options.js";
import type { Phase } from "./phase.js";

/** Time one ladder step may need at most (join, warm-up, window, slack), to stop before the budget runs out. */
export const stepMs = (added: number) => (WARMUP_S + DURATION_S + 30) * 1000 + added * 40;

export async function ladder(phase: Phase, sizes: number[], bar: () => number, steps: Step[], label: string, until: number): Promise<string | undefined> {
  let have = 0;
  for (const total of sizes) {
    if (until - Date.now() < stepMs(total - have)) return `stopped before ${total}: the --budget would run out`;
    const t = Date.now();
    const { join, prepareFailed } = await phase.grow(total);
    have = total;
    const bad = Object.entries(join.outcomes).filter(([k]) => k !== "joined");
    console.log(
      `  [${label} ${total}] +${join.attempted}: ${join.joined} joined in ${join.allSeconds} s (p99 ${join.p99Ms} ms)` +
        (bad.length ? `; not joined: ${bad.map(([k, v]) => `${v} × ${k}`).join(", ")}` : "") +
        (join.placeFailed ? `; ${join.placeFailed} not placed` : "") +
        (join.errors.length ? `\n      ${join.errors.join("\n      ")}` : ""),
    );
    const m = await phase.measure();
    const connected = m.worlds.reduce((n, w) => n + w.connected, 0);
    const why: string[] = [];
    if (connected < total * JOINED_SHARE) why.push(`${connected}/${total} connected`);
    if (!(m.moveVisible.p99Ms <= bar())) why.push(`p99 ${m.moveVisible.p99Ms} ms > ${bar()} ms`);
    if (m.moveVisible.samples < 20) why.push(`only ${m.moveVisible.samples} probe samples`);
    const step: Step = { phase: phase.name, total, join, prepareFailed, ...m, pass: why.length === 0, why: why.join(", ") || undefined };
    steps.push(step);
    console.log(
      `  [${label} ${total}] ${connected} connected; ` +
        m.procs
          .map(
            (p) =>
              `${p.name}: cpu ${p.cpuAvg}% (peak ${p.cpuPeak}), rss ${p.rssPeakMb} MB, tick p99 ${p.tickP99Ms ?? "–"} ms (cpu ${p.tickCpuP99Ms ?? "–"}), loop p99 ${p.loopP99Ms} ms`,
          )
          .join("; ") +
        `; move→visible p50 ${m.moveVisible.p50Ms} / p99 ${m.moveVisible.p99Ms} ms over ${m.moveVisible.samples}` +
        (m.worlds.length > 1 ? ` (${m.worlds.map((w) => `w${w.world} ${w.p99Ms}`).join(", ")})` : "") +
        `; observers see ${m.worlds.map((w) => `${w.observersSee.min}–${w.observersSee.max}`).join(", ")}; listed ${m.worlds.map((w) => `w${w.world} ${f(w.listed)}`).join(", ")}; bots cpu ${m.bots.cpuAvg}% (loop p99 ${m.bots.loopP99Ms} ms); ` +
        `postgres ${m.postgresCpu}%${m.redisCpu === undefined ? "" : `, redis ${m.redisCpu}%`}; machine ${m.machineBusy?.busy ?? "?"} of ${m.machineBusy?.of ?? "?"} (other work ${m.otherCpu ?? "?"}), load ${m.loadAvg.join(" ")}; ${((Date.now() - t) / 1000).toFixed(0)} s — ${step.pass ? "passes" : `does not pass (${step.why})`}` +
        (m.bots.loopP99Ms > 100 ? ` — WARNING: the bots' event loop lagged (p99 ${m.bots.loopP99Ms} ms): they may be the bottleneck` : ""),
    );
    if (!step.pass) return undefined;
  }
  return undefined;
}

// ------------------------------------------------------------------ capacity and tables

export function capacity(steps: Step[], bar: number): Capacity {
  return ladderCapacity(
    steps.map((s) => ({
      total: s.total,
      pass: s.pass,
      p99Ms: s.moveVisible.p99Ms,
      overBarOnly: !s.pass && s.why?.startsWith("p99") === true && !s.why.includes(","),
    })),
    bar,
  );
}
