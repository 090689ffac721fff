/**
 * Entities' whole snapshots for the interest encoder (interest-encoder.ts, docs/interest.md "A
 * joining client's first state"): every field an entity holds, each as an ADD, as Colyseus writes an
 * entity a view has just added. Made once and copied into every view that takes the entity whole in
 * the same encoding pass (a tick's patch for every view, or one joining client's first state), and
 * kept beyond it while the entity does not change (a crowd standing still while others join: every
 * join's first state holds them).
 */
import { $getByIndex, $refId, Encoder, type ChangeTree } from "@colyseus/schema";
import { fieldsOf, type SchemaClass } from "./schema-fields.js";
import type { EntitySlots, TrackedView } from "./tracked-view.js";
import { writeFields } from "./view-drain.js";

type Iterator = { offset: number };
/** Copies `bytes[0, length)` into `buffer` at `it.offset` (growing it if need be) and returns the buffer written. */
type Copy = (bytes: Uint8Array, length: number, it: Iterator, buffer: Uint8Array) => Uint8Array;

/**
 * A slot's snapshot: the entity's, made in encoding `pass` after `discards` patches, good for the
 * rest of that pass (nothing changes while a pass encodes) and, when made with no change of the
 * entity pending (`clean`), until it changes or a patch goes out. The record and its bytes are the
 * slot's, written over for the next snapshot made in it (a copy per snapshot, and its record, were
 * most of what `of` allocated).
 */
interface Whole {
  tree: ChangeTree;
  /** The snapshot is `bytes[0, length)`. */
  bytes: Uint8Array;
  length: number;
  discards: number;
  pass: number;
  clean: boolean;
}

export class WholeSnapshots {
  /** Where snapshots are encoded. */
  private buffer: Uint8Array = new Uint8Array(Encoder.BUFFER_SIZE);
  private readonly it: Iterator = { offset: 0 };
  /** Snapshots written so far (tests and diagnostics: each entity once per pass, or once while it does not change). */
  made = 0;
  /** Per slot, the snapshot last made (kept off the change trees: a property more on them slows Colyseus's own passes). */
  private readonly kept: (Whole | undefined)[] = [];
  /** Per entity class, the indexes of every field it has: the fields of the snapshot of an entity all of whose fields hold a value. */
  private readonly allFields = new Map<unknown, number[]>();
  /** `liveFields` of an entity with a field that holds no value (filled anew for each). */
  private readonly someFields: number[] = [];
  private discards = 0;
  private pass = 0;

  constructor(
    private readonly encoder: Encoder,
    private readonly slots: EntitySlots,
    /** The encoder's `ensureCapacity` (the room one structure needs ahead), for `writeFields`. */
    private readonly grow: (bytes: Uint8Array, offset: number) => Uint8Array,
  ) {}

  /** An encoding pass begins (a tick's patch, a joining client's first state). */
  newPass(): void {
    this.pass++;
  }

  /** A patch went out (`discardChanges`): what was pending is now sent. */
  patchSent(): void {
    this.discards++;
  }

  /** The whole snapshot of the entity `tree`. */
  private of(tree: ChangeTree): Whole {
    const slot = this.slots.of(tree);
    let kept = this.kept[slot];
    const clean = !tree.has();
    if (kept?.tree === tree && kept.discards === this.discards && (kept.pass === this.pass || (kept.clean && clean))) return kept;
    // Written as a view's patch drains the fields Colyseus queues for an entity it adds (view-drain.ts).
    const it = this.it;
    it.offset = 0;
    const buffer = (this.buffer = writeFields(this.encoder, tree, this.liveFields(tree), it, this.buffer, this.grow));
    const length = it.offset;
    if (kept === undefined) kept = this.kept[slot] = { tree, bytes: new Uint8Array(roomFor(length)), length, discards: 0, pass: 0, clean };
    else if (kept.bytes.length < length) kept.bytes = new Uint8Array(roomFor(length));
    // A few dozen bytes: a plain loop, no subarray made to copy them.
    const bytes = kept.bytes;
    for (let b = 0; b < length; b++) bytes[b] = buffer[b]!;
    this.made++;
    // Beyond this pass, good only while nothing of it is pending: a change since would not show in it.
    kept.tree = tree;
    kept.length = length;
    kept.discards = this.discards;
    kept.pass = this.pass;
    kept.clean = clean;
    return kept;
  }

  /**
   * The snapshots of the entities listed whole since the view's last patch (`TrackedView.wholes`:
   * what `view.add` took, and at a first state what Colyseus's own add queued); one that left the
   * state meanwhile has nothing to write (its collection's entry, drained before, says it is gone).
   */
  write(view: TrackedView, it: Iterator, buffer: Uint8Array, copy: Copy): Uint8Array {
    const trees = (this.encoder.root as unknown as { changeTrees: Record<number, ChangeTree | undefined> }).changeTrees;
    const wholes = view.wholes.items;
    for (let i = 0; i < wholes.length; i++) {
      const tree = wholes[i]!;
      if (trees[(tree.ref as unknown as { [$refId]: number })[$refId]] !== tree) continue;
      const whole = this.of(tree);
      buffer = copy(whole.bytes, whole.length, it, buffer);
    }
    view.wholes.clear();
    return buffer;
  }

  /**
   * An entity's fields that hold a value, in the order Colyseus queues them for an entity added to a
   * view (each as an ADD): every field of its class, or those `forEachLive` walks.
   */
  private liveFields(tree: ChangeTree): readonly number[] {
    const type = (tree.ref as object).constructor;
    let all = this.allFields.get(type);
    if (!all) this.allFields.set(type, (all = (fieldsOf(type as SchemaClass) ?? []).map((f) => f.index)));
    const target = tree.refTarget as unknown as { [$getByIndex](index: number): unknown };
    for (let i = 0; i < all.length; i++) {
      if (target[$getByIndex](all[i]!) !== undefined) continue;
      const some = this.someFields;
      while (some.length > 0) some.pop(); // keeping its room, which `length = 0` gives back
      live = some;
      tree.forEachLive(pushLive);
      live = undefined;
      return some;
    }
    return all;
  }
}

/** Where `pushLive` puts what `forEachLive` walks (a function made once, not a closure per entity). */
let live: number[] | undefined;
const pushLive = (index: number) => void live!.push(index);

/** The bytes a slot keeps for a snapshot of `length`: some to spare, for the next entity of the slot or a longer name. */
const roomFor = (length: number) => Math.max(64, 2 * length);
