/** Skills used through items: lighting fires, cooking on a fire or range, smithing at a furnace or anvil. */
import { applyChanges, countItem, removeFromSlot } from "../../domain/inventory.js";
import { burnChance } from "../../domain/cooking.js";
import { chebyshev } from "../../domain/movement.js";
import { system } from "../messages.js";
import type { Player } from "../player.js";
import type { World } from "../world.js";
import { INTERACT_RANGE } from "./guards.js";

/** Ticks a lit fire burns. */
export const FIRE_TICKS = 100;

/** Are these logs (an item a tinderbox lights)? */
export function isLogs(_w: World, itemId?: string): boolean {
  return !!itemId && /logs$/.test(itemId);
}

/** Light the logs of a slot where the player stands (a tinderbox in the inventory). */
export function lightFire(w: World, p: Player, logsSlot: number) {
  const logs = p.inventory[logsSlot];
  if (!logs) return;
  if (countItem(p.inventory, "tinderbox") < 1) return system(p, "You need a tinderbox to light a fire.");
  if ([...w.resources.values()].some((r) => r.x === p.x && r.z === p.z)) return system(p, "You can't light a fire here.");
  const xp: Record<string, number> = { logs: 40, oak_logs: 60, willow_logs: 90, maple_logs: 135 };
  const level: Record<string, number> = { logs: 1, oak_logs: 15, willow_logs: 30, maple_logs: 45 };
  if (p.skills.firemaking.level < (level[logs.itemId] ?? 1)) return system(p, `You need firemaking level ${level[logs.itemId]} to burn those.`);
  const r = removeFromSlot(p.inventory, logsSlot, 1);
  if (!r.ok) return;
  p.inventory = r.value;
  p.itemsDirty = true;
  w.ground.lightFire(p.x, p.z, FIRE_TICKS);
  w.progress.grantXp(p, { firemaking: xp[logs.itemId] ?? 40 });
  w.progress.countGoal(p, { type: "firemaking", itemId: logs.itemId });
  system(p, "The fire catches and the logs begin to burn.");
  p.sync();
}

/** Use the item of a slot on a fire or station: cook (fire, range) or smith (furnace, anvil). */
export function useOnTarget(w: World, p: Player, slot: number, targetId: string) {
  const fire = w.resources.get(targetId);
  const station = w.content.stations.find((s) => s.id === targetId);
  const at = fire?.type === "fire" ? fire : station;
  if (!at) return system(p, "Nothing interesting happens.");
  if (chebyshev(p, at) > INTERACT_RANGE) return system(p, "You need to be closer to do that.");
  const kind = fire?.type === "fire" ? "fire" : station!.type;
  if (kind === "fire" || kind === "range") return cook(w, p, slot, kind);
  if (kind === "furnace" || kind === "anvil") return smith(w, p, slot, kind);
  system(p, "Nothing interesting happens.");
}

function cook(w: World, p: Player, slot: number, kind: "fire" | "range") {
  const held = p.inventory[slot]!;
  const recipe = w.content.recipes.cooking.find((r) => r.input === held.itemId && r.stations.includes(kind));
  if (!recipe) return system(p, "You can't cook that here.");
  if (p.skills.cooking.level < recipe.level) return system(p, `You need cooking level ${recipe.level} to cook that.`);
  const chance = burnChance(p.skills.cooking.level, { requiredLevel: recipe.level, stopBurnLevel: recipe.stopBurnLevel });
  const burnt = w.clock.rng() < chance;
  const out = w.content.items.get(burnt ? recipe.burnt : recipe.output)!;
  const r = applyChanges(p.inventory, { remove: [{ slot, quantity: 1, itemId: held.itemId }], add: [{ item: out, quantity: 1 }] });
  if (!r.ok) return system(p, r.error.message);
  p.inventory = r.value;
  p.itemsDirty = true;
  if (!burnt) {
    w.progress.grantXp(p, { cooking: recipe.xp });
    w.progress.countGoal(p, { type: "cooking", recipeId: recipe.id, itemId: out.id });
  }
  system(p, burnt ? `You accidentally burn the ${out.name.toLowerCase().replace(/^burnt /, "")}.` : `You cook the ${out.name.toLowerCase()}.`);
  p.sync();
}

function smith(w: World, p: Player, slot: number, kind: "furnace" | "anvil") {
  const held = p.inventory[slot]!;
  const candidates = w.content.recipes.smithing
    .filter((r) => r.station === kind && r.inputs.some((i) => i.itemId === held.itemId))
    .sort((a, b) => a.level - b.level);
  const recipe = candidates.find(
    (r) =>
      r.level <= p.skills.smithing.level &&
      r.inputs.every((i) => countItem(p.inventory, i.itemId) >= i.quantity) &&
      r.tools.every((t) => countItem(p.inventory, t) >= 1),
  );
  if (!recipe) return system(p, candidates.length ? "You don't have what that needs, or the level." : "You can't make anything from that here.");
  const success = w.clock.rng() < recipe.successChance;
  const out = w.content.items.get(recipe.output.itemId)!;
  const r = applyChanges(p.inventory, {
    remove: recipe.inputs.map((i) => ({ itemId: i.itemId, quantity: i.quantity })),
    add: success ? [{ item: out, quantity: recipe.output.quantity }] : [],
  });
  if (!r.ok) return system(p, r.error.message);
  p.inventory = r.value;
  p.itemsDirty = true;
  if (success) {
    w.progress.grantXp(p, { smithing: recipe.xp });
    w.progress.countGoal(p, { type: "smithing", recipeId: recipe.id, itemId: out.id });
  }
  system(p, success ? `You make ${recipe.output.quantity} × ${out.name}.` : "The ore is too impure and you fail to refine it.");
  p.sync();
}
