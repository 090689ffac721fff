/**
 * Reading a server's Prometheus page (`METRICS_PORT`, src/metrics.ts) between two moments of a run:
 * counters by difference, one label's values, and histogram quantiles, among them the world tick's
 * duration (`realm_tick_duration_seconds`), which the load scripts report instead of timing the room.
 */
import { round1 } from "./report.js";

/** One scrape: every sample line as `name{labels}` → value. */
export type Scrape = Map<string, number>;

export async function scrape(url: string): Promise<Scrape | undefined> {
  try {
    const r = await fetch(url, { signal: AbortSignal.timeout(10_000) });
    if (!r.ok) return undefined;
    const out: Scrape = new Map();
    for (const line of (await r.text()).split("\n")) {
      if (!line || line.startsWith("#")) continue;
      const i = line.lastIndexOf(" ");
      out.set(line.slice(0, i), Number(line.slice(i + 1)));
    }
    return out;
  } catch {
    return undefined;
  }
}

/** Sum of the samples of `name` whose labels contain every `match` fragment, difference `b - a`. */
export function counterDiff(a: Scrape | undefined, b: Scrape | undefined, name: string, match: string[] = []): number {
  const sum = (s: Scrape | undefined) => {
    let n = 0;
    for (const [k, v] of s ?? []) if ((k === name || k.startsWith(`${name}{`)) && match.every((m) => k.includes(m))) n += v;
    return n;
  };
  return sum(b) - sum(a);
}

/** Values of `name`'s samples by one label (differences `b - a`), e.g. refusals by code. */
export function byLabel(a: Scrape | undefined, b: Scrape | undefined, name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of b ?? []) {
    if (!k.startsWith(`${name}{`)) continue;
    const m = new RegExp(`${label}="([^"]*)"`).exec(k);
    if (!m) continue;
    const d = v - (a?.get(k) ?? 0);
    if (d) out[m[1]!] = (out[m[1]!] ?? 0) + d;
  }
  return out;
}

/**
 * A quantile of a Prometheus histogram over the span between two scrapes, linearly interpolated
 * inside its bucket (as PromQL's histogram_quantile does), in the histogram's unit. `bucket` is the
 * upper bound of the bucket it fell in (the resolution of the figure).
 */
export function histogramQuantile(
  a: Scrape | undefined,
  b: Scrape | undefined,
  name: string,
  q: number,
): { value: number; bucket: number; count: number } | undefined {
  const buckets: { le: number; n: number }[] = [];
  for (const [k, v] of b ?? []) {
    if (!k.startsWith(`${name}_bucket{`)) continue;
    const m = /le="([^"]+)"/.exec(k);
    if (!m) continue;
    buckets.push({ le: m[1] === "+Inf" ? Infinity : Number(m[1]), n: v - (a?.get(k) ?? 0) });
  }
  buckets.sort((x, y) => x.le - y.le);
  const count = buckets.at(-1)?.n ?? 0;
  if (count <= 0) return undefined;
  const rank = q * count;
  let prevLe = 0;
  let prevN = 0;
  for (const { le, n } of buckets) {
    if (n >= rank) {
      if (le === Infinity) return { value: prevLe, bucket: Infinity, count };
      const inBucket = n - prevN;
      const value = inBucket > 0 ? prevLe + ((le - prevLe) * (rank - prevN)) / inBucket : le;
      return { value, bucket: le, count };
    }
    prevLe = le;
    prevN = n;
  }
  return undefined;
}

/** Tick figures of a span, in milliseconds. */
export interface TickStats {
  count: number;
  p50?: number;
  p99?: number;
  max?: number;
}

/** The upper bound of the highest bucket of histogram `name` that grew between the scrapes (Infinity past the last bound). */
export function histogramMax(a: Scrape | undefined, b: Scrape | undefined, name: string): number | undefined {
  let max: number | undefined;
  for (const [k, v] of b ?? []) {
    if (!k.startsWith(`${name}_bucket{`)) continue;
    const m = /le="([^"]+)"/.exec(k);
    if (!m) continue;
    const le = m[1] === "+Inf" ? Infinity : Number(m[1]);
    // Buckets are cumulative: the lowest bucket holding every new sample bounds the largest.
    if (v - (a?.get(k) ?? 0) === counterDiff(a, b, `${name}_count`) && (max === undefined || le < max)) max = le;
  }
  return max;
}

/** One histogram's figures over the span between two scrapes, in milliseconds (p50/p99 interpolated in their buckets, max a bucket bound). */
function histogramMs(a: Scrape | undefined, b: Scrape | undefined, name: string): (TickStats & { bucketMs: number }) | undefined {
  const p99 = histogramQuantile(a, b, name, 0.99);
  const p50 = histogramQuantile(a, b, name, 0.5);
  if (!p99 || !p50) return undefined;
  const max = histogramMax(a, b, name);
  return {
    count: p99.count,
    p50: round1(p50.value * 1000),
    p99: round1(p99.value * 1000),
    max: max === undefined ? undefined : max * 1000,
    bucketMs: p99.bucket * 1000,
  };
}

/**
 * The world tick over the span between two scrapes, from the game's own metrics (src/metrics.ts):
 * its duration (`realm_tick_duration_seconds`) and the CPU time the process used during it
 * (`realm_tick_cpu_seconds`, which leaves out waiting for a core). `bucketMs` is the upper bound
 * of the bucket the duration's p99 fell in (the figure's resolution).
 */
export function tickFromMetrics(a: Scrape | undefined, b: Scrape | undefined): (TickStats & { bucketMs: number; cpu?: TickStats }) | undefined {
  const wall = histogramMs(a, b, "realm_tick_duration_seconds");
  if (!wall) return undefined;
  const cpu = histogramMs(a, b, "realm_tick_cpu_seconds");
  return { ...wall, cpu };
}
