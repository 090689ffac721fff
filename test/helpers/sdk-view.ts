/**
 * One SDK client of a world room, played without sockets (unit tests of what a client sees): the
 * room's interest encoder, schema mirror and the client's `TrackedView`, a tick in WorldRoom.onTick's
 * order, and every patch decoded as the SDK does.
 */
import { Decoder, Encoder, Reflection, type Schema, type StateView } from "@colyseus/schema";
import { InterestEncoder, TrackedView } from "../../rooms/world/interest-encoder.js";
import { ENTITY_SCHEMAS, refreshView, SchemaMirror, type SdkVisibility, type Viewer } from "../../rooms/world/views.js";
import { WorldState } from "../../schema/world.js";
import type { Player } from "../../src/world/player.js";
import type { World } from "../../src/world/world.js";

/** A client as Colyseus serves it: its view, and its state decoded as the SDK decodes it. */
export interface DecodingClient {
  view: StateView;
  decoder: Decoder<WorldState>;
}

/** What Colyseus's `SchemaSerializer.applyPatches` does for a room with filters, each client's frame decoded. */
export function applyPatches(encoder: Encoder, clients: Iterable<DecodingClient>): void {
  const it = { offset: 1 };
  encoder.sharedBuffer[0] = 0;
  if (encoder.hasChanges) {
    encoder.encode(it);
    const sharedOffset = it.offset;
    for (const c of clients) c.decoder.decode(encoder.encodeView(c.view, sharedOffset, it), { offset: 1 });
    encoder.discardChanges();
  } else {
    for (const c of clients) if (c.view.changes.size > 0) c.decoder.decode(encoder.encodeView(c.view, 1, it), { offset: 1 });
  }
}

/**
 * What `SchemaSerializer.getFullState` sends a client that joins or reconnects: a new decoder holding
 * it. The decoder's state is built from the encoder's reflection, as the SDK builds it: it holds no
 * collection the server did not name (a `WorldState` made here would start with every one).
 */
export function fullState(encoder: Encoder, view: StateView): Decoder<WorldState> {
  const decoder = Reflection.decode(Reflection.encode(encoder)) as unknown as Decoder<WorldState>;
  const buffer = new Uint8Array(Encoder.BUFFER_SIZE);
  const shared = { offset: 1 };
  encoder.encodeAll(shared, buffer);
  decoder.decode(encoder.encodeAllView(view, shared.offset, { ...shared }, buffer), { offset: 1 });
  return decoder;
}

/**
 * The room of `world` with `viewer`'s SDK client joined (its first selection, as `onJoin` makes it, then its first state);
 * `advance` moves the world's clock on by a tick.
 */
export function sdkClientRoom(world: World, viewer: Player, advance: () => void) {
  const state = new WorldState();
  const encoder = new InterestEncoder(state as unknown as Schema, undefined, ENTITY_SCHEMAS);
  const mirror = new SchemaMirror(state, world, encoder.slots);
  const view = new TrackedView(encoder.slots);
  const seen: SdkVisibility = {};
  const viewers = (): Viewer[] => [{ view, seen }];
  world.events.on("playerRemoved", (id) => mirror.remove("players", id, viewers()));
  mirror.syncAll(viewers);
  refreshView(world, mirror, view, seen, viewer); // onJoin, then the client's first state
  const client: DecodingClient = { view, decoder: fullState(encoder, view) };
  return {
    mirror,
    /** What the client tracks, as the room keeps it. */
    seen,
    /**
     * WorldRoom.onTick for this client: step, mirror, the selection of a client with a new priority
     * (`selectNewPriorities`), the patch, the client's selection. With `present` false the client is
     * away (dropped: Colyseus sends it no patch and the room does not select it; its view waits).
     */
    tick(present = true) {
      advance();
      world.step();
      state.tick = world.tick;
      mirror.syncAll(viewers);
      if (present && world.priorityWaiting(viewer)) refreshView(world, mirror, view, seen, viewer);
      if (present) applyPatches(encoder, [client]);
      else encoder.discardChanges();
      if (present) refreshView(world, mirror, view, seen, viewer);
    },
    /** The client is back from its reconnection window: Colyseus sends it the full state of its view. */
    reconnect() {
      client.decoder = fullState(encoder, view);
    },
    /** A player (or its join) entered after the client: mirrored as the room's `enter` does. */
    entered(p: Player) {
      mirror.upsert("players", p.id);
    },
    /** Whether the client's decoded state holds the player. */
    shows: (id: string) => client.decoder.state.players.has(id),
  };
}
