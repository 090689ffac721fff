/**
 * The selection cadence (docs/interest.md "In a crowd", CROWD_RESELECT_TICKS, CALM_RESELECT_TICKS): a
 * collection crowded at a client's last selection is selected again only on the client's turn, a calm
 * one (everything in view fits) every 2 ticks, one still filling every tick; in between either only
 * loses what left; a new priority, or a crowded view losing more than MAX_CROWD_VACANCIES, makes it
 * select at once.
 * Each case: a viewer with more players in view than the bound (or a few: calm), one event, then
 * `visibleFor` off its turn and on its turn.
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { CALM_RESELECT_TICKS, CROWD_RESELECT_TICKS, MAX_CROWD_VACANCIES, MAX_NEW_PER_TICK, MAX_TRACKED_PLAYERS } from "../../../src/domain/interest.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { newCadence, VIEW_LEAVE_MARGIN, VIEW_RADIUS, World, type SelectionCadence, type VisibleSet } from "../../../src/world/world.js";
import { characterRecord } from "../../helpers/records.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";

const silent: Connection = { id: "c", kind: "sdk", send: () => undefined, close: () => undefined };

describe("world interest management: the crowd's selection cadence", () => {
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

  const join = (dx: number, dz: number, name = `p${++n}`): Player =>
    world.join(characterRecord(name, { at: { x: SPOT.x + dx, z: SPOT.z + dz } }), { ...silent, id: `conn-${name}` }, 4009).player;

  /** The cadence `c` with the world's current tick `offset` ticks after the viewer's turn (0: its turn). */
  const at = (c: SelectionCadence, offset: number): SelectionCadence => ({
    ...c,
    phase: (((offset - world.tick) % CROWD_RESELECT_TICKS) + CROWD_RESELECT_TICKS) % CROWD_RESELECT_TICKS,
  });

  interface Scene {
    viewer: Player;
    /** Players 10 tiles away: the first MAX_TRACKED_PLAYERS tracked, the other 10 not. */
    ring: Player[];
  }
  /** A viewer with MAX_TRACKED_PLAYERS + 10 players 10 tiles east (crowded), or 5 (not). */
  const scene = (crowded: boolean): Scene => {
    const viewer = join(0, 0, `viewer-${++n}`);
    const count = crowded ? MAX_TRACKED_PLAYERS + 10 : 5;
    const ring = Array.from({ length: count }, (_, i) => join(10, (i % 9) - 4));
    return { viewer, ring };
  };

  const cases: {
    name: string;
    crowded: boolean;
    /** Change the world; returns the player whose presence in view is checked. */
    event: (s: Scene) => Player;
    offTurn: boolean;
    onTurn: boolean;
  }[] = [
    { name: "a newcomer nearer than everyone tracked waits for the viewer's turn", crowded: true, event: () => join(1, 0), offTurn: false, onTurn: true },
    {
      name: "a tracked player that walks out of view leaves at once",
      crowded: true,
      event: (s) => tracked(s, (p) => world.movement.teleport(p, SPOT.x + VIEW_RADIUS + VIEW_LEAVE_MARGIN + 1, SPOT.z)),
      offTurn: false,
      onTurn: false,
    },
    {
      name: "a tracked player that leaves the world leaves the view at once",
      crowded: true,
      event: (s) => tracked(s, (p) => void world.leave(p.id, "test", undefined, true)),
      offTurn: false,
      onTurn: false,
    },
    {
      name: "a tracked player moving within view stays tracked",
      crowded: true,
      event: (s) => tracked(s, (p) => world.movement.teleport(p, SPOT.x + 12, SPOT.z)),
      offTurn: true,
      onTurn: true,
    },
    {
      name: "a new attack target comes in at once",
      crowded: true,
      event: (s) => untracked(s, (p) => (s.viewer.action = { kind: "attack", targetId: p.id })),
      offTurn: true,
      onTurn: true,
    },
    {
      name: "a new attacker comes in at once",
      crowded: true,
      event: (s) => untracked(s, (p) => s.viewer.attackedBy.set(p.id, clock.t)),
      offTurn: true,
      onTurn: true,
    },
    {
      name: "a friend it just chatted with comes in at once",
      crowded: true,
      event: (s) => untracked(s, (p) => s.viewer.chattedWith.set(p.id, clock.t)),
      offTurn: true,
      onTurn: true,
    },
    {
      name: `calm (all in view fit): a newcomer waits for the viewer's next calm turn (every ${CALM_RESELECT_TICKS} ticks)`,
      crowded: false,
      event: () => join(3, 3),
      offTurn: false,
      onTurn: true,
    },
    {
      name: "calm: a tracked player that walks out of view leaves at once",
      crowded: false,
      event: (s) => tracked(s, (p) => world.movement.teleport(p, SPOT.x + VIEW_RADIUS + VIEW_LEAVE_MARGIN + 1, SPOT.z)),
      offTurn: false,
      onTurn: false,
    },
    {
      name: "calm: a newcomer it attacks comes in at once",
      crowded: false,
      event: (s) => {
        const p = join(3, 3);
        s.viewer.action = { kind: "attack", targetId: p.id };
        return p;
      },
      offTurn: true,
      onTurn: true,
    },
  ];

  let first: VisibleSet;
  /** A player the viewer tracks, after `f`. */
  const tracked = (s: Scene, f: (p: Player) => void) => {
    const p = s.ring.find((o) => first.players.has(o.id))!;
    f(p);
    return p;
  };
  /** A player within view the viewer does not track, after `f`. */
  const untracked = (s: Scene, f: (p: Player) => void) => {
    const p = s.ring.find((o) => !first.players.has(o.id))!;
    assert.ok(p, "someone in view is not tracked");
    f(p);
    return p;
  };

  for (const c of cases) {
    it(c.name, () => {
      const s = scene(c.crowded);
      const cadence = newCadence();
      first = world.visibleFor(s.viewer, undefined, undefined, at(cadence, 0));
      assert.equal(cadence.crowded.players, c.crowded, "crowded at the first selection");
      assert.equal(first.players.size, Math.min(s.ring.length, MAX_TRACKED_PLAYERS) + 1);
      const subject = c.event(s);
      const off = world.visibleFor(s.viewer, undefined, first, at(cadence, 1));
      assert.equal(off.players.has(subject.id), c.offTurn, "off the viewer's turn");
      assert.ok(off.players.has(s.viewer.id), "itself, always");
      assert.ok(off.players.size <= MAX_TRACKED_PLAYERS + 1, "never more than the bound");
      const on = world.visibleFor(s.viewer, undefined, off, at(cadence, 0));
      assert.equal(on.players.has(subject.id), c.onTurn, "on the viewer's turn");
      assert.ok(on.players.has(s.viewer.id), "itself, always");
    });
  }

  it("off its turn a crowded viewer keeps its set; what walks out leaves without a selection, its place free until the turn", () => {
    const s = scene(true);
    const cadence = newCadence();
    first = world.visibleFor(s.viewer, undefined, undefined, at(cadence, 0));
    const tracked0 = [...first.players].sort();
    assert.equal(cadence.kept.players, false);
    const newcomer = join(1, 0);
    const kept = world.visibleFor(s.viewer, undefined, first, at(cadence, 1));
    assert.equal(cadence.kept.players, true);
    assert.deepEqual([...kept.players].sort(), tracked0, "the same set, the newcomer waits");
    first = kept; // the Set objects traded places: `kept` holds what is tracked
    const gone = tracked(s, (p) => world.movement.teleport(p, SPOT.x - VIEW_RADIUS - VIEW_LEAVE_MARGIN - 1, SPOT.z));
    const after = world.visibleFor(s.viewer, undefined, kept, at(cadence, 2));
    assert.equal(cadence.kept.players, true, "no selection");
    assert.deepEqual(cadence.changes.players.dropped, [gone.id]);
    assert.deepEqual(
      [...after.players].sort(),
      tracked0.filter((id) => id !== gone.id),
      "one place free, the newcomer still waits",
    );
    const on = world.visibleFor(s.viewer, undefined, after, at(cadence, 0));
    assert.equal(cadence.kept.players, false, "its turn: selected");
    assert.ok(on.players.has(newcomer.id), "the selection takes the nearest newcomer in the free place");
    assert.equal(on.players.size, MAX_TRACKED_PLAYERS + 1, "full again");
  });

  it(`off its turn a crowded viewer is selected at once when more than ${MAX_CROWD_VACANCIES} places would stand free`, () => {
    const s = scene(true);
    const cadence = newCadence();
    first = world.visibleFor(s.viewer, undefined, undefined, at(cadence, 0));
    const away = (p: Player) => world.movement.teleport(p, SPOT.x - VIEW_RADIUS - VIEW_LEAVE_MARGIN - 1, SPOT.z);
    const leaving = s.ring.filter((o) => first.players.has(o.id));
    // One at a time up to MAX_CROWD_VACANCIES: each leaves without a selection.
    let view = first;
    for (let i = 0; i < MAX_CROWD_VACANCIES; i++) {
      away(leaving[i]!);
      const next = world.visibleFor(s.viewer, undefined, view, at(cadence, 1 + (i % (CROWD_RESELECT_TICKS - 1))));
      assert.equal(cadence.kept.players, true, `${i + 1} free: kept`);
      assert.equal(next.players.size, MAX_TRACKED_PLAYERS - i);
      view = next;
    }
    const newcomer = join(1, 0);
    away(leaving[MAX_CROWD_VACANCIES]!);
    const next = world.visibleFor(s.viewer, undefined, view, at(cadence, 1));
    assert.equal(cadence.kept.players, false, `${MAX_CROWD_VACANCIES + 1} free: selected off its turn`);
    assert.ok(next.players.has(newcomer.id), "the newcomer comes in");
    for (const p of leaving.slice(0, MAX_CROWD_VACANCIES + 1)) assert.ok(!next.players.has(p.id), "what left stays out");
    assert.equal(next.players.size, MAX_TRACKED_PLAYERS + 1, "full again: the 10 untracked of the ring and the newcomer");
  });

  it("off its turn a calm view loses what left it without a selection; a newcomer waits for the turn", () => {
    const s = scene(false);
    const cadence = newCadence();
    first = world.visibleFor(s.viewer, undefined, undefined, at(cadence, 0));
    assert.equal(cadence.calm.players, true);
    const gone = tracked(s, (p) => world.movement.teleport(p, SPOT.x - VIEW_RADIUS - VIEW_LEAVE_MARGIN - 1, SPOT.z));
    const newcomer = join(2, 2);
    const off = world.visibleFor(s.viewer, undefined, first, at(cadence, 1));
    assert.equal(cadence.kept.players, true, "kept: no selection");
    assert.deepEqual(cadence.changes.players.dropped, [gone.id]);
    assert.ok(!off.players.has(gone.id) && !off.players.has(newcomer.id));
    assert.equal(off.players.size, s.ring.length, "itself and the rest of the ring");
    const on = world.visibleFor(s.viewer, undefined, off, at(cadence, 0));
    assert.equal(cadence.kept.players, false, "its turn: selected");
    assert.ok(on.players.has(newcomer.id));
  });

  it("a viewer teleported away from its crowd is selected where it lands at once", () => {
    const s = scene(true);
    const cadence = newCadence();
    first = world.visibleFor(s.viewer, undefined, undefined, at(cadence, 0));
    const there = join(-30, 0);
    world.movement.teleport(s.viewer, there.x - 1, there.z);
    assert.equal(s.viewer.x, there.x - 1, "teleported");
    const off = world.visibleFor(s.viewer, undefined, first, at(cadence, 1));
    assert.deepEqual([...off.players].sort(), [s.viewer.id, there.id].sort());
  });

  it("a crowd around a view that still has room is not crowded: the view is selected every tick until it is full", () => {
    const s = scene(true);
    const cadence = newCadence();
    // What it tracked until now: 40 of the crowd; more than the bound in view, so newcomers come in 10 a selection.
    const history: VisibleSet = {
      players: new Set([s.viewer.id, ...s.ring.slice(0, 40).map((p) => p.id)]),
      npcs: new Set(),
      resources: new Set(),
      groundItems: new Set(),
    };
    let view = world.visibleFor(s.viewer, undefined, history, at(cadence, 0));
    assert.equal(view.players.size, 1 + 40 + MAX_NEW_PER_TICK);
    assert.equal(cadence.crowded.players, false, "room left: not crowded");
    view = world.visibleFor(s.viewer, undefined, view, at(cadence, 1));
    assert.equal(cadence.kept.players, false, "selected off its turn");
    assert.equal(view.players.size, 1 + 40 + 2 * MAX_NEW_PER_TICK);
  });

  it("skipping the leave check while nothing can have walked out of view never keeps a player past the leave radius", () => {
    // A crowd and its viewer running about at random, with now and then a jump (a teleport): after
    // every tick's selection, nothing the viewer tracks is past the leave radius, as when every
    // tracked player is checked every tick. Seeded: the same run every time.
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const tile = (d: number) => Math.floor(rand() * (2 * d + 1)) - d;
    const viewer = join(0, 0, `viewer-${++n}`);
    const crowd = Array.from({ length: MAX_TRACKED_PLAYERS + 30 }, () => join(tile(6), tile(6)));
    const cadence = newCadence();
    let seen: VisibleSet | undefined;
    let spare: VisibleSet | undefined;
    let skipped = 0;
    for (let t = 0; t < 400; t++) {
      for (const p of [viewer, ...crowd]) if (rand() < 0.2) world.movement.request(p, { x: SPOT.x + tile(40), z: SPOT.z + tile(40), run: true });
      if (rand() < 0.02) world.movement.teleport(crowd[Math.floor(rand() * crowd.length)]!, SPOT.x + tile(40), SPOT.z + tile(40));
      world.step();
      const before = new Set(seen?.players);
      const next = world.visibleFor(viewer, spare, seen, cadence);
      [spare, seen] = [seen, next];
      if (cadence.kept.players && cadence.marks.players.until >= world.tick) skipped++;
      for (const id of next.players) {
        const p = world.players.get(id)!;
        const d = Math.max(Math.abs(p.x - viewer.x), Math.abs(p.z - viewer.z));
        assert.ok(d <= VIEW_RADIUS + VIEW_LEAVE_MARGIN, `tick ${t}: ${id} tracked past the leave radius`);
        assert.ok(before.has(id) || d <= VIEW_RADIUS, `tick ${t}: ${id} came in from past the view radius`);
      }
      // Now and then a tracked player is taken out of the set outside the selection (as the room does
      // for one not mirrored yet): the mark no longer holds the set, and must not offer it as tracked.
      if (rand() < 0.05) {
        const out = [...next.players].find((id) => id !== viewer.id);
        if (out) next.players.delete(out);
      }
    }
    assert.ok(skipped > 50, `the check was skipped on ${skipped} ticks`);
  });

  it(`turns rotate: each of ${CROWD_RESELECT_TICKS} new viewers in a row has its turn on a different tick`, () => {
    const turns = Array.from({ length: CROWD_RESELECT_TICKS }, () => newCadence()).map((c) => (CROWD_RESELECT_TICKS - c.phase) % CROWD_RESELECT_TICKS);
    assert.deepEqual(
      [...turns].sort(),
      Array.from({ length: CROWD_RESELECT_TICKS }, (_, i) => i),
    );
  });
});
