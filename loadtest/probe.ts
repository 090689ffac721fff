/**
 * Server-side probe for the load scripts (lib/probe-lines.ts reads its lines). Loaded into the
 * server process with `node --import tsx --import ./loadtest/probe.ts <entry>`; it changes nothing
 * in the server and prints one line per second on stdout:
 *
 *   PROBE {"t":…, "cpu":…, "rss":…, "heap":…, "eld":{…}, "tick":{…}, "window":{…}}
 *
 * `cpu` is the process's CPU time over the last second as a percentage of one core; `rss` and
 * `heap` are bytes; `eld` is the event-loop delay of the last second and `window` the same since the
 * last SIGUSR2 (the benchmark sends one when its measurement window opens), both in milliseconds
 * beyond the 10 ms sampling timer, plus event-loop utilisation.
 *
 * Ticks: the game server exports its own (`realm_tick_duration_seconds` on METRICS_PORT), which the
 * benchmarks read; the probe does not touch the world room. A server without metrics (the bench's
 * bare Colyseus baseline) reports its ticks here by calling
 * `globalThis.__benchRecordTick(wallMicroseconds, cpuMicroseconds)`: `tick` and `tickCpu` (the CPU
 * time the process used meanwhile, which leaves out time spent waiting for a core).
 */
import { readdirSync, readFileSync } from "node:fs";
import {
  constants as perf,
  createHistogram,
  monitorEventLoopDelay,
  performance,
  PerformanceObserver,
  type IntervalHistogram,
  type RecordableHistogram,
} from "node:perf_hooks";

/** Tick durations in microseconds (wall clock, and CPU time of the process), per second and per window. */
const tickSecond = createHistogram();
const tickWindow = createHistogram();
const tickCpuWindow = createHistogram();

/** Record microseconds (whole, at least 1: what the histograms take). */
const recordUs = (h: { record(v: number): void }, us: number) => h.record(Math.max(1, Math.round(us)));

function recordTick(wallUs: number, cpuUs: number) {
  recordUs(tickSecond, wallUs);
  recordUs(tickWindow, wallUs);
  recordUs(tickCpuWindow, cpuUs);
}
(globalThis as { __benchRecordTick?: typeof recordTick }).__benchRecordTick = recordTick;

function ticks(h: RecordableHistogram) {
  const ms = (us: number) => Math.round(us / 10) / 100;
  return h.count === 0 ? { count: 0 } : { count: h.count, p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
}

const RESOLUTION_MS = 10;

function delay(h: IntervalHistogram) {
  const ms = (ns: number) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
  return { p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max), samples: h.count };
}

const second = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
const windowed = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
second.enable();
windowed.enable();

/**
 * The garbage collector's pauses of the main thread since the window opened, by kind: `minor`
 * (scavenges of the young generation), `major` (mark-compact of the old one, and its incremental
 * steps), in milliseconds. Its concurrent work on V8's own threads is not a pause: it shows in the
 * process's CPU only.
 */
const gc = { minor: { count: 0, ms: 0 }, major: { count: 0, ms: 0 } };
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    const into =
      kind === perf.NODE_PERFORMANCE_GC_MINOR
        ? gc.minor
        : kind === perf.NODE_PERFORMANCE_GC_MAJOR || kind === perf.NODE_PERFORMANCE_GC_INCREMENTAL
          ? gc.major
          : undefined;
    if (!into) continue;
    into.count++;
    into.ms += e.duration;
  }
}).observe({ entryTypes: ["gc"] });

/**
 * The process's CPU time in milliseconds by thread, from /proc (Linux; undefined elsewhere): `main`
 * (the event loop), `v8` (V8's platform workers: the garbage collector's parallel scavenges and
 * concurrent marking, background compiling), `libuv` (its pool: file system, DNS, crypto), `other`.
 * What the process's CPU adds to the main thread's comes mostly from `v8`. Clock ticks are counted
 * at 100 a second (Linux's USER_HZ); a thread that ended since takes its time with it.
 */
function threadCpu(): Record<"main" | "v8" | "libuv" | "other", number> | undefined {
  const out = { main: 0, v8: 0, libuv: 0, other: 0 };
  let tids: string[];
  try {
    tids = readdirSync("/proc/self/task");
  } catch {
    return undefined;
  }
  for (const tid of tids) {
    let stat: string;
    let comm: string;
    try {
      stat = readFileSync(`/proc/self/task/${tid}/stat`, "utf8");
      comm = readFileSync(`/proc/self/task/${tid}/comm`, "utf8").trim();
    } catch {
      continue; // ended meanwhile
    }
    // Fields after the command's closing parenthesis: utime and stime are the 12th and 13th.
    const f = stat.slice(stat.lastIndexOf(") ") + 2).split(" ");
    const ms = (Number(f[11]) + Number(f[12])) * 10;
    const role = Number(tid) === process.pid ? "main" : comm === "node" ? "v8" : comm === "libuv-worker" ? "libuv" : "other";
    out[role] += ms;
  }
  return out;
}

let lastCpu = process.cpuUsage();
let lastWall = performance.now();
let lastElu = performance.eventLoopUtilization();
let windowElu = performance.eventLoopUtilization();
let windowCpu = process.cpuUsage();
let windowWall = performance.now();
let windowPeakRss = 0;
let windowThreads = threadCpu();

/**
 * `PROBE_PROFILE_DIR`: a CPU profile of the measurement window only (from the SIGUSR2 that opens it,
 * for `PROBE_PROFILE_SECONDS`, default 20), written there as `window-<pid>.cpuprofile`; node's own
 * `--cpu-prof` covers the whole run, joins and start-up included. With `PROBE_HEAP_PROFILE=1`, a
 * sampling heap profile of the same seconds too (`window-<pid>.heapprofile`, for Chrome DevTools'
 * Memory tab): what the window allocated, by function (a sample every 32 KiB, the garbage collected since included).
 */
async function profileWindow(dir: string) {
  const { Session } = await import("node:inspector/promises");
  const { writeFile } = await import("node:fs/promises");
  const session = new Session();
  session.connect();
  const heap = process.env.PROBE_HEAP_PROFILE === "1";
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  if (heap)
    await session.post("HeapProfiler.startSampling", {
      samplingInterval: 32 * 1024,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  const stop = async () => {
    const { profile } = await session.post("Profiler.stop");
    await writeFile(`${dir}/window-${process.pid}.cpuprofile`, JSON.stringify(profile));
    if (heap) {
      const sampled = await session.post("HeapProfiler.stopSampling");
      await writeFile(`${dir}/window-${process.pid}.heapprofile`, JSON.stringify(sampled.profile));
    }
    session.disconnect();
  };
  setTimeout(
    () => void stop().catch((e: unknown) => process.stderr.write(`probe: profile not written: ${String(e)}\n`)),
    Number(process.env.PROBE_PROFILE_SECONDS ?? 20) * 1000,
  ).unref();
}
let profiled = false;

process.on("SIGUSR2", () => {
  if (process.env.PROBE_PROFILE_DIR && !profiled) {
    profiled = true;
    void profileWindow(process.env.PROBE_PROFILE_DIR);
  }
  windowed.reset();
  tickWindow.reset();
  tickCpuWindow.reset();
  windowElu = performance.eventLoopUtilization();
  windowCpu = process.cpuUsage();
  windowWall = performance.now();
  windowThreads = threadCpu();
  windowPeakRss = 0;
  gc.minor = { count: 0, ms: 0 };
  gc.major = { count: 0, ms: 0 };
});

const timer = setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  const mem = process.memoryUsage();
  windowPeakRss = Math.max(windowPeakRss, mem.rss);
  const elu = performance.eventLoopUtilization(lastElu);
  const wCpu = process.cpuUsage(windowCpu);
  const threadsNow = threadCpu();
  const pctOf = (ms: number) => Math.round((ms / (now - windowWall)) * 1000) / 10;
  const threads =
    threadsNow && windowThreads
      ? {
          main: pctOf(threadsNow.main - windowThreads.main),
          v8: pctOf(threadsNow.v8 - windowThreads.v8),
          libuv: pctOf(threadsNow.libuv - windowThreads.libuv),
          other: pctOf(threadsNow.other - windowThreads.other),
        }
      : undefined;
  const line = {
    t: Date.now(),
    cpu: Math.round(((cpu.user + cpu.system) / 1000 / (now - lastWall)) * 1000) / 10,
    rss: mem.rss,
    heap: mem.heapUsed,
    eld: { ...delay(second), elu: Math.round(elu.utilization * 1000) / 1000 },
    tick: ticks(tickSecond),
    window: {
      seconds: Math.round((now - windowWall) / 100) / 10,
      cpu: Math.round(((wCpu.user + wCpu.system) / 1000 / (now - windowWall)) * 1000) / 10,
      threads,
      peakRss: windowPeakRss,
      ...delay(windowed),
      elu: Math.round(performance.eventLoopUtilization(windowElu).utilization * 1000) / 1000,
      tick: ticks(tickWindow),
      tickCpu: ticks(tickCpuWindow),
      gc: { minor: { count: gc.minor.count, ms: Math.round(gc.minor.ms) }, major: { count: gc.major.count, ms: Math.round(gc.major.ms) } },
    },
  };
  process.stdout.write(`PROBE ${JSON.stringify(line)}\n`);
  second.reset();
  tickSecond.reset();
  lastCpu = process.cpuUsage();
  lastWall = now;
  lastElu = performance.eventLoopUtilization();
}, 1000);
timer.unref();
