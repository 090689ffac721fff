/**
 * The lines `loadtest/probe.ts` prints from inside a server process it is loaded into: one
 * "PROBE {json}" a second with the process's CPU, memory, event loop and (baseline only) ticks.
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { TickStats } from "./metrics.js";

export interface Probe {
  t: number;
  cpu: number;
  rss: number;
  heap: number;
  eld: { p50: number; p99: number; max: number; elu: number };
  tick: TickStats;
  window: {
    seconds: number;
    cpu: number;
    /** The window's CPU by thread, % of a core (loadtest/probe.ts `threadCpu`; Linux only). */
    threads?: { main: number; v8: number; libuv: number; other: number };
    peakRss: number;
    p50: number;
    p99: number;
    max: number;
    elu: number;
    /** Ticks the server reported to the probe (the bare baseline); the game's come from its metrics. */
    tick: TickStats;
    tickCpu: TickStats;
    /** The garbage collector's main-thread pauses in the window (loadtest/probe.ts). */
    gc?: { minor: { count: number; ms: number }; major: { count: number; ms: number } };
  };
}

/** An `onLine` for servers started with the probe: its lines go to `probes` (and stay out of the tail). */
export function collectProbes(probes: Probe[]): (line: string) => boolean {
  return (line) => {
    if (!line.startsWith("PROBE ")) return false;
    probes.push(JSON.parse(line.slice(6)) as Probe);
    return true;
  };
}

/** The node arguments that load the probe into a server: from the sources under tsx, or compiled (dist/loadtest/probe.js). */
export function probeImport(root: string, compiled: boolean): string[] {
  const href = pathToFileURL(join(root, compiled ? "dist/loadtest/probe.js" : "loadtest/probe.ts")).href;
  return compiled ? ["--import", href] : ["--import", "tsx", "--import", href];
}
