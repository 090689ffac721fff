/**
 * Interest management in a crowd (docs/interest.md "In a crowd"), on the real World with fake storage: each
 * view holds exactly the bound, nearest first, always with the trade partner, the attack target, the
 * attackers and the friends it chats with; what a client tracks does not churn at the cut-off, and
 * only a few newcomers come in per tick.
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_NEW_PER_TICK, MAX_SWAPS_PER_SELECTION, MAX_TRACKED_GROUND_ITEMS, MAX_TRACKED_PLAYERS, selectInterest } from "../../../src/domain/interest.js";
import { chebyshev } from "../../../src/domain/movement.js";
import { PUBLIC_VIEWS } from "../../../src/protocol/player.js";
import { handleChat } from "../../../src/world/actions/chat.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { ringWalkBudget, SCAN_FACTOR, Tracker } from "../../../src/world/systems/tracker.js";
import { SpatialGrid } from "../../../src/world/grid.js";
import { COMBAT_LOGOUT_SECONDS, RECENT_ATTACKER_SECONDS, RECENT_CHAT_SECONDS, VIEW_RADIUS, World, type VisibleSet } from "../../../src/world/world.js";
import { characterRecord } from "../../helpers/records.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";

const silent: Connection = { id: "c", kind: "sdk", send: () => undefined, close: () => undefined };

/** An entity a Tracker of a test's own selects. */
type E = { id: string; x: number; z: number; walkMark?: number };

/** A grid of placed entities for a Tracker of a test's own, and `put` to place one more. */
function placed() {
  const grid = new SpatialGrid<E>();
  const all = new Map<string, E>();
  const put = (id: string, x: number, z: number) => {
    const e: E = { id, x, z, walkMark: 0 };
    all.set(id, e);
    grid.set(e, x, z);
  };
  return { grid, all, put };
}

describe("world interest management in a crowd", () => {
  let content: GameContent;
  let world: World;
  let clock: { t: number };
  let n = 0;

  before(async () => {
    content = await loadContent("world/manifests");
  });

  beforeEach(() => {
    clock = { t: 1_000_000 };
    world = worldWithoutStorage(content, { now: () => clock.t });
  });

  const join = (dx = 0, dz = 0, name = `p${++n}`): Player => {
    const { player } = world.join(characterRecord(name, { at: { x: SPOT.x + dx, z: SPOT.z + dz } }), { ...silent, id: `conn-${name}` }, 4009);
    return player;
  };
  /** `count` players on the tiles within `spread` of the spot, round robin. */
  const crowd = (count: number, spread = 0): Player[] => {
    const side = 2 * spread + 1;
    return Array.from({ length: count }, (_, i) => join((i % side) - spread, (Math.floor(i / side) % side) - spread));
  };
  const others = (v: VisibleSet, self: Player) => [...v.players].filter((id) => id !== self.id);

  for (const [label, size, spread] of [
    ["scanning the grid cells", 150, 0],
    // Dense enough in the cells around for a ring walk to pay (ringWalkBudget): 600 in 2 or 3 cells.
    ["walking the tiles ring by ring", SCAN_FACTOR * MAX_TRACKED_PLAYERS + 400, 3],
  ] as const) {
    it(`every view holds exactly the bound, nearest first, itself included (${size} players, ${label})`, () => {
      const everyone = crowd(size, spread);
      const far = join(20, 0, "at-20");
      for (const p of [...everyone.slice(0, 40), far]) {
        const v = world.visibleFor(p);
        assert.ok(v.players.has(p.id), "itself");
        const seen = others(v, p);
        assert.equal(seen.length, MAX_TRACKED_PLAYERS);
        const dist = (id: string) => chebyshev(p, world.player(id)!);
        const cut = Math.max(...seen.map(dist));
        const left = [...world.players.values()].filter((o) => o !== p && !v.players.has(o.id));
        assert.ok(
          left.every((o) => chebyshev(p, o) >= cut),
          "nobody left out is nearer than someone tracked",
        );
      }
    });
  }

  it("a ring walk takes the others at the view's edge before what it tracked farther out (past the view radius, within the leave radius)", () => {
    // A Tracker of its own, bound 10: a dense crowd it may not see fills the viewer's cell (so the
    // walk pays), 5 others 2 tiles away, 10 others at the view's edge (24 tiles), and 6 it tracked
    // 28 tiles away (within the leave radius: rank 26 with the margin of 2). The 10 are the 5 near and
    // 5 from the edge (rank 24 before 26), as a scan would choose.
    const { grid, all, put } = placed();
    for (let i = 0; i < 200; i++) put(`hidden${i}`, i % 8, Math.floor(i / 8) % 8);
    for (let i = 0; i < 5; i++) put(`near${i}`, 2, i - 2);
    for (let i = 0; i < 10; i++) put(`edge${i}`, 24, i - 5);
    for (let i = 0; i < 6; i++) put(`far${i}`, -28, i - 3);
    const tracker = new Tracker<E>(grid, all, 10, VIEW_RADIUS, VIEW_RADIUS + 4, 2, (e) => !e.id.startsWith("hidden"), 100, 100);
    const viewer = { id: "viewer", x: 0, z: 0 } as Player;
    const previous = new Set(Array.from({ length: 6 }, (_, i) => `far${i}`));
    const out = new Set<string>();
    tracker.select(viewer, new Set(), previous, out);
    const chosen = [...out].map((id) => id.replace(/\d+$/, ""));
    assert.deepEqual(
      { near: chosen.filter((k) => k === "near").length, edge: chosen.filter((k) => k === "edge").length, far: chosen.filter((k) => k === "far").length },
      { near: 5, edge: 5, far: 0 },
    );
  });

  it("tries a ring walk only past SCAN_FACTOR × the bound and where the cells' density lets it pass the bound, for at most the tiles that cost what the scan would", () => {
    const bound = MAX_TRACKED_PLAYERS;
    const cells = 16 * 16 * 16;
    assert.equal(ringWalkBudget(SCAN_FACTOR * bound, cells, bound), 0, "at SCAN_FACTOR × the bound: scanned");
    assert.equal(ringWalkBudget(2000, cells, bound), 500, "2,000 in the cells around: 500 tiles, 4 entities' worth each");
    assert.equal(ringWalkBudget(400, cells, bound), 0, "400 over 16 cells: the bound lies out near the view's edge, scanned");
    assert.equal(ringWalkBudget(400, 256, bound), 100, "400 in one cell: walked");
    assert.equal(ringWalkBudget(100_000, cells, bound), 25_000, "past the whole 49 × 49 view: the walk always finishes");
  });

  describe("a ring walk at a crowd's edge", () => {
    const BOUND = 10;
    /** A block of `side` × `side` tiles, `perTile` on each, its corner at (x0, z0). */
    const setup = (blocks: [x0: number, z0: number, side: number, perTile: number][]) => {
      const grid = new SpatialGrid<E>();
      const all = new Map<string, E>();
      for (const [x0, z0, side, perTile] of blocks)
        for (let i = 0; i < side * side * perTile; i++) {
          const e = { id: `e${all.size}`, x: x0 + (i % side), z: z0 + (Math.floor(i / side) % side) };
          all.set(e.id, e);
          grid.set(e, e.x, e.z);
        }
      let accepted = 0;
      let tiles = 0;
      const ring = grid.ring.bind(grid);
      grid.ring = (x, z, r, out) => ((tiles += r === 0 ? 1 : 8 * r), ring(x, z, r, out));
      const tracker = new Tracker<E>(grid, all, BOUND, VIEW_RADIUS, VIEW_RADIUS + 4, 2, () => (accepted++, true), 100, 100);
      const select = (x: number, z: number) => {
        accepted = tiles = 0;
        const out = new Set<string>();
        tracker.select({ id: "viewer", x, z } as Player, new Set(), undefined, out);
        return { chosen: [...out].map((id) => chebyshev(all.get(id)!, { x, z })).sort((a, b) => a - b), accepted, tiles };
      };
      return { select };
    };

    it("a viewer in a thin cell next to the crowd walks a few rings, not the whole crowd", () => {
      // 400 in a 10 × 10 block of the next cell over (x 16..25); the viewer at x 14, alone in its cell.
      const { select } = setup([[16, 0, 10, 4]]);
      const { chosen, accepted, tiles } = select(14, 4);
      assert.deepEqual(chosen, Array(BOUND).fill(2), "the nearest: 2 tiles away");
      assert.ok(accepted <= BOUND + 1, `looked at ${accepted} entities, not the 400 of the block`);
      assert.ok(tiles <= 25, `${tiles} tiles walked`);
    });

    it("a view that stays thin among full cells falls back to the scan once the walk has cost as much, and chooses the same", () => {
      // 400 in a 10 × 10 block, the viewer 20 tiles away: its cells hold the block but its view only
      // reaches the block's edge, past any walk the budget allows.
      const { select } = setup([[16, 0, 10, 4]]);
      const { chosen, tiles } = select(-4, 4);
      assert.deepEqual(chosen, Array(BOUND).fill(20), "the nearest: the block's edge, 20 tiles away");
      assert.ok(tiles > 0 && tiles <= ringWalkBudget(400, 256, BOUND), `${tiles} tiles walked, within the budget`);
    });

    it("a crowd too thin for a walk to pass the bound early is scanned at once", () => {
      // 100 on every fifth tile of a 50 × 50 square: 10 nearest out to about 8 tiles, 300 tiles' walk.
      const blocks: [number, number, number, number][] = [];
      for (let x = 0; x < 50; x += 5) for (let z = 0; z < 50; z += 5) blocks.push([x, z, 1, 1]);
      const { select } = setup(blocks);
      const { chosen, tiles } = select(25, 25);
      assert.equal(chosen.length, BOUND);
      assert.equal(tiles, 0, "no tile looked at");
    });
  });

  it("gathers the same candidates walking or scanning: 300 seeded worlds of crowds, edges and stragglers", () => {
    // A differential test of the Tracker against every entity offered to the same rule: per kind
    // (priority, tracked, other), the same number chosen at each distance (which of a tie is the
    // rule's choice, by candidate order), and the same pressure.
    let seed = 7;
    const rng = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
    const int = (n: number) => Math.floor(rng() * n);
    const LEAVE = VIEW_RADIUS + 4;
    let stays = 0;
    for (let round = 0; round < 300; round++) {
      const bound = 5 + int(30);
      const grid = new SpatialGrid<E>();
      const all = new Map<string, E>();
      const put = (x: number, z: number) => {
        const e: E = { id: `e${all.size}`, x, z, walkMark: 0 };
        all.set(e.id, e);
        grid.set(e, x, z);
      };
      for (let b = int(4); b >= 0; b--) {
        const [x0, z0, side, count] = [int(80) - 40, int(80) - 40, 1 + int(12), int(500)];
        for (let i = 0; i < count; i++) put(x0 + int(side), z0 + int(side));
      }
      for (let i = int(60); i > 0; i--) put(int(100) - 50, int(100) - 50);
      const viewer = { id: "viewer", x: int(60) - 30, z: int(60) - 30 } as Player;
      const ids = [...all.keys()];
      const pick = (n: number) => new Set(Array.from({ length: n }, () => ids[int(ids.length)]!).filter(Boolean));
      // At times most of them hidden: a dense crowd the walk must pass to find the few it may see.
      const hidden = rng() < 0.25 ? pick(3 * ids.length) : pick(int(20));
      const priority = pick(int(3));
      const previous = rng() < 0.3 ? undefined : pick(int(3 * bound));
      const accept = (e: E) => !hidden.has(e.id);
      // Half the rounds tell what the viewer tracks by the walk's marks on the entities (as for players).
      const tracker = new Tracker<E>(grid, all, bound, VIEW_RADIUS, LEAVE, 2, accept, 1 + int(10), int(5), undefined, round % 2 === 0);
      const out = new Set<string>();
      const pressure = tracker.select(viewer, priority, previous, out);

      const expectedWith = (previous: ReadonlySet<string> | undefined) => {
        const candidates = { ids: [] as string[], distances: new Int32Array(all.size), count: 0 };
        for (const e of all.values()) {
          const d = chebyshev(e, viewer);
          if (d <= (previous?.has(e.id) ? LEAVE : VIEW_RADIUS) && accept(e)) {
            candidates.ids.push(e.id);
            candidates.distances[candidates.count++] = d;
          }
        }
        const expected = new Set<string>();
        const taken = selectInterest(candidates, { bound, priority, previous, margin: 2, maxAdds: tracker.maxAdds, maxSwaps: tracker.maxSwaps }, expected);
        return { expected, taken, count: candidates.count };
      };
      const { expected, taken, count } = expectedWith(previous);
      const profile = (set: ReadonlySet<string>, previous: ReadonlySet<string> | undefined) =>
        [...set]
          .map((id) => `${priority.has(id) ? "priority" : previous?.has(id) ? "tracked" : "other"}@${chebyshev(all.get(id)!, viewer)}`)
          .sort()
          .join(" ");
      const why = `round ${round}: ${all.size} entities, bound ${bound}, viewer at (${viewer.x}, ${viewer.z})`;
      assert.equal(profile(out, previous), profile(expected, previous), why);
      assert.equal(pressure, count <= bound ? "calm" : taken >= bound ? "crowded" : "filling", why);

      // Selected again with that choice as its history (one tracked gone or one more, at times), and
      // leave to keep it (`mayStay`): it keeps it only when the rule would choose it again.
      const history = new Set(out);
      const inView = ids.filter((id) => chebyshev(all.get(id)!, viewer) <= VIEW_RADIUS && accept(all.get(id)!) && !out.has(id));
      const roll = rng();
      if (roll < 0.15 && history.size > 0) history.delete([...history][int(history.size)]!);
      if (roll < 0.3 && inView.length > 0) history.add(inView[int(inView.length)]!);
      else if (roll < 0.4) history.add(ids[int(ids.length)]!);
      const again = new Set<string>();
      tracker.select(viewer, priority, history, again, undefined, undefined, 0, true);
      const next = expectedWith(history).expected;
      if (tracker.stayed) {
        stays++;
        assert.deepEqual([...next].sort(), [...history].sort(), `${why}: kept what it tracked, which the rule would not choose again`);
        assert.equal(again.size, 0, `${why}: kept, and still filled the set`);
      } else assert.equal(profile(again, history), profile(next, history), `${why}, again`);

      // Brought up to date in place (as the room's selections are), with or without the viewer's own
      // id to keep: the same choice, and the changes listed are exactly what came in and what left.
      const keep = round % 3 === 0 ? viewer.id : undefined;
      const before = new Set(history);
      if (keep !== undefined && round % 2 === 0) before.add(keep);
      const inPlace = new Set(before);
      const changes = { added: [] as string[], dropped: [] as string[] };
      tracker.select(viewer, priority, inPlace, inPlace, keep, undefined, 0, false, changes);
      const fresh = new Set<string>();
      tracker.select(viewer, priority, before, fresh, keep);
      assert.deepEqual([...inPlace].sort(), [...fresh].sort(), `${why}: in place`);
      assert.deepEqual(changes.added.sort(), [...fresh].filter((id) => !before.has(id)).sort(), `${why}: what came in`);
      assert.deepEqual(changes.dropped.sort(), [...before].filter((id) => !fresh.has(id)).sort(), `${why}: what left`);
    }
    // Both ways taken, in a scan and in a walk.
    assert.ok(stays > 20 && stays < 280, `${stays} of 300 kept`);
  });

  it("a calm view keeps what it tracked (mayStay) only when the rule would choose exactly that", () => {
    const { grid, all, put } = placed();
    // A crowd it may not see fills the viewer's cell, dense enough that a ring walk pays even out to
    // the view's edge (ringWalkBudget: 10,000 near, 2,500 tiles), and a few it may see.
    for (let i = 0; i < 10_000; i++) put(`hidden${i}`, i % 8, Math.floor(i / 8) % 8);
    for (const id of ["a", "b", "c", "d"]) put(id, -2, id.charCodeAt(0) - 97);
    const tracker = new Tracker<E>(grid, all, 3, VIEW_RADIUS, VIEW_RADIUS + 4, 2, (e) => !e.id.startsWith("hidden"), 100, 100);
    const viewer = { id: "viewer", x: 0, z: 0 } as Player;
    const select = (tracked: string[]) => {
      const out = new Set<string>();
      tracker.select(viewer, new Set(), new Set(tracked), out, undefined, undefined, 0, true);
      return { stayed: tracker.stayed, out: [...out].sort() };
    };
    // Four in view, bound 3: the rule drops one, even of four it tracked.
    assert.deepEqual(select(["a", "b", "c", "d"]), { stayed: false, out: ["a", "b", "c"] });
    all.delete("d");
    grid.delete("d");
    // Three in view, all tracked: kept.
    assert.deepEqual(select(["a", "b", "c"]), { stayed: true, out: [] });
    // As many as it tracked, but one it tracked is gone and one the walk found (to the view's edge) is new: chosen anew.
    assert.deepEqual(select(["a", "b", "gone"]), { stayed: false, out: ["a", "b", "c"] });
  });

  it("a ring walk that tells what the viewer tracks by its marks offers none of it again as a newcomer", () => {
    const { grid, all, put } = placed();
    // Ten a tile over the 7 × 7 tiles around the viewer: a walk (ringWalkBudget), whose first rings
    // hold the five it tracks.
    for (let i = 0; i < 490; i++) put(`e${i}`, (i % 7) - 3, (Math.floor(i / 7) % 7) - 3);
    const nearest = [...all.values()].filter((e) => e.x === 0 && e.z === 0).map((e) => e.id);
    const tracker = new Tracker<E>(grid, all, 10, VIEW_RADIUS, VIEW_RADIUS + 4, 2, () => true, 10, 2, undefined, true);
    const viewer = { id: "viewer", x: 0, z: 0 } as Player;
    for (const tracked of [nearest.slice(0, 5), nearest.slice(5)]) {
      const out = new Set<string>();
      assert.equal(tracker.select(viewer, new Set(), new Set(tracked), out), "crowded");
      // What it tracked, and as many newcomers as there is room for: none of them one it tracked.
      assert.equal(out.size, 10);
      for (const id of tracked) assert.ok(out.has(id), id);
    }
  });

  it("always includes the trade partner, beyond the nearest", () => {
    const [a] = crowd(MAX_TRACKED_PLAYERS + 50);
    const partner = join(10, 0, "partner");
    assert.ok(!world.visibleFor(a!).players.has(partner.id), "not among the nearest");
    a!.tradeId = partner.tradeId = "trade-1";
    world.step();
    assert.ok(world.visibleFor(a!).players.has(partner.id), "a sees its partner");
    assert.ok(world.visibleFor(partner).players.has(a!.id), "the partner sees a");
    assert.equal(others(world.visibleFor(a!), a!).length, MAX_TRACKED_PLAYERS);
  });

  it("always includes what it attacks and who attacked it within the combat window", () => {
    const victim = join(0, 0, "victim");
    crowd(MAX_TRACKED_PLAYERS + 50); // on the victim's tile: all nearer than the attacker
    const attacker = join(1, 0, "attacker");
    assert.ok(!world.visibleFor(victim).players.has(attacker.id), "not among the nearest");
    attacker.action = { kind: "attack", targetId: victim.id };
    world.step();
    assert.ok(attacker.lastCombatAt !== undefined, "the attacker swung");
    assert.ok(world.visibleFor(victim).players.has(attacker.id), "the victim sees its attacker");
    assert.ok(world.visibleFor(attacker).players.has(victim.id), "the attacker sees its target");
    attacker.action = null;
    assert.equal(RECENT_ATTACKER_SECONDS, COMBAT_LOGOUT_SECONDS, "the combat logout window");
    clock.t += RECENT_ATTACKER_SECONDS * 1000;
    world.step();
    assert.ok(!world.visibleFor(victim).players.has(attacker.id), "forgotten after the combat window");
  });

  it("always includes a friend it exchanged private messages with, for a while", async () => {
    const [a] = crowd(MAX_TRACKED_PLAYERS + 50);
    const friend = join(15, 0, "friend");
    assert.ok(!world.visibleFor(a!).players.has(friend.id));
    await handleChat(world, a!, { text: "meet me at the bank", to: friend.id });
    assert.ok(world.visibleFor(a!).players.has(friend.id), "the sender sees the friend");
    assert.ok(world.visibleFor(friend).players.has(a!.id), "the friend sees the sender");
    clock.t += RECENT_CHAT_SECONDS * 1000;
    assert.ok(!world.visibleFor(a!).players.has(friend.id), "forgotten after RECENT_CHAT_SECONDS");
  });

  it("a priority out of view radius stays out", () => {
    const a = join();
    const partner = join(VIEW_RADIUS + 1, 0, "far-partner");
    a.tradeId = partner.tradeId = "trade-2";
    world.step();
    assert.ok(!world.visibleFor(a).players.has(partner.id));
  });

  for (const [label, filler] of [
    ["scanning the grid cells", 0],
    // Past SCAN_FACTOR × the bound, and dense enough in the cells around for a walk to pay (ringWalkBudget).
    ["walking the tiles ring by ring", 6 * MAX_TRACKED_PLAYERS],
  ] as const) {
    it(`no churn at the cut-off: players arriving at the cut-off distance do not push out who is tracked (${label})`, () => {
      const viewer = join(0, 0, "viewer");
      // Arrivals joined first and land on the ring's first tile: without history they would come first among equals.
      const arrivals = Array.from({ length: 30 }, (_, i) => join(3, i % 3, `arrival-${i}`));
      for (let i = 0; i < MAX_TRACKED_PLAYERS + 20; i++) join(1, 0, `ring-${i}`); // the cut-off at distance 1
      for (let i = 0; i < filler; i++) join(20, (i % 9) - 4, `filler-${i}`);
      const before = world.visibleFor(viewer);
      assert.ok(arrivals.every((a) => !before.players.has(a.id)));
      for (const a of arrivals) world.movement.teleport(a, SPOT.x - 1, SPOT.z - 1);
      const after = world.visibleFor(viewer, undefined, before);
      assert.deepEqual([...after.players].sort(), [...before.players].sort(), "same set with history");
      const fresh = world.visibleFor(viewer);
      assert.ok(
        arrivals.some((a) => fresh.players.has(a.id)),
        "without history the arrivals would have been taken",
      );
      assert.equal(fresh.players.size, MAX_TRACKED_PLAYERS + 1);
    });
  }

  it(`a view with room fills at ${MAX_NEW_PER_TICK} newcomers a selection; once full, at most ${MAX_SWAPS_PER_SELECTION} make way for nearer ones each selection until it holds the nearest`, () => {
    const viewer = join(0, 0, "viewer");
    const far = Array.from({ length: 40 }, (_, i) => join(10, (i % 9) - 4, `far-${i}`));
    let view = world.visibleFor(viewer);
    assert.equal(others(view, viewer).length, far.length);
    // Nearer than every far one, and more than the bound: the nearest view holds only them.
    const near = Array.from({ length: MAX_TRACKED_PLAYERS + 20 }, (_, i) => join(1 + Math.floor(i / 60), (i % 3) - 1, `near-${i}`));
    const nearest = new Set(near.slice(0, MAX_TRACKED_PLAYERS).map((p) => p.id));
    const added: number[] = [];
    const dropped: number[] = [];
    for (let selection = 0; selection < 60 && others(view, viewer).some((id) => !nearest.has(id)); selection++) {
      const next = world.visibleFor(viewer, undefined, view);
      added.push(others(next, viewer).filter((id) => !view.players.has(id)).length);
      dropped.push(others(view, viewer).filter((id) => !next.players.has(id)).length);
      assert.ok(others(next, viewer).length <= MAX_TRACKED_PLAYERS, "within the bound");
      view = next;
    }
    const fill = (MAX_TRACKED_PLAYERS - far.length) / MAX_NEW_PER_TICK;
    const swaps = far.length / MAX_SWAPS_PER_SELECTION;
    assert.deepEqual(added, [...Array<number>(fill).fill(MAX_NEW_PER_TICK), ...Array<number>(swaps).fill(MAX_SWAPS_PER_SELECTION)]);
    assert.deepEqual(dropped, [...Array<number>(fill).fill(0), ...Array<number>(swaps).fill(MAX_SWAPS_PER_SELECTION)], "nothing dropped while there was room");
    assert.deepEqual(others(view, viewer).sort(), [...nearest].sort(), "the nearest in the end");
    assert.deepEqual(others(world.visibleFor(viewer, undefined, view), viewer).sort(), [...nearest].sort(), "and it stays");
  });

  it("ground items are bounded too, with the pile it is picking up kept", () => {
    const p = join();
    for (let i = 0; i < MAX_TRACKED_GROUND_ITEMS + 30; i++) world.ground.drop("bread", 1, SPOT.x, SPOT.z);
    const far = world.ground.drop("bread", 1, SPOT.x + 5, SPOT.z);
    assert.equal(world.visibleFor(p).groundItems.size, MAX_TRACKED_GROUND_ITEMS);
    assert.ok(!world.visibleFor(p).groundItems.has(far.id));
    p.action = { kind: "pickup", groundItemId: far.id };
    assert.ok(world.visibleFor(p).groundItems.has(far.id));
    assert.equal(world.visibleFor(p).groundItems.size, MAX_TRACKED_GROUND_ITEMS);
  });

  it("public views carry exactly the protocol's fields, and writing an unchanged view changes nothing", () => {
    const p = join();
    const item = world.ground.drop("bread", 1, SPOT.x, SPOT.z);
    const ids = { players: p.id, npcs: [...world.npcs.keys()][0]!, resources: [...world.resources.keys()][0]!, groundItems: item.id };
    for (const kind of ["players", "npcs", "resources", "groundItems"] as const) {
      const view = world.publicView(kind, ids[kind])!;
      assert.deepEqual(Object.keys(view).sort(), Object.keys(PUBLIC_VIEWS[kind].shape).sort(), kind);
      assert.equal(world.writeView(kind, ids[kind], { ...view }), false, `${kind} unchanged`);
    }
    const kept = { ...world.publicView("players", p.id)! };
    p.x += 1;
    assert.equal(world.writeView("players", p.id, kept), true);
    assert.equal(kept.x, SPOT.x + 1);
  });
});
