/**
 * The world room's schema encoding (docs/protocol.md#interest-management; why and how: docs/interest.md
 * "Encoding a crowd's patches"). Each changed entity (a player, NPC, resource or ground item: a schema
 * object whose fields are all primitives, reached only through a view-filtered collection) is encoded
 * once per tick into a chunk, and a client's patch copies the chunks of the entities its view holds;
 * an entity that comes into a view is written whole from a snapshot (whole-snapshots.ts), the rest of
 * what a view queued is drained as Colyseus drains it (view-drain.ts), and the collections and shared
 * fields go through Colyseus's encoder. The bytes are Colyseus's, ordered entity by entity; the
 * differential test (test/unit/world/interest-encoder.test.ts) decodes both and compares.
 */
import { Encoder, Root, StateView, type ChangeTree, type Schema } from "@colyseus/schema";
import { EntitySlots, TrackedView, treeOf, type Ref } from "./tracked-view.js";
import { fieldsOf, type SchemaClass, type SchemaField } from "./schema-fields.js";
import { drainView } from "./view-drain.js";
import { WholeSnapshots } from "./whole-snapshots.js";
import {
  copyRange,
  ENTITIES_PER_CALL,
  ENTITY_HEADROOM,
  grown,
  grownSlots,
  reachesViews,
  type ChangeList,
  type ChangeNode,
  type Iterator,
} from "./encoder-parts.js";

export { EntitySlots, TrackedView };

/** Colyseus's encoder with the per-view pass over entities done once per tick (see the file comment). */
export class InterestEncoder extends Encoder {
  private readonly leafTypes: ReadonlySet<SchemaClass>;
  /** Whether a first state is being encoded (`encodeAllView`): it takes the view's entities whole, and nothing of the tick's changes. */
  private firstState = false;
  /** Whether the chunks below describe the current changes (cleared by the shared pass and by `discardChanges`). */
  private built = false;
  /** Encoded chunks of this tick's changed entities: bytes, and per tree its [start, end) in them. */
  private chunkBytes: Uint8Array = new Uint8Array(64 * 1024);
  /** Per class, the slots of this tick's changed entities that some view holds. */
  private readonly chunks = new Map<unknown, number[]>();
  private chunkStart: number[] = [];
  private chunkEnd: number[] = [];
  /** The slots views hold entities under (`TrackedView`). */
  readonly slots: EntitySlots;
  /**
   * Per slot, the number of its entity's chunk. Chunk numbers run on from tick to tick (a float64
   * holds them exactly for ever), so a number below `first` is an earlier tick's: not changed now.
   */
  private chunkOf: Float64Array = new Float64Array(1024).fill(-1);
  private first = 0;
  private next = 0;
  /** The tick's changed trees that are not entities: encoded per view by Colyseus. */
  private readonly others: ChangeList = { next: undefined, tail: undefined, nextPosition: 0 };
  /** The entities `build` has batched for `encodeEntities`: list nodes (reused), slots, where each one's chunk starts. */
  private readonly batch: ChangeNode[] = Array.from({ length: ENTITIES_PER_CALL }, () => ({ changeTree: undefined as unknown as ChangeTree }));
  private readonly batchList: ChangeList = { next: undefined, tail: undefined, nextPosition: 0 };
  private readonly batchSlots = new Int32Array(ENTITIES_PER_CALL);
  private readonly batchStarts = new Int32Array(ENTITIES_PER_CALL);
  private batched = 0;
  private noted = 0;
  private readonly buildIt: Iterator = { offset: 0 };
  private readonly probeIt: Iterator = { offset: 0 };
  /** A view that sees everything; and one that also notes where each batched entity starts (`noteStart`). */
  private readonly everything = { isChangeTreeVisible: () => true } as unknown as StateView;
  private readonly noting = { isChangeTreeVisible: (tree: ChangeTree) => this.noteStart(tree) } as unknown as StateView;
  /** The root's primitive fields when every other field of it is view-filtered (`encodeAll`: then they are all of the shared full state), else undefined. */
  private readonly sharedRootFields: readonly string[] | undefined;
  /** The indexes of the root's view-filtered fields that hold a value (named in every full state). */
  private get rootViewFields(): number[] {
    const state = this.state as unknown as Record<string, unknown>;
    return this.rootViewFieldList.filter(([, name]) => state[name] !== undefined && state[name] !== null).map(([index]) => index);
  }
  private readonly rootViewFieldList: readonly (readonly [number, string])[];
  /** The last shared full state: where it started, the root values it encoded, its bytes. */
  private sharedFull: { start: number; values: unknown[]; bytes: Uint8Array } | undefined;
  /** Entities' whole snapshots, for the views that take them whole. */
  readonly snapshots: WholeSnapshots;

  /** `leafTypes`: the entity classes; each must have only primitive fields (checked here). */
  constructor(state: Schema, root: Root | undefined, leafTypes: readonly SchemaClass[]) {
    super(state, root);
    for (const type of leafTypes) {
      const fields = fieldsOf(type);
      if (!fields) throw new Error(`InterestEncoder: ${type.name} is not a schema class`);
      for (const field of fields)
        if (!field.primitive || field.tagged) throw new Error(`InterestEncoder: ${type.name}.${field.name} must be an untagged primitive field`);
    }
    this.leafTypes = new Set(leafTypes);
    this.slots = new EntitySlots(this.leafTypes);
    this.snapshots = new WholeSnapshots(this, this.slots, this.grow);
    const rootFields = fieldsOf(state.constructor as SchemaClass);
    // What `drainView` writes: primitives, and maps of primitives or entities (no arrays, no streams).
    const drainable = (f: SchemaField) => f.primitive || (f.map !== undefined && (typeof f.map === "string" || this.leafTypes.has(f.map as SchemaClass)));
    for (const f of rootFields ?? [])
      if (!drainable(f)) throw new Error(`InterestEncoder: the state's ${f.name} must be a primitive or a map of primitives or entities`);
    // Every root field a primitive or view-filtered: then nothing below the root is in the shared full state.
    const sharedOnly = rootFields?.every((f) => f.primitive !== f.tagged) ?? false;
    this.sharedRootFields = sharedOnly ? rootFields!.filter((f) => !f.tagged).map((f) => f.name) : undefined;
    this.rootViewFieldList = (rootFields ?? []).filter((f) => f.tagged).map((f) => [f.index, f.name] as const);
  }

  override encode(it: Iterator = { offset: 0 }, view?: StateView, buffer: Uint8Array = this.sharedBuffer, initialOffset = it.offset): Uint8Array {
    if (view === undefined) {
      // The shared pass starts a tick's encoding: the changes may differ from the last chunks.
      this.built = false;
      this.snapshots.newPass();
      return super.encode(it, undefined, buffer, initialOffset);
    }
    if (!(view instanceof TrackedView)) return super.encode(it, view, buffer, initialOffset);
    return this.encodeTracked(it, view, buffer, initialOffset).subarray(0, it.offset);
  }

  /** `encode` of a tracked view: writes from `it.offset` on and returns the buffer written (grown if it had to), whole. */
  private encodeTracked(it: Iterator, view: TrackedView, buffer: Uint8Array, initialOffset: number): Uint8Array {
    view.delivered = true;
    if (!this.firstState && !this.built) this.build();
    // The entities it takes whole, where Colyseus would have drained them (after their collections).
    if (view.wholes.size > 0) buffer = this.snapshots.write(view, it, buffer, this.copyWhole);
    // A first state holds every entity of the view whole, with the collections' entries for them:
    // the tick's pending changes add nothing to it (`encodeAllView`).
    if (this.firstState) return buffer;
    // Collections and the root, filtered for this view by Colyseus (parents before the entities).
    if (this.others.next) buffer = this.encodeList(this.others, it, view, buffer, initialOffset);
    // Then the chunks of the changed entities this view holds, class by class (resource nodes, many
    // and static, cost nothing in a tick where none changed), walking whichever set is smaller.
    const entities = view.entities;
    for (let k = 0; k < entities.length; k++) {
      const { type, slots: held } = entities[k]!;
      const changed = this.chunks.get(type);
      if (!changed || changed.length === 0 || held.size === 0) continue;
      const chunkOf = this.chunkOf;
      const first = this.first;
      if (held.size <= changed.length) {
        const slots = held.items;
        for (let i = 0; i < slots.length; i++) {
          const n = chunkOf[slots[i]!]!;
          if (n >= first) buffer = this.copyChunk(n - first, it, buffer);
        }
      } else {
        for (let i = 0; i < changed.length; i++) {
          const slot = changed[i]!;
          if (held.has(slot)) buffer = this.copyChunk(chunkOf[slot]! - first, it, buffer);
        }
      }
    }
    return buffer;
  }

  /**
   * The shared part of a full state (`SchemaSerializer.getFullState`: what every joining client gets
   * before its view). Colyseus walks the whole state for it whenever a change is pending, which
   * between two ticks is at every join (the joining player's own entry); when every field of the root
   * is either a primitive or view-filtered (`sharedRootFields`), that part is the root's primitive
   * fields alone, so it is encoded again only when one of them changed.
   */
  override encodeAll(it: Iterator = { offset: 0 }, buffer: Uint8Array = this.sharedBuffer): Uint8Array {
    if (this.sharedRootFields === undefined) return super.encodeAll(it, buffer);
    const state = this.state as unknown as Record<string, unknown>;
    const values = this.sharedRootFields.map((name) => state[name]);
    const cached = this.sharedFull;
    if (cached && cached.start === it.offset && cached.values.every((v, i) => v === values[i])) {
      if (buffer.length < cached.start + cached.bytes.length) buffer = this.grown(buffer, cached.start + cached.bytes.length);
      buffer.set(cached.bytes, cached.start);
      it.offset = cached.start + cached.bytes.length;
      return buffer.subarray(0, it.offset);
    }
    const start = it.offset;
    const out = super.encodeAll(it, buffer);
    this.sharedFull = { start, values, bytes: out.slice(start, it.offset) };
    return out;
  }

  /**
   * A client's full state (docs/interest.md "A joining client's first state"). Colyseus walks every
   * entity of the state for it (thousands in a crowd), at every join. A `TrackedView` nothing was
   * sent for yet (a client that has just joined: the room made its view empty and added what it
   * tracks) holds all it has in `view.changes` and `view.wholes` (`bootstrap`), so its full state is
   * those, drained as a patch drains them, every entity whole: the same state decoded, and its first
   * patch does not send its view again. Nothing else of the tick's pending changes is encoded for it
   * (they are older than the entities' snapshots, and the collections' entries for those are in
   * `view.changes`): between two ticks, those are the joins since the last patch, and encoding them
   * again for every join cost in proportion to the joins squared. A view that was sent something (a
   * client back from its reconnection window) gets Colyseus's walk: the SDK takes that full state as
   * authoritative and drops what it does not name.
   */
  override encodeAllView(view: StateView, sharedOffset: number, it: Iterator, bytes: Uint8Array = this.sharedBuffer): Uint8Array {
    if (!(view instanceof TrackedView) || view.delivered) return super.encodeAllView(view, sharedOffset, it, bytes);
    this.snapshots.newPass();
    view.bootstrap(treeOf(this.state as unknown as Ref)!, this.rootViewFields);
    this.takeWholes(view);
    this.firstState = true;
    try {
      return this.encodeView(view, sharedOffset, it, bytes);
    } finally {
      this.firstState = false;
    }
  }

  override discardChanges(): void {
    this.built = false;
    this.snapshots.patchSent();
    super.discardChanges();
  }

  /**
   * A view's patch: what is queued in the view itself (`drainView`, as Colyseus's drain writes it),
   * then the entities it took whole and its part of the tick's changes (`encode`), and the shared part and the view's part in one
   * pooled Buffer. Colyseus joined them into a new array for every client every tick (a quarter of a
   * crowd tick's garbage in `bench-interest`'s heap sampling).
   */
  override encodeView(view: StateView, sharedOffset: number, it: Iterator, bytes: Uint8Array = this.sharedBuffer): Uint8Array {
    if (!(view instanceof TrackedView)) return super.encodeView(view, sharedOffset, it, bytes);
    const viewOffset = it.offset;
    if (view.changes.size > 0) bytes = drainView(this, view, it, bytes, this.grow);
    const written = this.encodeTracked(it, view, bytes, it.offset);
    const out = Buffer.allocUnsafe(sharedOffset + it.offset - viewOffset);
    // Copied without a view of each part (`Buffer.copy` of a range allocates nothing; a subarray does).
    copyRange(written, out, 0, 0, sharedOffset);
    copyRange(written, out, sharedOffset, viewOffset, it.offset);
    return out;
  }

  /** The encoder's `ensureCapacity`, for `drainView`. */
  private readonly grow = (bytes: Uint8Array, offset: number) => this.ensureCapacity(bytes, offset);

  /**
   * Out of a new view's `changes`, the entities Colyseus queued whole (its first add, before the
   * view was bound, goes through Colyseus's own `add`: every field the entity holds, each as an ADD),
   * into `view.wholes` with those `TrackedView.add` listed: `encode` copies their snapshots
   * (`WholeSnapshots`), made once for all the clients that join between two changes
   * (docs/interest.md "A joining client's first state"). An entity's entry that is empty (removed
   * again) stays.
   */
  private takeWholes(view: TrackedView): void {
    const trees = (this.root as unknown as { changeTrees: Record<number, ChangeTree | undefined> }).changeTrees;
    for (const [refId, changes] of view.changes) {
      if (changes.size === 0) continue;
      const tree = trees[refId];
      if (tree === undefined || !this.isEntity(tree)) continue;
      view.changes.delete(refId);
      view.wholes.add(this.slots.of(tree), tree);
    }
  }

  /**
   * Split the tick's changes: entities are encoded once into chunks, the rest listed for per-view
   * encoding. The entities go through Colyseus's encoder `entitiesPerCall()` at a time (`encodeEntities`).
   */
  private build() {
    // Emptied by popping, which keeps their room (`length = 0` gives it back, and the tick's pushes grow it anew).
    for (const changed of this.chunks.values()) while (changed.length > 0) changed.pop();
    this.others.next = this.others.tail = undefined;
    this.first = this.next;
    const queue = (this.root as unknown as { changes: ChangeList }).changes;
    const it = this.buildIt;
    it.offset = 0;
    const perCall = Math.min(this.entitiesPerCall(), ENTITIES_PER_CALL);
    let tail: ChangeNode | undefined;
    for (let node = queue.next; node; node = node.next) {
      const tree = node.changeTree;
      if (this.isEntity(tree)) {
        // An entity no view has held has no slot, and no view could use its chunk: not encoded.
        const slot = this.slots.peek(tree);
        if (slot === undefined || !tree.has()) continue;
        this.batch[this.batched]!.changeTree = tree;
        this.batchSlots[this.batched++] = slot;
        if (this.batched === perCall) this.encodeEntities(it);
      } else if (this.reachesViews(tree)) {
        const copy: ChangeNode = { changeTree: tree };
        if (tail) tail.next = copy;
        else this.others.next = copy;
        tail = this.others.tail = copy;
      }
    }
    this.encodeEntities(it);
    // What of the rest may be for the views (a collection's entries coming or going; not the root's
    // tick, left out above), encoded as a view that sees everything would when no filter of its own
    // could tell views apart: when that is nothing, no view's pass over it would write anything
    // either, and none is made.
    if (this.others.next && !this.anyFilterIn(this.others)) {
      const probe = this.probeIt;
      probe.offset = it.offset;
      this.chunkBytes = this.encodeList(this.others, probe, this.everything, this.chunkBytes, it.offset, ENTITY_HEADROOM);
      if (probe.offset === it.offset) this.others.next = this.others.tail = undefined;
    }
    this.built = true;
  }

  /** How many entities `build` hands Colyseus's encoder in one call (tests compare the bytes with one at a time). */
  protected entitiesPerCall(): number {
    return ENTITIES_PER_CALL;
  }

  /**
   * Encode the entities batched by `build` into chunks, in one call of Colyseus's encoder: where an
   * entity's chunk starts, the view it is encoded for tells (`noteStart`: Colyseus asks it whether it
   * sees each tree, in the list's order, just before encoding it). One call per entity returned a
   * subarray per entity per tick (half the subarrays of `loadtest/bench-interest.ts --scenario
   * wander --players 2000`); an entity's bytes are the same either way (with a view, every tree's
   * part begins with its own structure switch).
   */
  private encodeEntities(it: Iterator): void {
    const count = this.batched;
    if (count === 0) return;
    const batch = this.batch;
    for (let i = 0; i < count - 1; i++) batch[i]!.next = batch[i + 1];
    batch[count - 1]!.next = undefined;
    this.batchList.next = batch[0];
    this.batchList.tail = batch[count - 1];
    const start = it.offset;
    this.noted = 0;
    this.chunkBytes = this.encodeList(this.batchList, it, this.noting, this.chunkBytes, start, count * ENTITY_HEADROOM);
    if (this.noted !== count) throw new Error(`InterestEncoder: Colyseus's encoder asked about ${this.noted} of ${count} entities`);
    const starts = this.batchStarts;
    for (let i = 0; i < count; i++) {
      const tree = batch[i]!.changeTree;
      batch[i]!.changeTree = undefined as unknown as ChangeTree;
      const from = starts[i]!;
      const to = i + 1 < count ? starts[i + 1]! : it.offset;
      if (to === from) continue;
      const slot = this.batchSlots[i]!;
      const n = this.next++;
      this.chunkStart[n - this.first] = from;
      this.chunkEnd[n - this.first] = to;
      if (slot >= this.chunkOf.length) this.chunkOf = grownSlots(this.chunkOf, slot);
      this.chunkOf[slot] = n;
      const type = (tree.ref as object).constructor;
      let changed = this.chunks.get(type);
      if (!changed) this.chunks.set(type, (changed = []));
      changed.push(slot);
    }
    this.batched = 0;
  }

  /** `noting`'s answer: every tree is seen, and where the batched entity's encoding starts is noted. */
  private noteStart(tree: ChangeTree): boolean {
    // Asked about the first again: Colyseus encodes the call again from its start (after growing
    // the buffer, which the headroom given makes needless).
    if (tree === this.batch[0]!.changeTree) this.noted = 0;
    if (this.batch[this.noted]?.changeTree !== tree) throw new Error("InterestEncoder: Colyseus's encoder asked about an entity out of order");
    this.batchStarts[this.noted++] = this.buildIt.offset;
    return true;
  }

  /** Whether a changed tree that is not an entity can write anything in a view's pass (`reachesViews` of encoder-parts.ts; tests keep every tree). */
  protected reachesViews(tree: ChangeTree): boolean {
    return reachesViews(tree);
  }

  /** Whether a tree of `list` has a field filter of its own (which might ask the view something only a client's view can answer). */
  private anyFilterIn(list: ChangeList): boolean {
    for (let node = list.next; node; node = node.next) if (node.changeTree.encDescriptor.filter !== undefined) return true;
    return false;
  }

  /** An entity: one of the leaf classes, filtered (reached through a view collection), attached, with no field filter of its own. */
  private isEntity(tree: ChangeTree): boolean {
    return this.leafTypes.has((tree.ref as object).constructor as SchemaClass) && tree.isFiltered && tree.encDescriptor.filter === undefined;
  }

  /**
   * Colyseus's encoding of just the trees in `list` (the root's change queue swapped for the call),
   * with `headroom` free bytes ensured ahead.
   */
  private encodeList(list: ChangeList, it: Iterator, view: StateView, buffer: Uint8Array, initialOffset: number, headroom = 0): Uint8Array {
    const root = this.root as unknown as { changes: ChangeList };
    const queue = root.changes;
    root.changes = list;
    try {
      if (buffer.length - it.offset < headroom) buffer = this.grown(buffer, it.offset + headroom);
      // Colyseus returns the written part (a subarray, of a new buffer if it had to grow): go on
      // writing into the whole buffer.
      const written = super.encode(it, view, buffer, initialOffset);
      if (written.buffer === buffer.buffer) return buffer;
      return written.buffer === this.sharedBuffer.buffer ? this.sharedBuffer : new Uint8Array(written.buffer);
    } finally {
      root.changes = queue;
    }
  }

  /** Copy a whole snapshot (`WholeSnapshots.write`) into the view's patch. */
  private readonly copyWhole = (bytes: Uint8Array, length: number, it: Iterator, buffer: Uint8Array) => this.copyBytes(bytes, 0, length, it, buffer);

  private copyChunk(i: number, it: Iterator, buffer: Uint8Array): Uint8Array {
    return this.copyBytes(this.chunkBytes, this.chunkStart[i]!, this.chunkEnd[i]!, it, buffer);
  }

  private copyBytes(from: Uint8Array, start: number, end: number, it: Iterator, buffer: Uint8Array): Uint8Array {
    if (it.offset + end - start > buffer.length) buffer = this.ensureCapacity(buffer, it.offset + end - start);
    // Chunks are a few bytes (a move is about a dozen): a plain loop, no subarray allocated per copy.
    let o = it.offset;
    for (let b = start; b < end; b++) buffer[o++] = from[b]!;
    it.offset = o;
    return buffer;
  }

  private grown(buffer: Uint8Array, size: number): Uint8Array {
    return grown(buffer, size);
  }
}
