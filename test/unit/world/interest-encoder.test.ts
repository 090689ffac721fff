/**
 * rooms/world/interest-encoder.ts against Colyseus's own encoder: the same random play (entities
 * created, changed and deleted; views adding and removing them; clients joining with a full state
 * and leaving) is run on two copies of the world state, one encoded by Colyseus's `Encoder` with
 * `StateView`s, one by `InterestEncoder` with `TrackedView`s, each client's patches decoded as the
 * SDK decodes them. After every tick each client must hold the same state on both sides, and exactly
 * what its view holds with the server's values. A third copy is encoded by the interest encoder
 * without its own shortcuts (each entity in a call of Colyseus's encoder of its own, every view's
 * pass over the root's and the collections' changes, every removal through Colyseus's
 * `StateView.remove`), and every frame sent must be the same bytes.
 */
import assert from "node:assert/strict";
import { $changes, $refId, Encoder, OPERATION, StateView, type ChangeTree, type Schema } from "@colyseus/schema";
import { seededRng as rng } from "../../../loadtest/lib/random.js";
import { InterestEncoder, TrackedView } from "../../../rooms/world/interest-encoder.js";
import { treeOf } from "../../../rooms/world/tracked-view.js";
import { drainView, writeFields } from "../../../rooms/world/view-drain.js";
import { fieldsOf, type SchemaClass } from "../../../rooms/world/schema-fields.js";
import { GroundItemState, NpcState, PlayerState, ResourceState, WorldState } from "../../../schema/world.js";
import { applyPatches, fullState, type DecodingClient } from "../../helpers/sdk-view.js";

const LEAVES = [PlayerState, NpcState, ResourceState, GroundItemState];

type Kind = "players" | "npcs";
type Client = Omit<DecodingClient, "decoder"> & { decoder: DecodingClient["decoder"] | undefined };
/** Colyseus's encoder; the interest encoder; the interest encoder without its shortcuts (`ReferenceEncoder`, `ReferenceView`). */
type Encoding = "colyseus" | "tracked" | "reference";
interface Side {
  state: InstanceType<typeof WorldState>;
  encoder: Encoder;
  clients: Map<number, Client>;
  encoding: Encoding;
  /** Every frame sent since the last `takeSent`: the client, and the bytes (hex). */
  sent: string[];
}

/** The interest encoder with each entity encoded in a call of Colyseus's encoder of its own, and every view's pass over every other change. */
class ReferenceEncoder extends InterestEncoder {
  protected override entitiesPerCall(): number {
    return 1;
  }
  protected override reachesViews(): boolean {
    return true;
  }
}

/** A tracked view whose every removal goes through Colyseus's `StateView.remove`. */
class ReferenceView extends TrackedView {
  protected override removeWhole(): boolean {
    return false;
  }
}

function side(encoding: Encoding): Side {
  const state = new WorldState();
  const s = state as unknown as Schema;
  const encoder =
    encoding === "colyseus"
      ? new Encoder(state)
      : encoding === "tracked"
        ? new InterestEncoder(s, undefined, LEAVES)
        : new ReferenceEncoder(s, undefined, LEAVES);
  return { state, encoder, clients: new Map(), encoding, sent: [] };
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("hex");

/** The frames `s` sent since the last call. */
function takeSent(s: Side): string[] {
  const sent = s.sent;
  s.sent = [];
  return sent;
}

const entity = (kind: Kind, id: string, r: () => number) =>
  kind === "players"
    ? Object.assign(new PlayerState(), { id, name: `p${id}`, x: Math.floor(r() * 50), z: Math.floor(r() * 50), health: 10, maxHealth: 10, activity: "idle" })
    : Object.assign(new NpcState(), { id, npcId: "goblin", name: "Goblin", x: Math.floor(r() * 50), z: Math.floor(r() * 50), health: 5, maxHealth: 5 });

/**
 * What Colyseus's SchemaSerializer.applyPatches does for a room with filters, decoding each client's
 * frame; a client still joining (its seat taken, its full state not asked for yet) gets none.
 */
function patch(s: Side) {
  const clients: DecodingClient[] = [];
  for (const [id, c] of s.clients) {
    const decoder = c.decoder;
    if (decoder === undefined) continue;
    // Each frame noted as it is decoded.
    const noting = {
      decode: (bytes: Uint8Array, it?: { offset: number }) => {
        s.sent.push(`${id} ${hex(bytes)}`);
        return decoder.decode(bytes, it);
      },
    } as unknown as DecodingClient["decoder"];
    clients.push({ view: c.view, decoder: noting });
  }
  applyPatches(s.encoder, clients);
}

/** A client joins: its view is made (empty) when the room takes it in; its full state comes when it asks (`ready`). */
function join(s: Side, id: number) {
  const view =
    s.encoder instanceof InterestEncoder
      ? s.encoding === "reference"
        ? new ReferenceView(s.encoder.slots)
        : new TrackedView(s.encoder.slots)
      : new StateView();
  s.clients.set(id, { view, decoder: undefined });
}

/** What SchemaSerializer.getFullState sends a client that joins (or is back from its reconnection window). */
function ready(s: Side, id: number) {
  const c = s.clients.get(id)!;
  // The view's part of the full state noted as it is encoded.
  const encoder = s.encoder as Encoder & { encodeAllView: Encoder["encodeAllView"] };
  const encodeAllView = Object.getPrototypeOf(encoder).encodeAllView as Encoder["encodeAllView"];
  encoder.encodeAllView = function (this: Encoder, ...args: Parameters<Encoder["encodeAllView"]>) {
    const out = encodeAllView.apply(this, args);
    s.sent.push(`${id} full ${hex(out)}`);
    return out;
  };
  try {
    c.decoder = fullState(s.encoder, c.view);
  } finally {
    delete (encoder as Partial<typeof encoder>).encodeAllView;
  }
}

/** The frames the interest encoder sent since the last check are the bytes its reference sent. */
function sameBytes(sides: readonly Side[], where: string) {
  const [tracked, reference] = [sides.find((s) => s.encoding === "tracked")!, sides.find((s) => s.encoding === "reference")!];
  assert.deepEqual(takeSent(tracked), takeSent(reference), `${where}: the frames differ from the reference's`);
  takeSent(sides.find((s) => s.encoding === "colyseus")!);
}

function decoded(c: DecodingClient) {
  const out: Record<string, unknown> = { tick: c.decoder.state.tick };
  // A collection the server never named is absent from the client's state (as in the SDK's).
  for (const kind of ["players", "npcs"] as const) {
    const collection = c.decoder.state[kind] as (typeof c.decoder.state)[typeof kind] | undefined;
    out[kind] = collection ? Object.fromEntries([...collection.entries()].map(([k, v]) => [k, v.toJSON()]).sort()) : "absent";
  }
  return JSON.stringify(out);
}

function run(seed: number, ticks: number) {
  const r = rng(seed);
  const sides = [side("colyseus"), side("tracked"), side("reference")];
  const ids: Record<Kind, string[]> = { players: [], npcs: [] };
  let next = 0;
  let nextClient = 0;
  const pick = <T>(a: readonly T[]) => a[Math.floor(r() * a.length)];
  for (let tick = 0; tick < ticks; tick++) {
    // Clients come and go. A join's view is made and filled (below) before its full state, which
    // comes a tick or two later or at once, as at any time between ticks; a joined client sometimes
    // gets the full state again (back from its reconnection window).
    for (const id of [...sides[0]!.clients.keys()]) {
      if (sides[0]!.clients.get(id)!.decoder === undefined ? r() < 0.5 : r() < 0.02) for (const s of sides) ready(s, id);
    }
    if (r() < 0.3 || nextClient < 2) {
      const id = nextClient++;
      for (const s of sides) join(s, id);
      if (r() < 0.3) for (const s of sides) ready(s, id);
    }
    if (r() < 0.05 && sides[0]!.clients.size > 2) {
      const id = pick([...sides[0]!.clients.keys()])!;
      for (const s of sides) {
        s.clients.get(id)!.view.dispose();
        s.clients.delete(id);
      }
    }
    // The room's tick, most ticks (a change of the root that no view's pass carries).
    if (r() < 0.8) for (const s of sides) s.state.tick = tick;
    const steps = 1 + Math.floor(r() * 12);
    for (let k = 0; k < steps; k++) {
      const roll = r();
      const kind: Kind = r() < 0.7 ? "players" : "npcs";
      if (roll < 0.25 || ids[kind].length < 3) {
        const id = String(next++);
        const seedFields = Math.floor(r() * 1e9);
        for (const s of sides) (s.state[kind] as unknown as Map<string, Schema>).set(id, entity(kind, id, rng(seedFields)));
        ids[kind].push(id);
      } else if (roll < 0.35) {
        const id = pick(ids[kind])!;
        ids[kind] = ids[kind].filter((x) => x !== id);
        // As SchemaMirror.remove does: out of every view first, then out of the state.
        for (const s of sides) {
          const obj = (s.state[kind] as unknown as Map<string, Schema>).get(id)!;
          for (const c of s.clients.values()) if (c.view.has(obj)) c.view.remove(obj);
          (s.state[kind] as unknown as Map<string, Schema>).delete(id);
          if (s.encoder instanceof InterestEncoder) s.encoder.slots.release(obj);
        }
      } else if (roll < 0.42) {
        // Into a client's view and out of the state in the same tick: what the view queued for it
        // goes out as nothing (Colyseus's drain drops it). Then the views let it go, or (not as the
        // room does) keep holding it.
        const id = pick(ids[kind])!;
        const client = pick([...sides[0]!.clients.keys()])!;
        const letGo = r() < 0.5;
        ids[kind] = ids[kind].filter((x) => x !== id);
        for (const s of sides) {
          const obj = (s.state[kind] as unknown as Map<string, Schema>).get(id)!;
          const view = s.clients.get(client)!.view;
          if (!view.has(obj)) view.add(obj);
          (s.state[kind] as unknown as Map<string, Schema>).delete(id);
          if (!letGo) continue;
          for (const c of s.clients.values()) if (c.view.has(obj)) c.view.remove(obj);
          if (s.encoder instanceof InterestEncoder) s.encoder.slots.release(obj);
        }
      } else if (roll < 0.75) {
        // Moves (several times in a tick, sometimes back to the old value), names and flags.
        const id = pick(ids[kind])!;
        const x = Math.floor(r() * 50);
        const name = r() < 0.2 ? `n${Math.floor(r() * 5)}` : undefined;
        for (const s of sides) {
          const o = (s.state[kind] as unknown as Map<string, { x: number; name: string; health: number }>).get(id)!;
          o.x = x;
          o.health = (o.health + 1) % 20;
          if (name !== undefined) o.name = name;
        }
      } else {
        // A client's view gains or loses an entity.
        const client = pick([...sides[0]!.clients.keys()])!;
        const id = pick(ids[kind])!;
        const add = r() < 0.6;
        for (const s of sides) {
          const obj = (s.state[kind] as unknown as Map<string, Schema>).get(id)!;
          const view = s.clients.get(client)!.view;
          if (add && !view.has(obj)) view.add(obj);
          if (!add && view.has(obj)) view.remove(obj);
        }
      }
    }
    // A client that asks for its full state between the tick's changes and its patch (as between
    // two ticks in the room): its view holds entities made since the last patch, still new. Its
    // first state alone, before any patch, is what Colyseus's gives.
    for (const id of [...sides[0]!.clients.keys()]) {
      if (sides[0]!.clients.get(id)!.decoder !== undefined || r() >= 0.3) continue;
      // Its view given the newest of each kind (made this tick, most likely) and a few others.
      const given = (["players", "npcs"] as const).flatMap(
        (kind) =>
          [
            [kind, ids[kind].at(-1)],
            [kind, pick(ids[kind])],
          ] as const,
      );
      for (const s of sides)
        for (const [kind, e] of given) {
          const obj = e === undefined ? undefined : (s.state[kind] as unknown as Map<string, Schema>).get(e);
          if (obj && !s.clients.get(id)!.view.has(obj)) s.clients.get(id)!.view.add(obj);
        }
      for (const s of sides) ready(s, id);
      const [plain, tracked] = sides.map((s) => s.clients.get(id)!) as [DecodingClient, DecodingClient];
      assert.equal(decoded(tracked), decoded(plain), `seed ${seed}, tick ${tick}, client ${id}: first states differ`);
    }
    for (const s of sides) patch(s);
    sameBytes(sides, `seed ${seed}, tick ${tick}`);
    // A patch drains what each view had queued: the next one does not send it again.
    for (const [id, c] of sides[1]!.clients)
      if (c.decoder) assert.equal(c.view.changes.size, 0, `seed ${seed}, tick ${tick}, client ${id}: the view's changes were left queued`);
    for (const id of sides[0]!.clients.keys()) {
      const [plain, tracked] = sides.map((s) => s.clients.get(id)!) as [DecodingClient, DecodingClient];
      if (plain.decoder === undefined) continue;
      assert.equal(decoded(tracked!), decoded(plain!), `seed ${seed}, tick ${tick}, client ${id}: decoded states differ`);
      // And exactly what the view holds, with the server's values.
      const s = sides[1]!;
      for (const kind of ["players", "npcs"] as const) {
        const expected = [...(s.state[kind] as unknown as Map<string, Schema & { toJSON(): unknown }>)]
          .filter(([, o]) => tracked!.view.has(o))
          .map(([k, o]) => [k, o.toJSON()]);
        const got = [...(tracked!.decoder.state[kind]?.entries() ?? [])].map(([k, v]) => [k, v.toJSON()]);
        assert.deepEqual(Object.fromEntries(got), Object.fromEntries(expected), `seed ${seed}, tick ${tick}, client ${id}: ${kind} differ from the view`);
      }
    }
  }
}

/** An encoder's side with `players` players (ids "0", "1"…) and `clients` clients joined, their first states sent, their views empty. */
function joinedToPlayers(players: number, clients: number): Side {
  const s = side("tracked");
  for (let i = 0; i < players; i++) s.state.players.set(String(i), entity("players", String(i), rng(i)) as InstanceType<typeof PlayerState>);
  for (let c = 0; c < clients; c++) {
    join(s, c);
    ready(s, c);
  }
  return s;
}

/** What a script (`scripted`) does, on every side alike: a client's view adds or removes a player, a player moves, comes or goes, a client joins or gets its full state. */
interface Script {
  add(client: number, id: string): void;
  remove(client: number, id: string): void;
  move(id: string): void;
  create(id: string): void;
  destroy(id: string): void;
  join(client: number): void;
  ready(client: number): void;
}

/**
 * The three encodings through the same steps: ten players ("0" to "9"), client 0 with its view bound
 * to the state (it holds "0") and its first state sent, then each step and a patch. After every
 * patch, the frames sent must be the reference's bytes, and each client's decoded state Colyseus's
 * and what its view holds.
 */
function scripted(name: string, steps: ((on: Script) => void)[]) {
  const sides = [side("colyseus"), side("tracked"), side("reference")];
  const players = (s: Side) => s.state.players as unknown as Map<string, Schema>;
  const each = (fn: (s: Side) => void) => sides.forEach(fn);
  const on: Script = {
    add: (c, id) =>
      each((s) => {
        const view = s.clients.get(c)!.view;
        if (!view.has(players(s).get(id)!)) view.add(players(s).get(id)!);
      }),
    remove: (c, id) =>
      each((s) => {
        const view = s.clients.get(c)!.view;
        if (view.has(players(s).get(id)!)) view.remove(players(s).get(id)!);
      }),
    move: (id) => each((s) => void ((players(s).get(id) as unknown as { x: number }).x += 1)),
    create: (id) => each((s) => void players(s).set(id, entity("players", id, rng(Number(id))))),
    // As SchemaMirror.remove does: out of every view first, then out of the state.
    destroy: (id) =>
      each((s) => {
        const obj = players(s).get(id)!;
        for (const c of s.clients.values()) if (c.view.has(obj)) c.view.remove(obj);
        players(s).delete(id);
        if (s.encoder instanceof InterestEncoder) s.encoder.slots.release(obj);
      }),
    join: (c) => each((s) => join(s, c)),
    ready: (c) => each((s) => ready(s, c)),
  };
  const said = complaints(() => {
    for (let i = 0; i < 10; i++) on.create(String(i));
    on.join(0);
    on.add(0, "0");
    on.ready(0);
    steps.unshift(() => undefined);
    steps.forEach((step, i) => {
      step(on);
      for (const s of sides) patch(s);
      sameBytes(sides, `${name}, step ${i}`);
      for (const [id, c] of sides[1]!.clients) {
        if (c.decoder === undefined) continue;
        assert.equal(
          decoded(c as DecodingClient),
          decoded(sides[0]!.clients.get(id) as DecodingClient),
          `${name}, step ${i}, client ${id}: decoded states differ`,
        );
        const held = [...players(sides[1]!)].filter(([, o]) => c.view.has(o)).map(([k]) => k);
        assert.deepEqual([...c.decoder.state.players.keys()].sort(), held.sort(), `${name}, step ${i}, client ${id}: not what its view holds`);
      }
    });
  });
  assert.deepEqual(said, [], name);
}

/** Run `fn` and return what the decoders complained of meanwhile (an unknown refId, a mismatch: logged, then skipped). */
function complaints(fn: () => void): unknown[][] {
  const said: unknown[][] = [];
  const { error, warn } = console;
  console.error = console.warn = (...args: unknown[]) => void said.push(args);
  try {
    fn();
  } finally {
    Object.assign(console, { error, warn });
  }
  return said;
}

describe("world schema encoding (InterestEncoder)", () => {
  for (const seed of [1, 2, 3, 42, 1234, 99991])
    it(`decodes to what Colyseus's encoder gives and what each view holds (seed ${seed})`, () => {
      // Nothing written that a client cannot place: a structure it never got would be skipped, and logged.
      assert.deepEqual(
        complaints(() => run(seed, 120)),
        [],
      );
    });

  describe("removals from a view, in the same bytes as Colyseus's StateView.remove", () => {
    it("an entity taken whole and removed in the same patch", () =>
      scripted("whole", [
        (on) => {
          on.add(0, "1");
          on.remove(0, "1");
        },
        (on) => on.add(0, "1"),
      ]));
    it("an entity removed and added again in the same patch, moved or not", () =>
      scripted("again", [
        (on) => on.add(0, "2"),
        (on) => {
          on.remove(0, "2");
          on.add(0, "2");
        },
        (on) => {
          on.move("2");
          on.remove(0, "2");
          on.add(0, "2");
          on.move("2");
        },
      ]));
    it("an entity removed, then added again at the next patch", () =>
      scripted("next", [
        (on) => on.add(0, "3"),
        (on) => on.remove(0, "3"),
        (on) => {
          on.move("3");
          on.add(0, "3");
        },
      ]));
    it("an entity new in the state, added and removed in the same patch", () =>
      scripted("new", [
        (on) => {
          on.create("20");
          on.add(0, "20");
          on.remove(0, "20");
        },
        (on) => on.add(0, "20"),
      ]));
    it("a joining view's first add (Colyseus's own, its fields queued) removed before its first state", () =>
      scripted("joining", [
        (on) => {
          on.join(2);
          on.add(2, "4");
          on.add(2, "5");
          on.remove(2, "4");
          on.ready(2);
        },
        (on) => {
          on.add(2, "4");
          on.remove(2, "5");
        },
        (on) => {
          on.join(3);
          on.add(3, "6");
          on.remove(3, "6");
        },
        (on) => {
          on.add(3, "6");
          on.ready(3);
        },
      ]));
    it("entities removed from some views while others keep them, or as they leave the state", () =>
      scripted("several", [
        (on) => {
          on.join(1);
          on.add(1, "7");
          on.ready(1);
          for (const id of ["6", "7", "8"]) on.add(0, id);
          on.add(1, "6");
        },
        (on) => {
          on.remove(0, "7");
          on.move("7");
          on.destroy("6");
          on.remove(1, "7");
          on.add(1, "8");
        },
        (on) => {
          on.remove(0, "8");
          on.remove(1, "8");
          on.add(0, "7");
        },
      ]));
  });

  it("refuses an entity class with a non-primitive field", () => {
    assert.throws(() => new InterestEncoder(new WorldState() as unknown as Schema, undefined, [WorldState]), /must be an untagged primitive field/);
  });

  it("encodes each changed entity once per tick, whatever the number of views, and none that no view has held", () => {
    const s = side("tracked");
    for (let i = 0; i < 50; i++) s.state.players.set(String(i), entity("players", String(i), rng(i)) as InstanceType<typeof PlayerState>);
    for (let c = 0; c < 20; c++) {
      join(s, c);
      for (const p of s.state.players.values()) s.clients.get(c)!.view.add(p);
      ready(s, c);
    }
    // Out of every view's sight.
    for (let i = 50; i < 60; i++) s.state.players.set(String(i), entity("players", String(i), rng(i)) as InstanceType<typeof PlayerState>);
    patch(s);
    let encodes = 0;
    const encode = Encoder.prototype.encode;
    Encoder.prototype.encode = function (this: Encoder, ...args: Parameters<Encoder["encode"]>) {
      encodes++;
      return encode.apply(this, args);
    };
    // Each entity's fields as Colyseus writes them (its class's field encoder), counted by entity.
    const descriptor = treeOf(s.state.players.get("0")!)!.encDescriptor;
    const write = descriptor.encoder;
    const written = new Map<unknown, number>();
    descriptor.encoder = function (this: unknown, ...args: Parameters<typeof write>) {
      written.set(args[2].ref, (written.get(args[2].ref) ?? 0) + 1);
      return write.apply(this, args);
    };
    try {
      for (const p of s.state.players.values()) p.x += 1;
      patch(s);
    } finally {
      Encoder.prototype.encode = encode;
      descriptor.encoder = write;
    }
    // The moved field of each player some view holds, once; none of the others.
    assert.deepEqual(
      [...s.state.players.values()].map((p) => written.get(p) ?? 0),
      [...s.state.players.values()].map((_, i) => (i < 50 ? 1 : 0)),
    );
    // One shared pass, and one for the 50 entities (up to 64 go in one call); none per view, as
    // nothing else changed that a view carries (the collections' entries did not come or go).
    assert.equal(encodes, 1 + 1);
    for (const c of s.clients.values()) assert.equal(c.decoder!.state.players.get("7")!.x, s.state.players.get("7")!.x);
  });

  it("writes an entity a view takes whole byte for byte as Colyseus does, with every field or some unset", () => {
    const full = {
      id: "9",
      name: "p9",
      x: 3,
      z: 4,
      health: 10,
      maxHealth: 10,
      combatLevel: 3,
      moving: true,
      running: false,
      isAgent: false,
      activity: "walking",
      targetId: "",
      weapon: "",
      protection: "",
    };
    for (const fields of [full, { id: "9", name: "p9", x: 3, z: 4 }]) {
      const frames = [side("colyseus"), side("tracked")].map((s) => {
        s.state.players.set("0", entity("players", "0", rng(0)) as InstanceType<typeof PlayerState>);
        s.state.players.set("9", Object.assign(new PlayerState(), fields));
        join(s, 0);
        ready(s, 0);
        const view = s.clients.get(0)!.view;
        view.add(s.state.players.get("0")!); // the view's first add binds it
        patch(s);
        view.add(s.state.players.get("9")!); // no longer new: taken whole
        const it = { offset: 1 };
        return Buffer.from(s.encoder.encodeView(view, 1, it)).toString("hex");
      });
      assert.equal(frames[1], frames[0], `fields ${Object.keys(fields).join(",")}`);
    }
  });

  it("writes an entity's fields (its whole snapshot) as the drain writes them queued, of every class, some fields unset", () => {
    const r = rng(7);
    const state = new WorldState();
    const encoder = new InterestEncoder(state as unknown as Schema, undefined, LEAVES);
    const grow = (bytes: Uint8Array, offset: number) =>
      (encoder as unknown as { ensureCapacity: (b: Uint8Array, o: number) => Uint8Array }).ensureCapacity(bytes, offset);
    const collections = [state.players, state.npcs, state.resources, state.groundItems] as unknown as Map<string, Schema>[];
    const value = (type: string) =>
      type === "string"
        ? ["", "a", "Ünïcödé ✓", "x".repeat(Math.floor(r() * 300))][Math.floor(r() * 4)]
        : type === "boolean"
          ? r() < 0.5
          : Math.floor(r() * 200) - (type.startsWith("u") ? 0 : 100);
    LEAVES.forEach((type, k) => {
      const metadata = (type as unknown as Record<symbol, Record<number, { type: string }>>)[Symbol.metadata]!;
      for (let n = 0; n < 40; n++) {
        const obj = new (type as unknown as new () => Schema)() as unknown as Record<string, unknown>;
        for (const f of fieldsOf(type as SchemaClass)!) if (r() < 0.7) obj[f.name] = value(metadata[f.index]!.type);
        collections[k]!.set(`${k}-${n}`, obj as unknown as Schema);
        const tree = (obj as unknown as { [$changes]: ChangeTree })[$changes];
        const live: number[] = [];
        tree.forEachLive((index) => void live.push(index));
        // Those that hold a value, and every field of the class (the gone ones as removals).
        for (const indexes of [live, fieldsOf(type as SchemaClass)!.map((f) => f.index)]) {
          const view = new StateView();
          view.changes.set((obj as unknown as { [$refId]: number })[$refId], new Map(indexes.map((i) => [i, OPERATION.ADD])));
          const [a, b] = [{ offset: 0 }, { offset: 0 }];
          const drained = drainView(encoder, view, a, new Uint8Array(Encoder.BUFFER_SIZE), grow);
          const written = writeFields(encoder, tree, indexes, b, new Uint8Array(Encoder.BUFFER_SIZE), grow);
          assert.equal(hex(written.subarray(0, b.offset)), hex(drained.subarray(0, a.offset)), `${type.name} ${JSON.stringify(obj)}`);
        }
      }
    });
  });

  it("sends nothing of an entity a view added and let go, or that left the state, before the patch", () => {
    const s = joinedToPlayers(5, 2);
    const [a, b] = [s.clients.get(0)!, s.clients.get(1)!];
    // Each view holds one already (its first add binds it to the state, through Colyseus's own add).
    for (const c of [a, b]) c.view.add(s.state.players.get("0")!);
    patch(s); // the players are no longer new: a view that adds one now takes it whole
    const said = complaints(() => {
      a.view.add(s.state.players.get("1")!);
      a.view.remove(s.state.players.get("1")!);
      b.view.add(s.state.players.get("2")!);
      s.state.players.delete("2");
      patch(s);
    });
    assert.deepEqual(said, []);
    assert.equal(a.decoder!.state.players.has("1"), false);
    assert.equal(b.decoder!.state.players.has("2"), false);
    // Both the same views still take a player whole.
    for (const c of [a, b]) c.view.add(s.state.players.get("3")!);
    patch(s);
    for (const c of [a, b]) assert.deepEqual(c.decoder!.state.players.get("3")!.toJSON(), s.state.players.get("3")!.toJSON());
  });

  it("encodes an entity that joining clients get whole once for all of them, and again only when it changed", () => {
    const s = joinedToPlayers(50, 3);
    patch(s); // the players are no longer new: a view that adds one now takes it whole
    const encoder = s.encoder as InterestEncoder;
    const made = () => encoder.snapshots.made;
    const before = made();
    const addAll = (c: number) => {
      for (const p of s.state.players.values()) s.clients.get(c)!.view.add(p);
    };
    // Clients join between two ticks: each entity is encoded for the first, copied for the others.
    for (let c = 3; c < 13; c++) {
      join(s, c);
      addAll(c);
      ready(s, c);
    }
    assert.equal(made() - before, 50, "ten first states, each entity encoded once");
    s.state.players.get("7")!.x += 1;
    join(s, 13);
    addAll(13);
    ready(s, 13);
    assert.equal(made() - before, 51, "the one that changed");
    // A patch copies them too: the one with a change pending is encoded again, once for the three views.
    for (let c = 0; c < 3; c++) addAll(c);
    patch(s);
    assert.equal(made() - before, 52, "the changed one once more, for every view of the patch");
    patch(s);
    for (const c of s.clients.values()) {
      assert.equal(c.decoder!.state.players.size, 50);
      assert.equal(c.decoder!.state.players.get("7")!.x, s.state.players.get("7")!.x);
      assert.deepEqual(c.decoder!.state.players.get("12")!.toJSON(), s.state.players.get("12")!.toJSON());
    }
  });
});
