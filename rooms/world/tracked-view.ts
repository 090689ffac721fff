/**
 * A client's `StateView` that keeps the slots of what it holds, for the interest encoder
 * (interest-encoder.ts, docs/interest.md "Encoding a crowd's patches"), and the entities' slots.
 */
import { $changes, $refId, MapSchema, OPERATION, StateView, type ChangeTree } from "@colyseus/schema";

export type Ref = Parameters<StateView["add"]>[0];

/** Colyseus's default view tag (what `add` and `remove` take when given none). */
const DEFAULT_VIEW_TAG = -1;

/** The root's reference id: its entry comes first in a view's changes. */
const ROOT_REF_ID = 0;

/** An entity's slot (`EntitySlots`), on its change tree. */
const SLOT = Symbol("interest-encoder slot");
type Slotted = ChangeTree & { [SLOT]?: number };
export const treeOf = (obj: Ref): ChangeTree | undefined => (obj as { [$changes]?: ChangeTree } | undefined)?.[$changes];

/**
 * Small dense numbers for the entities that views hold, so that a view's patch looks up each entity
 * it holds in an array instead of on the entity (the per-view pass touches only numbers). An entity
 * gets its slot when a view first adds it and gives it back when it leaves the state, after every
 * view has let it go (`SchemaMirror.remove`); the slot then serves another entity.
 */
export class EntitySlots {
  private readonly free: number[] = [];
  private count = 0;

  /** `leaves`: the entity classes (primitive fields only, checked by the encoder). */
  constructor(readonly leaves: ReadonlySet<unknown> = new Set()) {}

  /** The slot of the entity `tree`, given at the first call. */
  of(tree: ChangeTree): number {
    let slot = (tree as Slotted)[SLOT];
    if (slot === undefined) (tree as Slotted)[SLOT] = slot = this.free.pop() ?? this.count++;
    return slot;
  }

  /** The slot of `tree` if it has one. */
  peek(tree: ChangeTree): number | undefined {
    return (tree as Slotted)[SLOT];
  }

  /** `obj` has left the state and is in no view: its slot may serve another entity. */
  release(obj: Ref): void {
    const tree = treeOf(obj) as Slotted | undefined;
    const slot = tree?.[SLOT];
    if (slot === undefined) return;
    tree![SLOT] = undefined;
    this.free.push(slot);
  }
}

/**
 * A set of entities by their slots, in a Set's order (as added; one deleted and added again comes
 * last), each slot with a value (`items`, walked by index): a bit per slot tells membership. The
 * views' sets of what they hold and take whole change every tick in a moving crowd; as Sets, their
 * tables were rehashed as entities came and went (and made anew at every clear), and walking a Set
 * in the per-view pass took twice an array's time (in a micro-benchmark of that loop).
 */
export class SlotSet<T> {
  /** The members' values, in order. */
  readonly items: T[] = [];
  private readonly slotOf: number[] = [];
  private bits = new Uint32Array(8);

  get size(): number {
    return this.items.length;
  }

  has(slot: number): boolean {
    const word = slot >>> 5;
    return word < this.bits.length && (this.bits[word]! & (1 << (slot & 31))) !== 0;
  }

  /** Add `slot` with its value, last; nothing if it is a member already (it keeps its place and value). */
  add(slot: number, item: T): void {
    if (this.has(slot)) return;
    const word = slot >>> 5;
    if (word >= this.bits.length) {
      const grown = new Uint32Array(Math.max(word + 1, 2 * this.bits.length));
      grown.set(this.bits);
      this.bits = grown;
    }
    this.bits[word]! |= 1 << (slot & 31);
    this.items.push(item);
    this.slotOf.push(slot);
  }

  /** Take `slot` out, the members after it moving up a place. */
  delete(slot: number): void {
    if (!this.has(slot)) return;
    this.bits[slot >>> 5]! &= ~(1 << (slot & 31));
    const { items, slotOf } = this;
    const last = slotOf.length - 1;
    for (let i = slotOf.indexOf(slot); i < last; i++) {
      items[i] = items[i + 1]!;
      slotOf[i] = slotOf[i + 1]!;
    }
    items.pop();
    slotOf.pop();
  }

  /** Empty, the arrays keeping their room (`length = 0` gives it back, and the next add makes it anew). */
  clear(): void {
    const { items, slotOf, bits } = this;
    while (slotOf.length > 0) {
      const slot = slotOf.pop()!;
      bits[slot >>> 5]! &= ~(1 << (slot & 31));
      items.pop();
    }
  }
}

/** The slots a view holds of one entity class (`TrackedView.entities`). */
export interface HeldSlots {
  readonly type: unknown;
  readonly slots: SlotSet<number>;
}

/**
 * A client's view that also keeps the slots of the entities it holds, by class, so its patch need not
 * walk the whole tick's changes. The sets follow `add` and `remove` exactly (the room's only way in
 * and out: `refreshView`, and `SchemaMirror.remove` before an entity leaves the state), so the
 * encoder takes them as the view's visibility without testing each tree again.
 */
export class TrackedView extends StateView {
  /**
   * Slots of what was added (and not removed since), by the class of the object, in the order the
   * classes first came: an array, which the encoder walks for every patch (a Map's entries made a
   * pair for every class of every view, every tick).
   */
  readonly entities: HeldSlots[] = [];
  private readonly byType = new Map<unknown, HeldSlots>();
  /**
   * Entities added whole since the view's last patch (`add`'s own path): the encoder writes each one's
   * snapshot after what the view queued, where Colyseus would have drained the fields it queued
   * one by one.
   */
  readonly wholes = new SlotSet<ChangeTree>();
  /** Whether any state was encoded for this view yet (a full state or a patch): until then, `changes` holds all it has. */
  delivered = false;
  /** Entities added before the view was delivered while they were new in the state (see `bootstrap`). */
  private bornNew: Ref[] | undefined;

  constructor(private readonly slots: EntitySlots) {
    super();
  }

  /**
   * Colyseus's `add`, except for an entity that is not new in the state, added with the default tag
   * to a view already bound to the state: Colyseus queues each of its fields in a map of its own (a
   * map and a dozen entries for every entity that comes into every view), where here it is marked
   * visible with its ancestors, as Colyseus does, and listed in `wholes`; the encoder writes its
   * snapshot, made once per patch for all the views it comes into.
   */
  override add(obj: Ref, tag?: number, checkIncludeParent?: boolean): boolean {
    const tree = treeOf(obj);
    const added = tree !== undefined && this.addWhole(obj, tree, tag, checkIncludeParent) ? true : super.add(obj, tag, checkIncludeParent);
    if (tree && !this.delivered && tree.isNew) (this.bornNew ??= []).push(obj);
    if (tree) {
      const type = (obj as object).constructor;
      let held = this.byType.get(type);
      if (!held) {
        this.byType.set(type, (held = { type, slots: new SlotSet() }));
        this.entities.push(held);
      }
      const slot = this.slots.of(tree);
      held.slots.add(slot, slot);
    }
    return added;
  }

  /** `add`'s own path (see `add`), when it applies: false when Colyseus's must run. */
  private addWhole(obj: Ref, tree: ChangeTree, tag: number | undefined, checkIncludeParent: boolean | undefined): boolean {
    if ((tag !== undefined && tag !== DEFAULT_VIEW_TAG) || checkIncludeParent === false || this.iterable) return false;
    if (!this.slots.leaves.has((obj as object).constructor) || tree.isNew || !this.bound()) return false;
    const parent = treeOf(tree.parent as Ref);
    if (parent === undefined || parent.isStreamCollection) return false;
    this.markVisible(tree);
    this.addParentOf(tree, DEFAULT_VIEW_TAG);
    this.wholes.add(this.slots.of(tree), tree);
    return true;
  }

  /** Whether the view has a bit of its own in the state's trees (Colyseus binds it at its first `add`). */
  private bound(): boolean {
    return (this as unknown as { _root?: unknown })._root !== undefined;
  }

  /**
   * Before the view's first encoding: every entity it has is to be taken whole (`changes` or
   * `wholes`), except those that were new in the state when added (Colyseus leaves their fields to
   * the tick's shared changes, which a client still joining did not get): each of those that is no
   * longer new is added again, which takes it whole; one still new is listed whole too (its fields
   * are all pending: the first state carries none of the tick's changes, interest-encoder.ts).
   */
  bootstrap(rootTree: ChangeTree, rootViewFields: readonly number[]): void {
    for (const obj of this.bornNew ?? []) {
      if (!this.has(obj)) continue;
      const tree = treeOf(obj)!;
      if (tree.isNew) this.wholes.add(this.slots.of(tree), tree);
      else this.add(obj);
    }
    this.bornNew = undefined;
    // Colyseus's full state of a view that sees the root names every view-filtered field of it, an
    // empty collection too (the SDK's state has no collection it was not told of): those not named
    // yet are, first in the drain.
    if (!this.isChangeTreeVisible(rootTree)) return;
    let root = this.changes.get(ROOT_REF_ID);
    if (!root) {
      const rest = [...this.changes];
      this.changes.clear();
      this.changes.set(ROOT_REF_ID, (root = new Map<number | ChangeTree, OPERATION>()));
      for (const [refId, changes] of rest) this.changes.set(refId, changes);
    }
    for (const index of rootViewFields) if (!root.has(index)) root.set(index, OPERATION.ADD);
  }

  /**
   * Colyseus's `remove`, except for an entity of a leaf class in a map collection, removed with the
   * default tag from a view that is not iterable (the room's every removal): `removeWhole`.
   */
  override remove(obj: Ref, tag?: number, isClear?: boolean): this {
    const tree = treeOf(obj);
    if (tree === undefined || !this.removeWhole(obj, tree, tag)) super.remove(obj, tag, isClear ?? false);
    const slot = tree && this.slots.peek(tree);
    if (slot === undefined) return this;
    // Never told of (added and removed before a patch): its snapshot does not go out, as Colyseus drops what it queued.
    this.wholes.delete(slot);
    this.byType.get((obj as object).constructor)?.slots.delete(slot);
    return this;
  }

  /**
   * `remove`'s own path, when it applies (false when Colyseus's must run): what Colyseus's does for
   * such an entity, step for step, less what it costs for nothing. Colyseus queues an empty map of
   * changes under the entity's own refId at every removal, which its drain skips (as `drainView`
   * does) and which nothing writes into later: an entity of a leaf class has no child whose entry
   * could go there, and `add` takes it whole (or, new in the state, leaves its fields to the shared
   * changes) rather than queue its fields. What Colyseus does for its children (the cancelled
   * entries of their introduction, their visibility, each through a closure) and for its tags is
   * nothing for a leaf with the default tag; the ancestors are touched as Colyseus touches them,
   * without its array. Colyseus's removals were 47 of the 304 MB that `loadtest/bench-interest.ts
   * --scenario wander --players 2000` allocated in its measured ticks (docs/interest.md "Encoding a
   * crowd's patches"); the differential test compares every frame with Colyseus's path's bytes.
   */
  protected removeWhole(obj: Ref, tree: ChangeTree, tag: number | undefined): boolean {
    if ((tag !== undefined && tag !== DEFAULT_VIEW_TAG) || this.iterable || !this.bound()) return false;
    if (!this.slots.leaves.has((obj as object).constructor) || !tree.isFiltered || tree.isStreamCollection) return false;
    const parent = tree.parent as unknown;
    if (!(parent instanceof MapSchema)) return false;
    const parentTree = treeOf(parent as Ref);
    const key = tree.parentIndex;
    if (parentTree === undefined || parentTree.isStreamCollection || key === undefined) return false;
    this.unmarkVisible(tree);
    // Every ancestor with filtered fields before what is written below (Colyseus's `_touchAncestorsOf`):
    // the order of `changes` is the order the drain writes in, ancestors first.
    this.touchAncestors(parentTree);
    const parentRefId = (parent as unknown as { [$refId]: number })[$refId];
    let changes = this.changes.get(parentRefId);
    if (changes === undefined) this.changes.set(parentRefId, (changes = new Map<number | ChangeTree, OPERATION>()));
    // Added in this same patch: its introduction never reaches the client, nor what it queued (Colyseus's `_dropPendingEntries`).
    else if (changes.get(key) === OPERATION.ADD) this.changes.delete((obj as unknown as { [$refId]: number })[$refId]);
    changes.set(key, OPERATION.DELETE);
    return true;
  }

  /**
   * Colyseus's `_touchAncestorsOf` from `tree` up (the tree and its ancestors): an empty entry in
   * `changes` for each with filtered fields that has none, the root's first, up to the first that
   * has one. Recursive (a state is a few levels deep) rather than Colyseus's array per call.
   */
  private touchAncestors(tree: ChangeTree | undefined): void {
    if (tree === undefined) return;
    if (!tree.hasFilteredFields) return this.touchAncestors(treeOf(tree.parent as Ref));
    const refId = (tree.ref as unknown as { [$refId]: number })[$refId];
    if (this.changes.has(refId)) return;
    this.touchAncestors(treeOf(tree.parent as Ref));
    this.changes.set(refId, new Map<number | ChangeTree, OPERATION>());
  }
}
