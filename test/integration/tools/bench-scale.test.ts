/**
 * Pieces of the two-process benchmark (docs/benchmarks.md#two-processes-one-world-each-npm-run-benchscale): the
 * capacity a ladder of steps shows, how bots are shared between bot processes, and where they live
 * on the bundled map.
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { seededRng } from "../../../loadtest/lib/random.js";
import type { BotSpec } from "../../../loadtest/bot-worker.js";
import { ladderCapacity } from "../../../loadtest/capacity.js";
import { mergeJoins, placement, share } from "../../../loadtest/fleet.js";
import { pct } from "../../../loadtest/lib/report.js";

describe("scale benchmark tools (loadtest/)", function () {
  this.timeout(60_000);
  let content: GameContent;
  before(async () => {
    content = await loadContent("world/manifests");
  });

  const step = (total: number, p99Ms: number, bar = 700, extra: Partial<{ pass: boolean; overBarOnly: boolean }> = {}) => ({
    total,
    p99Ms,
    pass: p99Ms <= bar,
    overBarOnly: p99Ms > bar,
    ...extra,
  });

  it("takes the largest size that passed, and interpolates to the bar before the first that did not", () => {
    assert.deepEqual(ladderCapacity([step(500, 600), step(750, 650), step(1000, 750)], 700), { passed: 750, failedAt: 1000, interpolated: 875 });
    // A ladder that never went over the bar: a lower bound, no estimate.
    assert.deepEqual(ladderCapacity([step(500, 600), step(750, 690)], 700), { passed: 750, failedAt: undefined });
    // The first size already over the bar: nothing passed.
    assert.deepEqual(ladderCapacity([step(500, 900)], 700), { passed: 0, failedAt: 500 });
    // A lost probe move (infinitely late) or a step that failed for its joins: no interpolation.
    assert.deepEqual(ladderCapacity([step(500, 600), step(750, Infinity)], 700), { passed: 500, failedAt: 750 });
    assert.deepEqual(ladderCapacity([step(500, 600), step(750, 650, 700, { pass: false, overBarOnly: false })], 700), { passed: 500, failedAt: 750 });
    // Only sizes below the first failure count.
    assert.equal(ladderCapacity([step(500, 600), step(750, 800), step(1000, 650)], 700).passed, 500);
  });

  it("keeps a probe pair in one bot process and deals the other bots round-robin", () => {
    const specs: BotSpec[] = [
      { n: 0, home: { x: 0, z: 0 }, group: "w1", role: "observer", pair: 3 },
      { n: 1, home: { x: 0, z: 0 }, group: "w1", role: "mover", pair: 3 },
      ...Array.from({ length: 7 }, (_, i) => ({ n: 2 + i, home: { x: 0, z: 0 }, group: "w1", role: "wander" as const })),
    ];
    const parts = share(specs, 3);
    assert.equal(parts.flat().length, specs.length);
    const withPair = parts.filter((p) => p.some((s) => s.pair === 3));
    assert.equal(withPair.length, 1);
    assert.equal(withPair[0]!.filter((s) => s.pair === 3).length, 2);
    assert.deepEqual(
      parts.map((p) => p.filter((s) => s.role === "wander").length),
      [3, 2, 2],
    );
  });

  it("spreads bots over free tiles with the hotspot share in every prefix, and crowds them at the spawn", () => {
    const o = { roam: 8, hotspots: 4, hotspotShare: 0.3 };
    const a = placement("spread", 2_000, content, seededRng(42), o);
    const b = placement("spread", 2_000, content, seededRng(42), o);
    assert.deepEqual(a.homes, b.homes, "the same seed places two worlds alike");
    assert.equal(a.homes.length, 2_000);
    assert.ok(a.homes.every((t) => content.inBounds(t.x, t.z) && !content.isBlocked(t.x, t.z)));
    const counts = new Map<string, number>();
    for (const t of a.homes) counts.set(`${t.x},${t.z}`, (counts.get(`${t.x},${t.z}`) ?? 0) + 1);
    const hot = [...counts.entries()].sort((x, y) => y[1] - x[1]).slice(0, 4);
    assert.equal(
      hot.reduce((n, [, c]) => n + c, 0),
      600,
    );
    const hotKeys = new Set(hot.map(([k]) => k));
    for (const size of [250, 500, 1_000]) {
      const share = a.homes.slice(0, size).filter((t) => hotKeys.has(`${t.x},${t.z}`)).length / size;
      assert.ok(share > 0.2 && share < 0.4, `hotspot share of the first ${size}: ${share}`);
    }
    assert.ok(hotKeys.has(`${a.pairSpot(0).x},${a.pairSpot(0).z}`), "even probe pairs stand in a hotspot");
    const crowd = placement("crowd", 10, content, seededRng(1), o);
    assert.ok(crowd.homes.every((t) => t.x === content.spawn.x && t.z === content.spawn.z));
  });

  it("merges join reports and takes nearest-rank percentiles", () => {
    const r = (joined: number, lat: number[]) => ({
      type: "joined" as const,
      outcomes: { joined, "503": 1 },
      kinds: { joined, busy: 1, refused: 0, failed: 0 },
      latencies: lat,
      firstStart: 1_000,
      lastEnd: 3_000,
      lastJoined: 2_500,
      placeFailed: 0,
      errors: [],
      retries: joined,
      joinedAfterRetry: 1,
    });
    const m = mergeJoins([r(2, [10, 30]), r(1, [20])], 5);
    assert.equal(m.joined, 3);
    assert.equal(m.retries, 3, "retries summed");
    assert.equal(m.joinedAfterRetry, 2);
    assert.equal(m.outcomes["503"], 2);
    assert.equal(m.allSeconds, 1.5);
    assert.equal(m.p50Ms, 20);
    assert.equal(pct([1, 2, 3, 4], 99), 4);
    assert.ok(Number.isNaN(pct([], 50)));
  });
});
