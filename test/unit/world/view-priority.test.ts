/**
 * A new priority reaches an SDK client with the patch of the tick that made it one (
 * docs/interest.md "In a crowd"): `World.priorityWaiting`, and the room's pass before the patch (WorldRoom.onTick's
 * `selectNewPriorities`).
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_TRACKED_PLAYERS } from "../../../src/domain/interest.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { VIEW_RADIUS, type World } from "../../../src/world/world.js";
import { characterRecord } from "../../helpers/records.js";
import { sdkClientRoom } from "../../helpers/sdk-view.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";

const silent = (id: string): Connection => ({ id, kind: "sdk", send: () => undefined, close: () => undefined });

describe("view sync: a new priority comes in with the patch of its tick", () => {
  let content: GameContent;
  before(async () => {
    content = await loadContent("world/manifests");
  });

  /** A viewer at SPOT in a crowd of more than the bound, 10 tiles away, and its SDK client. */
  function room() {
    let t = 1_000_000;
    const world: World = worldWithoutStorage(content, { now: () => t });
    const hits: { tick: number; attackerId: string }[] = [];
    const viewerConn: Connection = {
      ...silent("v"),
      send: (event, data) => {
        if (event === "combat:hit") hits.push({ tick: world.tick, attackerId: (data as { attackerId: string }).attackerId });
      },
    };
    const viewer = world.join(characterRecord("viewer", { at: SPOT }), viewerConn, 4009).player;
    for (let i = 0; i < MAX_TRACKED_PLAYERS + 10; i++)
      world.join(characterRecord(`c${i}`, { at: { x: SPOT.x + 10, z: SPOT.z + (i % 9) - 4 } }), silent(`c${i}`), 4009);
    const client = sdkClientRoom(world, viewer, () => (t += 600));
    const join = (id: string, dx: number): Player => {
      const p = world.join(characterRecord(id, { at: { x: SPOT.x + dx, z: SPOT.z } }), silent(id), 4009).player;
      client.entered(p);
      return p;
    };
    return { world, viewer, client, join, hits, now: () => t };
  }

  it("an attacker the viewer did not track is on its client in the patch of the tick of its first hit", () => {
    const { world, viewer, client, join, hits } = room();
    client.tick();
    assert.equal(client.seen.cadence!.crowded.players, true, "the viewer's view of players is crowded (full)");
    // It walks up after the viewer's selection: not tracked (the crowd's newcomers wait for their turn).
    const x = join("attacker", 1);
    assert.equal(world.priorityWaiting(viewer), false, "no priority yet");
    x.action = { kind: "attack", targetId: viewer.id };
    let shownAt: number | undefined;
    for (let i = 0; i < 30 && !hits.some((h) => h.attackerId === x.id); i++) {
      client.tick();
      if (shownAt === undefined && client.shows(x.id)) shownAt = world.tick;
    }
    const first = hits.find((h) => h.attackerId === x.id);
    assert.ok(first, "the attacker hit the viewer");
    assert.equal(shownAt, first.tick, `combat:hit at tick ${first.tick}, the attacker on the client from tick ${shownAt}`);
  });

  it("priorityWaiting: only a priority within view that the client does not track yet", () => {
    const { world, viewer, client, join, now } = room();
    client.tick();
    const friend = join("friend", 3);
    const far = join("far", VIEW_RADIUS + 1);
    assert.equal(world.priorityWaiting(viewer), false, "no priority");
    viewer.chattedWith.set(far.id, now());
    assert.equal(world.priorityWaiting(viewer), false, "a priority out of view waits for nothing");
    viewer.chattedWith.set(friend.id, now());
    assert.equal(viewer.tracking!.players.has(friend.id), false, "a newcomer in a full view: not tracked");
    assert.equal(world.priorityWaiting(viewer), true, "a chat friend within view, not tracked");
    client.tick();
    assert.equal(viewer.tracking!.players.has(friend.id), true, "selected");
    assert.equal(client.shows(friend.id), true, "on the client with that tick's patch");
    assert.equal(world.priorityWaiting(viewer), false, "tracked now");
  });
});
