/**
 * The interest encoder's small parts (interest-encoder.ts, docs/interest.md "Encoding a crowd's
 * patches"): Colyseus's change-list shapes as the encoder walks them, its sizes, and byte helpers.
 */
import type { ChangeTree } from "@colyseus/schema";

export type Iterator = { offset: number };
export interface ChangeNode {
  changeTree: ChangeTree;
  next?: ChangeNode;
}
export interface ChangeList {
  next?: ChangeNode;
  tail?: ChangeNode;
  nextPosition: number;
}

/**
 * Free bytes kept ahead of each entity's chunk: more than any entity encodes to (a few short strings
 * and numbers), so Colyseus's own overflow path (a re-encode and a warning) is never needed.
 */
export const ENTITY_HEADROOM = 4096;
/** Entities encoded in one call of Colyseus's encoder (`InterestEncoder.encodeEntities`), ENTITY_HEADROOM bytes ahead for each. */
export const ENTITIES_PER_CALL = 64;

/**
 * Whether a changed tree that is not an entity can write anything in a view's pass. Colyseus's view
 * pass writes only filtered fields (of a tree reached through a view-filtered field, or with a view
 * tag of their own) and skips the others before it asks any filter; a tree's own operations
 * (a collection's clear) go with its fields. So a tree outside the views that changed no tagged
 * field writes nothing there, whatever its filter: the root, whose only change in most ticks is
 * its `tick`, where every view's pass over it wrote nothing and returned a subarray.
 */
export function reachesViews(tree: ChangeTree): boolean {
  if (tree.isFiltered) return true;
  const descriptor = tree.encDescriptor;
  if (!descriptor.isSchema) return false;
  let tagged = false;
  tree.forEach((index: number) => {
    if (index >= 0 && (index < 32 ? (descriptor.filterBitmask & (1 << index)) !== 0 : descriptor.tags[index] !== undefined)) tagged = true;
  });
  return tagged;
}

/** `chunkOf` with room for `slot`, the new entries marked unchanged. */
export function grownSlots(chunkOf: Float64Array, slot: number): Float64Array {
  const grown = new Float64Array(Math.max(slot + 1, chunkOf.length * 2)).fill(-1);
  grown.set(chunkOf);
  return grown;
}

/** `buffer` copied into a new one of at least `size` bytes (twice its length at least). */
export function grown(buffer: Uint8Array, size: number): Uint8Array {
  const out = new Uint8Array(Math.max(size, buffer.length * 2));
  out.set(buffer);
  return out;
}

/** Node's `Buffer.copy`, which takes any Uint8Array as its source (its `this`, given at each call below). */
// eslint-disable-next-line @typescript-eslint/unbound-method -- called with its source as `this`
const bufferCopy = (Buffer.prototype as Buffer).copy as (
  this: Uint8Array,
  target: Uint8Array,
  targetStart: number,
  sourceStart: number,
  sourceEnd: number,
) => number;
/** Copy `from[start, end)` into `to` at `at`. */
export const copyRange = (from: Uint8Array, to: Uint8Array, at: number, start: number, end: number): number => bufferCopy.call(from, to, at, start, end);
