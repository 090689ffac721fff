/**
 * Entities' whole snapshots for the interest encoder (interest-encoder.ts, docs/interest.md "A
 * joining client's first state"): every field an entity holds, each as an ADD, as Colyseus writes an
 * entity a view has just added. Made once and copied into every view that takes the entity whole in
 * the same encoding pass (a tick's patch for every view, or one joining client's first state), and
 * kept beyond it while the entity does not change (a crowd standing still while others join: every
 * join's first state holds them).
 */
import { $getByIndex, $refId, Encoder, OPERATION, StateView, type ChangeTree } from "@colyseus/schema";
import { fieldsOf, type SchemaClass } from "./schema-fields.js";
import type { EntitySlots, TrackedView } from "./tracked-view.js";
import { drainView } from "./view-drain.js";

type Iterator = { offset: number };
type Fields = Map<number | ChangeTree, OPERATION>;
/** Copies `bytes` into `buffer` at `it.offset` (growing it if need be) and returns the buffer written. */
type Copy = (bytes: Uint8Array, it: Iterator, buffer: Uint8Array) => Uint8Array;

/**
 * An entity's snapshot, made in encoding `pass` after `discards` patches: good for the rest of that
 * pass (nothing changes while a pass encodes) and, when made with no change of the entity pending
 * (`clean`), until it changes or a patch goes out.
 */
interface Whole {
  tree: ChangeTree;
  bytes: Uint8Array;
  discards: number;
  pass: number;
  clean: boolean;
}

export class WholeSnapshots {
  /** A view of nothing, whose changes are one entity's fields while `of` writes its snapshot. */
  private readonly scratch = new StateView();
  /** Where snapshots are encoded. */
  private buffer: Uint8Array = new Uint8Array(Encoder.BUFFER_SIZE);
  /** Snapshots written so far (tests and diagnostics: each entity once per pass, or once while it does not change). */
  made = 0;
  /** Per slot, the snapshot last made (kept off the change trees: a property more on them slows Colyseus's own passes). */
  private readonly kept: (Whole | undefined)[] = [];
  /** Per entity class, every field it has, each as an ADD: the snapshot of an entity all of whose fields hold a value. */
  private readonly allFields = new Map<unknown, Fields>();
  private discards = 0;
  private pass = 0;

  constructor(
    private readonly encoder: Encoder,
    private readonly slots: EntitySlots,
    /** The encoder's `ensureCapacity` (the room one structure needs ahead), for `drainView`. */
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
  private of(tree: ChangeTree): Uint8Array {
    const slot = this.slots.of(tree);
    const kept = this.kept[slot];
    const clean = !tree.has();
    if (kept?.tree === tree && kept.discards === this.discards && (kept.pass === this.pass || (kept.clean && clean))) return kept.bytes;
    this.scratch.changes.set((tree.ref as unknown as { [$refId]: number })[$refId], this.liveFields(tree));
    // Written as a view's patch drains what it queued (view-drain.ts), and kept as a copy of its own.
    const it = { offset: 0 };
    this.buffer = drainView(this.encoder, this.scratch, it, this.buffer, this.grow);
    const bytes = this.buffer.slice(0, it.offset);
    this.made++;
    // Beyond this pass, good only while nothing of it is pending: a change since would not show in it.
    this.kept[slot] = { tree, bytes, discards: this.discards, pass: this.pass, clean };
    return bytes;
  }

  /**
   * The snapshots of the entities listed whole since the view's last patch (`TrackedView.wholes`:
   * what `view.add` took, and at a first state what Colyseus's own add queued); one that left the
   * state meanwhile has nothing to write (its collection's entry, drained before, says it is gone).
   */
  write(view: TrackedView, it: Iterator, buffer: Uint8Array, copy: Copy): Uint8Array {
    const trees = (this.encoder.root as unknown as { changeTrees: Record<number, ChangeTree | undefined> }).changeTrees;
    for (const tree of view.wholes) {
      if (trees[(tree.ref as unknown as { [$refId]: number })[$refId]] !== tree) continue;
      buffer = copy(this.of(tree), it, buffer);
    }
    view.wholes.clear();
    return buffer;
  }

  /** An entity's fields that hold a value, each as an ADD (what Colyseus queues for an entity added to a view). */
  private liveFields(tree: ChangeTree): Fields {
    const type = (tree.ref as object).constructor;
    let all = this.allFields.get(type);
    if (!all) this.allFields.set(type, (all = new Map((fieldsOf(type as SchemaClass) ?? []).map((f) => [f.index, OPERATION.ADD]))));
    const target = tree.refTarget as unknown as { [$getByIndex](index: number): unknown };
    for (const index of all.keys()) if (target[$getByIndex](index as number) === undefined) return someFields(tree);
    return all;
  }
}

/** `liveFields` of an entity with a field that holds no value. */
function someFields(tree: ChangeTree): Fields {
  const fields: Fields = new Map();
  tree.forEachLive((index) => fields.set(index, OPERATION.ADD));
  return fields;
}
