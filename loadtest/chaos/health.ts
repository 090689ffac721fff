/**
 * What the servers say about themselves during the chaos run (docs/chaos.md "What it checks"):
 * every few seconds each running, unstalled process's `GET /status` and its database pool gauges
 * (`realm_db_pool_in_use`, `realm_db_pool_size` on its metrics listener), so the report can tell
 * how long a process had no storage after a fault and whether its pool was exhausted meanwhile.
 */
import type { ServerProcess } from "../lib/cluster.js";

interface Streak {
  from: number;
  to: number;
  /** Pool connections in use / pool size at the last sample of the streak. */
  pool?: string;
}

export class HealthSampler {
  /** Process name → the longest run of samples with `storage: "down"`. */
  private readonly longest = new Map<string, Streak>();
  private readonly current = new Map<string, Streak>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly servers: ServerProcess[]) {}

  start(everyMs = 2_000): void {
    this.timer = setInterval(() => void this.sample(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async sample() {
    await Promise.all(
      this.servers.map(async (s) => {
        if (!s.running || s.stopped) return this.current.delete(s.spec.name);
        const status = await fetch(`${s.url}/status`, { signal: AbortSignal.timeout(1_500) })
          .then((r) => r.json() as Promise<{ storage?: string }>)
          .catch(() => undefined);
        if (status?.storage !== "down") return this.current.delete(s.spec.name);
        const now = Date.now();
        const streak = this.current.get(s.spec.name) ?? { from: now, to: now };
        streak.to = now;
        streak.pool = await this.pool(s);
        this.current.set(s.spec.name, streak);
        const best = this.longest.get(s.spec.name);
        if (!best || best.to - best.from <= streak.to - streak.from) this.longest.set(s.spec.name, { ...streak });
      }),
    );
  }

  private async pool(s: ServerProcess): Promise<string | undefined> {
    if (!s.metricsUrl) return undefined;
    const text = await fetch(s.metricsUrl, { signal: AbortSignal.timeout(1_500) })
      .then((r) => r.text())
      .catch(() => "");
    const gauge = (name: string) => /^(\S+)\s+(\S+)$/m.exec(text.split("\n").find((l) => l.startsWith(`${name} `)) ?? "")?.[2];
    const used = gauge("realm_db_pool_in_use");
    return used === undefined ? undefined : `${used}/${gauge("realm_db_pool_size")}`;
  }

  /** e.g. `p3 96 s (pool 10/10 in use)`, one per process that reported storage down. */
  summary(): string[] {
    return [...this.longest].map(([name, s]) => `${name} ${((s.to - s.from) / 1000).toFixed(0)} s${s.pool ? ` (pool ${s.pool} in use)` : ""}`);
  }
}
