/**
 * Inventory rules: adding (stack merging, lowest free slot), removing, moving and capacity checks.
 *
 * Representation: an `Inventory` is a frozen array of exactly INVENTORY_SIZE (28) entries where
 * index i is slot i, holding either `null` (empty) or an `InventorySlot` whose `slot` field equals
 * i. `inventoryFromSlots` / `inventoryToSlots` convert from and to the compact list used by
 * storage rows and `player:sync` (`[{ slot, itemId, quantity }]`, occupied slots only).
 *
 * Every change runs as a transaction on a private copy (`transact`): the steps either all succeed
 * and the copy is committed as a new frozen inventory, or the first failing step's error is
 * returned and the input is untouched.
 */
import { err, ok, type Err, type Result } from "./errors.js";
import { INVENTORY_SIZE, MAX_STACK, type InventorySlot, type ItemDef } from "./types.js";

/** Exactly 28 entries, index = slot, `null` = empty. Never mutated; operations return a new one. */
export type Inventory = readonly (InventorySlot | null)[];

/** Finds an item definition by id (from the item manifest). */
export type ItemLookup = (itemId: string) => ItemDef | undefined;

export const INVENTORY_ERROR = {
  INVALID_INVENTORY: "INVALID_INVENTORY",
  INVALID_SLOT: "INVALID_SLOT",
  INVALID_QUANTITY: "INVALID_QUANTITY",
  EMPTY_SLOT: "EMPTY_SLOT",
  ITEM_MISMATCH: "ITEM_MISMATCH",
  INSUFFICIENT_QUANTITY: "INSUFFICIENT_QUANTITY",
  INVENTORY_FULL: "INVENTORY_FULL",
  STACK_OVERFLOW: "STACK_OVERFLOW",
} as const;
export type InventoryErrorCode = (typeof INVENTORY_ERROR)[keyof typeof INVENTORY_ERROR];

type InvErr = Err<InventoryErrorCode>;

/** True for an integer slot index 0..27. */
export function isValidSlot(slot: unknown): slot is number {
  return Number.isInteger(slot) && (slot as number) >= 0 && (slot as number) < INVENTORY_SIZE;
}

/** True for an integer quantity 1..MAX_STACK. */
export function isValidQuantity(quantity: unknown): quantity is number {
  return Number.isInteger(quantity) && (quantity as number) >= 1 && (quantity as number) <= MAX_STACK;
}

function slotError(slot: unknown): InvErr {
  return err(INVENTORY_ERROR.INVALID_SLOT, `Slot must be a whole number from 0 to ${INVENTORY_SIZE - 1} (got ${String(slot)}).`);
}

function quantityError(quantity: unknown): InvErr {
  return err(INVENTORY_ERROR.INVALID_QUANTITY, `Quantity must be a whole number from 1 to ${MAX_STACK} (got ${String(quantity)}).`);
}

function freeze(slots: (InventorySlot | null)[]): Inventory {
  return Object.freeze(slots);
}

function makeSlot(slot: number, itemId: string, quantity: number): InventorySlot {
  return Object.freeze({ slot, itemId, quantity });
}

/** A new inventory with every slot empty. */
export function emptyInventory(): Inventory {
  return freeze(new Array<InventorySlot | null>(INVENTORY_SIZE).fill(null));
}

/**
 * Builds an inventory from the compact list (storage rows, `player:sync`).
 * Refused with INVALID_SLOT / INVALID_QUANTITY for a bad entry and INVALID_INVENTORY for an empty
 * item id or two entries in one slot.
 */
export function inventoryFromSlots(list: readonly InventorySlot[]): Result<Inventory, InventoryErrorCode> {
  const slots = new Array<InventorySlot | null>(INVENTORY_SIZE).fill(null);
  for (const entry of list) {
    if (!isValidSlot(entry.slot)) return slotError(entry.slot);
    if (!isValidQuantity(entry.quantity)) return quantityError(entry.quantity);
    if (typeof entry.itemId !== "string" || entry.itemId.length === 0) {
      return err(INVENTORY_ERROR.INVALID_INVENTORY, `Slot ${entry.slot} has no item id.`);
    }
    if (slots[entry.slot] !== null) {
      return err(INVENTORY_ERROR.INVALID_INVENTORY, `Slot ${entry.slot} appears twice.`);
    }
    slots[entry.slot] = makeSlot(entry.slot, entry.itemId, entry.quantity);
  }
  return ok(freeze(slots));
}

/** The occupied slots in slot order: the compact form for storage and `player:sync`. */
export function inventoryToSlots(inv: Inventory): InventorySlot[] {
  return inv.filter((s): s is InventorySlot => s !== null).map((s) => ({ slot: s.slot, itemId: s.itemId, quantity: s.quantity }));
}

/** Number of empty slots. */
export function freeSlots(inv: Inventory): number {
  let free = 0;
  for (const s of inv) if (s === null) free++;
  return free;
}

/** Total quantity of an item across all slots. */
export function countItem(inv: Inventory, itemId: string): number {
  let total = 0;
  for (const s of inv) if (s !== null && s.itemId === itemId) total += s.quantity;
  return total;
}

/** A removal of part or all of one slot. `itemId`, when given, must match what the slot holds. */
export interface SlotRemoval {
  readonly slot: number;
  readonly quantity: number;
  readonly itemId?: string;
}

/** A removal of a quantity of an item from wherever it is (lowest slots first). */
export interface ItemRemoval {
  readonly itemId: string;
  readonly quantity: number;
}

export type Removal = SlotRemoval | ItemRemoval;

/** Items to put into the inventory. */
export interface Addition {
  readonly item: ItemDef;
  readonly quantity: number;
}

/** The private working copy a transaction changes. Each step returns an error or nothing. */
export class InventoryDraft {
  private readonly slots: (InventorySlot | null)[];

  constructor(inv: Inventory) {
    this.slots = inv.slice();
  }

  /** Takes `quantity` from one slot, emptying it when nothing is left. */
  removeFromSlot(slot: number, quantity: number, expectedItemId?: string): InvErr | undefined {
    if (!isValidSlot(slot)) return slotError(slot);
    if (!isValidQuantity(quantity)) return quantityError(quantity);
    const held = this.slots[slot];
    if (!held) return err(INVENTORY_ERROR.EMPTY_SLOT, `Slot ${slot} is empty.`);
    if (expectedItemId !== undefined && held.itemId !== expectedItemId) {
      return err(INVENTORY_ERROR.ITEM_MISMATCH, `Slot ${slot} no longer holds that item.`);
    }
    if (held.quantity < quantity) {
      return err(INVENTORY_ERROR.INSUFFICIENT_QUANTITY, `Slot ${slot} holds only ${held.quantity}.`);
    }
    this.slots[slot] = held.quantity === quantity ? null : makeSlot(slot, held.itemId, held.quantity - quantity);
    return undefined;
  }

  /** Takes `quantity` of an item, from the lowest slots first. */
  removeItem(itemId: string, quantity: number): InvErr | undefined {
    if (!isValidQuantity(quantity)) return quantityError(quantity);
    if (countItem(this.slots, itemId) < quantity) {
      return err(INVENTORY_ERROR.INSUFFICIENT_QUANTITY, `Not enough ${itemId}.`);
    }
    let left = quantity;
    for (let i = 0; i < INVENTORY_SIZE && left > 0; i++) {
      const held = this.slots[i];
      if (!held || held.itemId !== itemId) continue;
      const take = Math.min(left, held.quantity);
      this.slots[i] = take === held.quantity ? null : makeSlot(i, itemId, held.quantity - take);
      left -= take;
    }
    return undefined;
  }

  /**
   * Puts items in: a stackable item merges into its existing stack (refused with STACK_OVERFLOW
   * past MAX_STACK) or else takes the lowest free slot; a non-stackable item takes one slot per
   * unit, lowest first. INVENTORY_FULL when the slots are not there.
   */
  add(item: ItemDef, quantity: number): InvErr | undefined {
    if (!isValidQuantity(quantity)) return quantityError(quantity);
    if (item.stackable) {
      const existing = this.slots.findIndex((s) => s !== null && s.itemId === item.id);
      if (existing >= 0) {
        const held = this.slots[existing]!;
        if (held.quantity + quantity > MAX_STACK) {
          return err(INVENTORY_ERROR.STACK_OVERFLOW, `A stack of ${item.name} cannot exceed ${MAX_STACK}.`);
        }
        this.slots[existing] = makeSlot(existing, item.id, held.quantity + quantity);
        return undefined;
      }
      const free = this.slots.indexOf(null);
      if (free < 0) return err(INVENTORY_ERROR.INVENTORY_FULL, "Your inventory is full.");
      this.slots[free] = makeSlot(free, item.id, quantity);
      return undefined;
    }
    if (freeSlots(this.slots) < quantity) return err(INVENTORY_ERROR.INVENTORY_FULL, "Your inventory is full.");
    let left = quantity;
    for (let i = 0; i < INVENTORY_SIZE && left > 0; i++) {
      if (this.slots[i] !== null) continue;
      this.slots[i] = makeSlot(i, item.id, 1);
      left--;
    }
    return undefined;
  }

  /** Swaps the contents of two slots. */
  swap(from: number, to: number): InvErr | undefined {
    if (!isValidSlot(from)) return slotError(from);
    if (!isValidSlot(to)) return slotError(to);
    const a = this.slots[from] ?? null;
    const b = this.slots[to] ?? null;
    if (!a) return err(INVENTORY_ERROR.EMPTY_SLOT, `Slot ${from} is empty.`);
    this.slots[to] = makeSlot(to, a.itemId, a.quantity);
    this.slots[from] = b ? makeSlot(from, b.itemId, b.quantity) : null;
    return undefined;
  }

  /** The draft as a new frozen inventory. */
  commit(): Inventory {
    return freeze(this.slots.slice());
  }
}

/**
 * Runs `steps` on a copy of `inv`: commits the copy when every step succeeds, otherwise returns
 * the first error and leaves nothing changed. `steps` returns an error to abort.
 */
export function transact(inv: Inventory, steps: (draft: InventoryDraft) => InvErr | undefined): Result<Inventory, InventoryErrorCode> {
  if (!Array.isArray(inv) || inv.length !== INVENTORY_SIZE) {
    return err(INVENTORY_ERROR.INVALID_INVENTORY, `An inventory has exactly ${INVENTORY_SIZE} slots.`);
  }
  const draft = new InventoryDraft(inv);
  const failure = steps(draft);
  return failure ?? ok(draft.commit());
}

/** Adds `quantity` of `item`, all or nothing (see `InventoryDraft.add` for the placement rules). */
export function addItem(inv: Inventory, item: ItemDef, quantity: number): Result<Inventory, InventoryErrorCode> {
  return transact(inv, (d) => d.add(item, quantity));
}

/** Removes `quantity` from one slot. EMPTY_SLOT, INSUFFICIENT_QUANTITY, INVALID_SLOT/QUANTITY. */
export function removeFromSlot(inv: Inventory, slot: number, quantity: number): Result<Inventory, InventoryErrorCode> {
  return transact(inv, (d) => d.removeFromSlot(slot, quantity));
}

/** Removes `quantity` of an item across slots, lowest first; INSUFFICIENT_QUANTITY if short. */
export function removeItem(inv: Inventory, itemId: string, quantity: number): Result<Inventory, InventoryErrorCode> {
  return transact(inv, (d) => d.removeItem(itemId, quantity));
}

/** Swaps slot `from` (must be occupied) with slot `to` (occupied or empty). */
export function moveSlot(inv: Inventory, from: number, to: number): Result<Inventory, InventoryErrorCode> {
  return transact(inv, (d) => d.swap(from, to));
}

/** A batch of removals and additions applied as one transaction. */
export interface InventoryChanges {
  readonly remove?: readonly Removal[];
  readonly add?: readonly Addition[];
}

/**
 * Applies every removal, then every addition, all or nothing. Removals first so the slots they
 * empty can take the additions (trades, recipes, store purchases).
 */
export function applyChanges(inv: Inventory, changes: InventoryChanges): Result<Inventory, InventoryErrorCode> {
  return transact(inv, (d) => {
    for (const r of changes.remove ?? []) {
      const failure = "slot" in r ? d.removeFromSlot(r.slot, r.quantity, r.itemId) : d.removeItem(r.itemId, r.quantity);
      if (failure) return failure;
    }
    for (const a of changes.add ?? []) {
      const failure = d.add(a.item, a.quantity);
      if (failure) return failure;
    }
    return undefined;
  });
}

/**
 * Whether `incoming` fits, given `freedSlots` extra empty slots (e.g. slots the player's own trade
 * offer will empty). Stackables count one slot unless already present (then the merged total must
 * stay within MAX_STACK); non-stackables count one slot per unit. This is the quick estimate;
 * `applyChanges` on the real removals is exact.
 */
export function canHold(inv: Inventory, incoming: readonly Addition[], freedSlots = 0): Result<true, InventoryErrorCode> {
  const stackTotals = new Map<string, number>();
  let slotsNeeded = 0;
  for (const { item, quantity } of incoming) {
    if (!isValidQuantity(quantity)) return quantityError(quantity);
    if (item.stackable) {
      const before = stackTotals.get(item.id);
      if (before === undefined && countItem(inv, item.id) === 0) slotsNeeded++;
      stackTotals.set(item.id, (before ?? countItem(inv, item.id)) + quantity);
    } else {
      slotsNeeded += quantity;
    }
  }
  for (const [itemId, total] of stackTotals) {
    if (total > MAX_STACK) return err(INVENTORY_ERROR.STACK_OVERFLOW, `A stack of ${itemId} cannot exceed ${MAX_STACK}.`);
  }
  if (slotsNeeded > freeSlots(inv) + freedSlots) return err(INVENTORY_ERROR.INVENTORY_FULL, "Your inventory is full.");
  return ok(true);
}
