/**
 * Interest management in a crowd (docs/interest.md "In a crowd"), on the real World with fake storage: each
 * view holds exactly the bound, nearest first, always with the trade partner, the attack target, the
 * attackers and the friends it chats with; what a client tracks does not churn at the cut-off, and
 * only a few newcomers come in per tick.
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_NEW_PER_TICK, MAX_SWAPS_PER_SELECTION, MAX_TRACKED_GROUND_ITEMS, MAX_TRACKED_PLAYERS } from "../../../src/domain/interest.js";
import { chebyshev } from "../../../src/domain/movement.js";
import { PUBLIC_VIEWS } from "../../../src/protocol/player.js";
import { handleChat } from "../../../src/world/actions/chat.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { ringWalkPays, SCAN_FACTOR, Tracker } from "../../../src/world/systems/tracker.js";
import { SpatialGrid } from "../../../src/world/grid.js";
import { COMBAT_LOGOUT_SECONDS, RECENT_ATTACKER_SECONDS, RECENT_CHAT_SECONDS, VIEW_RADIUS, World, type VisibleSet } from "../../../src/world/world.js";
import { characterRecord } from "../../helpers/records.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";


const silent: Connection = { id: "c", kind: "sdk", send: () => undefined, close: () => undefined };

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
    // Dense enough in the viewer's own cell for a ring walk to pay (ringWalkPays).
    ["walking the tiles ring by ring", SCAN_FACTOR * MAX_TRACKED_PLAYERS + 300, 3],
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
    type E = { id: string; x: number; z: number };
    const grid = new SpatialGrid<E>();
    const all = new Map<string, E>();
    const put = (id: string, x: number, z: number) => {
      const e = { id, x, z };
      all.set(id, e);
      grid.set(e, x, z);
    };
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

  it("walks the tiles ring by ring only past SCAN_FACTOR × the bound, and only where the crowd is dense enough for it to pay", () => {
    const bound = MAX_TRACKED_PLAYERS;
    const cases: [near: number, ownCell: number, walks: boolean, why: string][] = [
      [SCAN_FACTOR * bound, 256 * 4, false, "at SCAN_FACTOR × the bound: scanned"],
      [2000, 1000, true, "a crowd of 2,000 at the spawn, 1,000 in the viewer's cell"],
      [1000, 600, true, "a crowd of 1,000"],
      [600, 20, false, "at a hotspot's edge: the cells hold many, the viewer's own few"],
      [600, 0, false, "an empty cell of its own"],
      [100_000, 1, true, "a walk of the whole view still beats scanning 100,000"],
    ];
    for (const [near, own, walks, why] of cases) assert.equal(ringWalkPays(near, own, 16, bound, VIEW_RADIUS), walks, why);
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
    // Past SCAN_FACTOR × the bound, and enough for a walk to pay at the viewer's cell's density (ringWalkPays).
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
