/** `inventory:use` (eat, bury, equip, drop; fires, cooking and smithing in `skills.ts`) and unequipping. */
import { addItem, removeFromSlot } from "../../domain/inventory.js";
import { EQUIP_SLOTS, MAX_STACK, type EquipSlot, type SkillName } from "../../domain/types.js";
import type { ClientEventPayload } from "../../events.js";
import { system } from "../messages.js";
import { fromDomain, refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { World } from "../world.js";
import { busyWithTrade } from "./guards.js";
import { isLogs, lightFire, useOnTarget } from "./skills.js";

/** `inventory:use`: eat, equip, bury, drop, light logs, cook, smith. */
export async function handleInventoryUse(w: World, p: Player, u: ClientEventPayload<"inventory:use">) {
  if (p.dead) return;
  if (busyWithTrade(p)) return;
  if (p.itemsLocked) return refuse(p, "ITEMS_LOCKED");
  const held = p.inventory[u.slot];
  if (!held) return refuse(p, "EMPTY_SLOT");
  const item = w.content.items.get(held.itemId);
  if (!item) return;

  if (u.targetId === "drop") return dropStack(w, p, u.slot);

  // Using an item on a station or fire: cooking or smithing.
  if (u.targetId) return useOnTarget(w, p, u.slot, u.targetId, u.recipeId);

  // Logs and a tinderbox, in either order.
  const other = u.targetSlot !== undefined ? p.inventory[u.targetSlot] : undefined;
  const logs = (id?: string) => isLogs(w, id);
  if ((held.itemId === "tinderbox" && logs(other?.itemId)) || (logs(held.itemId) && (other?.itemId === "tinderbox" || u.targetSlot === undefined))) {
    return lightFire(w, p, logs(held.itemId) ? u.slot : u.targetSlot!);
  }

  if (item.heals) {
    const r = removeFromSlot(p.inventory, u.slot, 1);
    if (!r.ok) return;
    p.inventory = r.value;
    p.safety.itemsChanged();
    const before = p.health;
    p.health = Math.min(p.maxHealth, p.health + item.heals);
    p.safety.progressChanged();
    system(p, `You eat the ${item.name.toLowerCase()}. It heals ${p.health - before}.`);
    p.sync();
    return;
  }
  if (item.buryXp) {
    const r = removeFromSlot(p.inventory, u.slot, 1);
    if (!r.ok) return;
    p.inventory = r.value;
    p.safety.itemsChanged();
    w.progress.grantXp(p, { prayer: item.buryXp });
    system(p, `You bury the ${item.name.toLowerCase()}.`);
    p.sync();
    return;
  }
  if (item.equipSlot) return equip(w, p, u.slot, item.equipSlot);
  refuse(p, "NOTHING_HAPPENS");
}

/**
 * Drop a whole stack where the player stands. The drop commits at once, one transaction like a bank
 * operation (`Saving.commitItems`) that also stores the pile (docs/persistence.md "Ground piles"),
 * and the pile goes on the ground only after that commit: nothing anyone can pick up is still in a
 * stored inventory, whatever `SAVE_INTERVAL` is or whether the dropper's next save fails, and a
 * crash after it finds the pile on the ground. The player's items stay locked while it commits, so
 * the stack cannot be dropped (or used) twice; a failed commit changes nothing and says so.
 */
async function dropStack(w: World, p: Player, slot: number) {
  const held = p.inventory[slot]!;
  const at = p.tile;
  const pile = w.ground.newPile(held.itemId, held.quantity, at.x, at.z, p.id);
  await w.saving.commitItems(
    p,
    () => {
      const r = removeFromSlot(p.inventory, slot, held.quantity);
      return r.ok ? { inventory: r.value } : fromDomain(r.error);
    },
    () => w.ground.place(pile),
    w.worldState.putStep([pile]),
    // Outcome unknown: the items were read back; the pile is on the ground if its row committed.
    async () => {
      if (w.worldState.persists && (await w.worldState.isStored(pile))) w.ground.place(pile);
    },
  );
}

/**
 * Wear the item of a slot (its skill requirements met); what was worn there goes back to the
 * inventory, unless it is the same stackable item (arrows): then the two make one worn stack.
 */
function equip(w: World, p: Player, slot: number, equipSlot: EquipSlot) {
  const held = p.inventory[slot]!;
  const item = w.content.items.get(held.itemId)!;
  for (const [skill, level] of Object.entries(item.requirements ?? {}) as [SkillName, number][]) {
    if (p.skills[skill].level < level) return refuse(p, "LEVEL_TOO_LOW", `You need ${skill} level ${level} to wear that.`);
  }
  const r = removeFromSlot(p.inventory, slot, held.quantity);
  if (!r.ok) return;
  let inv = r.value;
  const previous = p.equipment[equipSlot];
  // More of a stackable item already worn (arrows picked up): one stack in the slot.
  const more = previous?.itemId === held.itemId && item.stackable;
  if (more && previous.quantity + held.quantity > MAX_STACK) return refuse(p, "STACK_OVERFLOW");
  if (more) {
    p.inventory = inv;
    p.equipment = { ...p.equipment, [equipSlot]: { itemId: held.itemId, quantity: previous.quantity + held.quantity } };
    p.safety.itemsChanged();
    p.sync();
    return;
  }
  if (previous) {
    const prevDef = w.content.items.get(previous.itemId);
    const back = prevDef ? addItem(inv, prevDef, previous.quantity) : undefined;
    if (!back?.ok) return refuse(p, "INVENTORY_FULL", "You don't have space to swap that.");
    inv = back.value;
  }
  p.inventory = inv;
  p.equipment = { ...p.equipment, [equipSlot]: { itemId: held.itemId, quantity: held.quantity } };
  p.safety.itemsChanged();
  p.sync();
}

/**
 * `player:action { action: "unequip", targetId: <equipment slot> }`: move the worn item back to
 * the inventory. All or nothing: refused when the inventory cannot take it.
 */
export function unequip(w: World, p: Player, equipSlot: string) {
  if (busyWithTrade(p)) return;
  if (p.itemsLocked) return refuse(p, "ITEMS_LOCKED");
  if (!(EQUIP_SLOTS as readonly string[]).includes(equipSlot)) return refuse(p, "INVALID_SLOT", `There is no equipment slot "${equipSlot.slice(0, 20)}".`);
  const worn = p.equipment[equipSlot as EquipSlot];
  if (!worn) return refuse(p, "EMPTY_SLOT", "You aren't wearing anything there.");
  const def = w.content.items.get(worn.itemId);
  const r = def ? addItem(p.inventory, def, worn.quantity) : undefined;
  if (!r?.ok) return refuse(p, "INVENTORY_FULL", "You don't have enough inventory space to take that off.");
  const equipment = { ...p.equipment };
  delete equipment[equipSlot as EquipSlot];
  p.inventory = r.value;
  p.equipment = equipment;
  p.safety.itemsChanged();
  p.sync();
}
