/** The bank: deposits and withdrawals near a bank booth, each an immediate item transaction. */
import { addItem, countItem, freeSlots, removeFromSlot, removeItem, type Inventory } from "../../domain/inventory.js";
import { MAX_STACK } from "../../domain/types.js";
import type { ClientEventPayload } from "../../events.js";
import { fromDomain, refusal, refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { World } from "../world.js";
import { busyWithTrade, INTERACT_RANGE } from "./guards.js";

/** `bank:deposit`: near a bank, move from inventory to bank in one transaction. */
export async function handleDeposit(w: World, p: Player, d: ClientEventPayload<"bank:deposit">) {
  if (p.dead || busyWithTrade(p)) return;
  if (!w.content.stationNear("bank", p.x, p.z, INTERACT_RANGE)) return refuse(p, "TOO_FAR", "You need to be at a bank to do that.");
  await w.saving.commitItems(p, () => {
    const held = p.inventory[d.slot];
    if (!held) return refusal("EMPTY_SLOT");
    const qty = d.quantity ?? held.quantity;
    const def = w.content.items.get(held.itemId);
    if (!def) return refusal("UNKNOWN_ITEM", "You can't bank that.");
    let inv: Inventory;
    if (qty <= held.quantity) {
      const r = removeFromSlot(p.inventory, d.slot, qty);
      if (!r.ok) return fromDomain(r.error);
      inv = r.value;
    } else {
      // More than the slot holds: take that many of the item across slots (non-stackables).
      if (countItem(p.inventory, held.itemId) < qty) return refusal("INSUFFICIENT_QUANTITY", `You don't have ${qty} of those.`);
      const r = removeItem(p.inventory, held.itemId, qty);
      if (!r.ok) return fromDomain(r.error);
      inv = r.value;
    }
    const bank = new Map(p.bank);
    const total = (bank.get(held.itemId) ?? 0) + qty;
    if (total > MAX_STACK) return refusal("STACK_OVERFLOW", "Your bank can't hold any more of that.");
    bank.set(held.itemId, total);
    return { inventory: inv, bank };
  });
}

/** `bank:withdraw`: near a bank, move from bank to inventory in one transaction. */
export async function handleWithdraw(w: World, p: Player, d: ClientEventPayload<"bank:withdraw">) {
  if (p.dead || busyWithTrade(p)) return;
  if (!w.content.stationNear("bank", p.x, p.z, INTERACT_RANGE)) return refuse(p, "TOO_FAR", "You need to be at a bank to do that.");
  await w.saving.commitItems(p, () => {
    const have = p.bank.get(d.itemId) ?? 0;
    if (have < d.quantity) return refusal("INSUFFICIENT_QUANTITY", `Your bank doesn't have ${d.quantity} of those.`);
    const def = w.content.items.get(d.itemId);
    if (!def) return refusal("UNKNOWN_ITEM");
    if (!def.stackable && d.quantity > freeSlots(p.inventory)) return refusal("INVENTORY_FULL");
    const r = addItem(p.inventory, def, d.quantity);
    if (!r.ok) return refusal("INVENTORY_FULL");
    const bank = new Map(p.bank);
    if (have === d.quantity) bank.delete(d.itemId);
    else bank.set(d.itemId, have - d.quantity);
    return { inventory: r.value, bank };
  });
}
