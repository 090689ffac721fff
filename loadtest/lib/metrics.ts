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

/** Tick figures of the span between two scrapes, in milliseconds (as the probe prints the baseline's). */
export interface TickStats {
  count: number;
  p50?: number;
  p99?: number;
  max?: number;
}

/**
 * The world tick's duration over the span between two scrapes, from the game's
 * `realm_tick_duration_seconds` histogram (interpolated in its bucket, as PromQL does): p50 and p99
 * in milliseconds, and the upper bound of the p99's bucket (`bucketMs`, the figure's resolution).
 */
export function tickFromMetrics(a: Scrape | undefined, b: Scrape | undefined): (TickStats & { bucketMs: number }) | undefined {
  const p99 = histogramQuantile(a, b, "realm_tick_duration_seconds", 0.99);
  const p50 = histogramQuantile(a, b, "realm_tick_duration_seconds", 0.5);
  if (!p99 || !p50) return undefined;
  return { count: p99.count, p50: round1(p50.value * 1000), p99: round1(p99.value * 1000), bucketMs: p99.bucket * 1000 };
}
