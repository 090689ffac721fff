/**
 * A client's own queued changes (`StateView.changes`: the collections' entries of what came into its
 * view, what left it), written as Colyseus's `Encoder.encodeView` writes them, without what that costs
 * per call: an `[key, operation]` array for every queued field, and a new array joining the shared and
 * the view's bytes for every client with anything queued (in a crowd on the move, most of them, every
 * tick: 7 % of what the world allocated in `bench:world --wander --heap-prof-window`). Entities'
 * whole snapshots are written here too (`writeFields`, whole-snapshots.ts). The interest encoder
 * (interest-encoder.ts) calls it for its views and builds the patch in a pooled Buffer; the
 * differential test (test/unit/world/interest-encoder.test.ts) decodes its patches beside
 * Colyseus's own and compares.
 *
 * It writes what the world room's state can hold: schema objects and maps (no arrays, whose whole
 * snapshots Colyseus writes another way, and no streams: the encoder checks the state's classes).
 */
import { $getByIndex, $refId, encode, OPERATION, type ChangeTree, type Encoder, type StateView } from "@colyseus/schema";

/** The wire's "the next changes are of this structure" byte (`SWITCH_TO_STRUCTURE` in Colyseus's spec). */
const SWITCH_TO_STRUCTURE = 255;

type Iterator = { offset: number };
type Grow = (bytes: Uint8Array, offset: number) => Uint8Array;
type Indexed = { [$getByIndex](index: number): unknown };

/**
 * Write and clear `view.changes` into `bytes` from `it.offset`, as Colyseus's drain does: each
 * structure's switch and its queued fields in the order they were queued (ancestors first), an entry
 * of a collection keyed by its element (`view.add`) at the element's current key, a queued field whose
 * value is gone as a removal. `ensureCapacity` (the encoder's) leaves the room one structure needs;
 * returns the buffer written, which may be a grown one.
 */
export function drainView(encoder: Encoder, view: StateView, it: Iterator, bytes: Uint8Array, ensureCapacity: Grow): Uint8Array {
  const trees = encoder.root.changeTrees as Record<number, ChangeTree | undefined>;
  const changes = view.changes;
  for (const refId of changes.keys()) {
    const queued = changes.get(refId)!;
    const tree = trees[refId];
    // Detached from the state since it was queued, or nothing queued: nothing to tell.
    if (tree === undefined || queued.size === 0) continue;
    const descriptor = tree.encDescriptor;
    const write = descriptor.encoder;
    const metadata = descriptor.metadata as Parameters<typeof write>[8];
    const ref = tree.ref as { [$refId]: number };
    const target = tree.refTarget as unknown as Indexed;
    bytes = ensureCapacity(bytes, it.offset);
    bytes[it.offset++] = SWITCH_TO_STRUCTURE;
    encode.number(bytes, ref[$refId], it);
    for (const key of queued.keys()) {
      const op = queued.get(key)!;
      let index: number;
      if (typeof key === "number") {
        if (key < 0) throw new Error("drainView: an array snapshot is queued, and the world's state holds no arrays");
        index = key;
      } else {
        // An element added to the view under its collection: at its key now.
        const at = key.indexInParent(ref as never);
        if (at === undefined) continue;
        index = at;
        // Added to the view in the tick it leaves the collection: never told of, so neither it nor its entry goes out.
        if (op === OPERATION.ADD && tree.getChange(index) === OPERATION.DELETE) {
          changes.delete((key.ref as { [$refId]: number })[$refId]);
          continue;
        }
      }
      const value = target[$getByIndex](index);
      write(encoder, bytes, tree, index, value !== undefined && op ? op : OPERATION.DELETE, it, false, true, metadata);
    }
  }
  changes.clear();
  return bytes;
}

/**
 * Write `tree`'s fields `indexes` from `it.offset`, each as an ADD (a removal if its value is gone),
 * exactly as `drainView` writes a queued entry of them: the structure's switch, then each field in
 * the order given; nothing at all for no field. An entity's whole snapshot (whole-snapshots.ts)
 * without a view, a map and its clearing made for each one. Returns the buffer written, which may
 * be a grown one.
 */
export function writeFields(encoder: Encoder, tree: ChangeTree, indexes: readonly number[], it: Iterator, bytes: Uint8Array, ensureCapacity: Grow): Uint8Array {
  if (indexes.length === 0) return bytes;
  const descriptor = tree.encDescriptor;
  const write = descriptor.encoder;
  const metadata = descriptor.metadata as Parameters<typeof write>[8];
  const target = tree.refTarget as unknown as Indexed;
  bytes = ensureCapacity(bytes, it.offset);
  bytes[it.offset++] = SWITCH_TO_STRUCTURE;
  encode.number(bytes, (tree.ref as { [$refId]: number })[$refId], it);
  for (let i = 0; i < indexes.length; i++) {
    const index = indexes[i]!;
    write(encoder, bytes, tree, index, target[$getByIndex](index) !== undefined ? OPERATION.ADD : OPERATION.DELETE, it, false, true, metadata);
  }
  return bytes;
}
