/** CPU seconds of the trade benchmark's processes (server, bots, every PostgreSQL process) between two moments. */
import { readdirSync, readFileSync } from "node:fs";
import { procStat } from "../lib/sampler.js";

export interface CpuSnapshot {
  server: number;
  bots: number;
  /** CPU seconds of PostgreSQL processes that exist at both snapshots (or started after the first), see `cpuDelta`. */
  postgres: number;
  pg: Map<string, number>;
  /** Every process on the machine (from /proc/stat). */
  all: number;
}

/** CPU seconds (user + system) used so far by a process (NaN when unreadable). */
const procCpu = (pid: number | string): number => procStat(Number(pid))?.cpuS ?? NaN;

/** Server process, this process, and every PostgreSQL process (local server) now. */
export function cpuSnapshot(serverPid: number): CpuSnapshot {
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
export function pgDelta(a: CpuSnapshot, b: CpuSnapshot): number {
  let d = 0;
  for (const [pid, t] of b.pg) d += t - (a.pg.get(pid) ?? 0);
  return d;
}
