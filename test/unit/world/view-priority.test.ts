/**
 * A new priority reaches an SDK client with the patch of the tick that made it one (README "In a
 * crowd"): `World.priorityWaiting`, and the room's pass before the patch (WorldRoom.onTick:
 * step, mirror, `selectNewPriorities`, patch, every client's selection) played with the real World,
 * SchemaMirror, InterestEncoder and TrackedView, every patch decoded as the SDK does.
 */
import assert from "node:assert/strict";
import { Decoder, Encoder, type Schema } from "@colyseus/schema";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_TRACKED_PLAYERS } from "../../../src/domain/interest.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { VIEW_RADIUS, type World } from "../../../src/world/world.js";
import { InterestEncoder, TrackedView } from "../../../rooms/world/interest-encoder.js";
import { ENTITY_SCHEMAS, refreshView, SchemaMirror, type SdkVisibility } from "../../../rooms/world/views.js";
import { WorldState } from "../../../schema/world.js";
import { characterRecord } from "../../helpers/records.js";
import { OPEN_SPOT as SPOT, worldWithoutStorage } from "../../helpers/world.js";

describe("view sync: a new priority comes in with the patch of its tick", () => {
  let content: GameContent;
  before(async () => {
    content = await loadContent("world/manifests");
  });

  /** A viewer at SPOT in a crowd of more than the bound, 10 tiles away; its SDK client as the room keeps it. */
  function room() {
    let t = 1_000_000;
    const world: World = worldWithoutStorage(content, { now: () => t });
    const state = new WorldState();
    const encoder = new InterestEncoder(state as unknown as Schema, undefined, ENTITY_SCHEMAS);
    const mirror = new SchemaMirror(state, world, encoder.slots);
    const view = new TrackedView(encoder.slots);
    const seen: SdkVisibility = {};
    const decoder = new Decoder(new WorldState());
    const hits: { tick: number; attackerId: string }[] = [];
    const silent = (id: string): Connection => ({ id, kind: "sdk", send: () => undefined, close: () => undefined });
    const viewerConn: Connection = {
      ...silent("v"),
      send: (event, data) => {
        if (event === "combat:hit") hits.push({ tick: world.tick, attackerId: (data as { attackerId: string }).attackerId });
      },
    };
    const viewer = world.join(characterRecord("viewer", { at: SPOT }), viewerConn, 4009).player;
    for (let i = 0; i < MAX_TRACKED_PLAYERS + 10; i++)
      world.join(characterRecord(`c${i}`, { at: { x: SPOT.x + 10, z: SPOT.z + (i % 9) - 4 } }), silent(`c${i}`), 4009);
    mirror.syncAll(() => [{ view, seen }]);
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
    /** The tick on the client: when each player first appeared in its decoded state. */
    const onClientSince = new Map<string, number>();
    const tick = () => {
      t += 600;
      world.step();
      state.tick = world.tick;
      mirror.syncAll(() => [{ view, seen }]);
      if (world.priorityWaiting(viewer)) refreshView(world, mirror, view, seen, viewer); // selectNewPriorities
      patch();
      for (const id of decoder.state.players.keys()) if (!onClientSince.has(id)) onClientSince.set(id, world.tick);
      refreshView(world, mirror, view, seen, viewer);
    };
    const join = (id: string, dx: number): Player => {
      const p = world.join(characterRecord(id, { at: { x: SPOT.x + dx, z: SPOT.z } }), silent(id), 4009).player;
      mirror.upsert("players", p.id);
      return p;
    };
    return { world, viewer, seen, tick, join, hits, onClientSince, now: () => t };
  }

  it("an attacker the viewer did not track is on its client in the patch of the tick of its first hit", () => {
    const r = room();
    r.tick();
    assert.equal(r.seen.cadence!.crowded.players, true, "the viewer's view of players is crowded (full)");
    // It walks up after the viewer's selection: not tracked (the crowd's newcomers wait for their turn).
    const x = r.join("attacker", 1);
    assert.equal(r.world.priorityWaiting(r.viewer), false, "no priority yet");
    x.action = { kind: "attack", targetId: r.viewer.id };
    for (let i = 0; i < 30 && !r.hits.some((h) => h.attackerId === x.id); i++) r.tick();
    const first = r.hits.find((h) => h.attackerId === x.id);
    assert.ok(first, "the attacker hit the viewer");
    assert.equal(r.onClientSince.get(x.id), first.tick, `combat:hit at tick ${first.tick}, the attacker on the client from tick ${r.onClientSince.get(x.id)}`);
  });

  it("priorityWaiting: only a priority within view that the client does not track yet", () => {
    const r = room();
    r.tick();
    const friend = r.join("friend", 3);
    const far = r.join("far", VIEW_RADIUS + 1);
    assert.equal(r.world.priorityWaiting(r.viewer), false, "no priority");
    r.viewer.chattedWith.set(far.id, r.now());
    assert.equal(r.world.priorityWaiting(r.viewer), false, "a priority out of view waits for nothing");
    r.viewer.chattedWith.set(friend.id, r.now());
    assert.equal(r.viewer.tracking!.players.has(friend.id), false);
    assert.equal(r.world.priorityWaiting(r.viewer), true, "a chat friend within view, not tracked");
    r.tick();
    assert.equal(r.viewer.tracking!.players.has(friend.id), true, "selected before the patch");
    assert.equal(r.world.priorityWaiting(r.viewer), false, "tracked now");
  });
});
