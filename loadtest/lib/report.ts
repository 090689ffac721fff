/**
 * Figures and tables of the load scripts' reports: rounding, percentiles, ratios to a reference,
 * Markdown tables (the first `left` columns left-aligned, the rest right-aligned), the machine a run
 * was taken on, and the JSON file of a run's results.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { ROOT } from "./processes.js";
export const round1 = (n: number) => Math.round(n * 10) / 10;
export const round2 = (n: number) => Math.round(n * 100) / 100;

/** The `p`th percentile (nearest rank) of sorted numbers; NaN when there are none. */
export function pct(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** A figure for a table: "–" when missing or NaN, "∞" for Infinity. */
export const f = (n: number | undefined, unit = "") => (n === undefined || Number.isNaN(n) ? "–" : n === Infinity ? "∞" : `${n}${unit}`);

/** `a / b` as "×1.23" (whole above 10); "–" when either is missing or `b` is 0. */
export const ratio = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined || Number.isNaN(a) || Number.isNaN(b) || b === 0 ? "–" : `×${a / b >= 10 ? Math.round(a / b) : round2(a / b)}`;

export type Row = Record<string, string>;

/** A Markdown table of `rows` (columns in order of first appearance); the first `left` columns are left-aligned. */
export function table(rows: Row[], left = 1): string {
  if (rows.length === 0) return "";
  const cols = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (i < left ? c.padEnd(width[i]!) : c.padStart(width[i]!))).join(" | ")} |`;
  return [
    line(cols),
    `|${width.map((w, i) => (i < left ? `-${"-".repeat(w)}-` : `-${"-".repeat(w)}:`)).join("|")}|`,
    ...rows.map((r) => line(cols.map((c) => r[c] ?? ""))),
  ].join("\n");
}

/** The machine a run is taken on (with the PostgreSQL server's version when `postgresUrl` is given). */
export function machine(postgresUrl?: string) {
  return {
    cpu: `${cpus().length} × ${cpus()[0]?.model ?? "unknown"}`,
    memoryGb: Math.round(totalmem() / 1073741824),
    kernel: release(),
    node: process.version,
    postgres: postgresUrl
      ? spawnSync("psql", [postgresUrl, "-tAc", "show server_version"], { encoding: "utf8", timeout: 5_000 }).stdout?.trim() || undefined
      : undefined,
  };
}

/** Where a run's results go: `path` if given, else loadtest/results/<script>-<date>.json. */
export const resultsPath = (script: string, date: string, path?: string) =>
  path ?? join(ROOT, "loadtest/results", `${script}-${date.replace(/[:.]/g, "-")}.json`);

/** Write `data` as indented JSON to `path` (its directory made if need be). */
export function writeJson(path: string, data: unknown): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, JSON.stringify(data, null, 2) + "\n");
}
