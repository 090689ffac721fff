/** What bench:scale measures: a process's and a world's figures over one window, and one ladder step. */
import type { GameContent } from "../../src/content/load.js";
import type { JoinSummary, Placement } from "../fleet.js";
import type { Proc } from "./procs.js";

export interface Ctx {
  world: string;
  manifests: string;
  content: GameContent;
}

export interface WorldSlot {
  world: number;
  /** The process hosting the world. */
  host: Proc;
  /** The process the world's bots make characters and matchmake through. */
  via: Proc;
  place: Placement;
  bots: number;
  pairs: number;
}

export interface ProcFigures {
  name: string;
  world: number;
  cpuAvg: number;
  cpuPeak: number;
  rssPeakMb: number;
  loopP99Ms: number;
  /** From the process's `realm_tick_duration_seconds` and `realm_tick_cpu_seconds` histograms (interpolated in their buckets). */
  tickP99Ms?: number;
  tickCpuP99Ms?: number;
  saveFailures: number;
  joinRefusals: Record<string, number>;
  errorLines: number;
}

export interface WorldFigures {
  world: number;
  bots: number;
  connected: number;
  samples: number;
  lost: number;
  unseen: number;
  p50Ms: number;
  p99Ms: number;
  /** Players each observer's state held at the window's end. */
  observersSee: { min: number; max: number };
  /** Players `GET /api/v1/worlds` of the first process lists in this world after the window (every process's rooms once Redis shares them). */
  listed?: number;
}

export interface Step {
  phase: "one" | "two";
  total: number;
  join: JoinSummary;
  prepareFailed: number;
  procs: ProcFigures[];
  worlds: WorldFigures[];
  cpuTotal: number;
  rssTotalMb: number;
  moveVisible: { samples: number; lost: number; p50Ms: number; p99Ms: number };
  bots: { cpuAvg: number; rssPeakMb: number; loopP99Ms: number };
  /** PostgreSQL backends connected to the benchmark's database, % of one core. */
  postgresCpu: number;
  machineBusy?: { busy: number; of: number };
  /** The Redis server (the whole server: other users of it count too), % of one core; two processes on Redis only. */
  redisCpu?: number;
  /** Busy CPU of the machine not used by the servers, the bots, the database's backends or Redis (other work), % of one core. */
  otherCpu?: number;
  loadAvg: number[];
  closed: Record<string, number>;
  pass: boolean;
  /** Why it did not pass. */
  why?: string;
}
