/**
 * rooms/world/views.ts: an entity that leaves the state and comes back under the same id (a player
 * who logs out and in again between two ticks, or while a viewer is away in its reconnection window)
 * has a new schema object; every client that tracked it must be given the new one. The room's tick
 * order is played with the real World, SchemaMirror, InterestEncoder and TrackedView, and every patch
 * is decoded as the SDK does.
 */
import assert from "node:assert/strict";
import { Decoder, Encoder, type Schema } from "@colyseus/schema";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_TRACKED_PLAYERS } from "../../../src/domain/interest.js";
import type { Connection } from "../../../src/world/player.js";
import type { World } from "../../../src/world/world.js";
import { InterestEncoder, TrackedView } from "../../../rooms/world/interest-encoder.js";
import { ENTITY_SCHEMAS, refreshView, SchemaMirror, type SdkVisibility } from "../../../rooms/world/views.js";
import { WorldState } from "../../../schema/world.js";
import { characterRecord } from "../../helpers/records.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";

const conn = (id: string): Connection => ({ id, kind: "sdk", send: () => undefined, close: () => undefined });
const near = { x: SPOT.x + 3, z: SPOT.z };

describe("view sync: an entity that leaves and comes back under the same id", () => {
  let content: GameContent;
  before(async () => {
    content = await loadContent("world/manifests");
  });

  /** A room of one SDK viewer at SPOT, with `crowd` more players 10 tiles away (past the bound: a crowded view). */
  function room(crowd = 0) {
    let t = 1_000_000;
    const world: World = worldWithoutStorage(content, { now: () => t });
    const state = new WorldState();
    const encoder = new InterestEncoder(state as unknown as Schema, undefined, ENTITY_SCHEMAS);
    const mirror = new SchemaMirror(state, world, encoder.slots);
    const view = new TrackedView(encoder.slots);
    const seen: SdkVisibility = {};
    const decoder = new Decoder(new WorldState());
    world.events.on("playerRemoved", (id) => mirror.remove("players", id, [{ view, seen }]));
    const viewer = world.join(characterRecord("viewer", { at: SPOT }), conn("v"), 4009).player;
    for (let i = 0; i < crowd; i++) world.join(characterRecord(`c${i}`, { at: { x: SPOT.x + 10, z: SPOT.z + (i % 9) - 4 } }), conn(`c${i}`), 4009);
    mirror.syncAll(() => [{ view, seen }]);
    // The client's first state (Colyseus's full state at its join), then onJoin's refreshView.
    const buffer = new Uint8Array(Encoder.BUFFER_SIZE);
    const shared = { offset: 1 };
    encoder.encodeAll(shared, buffer);
    decoder.decode(encoder.encodeAllView(view, shared.offset, { ...shared }, buffer), { offset: 1 });
    refreshView(world, mirror, view, seen, viewer);
    const patch = () => {
      const it = { offset: 1 };
      encoder.sharedBuffer[0] = 0;
      if (encoder.hasChanges) {
        encoder.encode(it);
        decoder.decode(encoder.encodeView(view, it.offset, it), { offset: 1 });
        encoder.discardChanges();
      } else if (view.changes.size > 0) decoder.decode(encoder.encodeView(view, 1, it), { offset: 1 });
    };
    /** WorldRoom.onTick; with `refresh` false the viewer is away (dropped: the room does not refresh it). */
    const tick = (refresh = true) => {
      t += 600;
      world.step();
      state.tick = world.tick;
      mirror.syncAll(() => [{ view, seen }]);
      patch();
      if (refresh) refreshView(world, mirror, view, seen, viewer);
    };
    const join = (id: string, c: string) => {
      world.join(characterRecord(id, { at: near }), conn(c), 4009);
      mirror.upsert("players", id);
    };
    const clientSees = (id: string) => decoder.state.players.has(id);
    return { world, seen, tick, join, clientSees };
  }

  for (const crowd of [0, MAX_TRACKED_PLAYERS + 10]) {
    const where = crowd ? "in a crowd (a full view)" : "in a calm view";
    it(`${where}: a player who logs out and in again between two ticks is back on the client at the next patch`, async () => {
      const r = room(crowd);
      r.join("x", "x1");
      for (let i = 0; i < 8 && !r.clientSees("x"); i++) r.tick();
      assert.ok(r.clientSees("x"), "x, 3 tiles away, is on the viewer's client");
      if (crowd) assert.equal(r.seen.cadence!.crowded.players, true, "the viewer's view of players is crowded");
      await r.world.leave("x", "left", "x1");
      r.join("x", "x2");
      r.tick(); // the patch takes the old object away; the selection after it takes the new one in
      r.tick();
      assert.ok(r.clientSees("x"), "x is back on the viewer's client");
      assert.ok(r.seen.visible!.players.has("x"));
    });
  }

  it("a player who logs out and in again while the viewer is away is on the viewer's client after it is back", async () => {
    const r = room();
    r.join("x", "x1");
    for (let i = 0; i < 4; i++) r.tick();
    assert.ok(r.clientSees("x"));
    r.tick(false);
    await r.world.leave("x", "left", "x1");
    r.tick(false);
    r.join("x", "x2");
    r.tick(false);
    r.tick();
    r.tick();
    assert.ok(r.clientSees("x"), "x is back on the viewer's client");
  });
});
