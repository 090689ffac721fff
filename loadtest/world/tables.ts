/** The tables bench:world prints at the end: each scenario's figures with the game's ratios to the baseline, and the bursts. */
import type { TargetKind } from "../bot.js";
import { f, ratio, type Row } from "../lib/report.js";
import type { BurstResult } from "./burst.js";
import { args } from "./options.js";
import type { ScenarioResult } from "./phases.js";

function failures(r: ScenarioResult): string {
  const parts: string[] = [];
  if (r.error) parts.push(`NOT MEASURED: ${r.error}`);
  for (const [k, v] of Object.entries(r.join?.outcomes ?? {})) if (k !== "joined") parts.push(`${v} ${k}`);
  if (r.join?.placeFailed) parts.push(`${r.join.placeFailed} not placed`);
  for (const [k, v] of Object.entries(r.window?.closed ?? {})) parts.push(`${v} closed ${k}`);
  if (r.window?.moveVisible.lost) parts.push(`${r.window.moveVisible.lost} moves lost`);
  if (r.window?.moveVisible.unseen) parts.push(`mover unseen ${r.window.moveVisible.unseen}×`);
  const saves = (r.join?.saveFailures ?? 0) + (r.window?.serverErrors.saveFailures ?? 0);
  if (saves) parts.push(`${saves} save failures`);
  if (r.serverErrorLines) parts.push(`${r.serverErrorLines} error lines`);
  return parts.join(", ") || "none";
}

/** The figures of one scenario row (undefined where not measured). */
function figures(r: ScenarioResult) {
  const m = r.window;
  return {
    cpuAvg: m?.server.cpuAvg,
    cpuPeak: m?.server.cpuPeak,
    rss: r.join || m ? Math.max(m?.server.rssPeakMb ?? 0, r.join?.serverRssPeakMb ?? 0) : undefined,
    loop: m?.server.loopDelayP99Ms,
    tick: m?.tick.p99Ms,
    mvP50: m?.moveVisible.p50Ms,
    mvP99: m?.moveVisible.p99Ms,
    egress: m?.egressBytesPerClientPerS,
    joinAll: r.join?.allSeconds,
    bots: m?.bots.cpuAvg,
  };
}

export function scenarioRows(results: ScenarioResult[]): Row[] {
  const rows: Row[] = [];
  const keyOf = (r: ScenarioResult) => `${r.scenario}/${r.bots}`;
  for (const r of results) {
    const a = figures(r);
    rows.push({
      scenario: r.scenario,
      bots: String(r.bots),
      target: r.target,
      "CPU avg/peak %": `${f(a.cpuAvg)} / ${f(a.cpuPeak)}`,
      "RSS MB": f(a.rss),
      "loop p99 ms": f(a.loop),
      "tick p99 ms": f(a.tick),
      "move→visible p50/p99 ms": `${f(a.mvP50)} / ${f(a.mvP99)}`,
      "egress B/s/client": f(a.egress),
      "join all s": f(a.joinAll),
      "bots CPU %": f(a.bots),
      failures: failures(r),
    });
    const base = results.find((b) => b.target === "baseline" && keyOf(b) === keyOf(r));
    if (r.target === "game" && base) {
      const b = figures(base);
      rows.push({
        scenario: "",
        bots: "",
        target: "game/baseline",
        "CPU avg/peak %": `${ratio(a.cpuAvg, b.cpuAvg)} / ${ratio(a.cpuPeak, b.cpuPeak)}`,
        "RSS MB": ratio(a.rss, b.rss),
        "loop p99 ms": ratio(a.loop, b.loop),
        "tick p99 ms": ratio(a.tick, b.tick),
        "move→visible p50/p99 ms": `${ratio(a.mvP50, b.mvP50)} / ${ratio(a.mvP99, b.mvP99)}`,
        "egress B/s/client": ratio(a.egress, b.egress),
        "join all s": ratio(a.joinAll, b.joinAll),
        "bots CPU %": ratio(a.bots, b.bots),
        failures: "",
      });
    }
  }
  return rows;
}

export type BurstEntry = BurstResult | { target: TargetKind; clients: number; error: string };

export function burstRows(results: BurstEntry[]): Row[] {
  const rows: Row[] = [];
  for (const r of results) {
    if ("error" in r) {
      rows.push({
        clients: String(r.clients),
        target: r.target,
        joined: "–",
        "503 busy": "–",
        "mm refused": "–",
        "other failures": `NOT MEASURED: ${r.error}`,
      });
      continue;
    }
    const other = Object.entries(r.join.outcomes).filter(([k]) => !["joined", "503"].includes(k) && !k.startsWith("http-4") && !k.startsWith("mm-"));
    const refused = Object.entries(r.join.outcomes).filter(([k]) => k.startsWith("http-4") || k.startsWith("mm-"));
    const dropped = Object.entries(r.droppedAfterJoin);
    rows.push({
      clients: String(r.clients),
      target: r.target,
      joined: String(r.join.joined),
      "503 busy": String(r.join.outcomes["503"] ?? 0),
      "mm refused": refused.map(([k, v]) => `${v} ${k}`).join(", ") || "0",
      "other failures":
        [
          ...other.map(([k, v]) => `${v} ${k}`),
          ...dropped.map(([k, v]) => `${v} dropped ${k}`),
          ...(r.serverErrorLines ? [`${r.serverErrorLines} error lines`] : []),
        ].join(", ") || "0",
      ...(args["burst-retry"] ? { "retried (joined after)": `${r.join.retries} (${r.join.joinedAfterRetry})` } : {}),
      "join all s": f(r.join.allSeconds),
      "join p99 ms": f(r.join.p99Ms),
      "/status max ms": f(r.status.maxMs),
      "CPU avg/peak %": `${f(r.server.cpuAvg)} / ${f(r.server.cpuPeak)}`,
      "RSS MB": f(r.server.rssPeakMb),
      "loop p99 ms": f(r.server.loopDelayP99Ms),
      "bots CPU %": f(r.bots.cpuAvg),
    });
  }
  return rows;
}
