/**
 * Pieces of the world benchmark (docs/benchmarks.md "Benchmarks"): how a join outcome is sorted, the quantile
 * read from a Prometheus histogram, `/proc` sampling, and the bare Colyseus baseline server with
 * the benchmark's own bots (a move seen by another client; clients cannot create rooms).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@colyseus/sdk";
import { BenchBot, classifyJoinError } from "../../../loadtest/bot.js";
import { histogramQuantile } from "../../../loadtest/lib/metrics.js";
import { seededRng } from "../../../loadtest/lib/random.js";
import { procStat } from "../../../loadtest/lib/sampler.js";
import { startLoadServer, type LoadServer } from "../../../loadtest/lib/targets.js";
import { ProbePair } from "../../../loadtest/probe-pair.js";
import { eventually } from "../../helpers/clients.js";

describe("world benchmark tools (loadtest/)", function () {
  this.timeout(60_000);

  it("sorts failed joins into told-to-retry (503, matchmaking refusals) and failures", () => {
    const err = (code: unknown, message = "x") => Object.assign(new Error(message), { code });
    assert.deepEqual(classifyJoinError(err(503, "server busy")), { kind: "busy", detail: "503", message: "server busy" });
    assert.equal(classifyJoinError(err(429)).kind, "refused");
    assert.equal(classifyJoinError(err(524)).detail, "mm-524");
    assert.equal(classifyJoinError(err(523)).kind, "failed");
    assert.equal(classifyJoinError(err(500)).detail, "5xx-500");
    assert.equal(classifyJoinError(err(4002)).detail, "close-4002");
    assert.equal(classifyJoinError(err("ECONNRESET")).detail, "net-ECONNRESET");
    const socketError = Object.assign(new Error(), { name: "ServerError", code: undefined });
    assert.equal(classifyJoinError(socketError).detail, "ws-error");
    assert.equal(classifyJoinError(new Error("something else")).detail, "other");
    assert.equal(classifyJoinError(new Error("join took longer than 10 ms")).detail, "timeout");
  });

  it("reads a quantile from the difference of two histogram scrapes, inside its bucket", () => {
    const h = (counts: number[]) =>
      new Map([
        ['t_bucket{le="0.01"}', counts[0]!],
        ['t_bucket{le="0.1"}', counts[1]!],
        ['t_bucket{le="+Inf"}', counts[2]!],
      ]);
    // 100 new observations: 50 up to 10 ms, 50 between 10 and 100 ms.
    const q = histogramQuantile(h([10, 10, 10]), h([60, 110, 110]), "t", 0.99)!;
    assert.equal(q.count, 100);
    assert.equal(q.bucket, 0.1);
    assert.ok(Math.abs(q.value - (0.01 + 0.09 * (49 / 50))) < 1e-9);
    assert.equal(histogramQuantile(h([1, 1, 1]), h([1, 1, 1]), "t", 0.99), undefined);
  });

  it("samples a process's CPU time and RSS from /proc", () => {
    const s = procStat(process.pid)!;
    assert.ok(s.rss > 10 * 1048576 && s.cpuS > 0);
    assert.equal(procStat(2 ** 30), undefined);
  });

  describe("bare Colyseus baseline (loadtest/baseline/server.ts)", () => {
    let server: LoadServer;
    let world: string;
    before(async () => {
      world = mkdtempSync(join(tmpdir(), "bench-baseline-"));
      server = await startLoadServer({ world, nodeArgs: ["--import", "tsx", "loadtest/baseline/server.ts"], env: { TICK_MS: "100" } });
    });
    after(async () => {
      server?.proc.kill("SIGTERM");
      await server?.exited;
      rmSync(world, { recursive: true, force: true });
    });

    it("places joiners where asked, shows one client's move to another, and refuses a client's create", async () => {
      const target = { kind: "baseline" as const, endpoint: server.url };
      const mover = new BenchBot(target, { x: 5, z: 5 }, undefined, false);
      const observer = new BenchBot(target, { x: 4, z: 5 }, undefined, true);
      assert.equal((await mover.join(10_000)).kind, "joined");
      assert.equal((await observer.join(10_000)).kind, "joined");
      await mover.whenIdentified(5_000);
      await eventually(() => {
        const m = observer.seen(mover.id);
        return m?.x === 5 && m.z === 5 && m.moving === false;
      }, "the observer sees the mover at its home");
      const content = { isBlocked: () => false, inBounds: () => true };
      const pair = new ProbePair(observer, mover, { x: 5, z: 5 }, content, seededRng(7));
      pair.start(200);
      await eventually(() => pair.latencies.length >= 2, "two probe samples", 10_000);
      assert.ok(pair.latencies.every((ms) => ms > 0 && ms < 2_000));
      assert.ok(observer.counters.bytes > 0 && mover.counters.bytes > 0);
      mover.stop();
      await assert.rejects(new Client(server.url).create("world", {}), (e: { code?: number }) => e.code !== undefined);
      await Promise.all([mover.leave(), observer.leave()]);
      const status = (await (await fetch(`${server.url}/status`)).json()) as { status: string };
      assert.equal(status.status, "ok");
    });
  });
});
