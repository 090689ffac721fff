/**
 * Handlers of the non-trade client events. Each validates against server-side state (payload
 * shapes are already checked by the event table), then changes the world or answers with a system
 * `chat:message` saying why nothing happened.
 */
import { addItem, applyChanges, countItem, freeSlots, inventoryToSlots, removeFromSlot, removeItem, type Inventory } from "../domain/inventory.js";
import { chebyshev, validateMoveTarget } from "../domain/movement.js";
import { EQUIP_SLOTS, MAX_STACK, type EquipSlot, type SkillName } from "../domain/types.js";
import { burnChance } from "../domain/cooking.js";
import type { ClientEventPayload } from "../events.js";
import type { Player } from "./player.js";
import { chatMessage, VIEW_RADIUS, type World } from "./world.js";

/** Tiles within which a player can use a bank booth, a store counter or a station. */
export const INTERACT_RANGE = 3;
/** Ticks a lit fire burns. */
export const FIRE_TICKS = 100;

const busyWithTrade = (w: World, p: Player) => {
  if (p.tradeId) {
    w.system(p, "You can't do that while trading.");
    return true;
  }
  if (p.dead) return true;
  return false;
};

/**
 * `player:move`: validate the target tile and record it; the tick finds the path within its
 * path-finding budget (README "Movement and path-finding cost"). A target no path can reach is
 * refused here without a search.
 */
export function handleMove(w: World, p: Player, m: ClientEventPayload<"player:move">) {
  if (p.dead) return;
  const check = validateMoveTarget(p.tile, { x: m.x, z: m.z }, w.content.worldBounds, (x, z) => w.content.isBlocked(x, z));
  if (!check.ok) {
    w.system(p, check.error.message);
    return;
  }
  if (!w.requestMove(p, { x: check.value.x, z: check.value.z, run: m.run ?? false })) {
    w.system(p, "You can't reach that.");
    return;
  }
  p.action = null;
}

/** `player:action`: attack, gather, pickup, talk, buy, sell. */
export async function handleAction(w: World, p: Player, a: ClientEventPayload<"player:action">) {
  if (p.dead) return;
  const targetId = a.targetId ?? "";
  switch (a.action) {
    case "attack": {
      if (busyWithTrade(w, p)) return;
      const npc = w.npcs.get(targetId);
      if (npc) {
        if (!npc.def.attackable || npc.respawnTick !== undefined) return w.system(p, "You can't attack that.");
        if (chebyshev(p, npc) > VIEW_RADIUS) return w.system(p, "That is too far away.");
        p.action = { kind: "attack", targetId };
        return;
      }
      const other = w.players.get(targetId);
      if (other) {
        if (!w.canPvp(p, other)) return w.system(p, "You can only fight other players in a PvP area.");
        if (other.dead) return w.system(p, "You can't attack that.");
        if (chebyshev(p, other) > VIEW_RADIUS) return w.system(p, "That is too far away.");
        p.action = { kind: "attack", targetId };
        return;
      }
      return w.system(p, "There is nothing like that to attack.");
    }
    case "gather": {
      if (busyWithTrade(w, p)) return;
      const r = w.resources.get(targetId);
      if (!r?.node) return w.system(p, "There is nothing to gather there.");
      if (chebyshev(p, r) > VIEW_RADIUS) return w.system(p, "That is too far away.");
      const skill = r.node.skill as SkillName;
      if (p.skills[skill].level < r.node.levelRequired) return w.system(p, `You need ${skill} level ${r.node.levelRequired} to do that.`);
      if (!w.bestTool(p, r.node.tools)) return w.system(p, `You need a suitable tool to gather from the ${r.node.name.toLowerCase()}.`);
      p.action = { kind: "gather", nodeId: targetId, nextAttemptTick: w.tick + 1 };
      return;
    }
    case "pickup": {
      if (busyWithTrade(w, p)) return;
      const g = w.groundItems.get(targetId);
      if (!g || !w.canSeeGroundItem(p, g)) return w.system(p, "That item is gone.");
      if (chebyshev(p, g) > VIEW_RADIUS) return w.system(p, "That is too far away.");
      p.action = { kind: "pickup", groundItemId: targetId };
      return;
    }
    case "talk": {
      const npc = w.npcs.get(targetId);
      if (npc && npc.respawnTick === undefined) {
        if (chebyshev(p, npc) > INTERACT_RANGE) return w.system(p, `You need to be closer to talk to the ${npc.def.name.toLowerCase()}.`);
        return w.system(p, `${npc.def.name}: ${npc.def.examine}`);
      }
      const store = w.content.stores.get(targetId);
      if (store) {
        if (chebyshev(p, store) > INTERACT_RANGE) return w.system(p, `You need to be at the ${store.name} to talk to the shopkeeper.`);
        const lines = store.stock.map((s) => {
          const item = w.content.items.get(s.itemId)!;
          return `${item.name} ${Math.ceil(item.value * store.buyMultiplier)}gp`;
        });
        return w.system(p, `${store.name} sells: ${lines.join(", ")}.`);
      }
      return w.system(p, "There is no one like that to talk to.");
    }
    case "buy":
    case "sell":
      return storeAction(w, p, a);
    case "unequip":
      return unequip(w, p, targetId);
  }
}

/**
 * `player:action { action: "unequip", targetId: <equipment slot> }`: move the worn item back to
 * the inventory. All or nothing: refused when the inventory cannot take it.
 */
function unequip(w: World, p: Player, equipSlot: string) {
  if (busyWithTrade(w, p)) return;
  if (p.itemsLocked) return w.system(p, "Please wait a moment.");
  if (!(EQUIP_SLOTS as readonly string[]).includes(equipSlot)) return w.system(p, `There is no equipment slot "${equipSlot.slice(0, 20)}".`);
  const worn = p.equipment[equipSlot as EquipSlot];
  if (!worn) return w.system(p, "You aren't wearing anything there.");
  const def = w.content.items.get(worn.itemId);
  const r = def ? addItem(p.inventory, def, worn.quantity) : undefined;
  if (!r?.ok) return w.system(p, "You don't have enough inventory space to take that off.");
  const equipment = { ...p.equipment };
  delete equipment[equipSlot as EquipSlot];
  p.inventory = r.value;
  p.equipment = equipment;
  p.itemsDirty = true;
  p.sync();
}

async function storeAction(w: World, p: Player, a: ClientEventPayload<"player:action">) {
  if (busyWithTrade(w, p)) return;
  const store = w.content.stores.get(a.targetId ?? "");
  if (!store) return w.system(p, "There is no such store.");
  if (chebyshev(p, store) > INTERACT_RANGE) return w.system(p, `You need to be at the ${store.name} to trade with it.`);
  const item = a.itemId ? w.content.items.get(a.itemId) : undefined;
  if (!item) return w.system(p, "The store doesn't know that item.");
  const quantity = a.quantity ?? 1;
  if (a.action === "buy") {
    if (!store.stock.some((s) => s.itemId === item.id)) return w.system(p, `${store.name} doesn't sell that.`);
    const price = Math.ceil(item.value * store.buyMultiplier) * quantity;
    await w.commitItems(
      p,
      () => {
        if (!Number.isSafeInteger(price) || price > p.coins) return `You need ${price} coins for that.`;
        const r = addItem(p.inventory, item, quantity);
        if (!r.ok) return "You don't have enough inventory space.";
        return { inventory: r.value, coins: p.coins - price };
      },
      () => w.system(p, `You buy ${quantity} × ${item.name} for ${price} coins.`),
    );
  } else {
    if (!item.tradeable) return w.system(p, "The store won't buy that.");
    if (!store.buysAnything && !store.stock.some((s) => s.itemId === item.id)) return w.system(p, `${store.name} won't buy that.`);
    const price = Math.floor(item.value * store.sellMultiplier) * quantity;
    await w.commitItems(
      p,
      () => {
        if (countItem(p.inventory, item.id) < quantity) return `You don't have ${quantity} × ${item.name}.`;
        const r = removeItem(p.inventory, item.id, quantity);
        if (!r.ok) return r.error.message;
        if (p.coins + price > MAX_STACK) return "You can't carry that many coins.";
        return { inventory: r.value, coins: p.coins + price };
      },
      () => w.system(p, `You sell ${quantity} × ${item.name} for ${price} coins.`),
    );
  }
}

/** `inventory:use`: eat, equip, bury, drop, light logs, cook, smith. */
export async function handleInventoryUse(w: World, p: Player, u: ClientEventPayload<"inventory:use">) {
  if (p.dead) return;
  if (busyWithTrade(w, p)) return;
  if (p.itemsLocked) return w.system(p, "Please wait a moment.");
  const held = p.inventory[u.slot];
  if (!held) return w.system(p, "That slot is empty.");
  const item = w.content.items.get(held.itemId);
  if (!item) return;

  if (u.targetId === "drop") return dropStack(w, p, u.slot);

  // Using an item on a station or fire: cooking or smithing.
  if (u.targetId) return useOnTarget(w, p, u.slot, u.targetId);

  // Logs and a tinderbox, in either order.
  const other = u.targetSlot !== undefined ? p.inventory[u.targetSlot] : undefined;
  const isLogs = (id?: string) => !!id && /logs$/.test(id);
  if ((held.itemId === "tinderbox" && isLogs(other?.itemId)) || (isLogs(held.itemId) && (other?.itemId === "tinderbox" || u.targetSlot === undefined))) {
    return lightFire(w, p, isLogs(held.itemId) ? u.slot : u.targetSlot!);
  }

  if (item.heals) {
    const r = removeFromSlot(p.inventory, u.slot, 1);
    if (!r.ok) return;
    p.inventory = r.value;
    p.itemsDirty = true;
    const before = p.health;
    p.health = Math.min(p.maxHealth, p.health + item.heals);
    p.progressDirty = true;
    w.system(p, `You eat the ${item.name.toLowerCase()}. It heals ${p.health - before}.`);
    p.sync();
    return;
  }
  if (item.buryXp) {
    const r = removeFromSlot(p.inventory, u.slot, 1);
    if (!r.ok) return;
    p.inventory = r.value;
    p.itemsDirty = true;
    w.grantXp(p, { prayer: item.buryXp });
    w.system(p, `You bury the ${item.name.toLowerCase()}.`);
    p.sync();
    return;
  }
  if (item.equipSlot) return equip(w, p, u.slot, item.equipSlot);
  w.system(p, "Nothing interesting happens.");
}

/**
 * Drop a whole stack where the player stands. The drop commits at once, one transaction like a bank
 * operation (`World.commitItems`), and the pile goes on the ground only after that commit: nothing
 * anyone can pick up is still in a stored inventory, whatever `SAVE_INTERVAL` is or whether the
 * dropper's next save fails (README, Persistence). The player's items stay locked while it commits,
 * so the stack cannot be dropped (or used) twice; a failed commit changes nothing and says so.
 */
async function dropStack(w: World, p: Player, slot: number) {
  const held = p.inventory[slot]!;
  const at = p.tile;
  await w.commitItems(
    p,
    () => {
      const r = removeFromSlot(p.inventory, slot, held.quantity);
      return r.ok ? { inventory: r.value } : r.error.message;
    },
    () => w.dropToGround(held.itemId, held.quantity, at.x, at.z, p.id),
  );
}

function equip(w: World, p: Player, slot: number, equipSlot: EquipSlot) {
  const held = p.inventory[slot]!;
  const item = w.content.items.get(held.itemId)!;
  for (const [skill, level] of Object.entries(item.requirements ?? {}) as [SkillName, number][]) {
    if (p.skills[skill].level < level) return w.system(p, `You need ${skill} level ${level} to wear that.`);
  }
  const r = removeFromSlot(p.inventory, slot, held.quantity);
  if (!r.ok) return;
  let inv = r.value;
  const previous = p.equipment[equipSlot];
  if (previous) {
    const prevDef = w.content.items.get(previous.itemId);
    const back = prevDef ? addItem(inv, prevDef, previous.quantity) : undefined;
    if (!back?.ok) return w.system(p, "You don't have space to swap that.");
    inv = back.value;
  }
  p.inventory = inv;
  p.equipment = { ...p.equipment, [equipSlot]: { itemId: held.itemId, quantity: held.quantity } };
  p.itemsDirty = true;
  p.sync();
}

function lightFire(w: World, p: Player, logsSlot: number) {
  const logs = p.inventory[logsSlot];
  if (!logs) return;
  if (countItem(p.inventory, "tinderbox") < 1) return w.system(p, "You need a tinderbox to light a fire.");
  if ([...w.resources.values()].some((r) => r.x === p.x && r.z === p.z)) return w.system(p, "You can't light a fire here.");
  const xp: Record<string, number> = { logs: 40, oak_logs: 60, willow_logs: 90, maple_logs: 135 };
  const level: Record<string, number> = { logs: 1, oak_logs: 15, willow_logs: 30, maple_logs: 45 };
  if (p.skills.firemaking.level < (level[logs.itemId] ?? 1)) return w.system(p, `You need firemaking level ${level[logs.itemId]} to burn those.`);
  const r = removeFromSlot(p.inventory, logsSlot, 1);
  if (!r.ok) return;
  p.inventory = r.value;
  p.itemsDirty = true;
  w.lightFire(p.x, p.z, FIRE_TICKS);
  w.grantXp(p, { firemaking: xp[logs.itemId] ?? 40 });
  w.countGoal(p, { type: "firemaking", itemId: logs.itemId });
  w.system(p, "The fire catches and the logs begin to burn.");
  p.sync();
}

function useOnTarget(w: World, p: Player, slot: number, targetId: string) {
  const held = p.inventory[slot]!;
  const fire = w.resources.get(targetId);
  const station = w.content.stations.find((s) => s.id === targetId);
  const at = fire?.type === "fire" ? fire : station;
  if (!at) return w.system(p, "Nothing interesting happens.");
  if (chebyshev(p, at) > INTERACT_RANGE) return w.system(p, "You need to be closer to do that.");
  const kind = fire?.type === "fire" ? "fire" : station!.type;

  if (kind === "fire" || kind === "range") {
    const recipe = w.content.recipes.cooking.find((r) => r.input === held.itemId && r.stations.includes(kind as "fire" | "range"));
    if (!recipe) return w.system(p, "You can't cook that here.");
    if (p.skills.cooking.level < recipe.level) return w.system(p, `You need cooking level ${recipe.level} to cook that.`);
    const chance = burnChance(p.skills.cooking.level, { requiredLevel: recipe.level, stopBurnLevel: recipe.stopBurnLevel });
    const burnt = w.rng() < chance;
    const out = w.content.items.get(burnt ? recipe.burnt : recipe.output)!;
    const r = applyChanges(p.inventory, { remove: [{ slot, quantity: 1, itemId: held.itemId }], add: [{ item: out, quantity: 1 }] });
    if (!r.ok) return w.system(p, r.error.message);
    p.inventory = r.value;
    p.itemsDirty = true;
    if (!burnt) {
      w.grantXp(p, { cooking: recipe.xp });
      w.countGoal(p, { type: "cooking", recipeId: recipe.id, itemId: out.id });
    }
    w.system(p, burnt ? `You accidentally burn the ${out.name.toLowerCase().replace(/^burnt /, "")}.` : `You cook the ${out.name.toLowerCase()}.`);
    p.sync();
    return;
  }
  if (kind === "furnace" || kind === "anvil") {
    const candidates = w.content.recipes.smithing
      .filter((r) => r.station === kind && r.inputs.some((i) => i.itemId === held.itemId))
      .sort((a, b) => a.level - b.level);
    const recipe = candidates.find(
      (r) =>
        r.level <= p.skills.smithing.level &&
        r.inputs.every((i) => countItem(p.inventory, i.itemId) >= i.quantity) &&
        r.tools.every((t) => countItem(p.inventory, t) >= 1),
    );
    if (!recipe) return w.system(p, candidates.length ? "You don't have what that needs, or the level." : "You can't make anything from that here.");
    const success = w.rng() < recipe.successChance;
    const out = w.content.items.get(recipe.output.itemId)!;
    const r = applyChanges(p.inventory, {
      remove: recipe.inputs.map((i) => ({ itemId: i.itemId, quantity: i.quantity })),
      add: success ? [{ item: out, quantity: recipe.output.quantity }] : [],
    });
    if (!r.ok) return w.system(p, r.error.message);
    p.inventory = r.value;
    p.itemsDirty = true;
    if (success) {
      w.grantXp(p, { smithing: recipe.xp });
      w.countGoal(p, { type: "smithing", recipeId: recipe.id, itemId: out.id });
    }
    w.system(p, success ? `You make ${recipe.output.quantity} × ${out.name}.` : "The ore is too impure and you fail to refine it.");
    p.sync();
    return;
  }
  w.system(p, "Nothing interesting happens.");
}

/** `bank:deposit`: near a bank, move from inventory to bank in one transaction. */
export async function handleDeposit(w: World, p: Player, d: ClientEventPayload<"bank:deposit">) {
  if (p.dead || busyWithTrade(w, p)) return;
  if (!w.content.stationNear("bank", p.x, p.z, INTERACT_RANGE)) return w.system(p, "You need to be at a bank to do that.");
  await w.commitItems(p, () => {
    const held = p.inventory[d.slot];
    if (!held) return "That slot is empty.";
    const qty = d.quantity ?? held.quantity;
    const def = w.content.items.get(held.itemId);
    if (!def) return "You can't bank that.";
    let inv: Inventory;
    if (qty <= held.quantity) {
      const r = removeFromSlot(p.inventory, d.slot, qty);
      if (!r.ok) return r.error.message;
      inv = r.value;
    } else {
      // More than the slot holds: take that many of the item across slots (non-stackables).
      if (countItem(p.inventory, held.itemId) < qty) return `You don't have ${qty} of those.`;
      const r = removeItem(p.inventory, held.itemId, qty);
      if (!r.ok) return r.error.message;
      inv = r.value;
    }
    const bank = new Map(p.bank);
    const total = (bank.get(held.itemId) ?? 0) + qty;
    if (total > MAX_STACK) return "Your bank can't hold any more of that.";
    bank.set(held.itemId, total);
    return { inventory: inv, bank };
  });
}

/** `bank:withdraw`: near a bank, move from bank to inventory in one transaction. */
export async function handleWithdraw(w: World, p: Player, d: ClientEventPayload<"bank:withdraw">) {
  if (p.dead || busyWithTrade(w, p)) return;
  if (!w.content.stationNear("bank", p.x, p.z, INTERACT_RANGE)) return w.system(p, "You need to be at a bank to do that.");
  await w.commitItems(p, () => {
    const have = p.bank.get(d.itemId) ?? 0;
    if (have < d.quantity) return `Your bank doesn't have ${d.quantity} of those.`;
    const def = w.content.items.get(d.itemId);
    if (!def) return "Unknown item.";
    if (!def.stackable && d.quantity > freeSlots(p.inventory)) return "You don't have enough inventory space.";
    const r = addItem(p.inventory, def, d.quantity);
    if (!r.ok) return "You don't have enough inventory space.";
    const bank = new Map(p.bank);
    if (have === d.quantity) bank.delete(d.itemId);
    else bank.set(d.itemId, have - d.quantity);
    return { inventory: r.value, bank };
  });
}

/** `player:chat`: public to players in view, private to a friend, or a command. */
export async function handleChat(w: World, p: Player, c: ClientEventPayload<"player:chat">) {
  const text = c.text.trim();
  if (!text) return;
  if (text.startsWith("/")) return command(w, p, text);
  const social = w.deps.social;
  if (c.to) {
    const target = w.players.get(c.to);
    if (!target?.connection) return w.system(p, "That player is not online.");
    if (social && !(await social.areFriends(p.id, target.id))) return w.system(p, "You can only message your friends.");
    if (social && (await social.isIgnoring(target.id, p.id))) return; // silently not delivered
    const msg = chatMessage("private", text, p.id, p.name);
    target.send("chat:message", msg);
    p.send("chat:message", msg);
    return;
  }
  const msg = chatMessage("public", text, p.id, p.name);
  for (const viewer of w.viewersOf(p.x, p.z)) {
    if (viewer.id !== p.id && social && (await social.isIgnoring(viewer.id, p.id))) continue;
    viewer.send("chat:message", msg);
  }
}

/** Chat commands. Admin commands need `/admin <ADMIN_CODE>` first. */
async function command(w: World, p: Player, text: string) {
  const [cmd, ...args] = text.slice(1).split(/\s+/);
  switch (cmd) {
    case "admin": {
      if (!args[0]) return w.system(p, "Usage: /admin <code>");
      const check = await w.deps.checkAdminCode(args[0], p.connection?.remoteAddress);
      if (check === "ok") {
        p.admin = true;
        w.system(p, "Admin mode enabled for this session.");
        p.sync();
      } else if (check === "blocked") w.system(p, "Too many wrong codes; try again later.");
      else w.system(p, "Wrong admin code.");
      return;
    }
    case "style": {
      const s = args[0];
      if (s === "attack" || s === "strength" || s === "defense") {
        p.style = s;
        w.system(p, `Combat style set to ${s}.`);
        p.sync();
      } else w.system(p, "Usage: /style attack|strength|defense");
      return;
    }
    case "help":
      w.system(p, "Commands: /style attack|strength|defense, /admin <code>; admins: /give <itemId> [qty], /tp <x> <z>, /coins <amount>");
      return;
    case "give":
    case "tp":
    case "coins":
      if (!p.admin) return w.system(p, "You need admin access for that.");
      return adminCommand(w, p, cmd, args);
    default:
      w.system(p, `Unknown command /${cmd}. Try /help.`);
  }
}

async function adminCommand(w: World, p: Player, cmd: string, args: string[]) {
  if (p.tradeId) return w.system(p, "Not while trading.");
  if (cmd === "give") {
    const item = w.content.items.get(args[0] ?? "");
    const qty = args[1] === undefined ? 1 : Number(args[1]);
    if (!item) return w.system(p, "Unknown item id.");
    if (!Number.isInteger(qty) || qty < 1 || qty > MAX_STACK) return w.system(p, "Quantity must be a whole number from 1.");
    await w.commitItems(
      p,
      () => {
        const r = addItem(p.inventory, item, qty);
        return r.ok ? { inventory: r.value } : "Not enough inventory space.";
      },
      () => w.system(p, `Gave ${qty} × ${item.name}.`),
    );
    return;
  }
  if (cmd === "coins") {
    const amount = Number(args[0]);
    if (!Number.isInteger(amount) || amount < 0 || amount > MAX_STACK) return w.system(p, `Coins must be a whole number from 0 to ${MAX_STACK}.`);
    await w.commitItems(p, () => ({ coins: amount }), () => w.system(p, `Coins set to ${amount}.`));
    return;
  }
  if (cmd === "tp") {
    const x = Number(args[0]);
    const z = Number(args[1]);
    if (!Number.isInteger(x) || !Number.isInteger(z) || !w.content.inBounds(x, z) || w.content.isBlocked(x, z))
      return w.system(p, "Usage: /tp <x> <z> with a free tile inside the world.");
    w.teleport(p, x, z);
    w.system(p, `Teleported to ${x}, ${z}.`);
  }
}

/** Inventory summary for tools and tests. */
export function inventoryItems(p: Player) {
  return inventoryToSlots(p.inventory);
}
