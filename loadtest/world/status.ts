/** `/status` polled through a phase of bench:world: how long the server took to answer while under load. */
import { sleep } from "../lib/cli.js";
import { pct } from "../lib/report.js";

export interface StatusPoll {
  count: number;
  failed: number;
  p99Ms: number;
  maxMs: number;
}

/** Polls `/status` one request after another (each with a 15 s limit) until stopped. */
export function pollStatus(url: string, gapMs: number) {
  const lat: number[] = [];
  let failed = 0;
  let running = true;
  const done = (async () => {
    while (running) {
      const t0 = performance.now();
      const ok = await fetch(`${url}/status`, { signal: AbortSignal.timeout(15_000) }).then(
        async (r) => (await r.arrayBuffer(), r.ok),
        () => false,
      );
      lat.push(performance.now() - t0);
      if (!ok) failed++;
      await sleep(gapMs);
    }
  })();
  return {
    /** Figures since the last take (the poll goes on). */
    take(): StatusPoll {
      const l = lat.splice(0).sort((a, b) => a - b);
      const f = failed;
      failed = 0;
      return { count: l.length, failed: f, p99Ms: Math.round(pct(l, 99)), maxMs: Math.round(l.at(-1) ?? NaN) };
    },
    async stop() {
      running = false;
      await done;
    },
  };
}
