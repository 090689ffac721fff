/**
 * The settlement plan: the pure core of the settlement transaction (src/trade/settlement.ts),
 * run on the rows read under the lock. Also what `acceptTrade` checks before the confirmation
 * screen (can each side hold what it receives?).
 */
import { err, ok, type Err, type Result } from "../errors.js";
import { applyChanges, INVENTORY_ERROR, isValidSlot, type Addition, type Inventory, type ItemLookup, type SlotRemoval } from "../inventory.js";
import { SETTLEMENT_ERROR, type SettlementErrorCode } from "./codes.js";
import type { TradeOffer } from "./offer.js";
import { COINS_ITEM_ID, MAX_STACK } from "../types.js";

/** One side as read under the lock: its offer, its inventory and its coins. */
export interface SettlementSide {
  readonly offer: Pick<TradeOffer, "items" | "coins">;
  readonly inventory: Inventory;
  readonly coins: number;
  /** Player name for error messages. */
  readonly name?: string;
}

/** An item (or coins, as itemId "coins") a side receives. */
export interface ReceivedItem {
  readonly itemId: string;
  readonly quantity: number;
}

/** What one side holds after the trade. */
export interface SettlementOutcome {
  readonly inventory: Inventory;
  readonly coins: number;
  /** The `tradeCompleted.receivedItems` of this side, one entry per item id, coins last. */
  readonly receivedItems: readonly ReceivedItem[];
}

export interface SettlementPlan {
  readonly a: SettlementOutcome;
  readonly b: SettlementOutcome;
}

type SettleErr = Err<SettlementErrorCode>;

/** Re-check of one side's offer against what it holds now. */
function verifyOffer(side: SettlementSide, items: ItemLookup, who: string): SettleErr | undefined {
  const seen = new Set<number>();
  for (const line of side.offer.items) {
    if (!isValidSlot(line.inventorySlot) || seen.has(line.inventorySlot)) {
      return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offer names an invalid slot.`);
    }
    seen.add(line.inventorySlot);
    const held = side.inventory[line.inventorySlot];
    if (!held || held.itemId !== line.itemId || held.quantity < line.quantity || !Number.isInteger(line.quantity) || line.quantity < 1) {
      return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offered items are no longer there.`);
    }
    const def = items(line.itemId);
    if (!def || !def.tradeable) return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offer holds an item that can't be traded.`);
  }
  const coins = side.offer.coins;
  if (!Number.isInteger(coins) || coins < 0 || coins > side.coins) {
    return err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offered coins are no longer there.`);
  }
  return undefined;
}

/** One side's outcome: its own lines leave first, then the partner's lines arrive. */
function settleSide(own: SettlementSide, partner: SettlementSide, items: ItemLookup, who: string): Result<SettlementOutcome, SettlementErrorCode> {
  const remove: SlotRemoval[] = own.offer.items.map((l) => ({ slot: l.inventorySlot, quantity: l.quantity, itemId: l.itemId }));
  const add: Addition[] = partner.offer.items.map((l) => ({ item: items(l.itemId)!, quantity: l.quantity }));
  const inventory = applyChanges(own.inventory, { remove, add });
  if (!inventory.ok) {
    const full = inventory.error.code === INVENTORY_ERROR.INVENTORY_FULL || inventory.error.code === INVENTORY_ERROR.STACK_OVERFLOW;
    return full
      ? err(SETTLEMENT_ERROR.INVENTORY_FULL, `${who} inventory can't hold the items.`)
      : err(SETTLEMENT_ERROR.INVALID_ITEMS, `${who} offered items are no longer there.`);
  }
  const coins = own.coins - own.offer.coins + partner.offer.coins;
  if (coins > MAX_STACK) return err(SETTLEMENT_ERROR.INVENTORY_FULL, `${who} coins would exceed ${MAX_STACK}.`);

  const received = new Map<string, number>();
  for (const line of partner.offer.items) received.set(line.itemId, (received.get(line.itemId) ?? 0) + line.quantity);
  const receivedItems: ReceivedItem[] = [...received].map(([itemId, quantity]) => ({ itemId, quantity }));
  if (partner.offer.coins > 0) receivedItems.push({ itemId: COINS_ITEM_ID, quantity: partner.offer.coins });
  return ok({ inventory: inventory.value, coins, receivedItems });
}

/**
 * The pure core of the settlement transaction, run on rows read under the lock:
 * 1. re-check both offers: every offered slot still holds the recorded item in at least the
 *    offered quantity, the item is known and tradeable, the coins are there (else INVALID_ITEMS);
 * 2. for each side remove its own offer, then add the partner's (stackables merge into the existing
 *    stack, others take the lowest free slots, so emptied slots count);
 * 3. enforce the 28-slot and MAX_STACK caps on items and coins (else INVENTORY_FULL).
 * Returns both new inventories and coin totals and what each side received.
 */
export function planSettlement(a: SettlementSide, b: SettlementSide, items: ItemLookup): Result<SettlementPlan, SettlementErrorCode> {
  const whoA = a.name ? `${a.name}'s` : "A player's";
  const whoB = b.name ? `${b.name}'s` : "A player's";
  const invalid = verifyOffer(a, items, whoA) ?? verifyOffer(b, items, whoB);
  if (invalid) return invalid;
  const outA = settleSide(a, b, items, whoA);
  if (!outA.ok) return outA;
  const outB = settleSide(b, a, items, whoB);
  if (!outB.ok) return outB;
  return ok({ a: outA.value, b: outB.value });
}
