/**
 * Public chat and `combat:hit` follow interest management (docs/interest.md "In a crowd"): within view, a line
 * reaches the speaker and the clients that track it; a hit, the combatants and the clients that track
 * the attacker or the target. A client not selected yet (no `tracking`) gets what is within view.
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_TRACKED_PLAYERS } from "../../../src/domain/interest.js";
import { handleChat } from "../../../src/world/actions/chat.js";
import type { Player } from "../../../src/world/player.js";
import { newCadence, VIEW_RADIUS, World } from "../../../src/world/world.js";
import { characterRecord } from "../../helpers/records.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";

describe("world interest management: who hears chat and sees hits", () => {
  let content: GameContent;
  let world: World;
  let n = 0;
  const inbox = new Map<string, { event: string; data: unknown }[]>();

  before(async () => {
    content = await loadContent("world/manifests");
  });

  beforeEach(() => {
    inbox.clear();
    world = worldWithoutStorage(content, { now: () => 1_000_000 });
  });

  const join = (dx: number, dz: number, name = `m${++n}`): Player => {
    const got: { event: string; data: unknown }[] = [];
    const conn = { id: `conn-${name}`, kind: "sdk" as const, send: (event: string, data: unknown) => void got.push({ event, data }), close: () => undefined };
    const { player } = world.join(characterRecord(name, { at: { x: SPOT.x + dx, z: SPOT.z + dz } }), conn, 4009);
    inbox.set(player.id, got);
    return player;
  };
  const received = (p: Player, event: string) => inbox.get(p.id)!.filter((m) => m.event === event).length;
  /** The room's selection for `p` (sets what its client tracks). */
  const select = (p: Player) => world.visibleFor(p, undefined, undefined, newCadence());

  /**
   * The scene: a viewer at the spot, MAX_TRACKED_PLAYERS players beside it (1 tile east: all tracked),
   * a `far` player 10 tiles east (in view, not tracked: the bound is full), an `out` player past the
   * view radius, and a `fresh` viewer at the spot that was never selected.
   */
  function scene() {
    const viewer = join(0, 0, `viewer-${++n}`);
    const near = Array.from({ length: MAX_TRACKED_PLAYERS }, (_, i) => join(1, (i % 9) - 4));
    const far = join(10, 0);
    const out = join(VIEW_RADIUS + 3, 0);
    for (const p of [viewer, ...near, far, out]) select(p);
    const fresh = join(0, 1);
    assert.ok(!viewer.tracking!.players.has(far.id) && viewer.tracking!.players.has(near[0]!.id), "the scene's premise");
    return { viewer, near, far, out, fresh };
  }
  type Scene = ReturnType<typeof scene>;

  const chatCases: { name: string; speaker: (s: Scene) => Player; hears: (s: Scene) => Player; expected: number }[] = [
    { name: "a tracked speaker is heard", speaker: (s) => s.near[0]!, hears: (s) => s.viewer, expected: 1 },
    { name: "a speaker in view but not tracked is not heard", speaker: (s) => s.far, hears: (s) => s.viewer, expected: 0 },
    { name: "the speaker hears itself", speaker: (s) => s.far, hears: (s) => s.far, expected: 1 },
    { name: "a client not selected yet hears whoever is in view", speaker: (s) => s.far, hears: (s) => s.fresh, expected: 1 },
    { name: "nobody past the view radius hears, tracked or not", speaker: (s) => s.viewer, hears: (s) => s.out, expected: 0 },
  ];
  for (const c of chatCases) {
    it(`public chat: ${c.name}`, async () => {
      const s = scene();
      await handleChat(world, c.speaker(s), { text: "hello" });
      assert.equal(received(c.hears(s), "chat:message"), c.expected);
    });
  }

  it("public chat: a private chat partner out of the nearest is tracked, so heard", async () => {
    const s = scene();
    s.viewer.chattedWith.set(s.far.id, 1_000_000);
    select(s.viewer);
    await handleChat(world, s.far, { text: "hello" });
    assert.equal(received(s.viewer, "chat:message"), 1);
  });

  const npcId = () => [...world.npcs.keys()][0]!;
  const hitCases: { name: string; hit: (s: Scene) => { attackerId: string; targetId: string; at: Player }; sees: (s: Scene) => Player; expected: number }[] = [
    {
      name: "the viewer tracks the target",
      hit: (s) => ({ attackerId: s.far.id, targetId: s.near[0]!.id, at: s.near[0]! }),
      sees: (s) => s.viewer,
      expected: 1,
    },
    { name: "the viewer tracks the attacker", hit: (s) => ({ attackerId: s.near[0]!.id, targetId: s.far.id, at: s.far }), sees: (s) => s.viewer, expected: 1 },
    { name: "the viewer tracks neither", hit: (s) => ({ attackerId: npcId(), targetId: s.far.id, at: s.far }), sees: (s) => s.viewer, expected: 0 },
    { name: "the target, tracked or not", hit: (s) => ({ attackerId: npcId(), targetId: s.far.id, at: s.far }), sees: (s) => s.far, expected: 1 },
    { name: "the attacker, tracked or not", hit: (s) => ({ attackerId: s.viewer.id, targetId: s.far.id, at: s.far }), sees: (s) => s.viewer, expected: 1 },
    { name: "a client not selected yet", hit: (s) => ({ attackerId: npcId(), targetId: s.far.id, at: s.far }), sees: (s) => s.fresh, expected: 1 },
  ];
  for (const c of hitCases) {
    it(`combat:hit: ${c.name}`, () => {
      const s = scene();
      const { attackerId, targetId, at } = c.hit(s);
      world.visibility.emitHit({ attackerId, targetId, damage: 1, targetHealth: 9, targetMaxHealth: 10 }, at);
      assert.equal(received(c.sees(s), "combat:hit"), c.expected);
    });
  }
});
