/**
 * rooms/world/views.ts: an entity that leaves the state and comes back under the same id (a player
 * who logs out and in again between two ticks, or while a viewer is away in its reconnection window)
 * has a new schema object; every client that tracked it must be given the new one.
 */
import assert from "node:assert/strict";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_TRACKED_PLAYERS } from "../../../src/domain/interest.js";
import type { Connection } from "../../../src/world/player.js";
import type { World } from "../../../src/world/world.js";
import { characterRecord } from "../../helpers/records.js";
import { sdkClientRoom } from "../../helpers/sdk-view.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";

const conn = (id: string): Connection => ({ id, kind: "sdk", send: () => undefined, close: () => undefined });

describe("view sync: an entity that leaves and comes back under the same id", () => {
  let content: GameContent;
  before(async () => {
    content = await loadContent("world/manifests");
  });

  /** A viewer at SPOT with `crowd` more players 10 tiles away (past the bound: a crowded view), and its SDK client. */
  function room(crowd = 0) {
    let t = 1_000_000;
    const world: World = worldWithoutStorage(content, { now: () => t });
    const viewer = world.join(characterRecord("viewer", { at: SPOT }), conn("v"), 4009).player;
    for (let i = 0; i < crowd; i++) world.join(characterRecord(`c${i}`, { at: { x: SPOT.x + 10, z: SPOT.z + (i % 9) - 4 } }), conn(`c${i}`), 4009);
    const client = sdkClientRoom(world, viewer, () => (t += 600));
    /** `id` joins 3 tiles from the viewer on connection `c`. */
    const join = (id: string, c: string) => client.entered(world.join(characterRecord(id, { at: { x: SPOT.x + 3, z: SPOT.z } }), conn(c), 4009).player);
    return { world, client, join };
  }

  for (const crowd of [0, MAX_TRACKED_PLAYERS + 10]) {
    const where = crowd ? "in a crowd (a full view)" : "in a calm view";
    it(`${where}: a player who logs out and in again between two ticks is back on the client at the next patch`, async () => {
      const { world, client, join } = room(crowd);
      join("x", "x1");
      for (let i = 0; i < 8 && !client.shows("x"); i++) client.tick();
      assert.ok(client.shows("x"), "x, 3 tiles away, is on the viewer's client");
      if (crowd) assert.equal(client.seen.cadence!.crowded.players, true, "the viewer's view of players is crowded");
      await world.leave("x", "left", "x1");
      join("x", "x2");
      client.tick(); // the patch takes the old object away; the selection after it takes the new one in
      client.tick();
      assert.ok(client.shows("x"), "x is back on the viewer's client");
      assert.ok(client.seen.visible!.players.has("x"));
    });
  }

  it("a player who logs out and in again while the viewer is away is on the viewer's client after it is back", async () => {
    const { world, client, join } = room();
    join("x", "x1");
    for (let i = 0; i < 4; i++) client.tick();
    assert.ok(client.shows("x"));
    client.tick(false);
    await world.leave("x", "left", "x1");
    client.tick(false);
    join("x", "x2");
    client.tick(false);
    client.reconnect();
    client.tick();
    client.tick();
    assert.ok(client.shows("x"), "x is back on the viewer's client");
  });
});
