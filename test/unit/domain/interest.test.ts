/** src/domain/interest.ts: which of the things in view a client tracks (docs/interest.md "In a crowd"). */
import assert from "node:assert/strict";
import { MAX_TRACKED_PLAYERS, selectInterest } from "../../../src/domain/interest.js";

/** Candidates written as "id@distance". */
function select(
  candidates: string[],
  bound: number,
  priority: string[] = [],
  previous?: string[],
  more: { margin?: number; maxAdds?: number; maxSwaps?: number } = {},
): string[] {
  const ids = candidates.map((c) => c.split("@")[0]!);
  const distances = candidates.map((c) => Number(c.split("@")[1]));
  const out = new Set<string>();
  const n = selectInterest(
    { ids, distances, count: ids.length },
    { bound, priority: new Set(priority), previous: previous && new Set(previous), ...more },
    out,
  );
  assert.equal(n, out.size, "returns how many it chose");
  return [...out].sort();
}

describe("domain/interest (selectInterest)", () => {
  const news = Array.from({ length: 10 }, (_, i) => `n${i}@0`);
  const olds = Array.from({ length: 10 }, (_, i) => `o${i}@5`);
  const oldIds = olds.map((c) => c.split("@")[0]!);
  const cases: {
    name: string;
    candidates: string[];
    bound: number;
    priority?: string[];
    previous?: string[];
    margin?: number;
    maxAdds?: number;
    maxSwaps?: number;
    want: string[];
  }[] = [
    { name: "fewer candidates than the bound: all of them", candidates: ["a@3", "b@0", "c@24"], bound: 5, want: ["a", "b", "c"] },
    { name: "no candidates: nothing", candidates: [], bound: 5, priority: ["x"], want: [] },
    { name: "a bound of 0: nothing", candidates: ["a@1"], bound: 0, priority: ["a"], want: [] },
    {
      name: "the bound: nearest first, whatever the order",
      candidates: ["far@9", "near@1", "mid@4", "next@2", "away@7"],
      bound: 3,
      want: ["mid", "near", "next"],
    },
    { name: "exactly the bound when many stand at one distance", candidates: ["a@0", "b@0", "c@0", "d@0", "e@0"], bound: 2, want: ["a", "b"] },
    {
      name: "a priority is kept however far (trade partner)",
      candidates: ["a@1", "b@2", "c@3", "partner@20"],
      bound: 2,
      priority: ["partner"],
      want: ["a", "partner"],
    },
    {
      name: "priorities count toward the bound",
      candidates: ["a@1", "b@2", "c@3", "foe@10", "friend@12"],
      bound: 3,
      priority: ["foe", "friend"],
      want: ["a", "foe", "friend"],
    },
    { name: "a priority not among the candidates (out of view) is not added", candidates: ["a@1", "b@2"], bound: 3, priority: ["gone"], want: ["a", "b"] },
    {
      name: "more priorities than the bound: the nearest of them",
      candidates: ["p1@5", "p2@1", "p3@3", "a@0"],
      bound: 2,
      priority: ["p1", "p2", "p3"],
      want: ["p2", "p3"],
    },
    {
      name: "a tie at the cut-off keeps what the client already tracks",
      candidates: ["a@1", "new1@3", "new2@3", "old@3"],
      bound: 2,
      previous: ["old"],
      want: ["a", "old"],
    },
    { name: "a tie at the cut-off without history: candidate order", candidates: ["a@1", "new1@3", "new2@3", "old@3"], bound: 2, want: ["a", "new1"] },
    {
      name: "history wins ties only: a nearer newcomer still comes first",
      candidates: ["a@1", "new@2", "old@3"],
      bound: 2,
      previous: ["old"],
      want: ["a", "new"],
    },
    {
      name: "history at the cut-off fills only the room left",
      candidates: ["a@1", "o1@2", "o2@2", "o3@2"],
      bound: 3,
      previous: ["o3", "o1", "o2"],
      want: ["a", "o1", "o2"],
    },
    {
      name: "a priority among the previous is not counted twice",
      candidates: ["p@4", "a@1", "b@1", "c@2"],
      bound: 3,
      priority: ["p"],
      previous: ["p", "c"],
      want: ["a", "b", "p"],
    },
    {
      name: "a margin: what it tracks counts nearer (a tie at 4 - 2 = 2, won by history)",
      candidates: ["a@1", "new@2", "old@4"],
      bound: 2,
      previous: ["a", "old"],
      margin: 2,
      want: ["a", "old"],
    },
    {
      name: "a margin: a newcomer more than the margin nearer takes the place",
      candidates: ["a@1", "new@1", "old@4"],
      bound: 2,
      previous: ["a", "old"],
      margin: 2,
      want: ["a", "new"],
    },
    {
      name: "a margin never makes what it tracks win over a priority",
      candidates: ["p@9", "old@1"],
      bound: 1,
      priority: ["p"],
      previous: ["old"],
      margin: 2,
      want: ["p"],
    },
    {
      name: "at most maxAdds newcomers; the rest of the room keeps the nearest of what it tracked",
      candidates: [...olds, ...news],
      bound: 10,
      previous: oldIds,
      maxAdds: 3,
      want: ["n0", "n1", "n2", "o0", "o1", "o2", "o3", "o4", "o5", "o6"],
    },
    {
      name: "maxAdds does not hold back the first view (no history)",
      candidates: [...olds, ...news],
      bound: 10,
      maxAdds: 3,
      want: news.map((c) => c.split("@")[0]!),
    },
    {
      name: "maxAdds does not hold back what fits anyway",
      candidates: [...olds, ...news],
      bound: 20,
      previous: oldIds,
      maxAdds: 3,
      want: [...oldIds, ...news.map((c) => c.split("@")[0]!)].sort(),
    },
    {
      name: "maxAdds does not hold back priorities",
      candidates: ["p1@9", "p2@9", "a@0", "b@0"],
      bound: 3,
      priority: ["p1", "p2"],
      previous: ["a"],
      maxAdds: 0,
      want: ["a", "p1", "p2"],
    },
    {
      name: "maxAdds of newcomers when what it tracked left: the view stays short a while",
      candidates: news,
      bound: 5,
      previous: ["gone"],
      maxAdds: 2,
      want: ["n0", "n1"],
    },
    {
      name: "a full view: at most maxSwaps of what it tracked make way, the farthest of them",
      candidates: [...olds.slice(0, 4), "o4@6", "o5@7", ...news],
      bound: 6,
      previous: oldIds.slice(0, 6),
      maxAdds: 10,
      maxSwaps: 2,
      want: ["n0", "n1", "o0", "o1", "o2", "o3"],
    },
    {
      name: "maxSwaps holds back no newcomer while there is room: the room, and maxSwaps more",
      candidates: [...olds.slice(0, 4), ...news],
      bound: 6,
      previous: oldIds.slice(0, 4),
      maxAdds: 10,
      maxSwaps: 1,
      want: ["n0", "n1", "n2", "o0", "o1", "o2"],
    },
    {
      name: "maxSwaps within maxAdds",
      candidates: [...olds, ...news],
      bound: 10,
      previous: oldIds.slice(0, 5),
      maxAdds: 6,
      maxSwaps: 4,
      want: ["n0", "n1", "n2", "n3", "n4", "n5", "o0", "o1", "o2", "o3"],
    },
    {
      name: "maxSwaps of 0: a full view keeps what it tracks, priorities aside",
      candidates: ["p@9", "a@5", "b@6", ...news],
      bound: 3,
      priority: ["p"],
      previous: ["a", "b"],
      maxSwaps: 0,
      want: ["a", "b", "p"].sort(),
    },
    {
      name: "maxSwaps does not hold back the first view (no history)",
      candidates: [...olds, ...news],
      bound: 10,
      maxSwaps: 1,
      want: news.map((c) => c.split("@")[0]!),
    },
  ];
  for (const c of cases)
    it(c.name, () =>
      assert.deepEqual(select(c.candidates, c.bound, c.priority, c.previous, { margin: c.margin, maxAdds: c.maxAdds, maxSwaps: c.maxSwaps }), c.want),
    );

  it("in a crowd of many more than the bound, exactly the bound, and the ring inside the cut-off whole", () => {
    // 5 candidates on each ring 0..39; bound MAX_TRACKED_PLAYERS = 100: rings 0..19 exactly.
    const candidates = Array.from({ length: 200 }, (_, i) => `p${i}@${Math.floor(i / 5)}`);
    const chosen = select(candidates, MAX_TRACKED_PLAYERS);
    assert.equal(chosen.length, MAX_TRACKED_PLAYERS);
    assert.deepEqual(chosen, Array.from({ length: 100 }, (_, i) => `p${i}`).sort());
  });

  it("no churn: selecting again with the last choice as history, after everyone at the cut-off shuffled, keeps the same set", () => {
    const ring = Array.from({ length: 30 }, (_, i) => `r${i}@5`);
    const first = select(["a@1", "b@2", ...ring], 12);
    const shuffled = ["b@2", ...ring.reverse(), "a@1"];
    assert.deepEqual(select(shuffled, 12, [], first), first);
  });
});
