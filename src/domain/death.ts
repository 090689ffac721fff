/**
 * What a dying player keeps and drops: the ITEMS_KEPT_ON_DEATH most valuable units stay (in a fresh
 * inventory), everything else drops, in piles no larger than MAX_STACK (docs/persistence.md "Deaths").
 */
import { addItem, emptyInventory, type Inventory, type ItemLookup } from "./inventory.js";
import { MAX_STACK } from "./types.js";

/** Items kept on death (most valuable units). */
export const ITEMS_KEPT_ON_DEATH = 3;

/** An item and how many of it. */
export interface ItemCount {
  itemId: string;
  quantity: number;
}

/** Items a death moved, kept on the death lock so an interrupted death can be resolved exactly once. */
export interface DeathItems {
  dropped: ItemCount[];
  kept: ItemCount[];
}

/** The outcome of a death: the inventory kept, and what was kept and dropped (for the record). */
export interface DeathPlan {
  inventory: Inventory;
  kept: ItemCount[];
  dropped: ItemCount[];
}

/**
 * Plan a death from everything the player holds (inventory slots and worn items, in that order).
 * Units are ranked by value; a stackable stack counts as one unit worth its whole value, so it is
 * kept or dropped whole. A kept unit the fresh inventory cannot take is dropped. Unknown items are
 * worth nothing and are dropped.
 */
export function planDeath(held: readonly ItemCount[], items: ItemLookup, keep = ITEMS_KEPT_ON_DEATH): DeathPlan {
  const units = held.flatMap((h) => {
    const def = items(h.itemId);
    const value = def?.value ?? 0;
    return def?.stackable
      ? [{ itemId: h.itemId, value: value * h.quantity, stack: h.quantity }]
      : Array.from({ length: h.quantity }, () => ({ itemId: h.itemId, value, stack: 1 }));
  });
  units.sort((a, b) => b.value - a.value);
  const kept = tally(units.slice(0, keep).map((u) => ({ itemId: u.itemId, quantity: u.stack })));
  const keepLeft = new Map(kept.map((k) => [k.itemId, k.quantity]));
  let inventory = emptyInventory();
  const dropped: ItemCount[] = [];
  for (const h of held) {
    const def = items(h.itemId);
    const keepQty = Math.min(keepLeft.get(h.itemId) ?? 0, h.quantity);
    if (def && keepQty > 0) {
      const r = addItem(inventory, def, keepQty);
      if (r.ok) {
        inventory = r.value;
        keepLeft.set(h.itemId, (keepLeft.get(h.itemId) ?? 0) - keepQty);
      } else dropped.push({ itemId: h.itemId, quantity: keepQty });
    }
    if (h.quantity - keepQty > 0) dropped.push({ itemId: h.itemId, quantity: h.quantity - keepQty });
  }
  return { inventory, kept, dropped: piles(dropped) };
}

/** Sum quantities per item, in order of first appearance (no cap: see `piles`). */
export function tally(list: readonly ItemCount[]): ItemCount[] {
  const m = new Map<string, number>();
  for (const l of list) m.set(l.itemId, (m.get(l.itemId) ?? 0) + l.quantity);
  return [...m].map(([itemId, quantity]) => ({ itemId, quantity }));
}

/**
 * Sum quantities per item into piles of at most MAX_STACK each: a total past the cap (a worn stack
 * plus the same item in the inventory) becomes a second pile, never a loss.
 */
export function piles(list: readonly ItemCount[]): ItemCount[] {
  const out: ItemCount[] = [];
  for (const { itemId, quantity } of tally(list)) {
    for (let left = quantity; left > 0; left -= MAX_STACK) out.push({ itemId, quantity: Math.min(left, MAX_STACK) });
  }
  return out;
}
