/**
 * Process and machine sampling for the world benchmark, from outside the processes: CPU time and
 * RSS of any pid from `/proc/<pid>/stat` (Linux) and busy CPU of the whole machine from `/proc/stat`
 * (the server's Prometheus page is read by lib/metrics.ts).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { cpus } from "node:os";
import { round1 } from "./report.js";

function getconf(name: string, fallback: number): number {
  const r = spawnSync("getconf", [name], { encoding: "utf8" });
  const n = Number(r.stdout?.trim());
  return r.status === 0 && n > 0 ? n : fallback;
}
const CLK_TCK = getconf("CLK_TCK", 100);
const PAGE = getconf("PAGESIZE", 4096);

/** CPU time (user + system, seconds) and RSS (bytes) of a process, or undefined once it is gone. */
export function procStat(pid: number): { cpuS: number; rss: number } | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces and parentheses): state is field 3.
    const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
    const utime = Number(f[11]);
    const stime = Number(f[12]);
    const rssPages = Number(f[21]);
    return { cpuS: (utime + stime) / CLK_TCK, rss: rssPages * PAGE };
  } catch {
    return undefined;
  }
}

/** Busy and total CPU time of the whole machine (all cores, in clock ticks). */
export function hostCpu(): { busy: number; total: number } | undefined {
  try {
    const f = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1).map(Number);
    const idle = f[3]! + (f[4] ?? 0);
    const total = f.reduce((a, b) => a + b, 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

interface Sample {
  /** Which sampling pass took it (all processes of one pass share it). */
  seq: number;
  t: number;
  cpuS: number;
  rss: number;
}

export interface CpuRss {
  /** CPU in % of one core over the span (all the watched processes of the name together). */
  cpuAvg: number;
  /** Highest CPU of one sampling interval, % of one core. */
  cpuPeak: number;
  /** Highest RSS seen (the processes of the name summed), MB. */
  rssPeakMb: number;
  samples: number;
}

/**
 * Samples watched processes once per `intervalMs`. Processes are grouped by name (e.g. "server",
 * "bots"): a group's CPU and RSS are the sums over its processes at each sample.
 */
export class ProcSampler {
  private readonly groups = new Map<string, Map<number, Sample[]>>();
  private readonly host: { t: number; busy: number; total: number }[] = [];
  private readonly timer: NodeJS.Timeout;
  private seq = 0;

  constructor(intervalMs = 1_000) {
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  watch(group: string, pid: number | undefined) {
    if (pid === undefined) return;
    const g = this.groups.get(group) ?? new Map<number, Sample[]>();
    this.groups.set(group, g);
    if (!g.has(pid)) g.set(pid, []);
    this.sampleOne(g.get(pid)!, pid, performance.now(), ++this.seq);
  }

  sample() {
    const t = performance.now();
    const seq = ++this.seq;
    for (const g of this.groups.values()) for (const [pid, list] of g) this.sampleOne(list, pid, t, seq);
    const h = hostCpu();
    if (h) this.host.push({ t, ...h });
  }

  private sampleOne(list: Sample[], pid: number, t: number, seq: number) {
    const s = procStat(pid);
    if (s) list.push({ seq, t, ...s });
  }

  stop() {
    clearInterval(this.timer);
  }

  /** CPU and RSS of a group between two `performance.now()` times (both ends sampled if still running). */
  stats(group: string, from: number, to: number): CpuRss {
    const g = this.groups.get(group);
    let cpuSeconds = 0;
    let rssPeak = 0;
    let cpuPeak = 0;
    let samples = 0;
    let span = 0;
    // Peak CPU: per interval, summed over the group's processes (one sampling pass ends each interval).
    const perInterval = new Map<number, number>();
    for (const list of g?.values() ?? []) {
      const inside = list.filter((s) => s.t >= from - 50 && s.t <= to + 50);
      if (inside.length === 0) continue;
      samples = Math.max(samples, inside.length);
      cpuSeconds += inside.at(-1)!.cpuS - inside[0]!.cpuS;
      span = Math.max(span, inside.at(-1)!.t - inside[0]!.t);
      for (let i = 1; i < inside.length; i++) {
        const a = inside[i - 1]!;
        const b = inside[i]!;
        // Intervals shorter than half a second (a pass asked for between two timed ones) are too noisy for a peak.
        if (b.t - a.t < 500) continue;
        const key = b.seq;
        perInterval.set(key, (perInterval.get(key) ?? 0) + ((b.cpuS - a.cpuS) / ((b.t - a.t) / 1000)) * 100);
      }
    }
    // RSS peak of the group: sum per sampling instant.
    const rssAt = new Map<number, number>();
    for (const list of g?.values() ?? []) for (const s of list) if (s.t >= from - 50 && s.t <= to + 50) rssAt.set(s.seq, (rssAt.get(s.seq) ?? 0) + s.rss);
    for (const v of rssAt.values()) rssPeak = Math.max(rssPeak, v);
    for (const v of perInterval.values()) cpuPeak = Math.max(cpuPeak, v);
    // Over the time the samples cover (the sampler also samples at both ends when asked to).
    const seconds = Math.max(0.001, (span || to - from) / 1000);
    return { cpuAvg: round1((cpuSeconds / seconds) * 100), cpuPeak: round1(cpuPeak), rssPeakMb: Math.round(rssPeak / 1048576), samples };
  }

  /** Busy CPU of the whole machine between two times, in % of one core (out of cores × 100). */
  hostStats(from: number, to: number): { busy: number; of: number } | undefined {
    const inside = this.host.filter((s) => s.t >= from - 50 && s.t <= to + 50);
    if (inside.length < 2) return undefined;
    const a = inside[0]!;
    const b = inside.at(-1)!;
    return { busy: Math.round(((b.busy - a.busy) / Math.max(1, b.total - a.total)) * cpus().length * 100), of: cpus().length * 100 };
  }
}
