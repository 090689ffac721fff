/** Stores: what a shopkeeper sells, buying and selling (each an immediate item transaction). */
import { addItem, countItem, removeItem } from "../../domain/inventory.js";
import { chebyshev } from "../../domain/movement.js";
import { MAX_STACK } from "../../domain/types.js";
import type { ClientEventPayload } from "../../events.js";
import { system } from "../messages.js";
import { fromDomain, refusal, refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { World } from "../world.js";
import { busyWithTrade, INTERACT_RANGE } from "./guards.js";

/** `talk` to a store: its stock and prices. */
export function talkToStore(w: World, p: Player, storeId: string) {
  const store = w.content.stores.get(storeId);
  if (!store) return refuse(p, "NO_SUCH_TARGET", "There is no one like that to talk to.");
  if (chebyshev(p, store) > INTERACT_RANGE) return refuse(p, "TOO_FAR", `You need to be at the ${store.name} to talk to the shopkeeper.`);
  const lines = store.stock.map((s) => {
    const item = w.content.items.get(s.itemId)!;
    return `${item.name} ${Math.ceil(item.value * store.buyMultiplier)}gp`;
  });
  return system(p, `${store.name} sells: ${lines.join(", ")}.`);
}

/** `buy` (stocked items, `ceil(value × buyMultiplier)` each) or `sell` (`floor(value × sellMultiplier)`). */
export async function storeAction(w: World, p: Player, a: ClientEventPayload<"player:action">) {
  if (busyWithTrade(p)) return;
  const store = w.content.stores.get(a.targetId ?? "");
  if (!store) return refuse(p, "NO_SUCH_TARGET", "There is no such store.");
  if (chebyshev(p, store) > INTERACT_RANGE) return refuse(p, "TOO_FAR", `You need to be at the ${store.name} to trade with it.`);
  const item = a.itemId ? w.content.items.get(a.itemId) : undefined;
  if (!item) return refuse(p, "UNKNOWN_ITEM", "The store doesn't know that item.");
  const quantity = a.quantity ?? 1;
  if (a.action === "buy") {
    if (!store.stock.some((s) => s.itemId === item.id)) return refuse(p, "NOT_SOLD_HERE", `${store.name} doesn't sell that.`);
    const price = Math.ceil(item.value * store.buyMultiplier) * quantity;
    await w.saving.commitItems(
      p,
      () => {
        if (!Number.isSafeInteger(price) || price > p.coins) return refusal("NOT_ENOUGH_COINS", `You need ${price} coins for that.`);
        const r = addItem(p.inventory, item, quantity);
        if (!r.ok) return refusal("INVENTORY_FULL");
        return { inventory: r.value, coins: p.coins - price };
      },
      () => system(p, `You buy ${quantity} × ${item.name} for ${price} coins.`),
    );
    return;
  }
  if (!item.tradeable) return refuse(p, "STORE_WONT_BUY");
  if (!store.buysAnything && !store.stock.some((s) => s.itemId === item.id)) return refuse(p, "STORE_WONT_BUY", `${store.name} won't buy that.`);
  const price = Math.floor(item.value * store.sellMultiplier) * quantity;
  await w.saving.commitItems(
    p,
    () => {
      if (countItem(p.inventory, item.id) < quantity) return refusal("INSUFFICIENT_QUANTITY", `You don't have ${quantity} × ${item.name}.`);
      const r = removeItem(p.inventory, item.id, quantity);
      if (!r.ok) return fromDomain(r.error);
      if (p.coins + price > MAX_STACK) return refusal("STACK_OVERFLOW", "You can't carry that many coins.");
      return { inventory: r.value, coins: p.coins + price };
    },
    () => system(p, `You sell ${quantity} × ${item.name} for ${price} coins.`),
  );
}
