/** Skills used through items: lighting fires, cooking on a fire or range, smithing at a furnace or anvil. */
import { applyChanges, countItem, removeFromSlot } from "../../domain/inventory.js";
import { rollCook } from "../../domain/cooking.js";
import { lightLogs } from "../../domain/firemaking.js";
import { chebyshev } from "../../domain/movement.js";
import { system } from "../messages.js";
import { fromDomain, refuse, refuseWith } from "../refusals.js";
import type { Player } from "../player.js";
import type { World } from "../world.js";
import { INTERACT_RANGE } from "./guards.js";

/** Are these logs (an item with `firemaking` in the content, which a tinderbox lights)? */
export function isLogs(w: World, itemId?: string): boolean {
  return !!itemId && w.content.items.get(itemId)?.firemaking !== undefined;
}

/** Light the logs of a slot where the player stands (a tinderbox in the inventory). */
export function lightFire(w: World, p: Player, logsSlot: number) {
  const logs = p.inventory[logsSlot];
  if (!logs) return;
  if (countItem(p.inventory, "tinderbox") < 1) return refuse(p, "TOOL_REQUIRED", "You need a tinderbox to light a fire.");
  if ([...w.resources.values()].some((r) => r.x === p.x && r.z === p.z)) return refuse(p, "CANNOT_LIGHT_HERE");
  const fire = lightLogs(p.skills.firemaking.level, w.content.items.get(logs.itemId)!.firemaking!);
  if (!fire.ok) return refuseWith(p, fromDomain(fire.error));
  const r = removeFromSlot(p.inventory, logsSlot, 1);
  if (!r.ok) return;
  p.inventory = r.value;
  p.safety.itemsChanged();
  w.ground.lightFire(p.x, p.z, fire.value.burnTicks);
  w.progress.grantXp(p, { firemaking: fire.value.xp });
  w.progress.countGoal(p, { type: "firemaking", itemId: logs.itemId });
  system(p, "The fire catches and the logs begin to burn.");
  p.sync();
}

/** Use the item of a slot on a fire or station: cook (fire, range) or smith (furnace, anvil; `recipeId` picks the recipe). */
export function useOnTarget(w: World, p: Player, slot: number, targetId: string, recipeId?: string) {
  const fire = w.resources.get(targetId);
  const station = w.content.stations.find((s) => s.id === targetId);
  const at = fire?.type === "fire" ? fire : station;
  if (!at) return refuse(p, "NOTHING_HAPPENS");
  if (chebyshev(p, at) > INTERACT_RANGE) return refuse(p, "TOO_FAR", "You need to be closer to do that.");
  const kind = fire?.type === "fire" ? "fire" : station!.type;
  if (kind === "fire" || kind === "range") return cook(w, p, slot, kind);
  if (kind === "furnace" || kind === "anvil") return smith(w, p, slot, kind, recipeId);
  refuse(p, "NOTHING_HAPPENS");
}

function cook(w: World, p: Player, slot: number, kind: "fire" | "range") {
  const held = p.inventory[slot]!;
  const recipe = w.content.recipes.cooking.find((r) => r.input === held.itemId && r.stations.includes(kind));
  if (!recipe) return refuse(p, "NO_RECIPE", "You can't cook that here.");
  const roll = rollCook(p.skills.cooking.level, { requiredLevel: recipe.level, stopBurnLevel: recipe.stopBurnLevel }, w.clock.rng);
  if (!roll.ok) return refuseWith(p, fromDomain(roll.error));
  const burnt = roll.value === "burnt";
  const out = w.content.items.get(burnt ? recipe.burnt : recipe.output)!;
  const r = applyChanges(p.inventory, { remove: [{ slot, quantity: 1, itemId: held.itemId }], add: [{ item: out, quantity: 1 }] });
  if (!r.ok) return refuseWith(p, fromDomain(r.error));
  p.inventory = r.value;
  p.safety.itemsChanged();
  if (!burnt) {
    w.progress.grantXp(p, { cooking: recipe.xp });
    w.progress.countGoal(p, { type: "cooking", recipeId: recipe.id, itemId: out.id });
  }
  system(p, burnt ? `You accidentally burn the ${out.name.toLowerCase().replace(/^burnt /, "")}.` : `You cook the ${out.name.toLowerCase()}.`);
  p.sync();
}

/**
 * Smith at a furnace or anvil: the recipe named (`recipeId`), or else the lowest-level recipe taking
 * the item that the player can make. A named recipe above the player's level is LEVEL_TOO_LOW.
 */
function smith(w: World, p: Player, slot: number, kind: "furnace" | "anvil", recipeId?: string) {
  const held = p.inventory[slot]!;
  const candidates = w.content.recipes.smithing
    .filter((r) => r.station === kind && r.inputs.some((i) => i.itemId === held.itemId) && (recipeId === undefined || r.id === recipeId))
    .sort((a, b) => a.level - b.level);
  const named = recipeId === undefined ? undefined : candidates[0];
  if (named && named.level > p.skills.smithing.level) return refuse(p, "LEVEL_TOO_LOW", `You need smithing level ${named.level} to make that.`);
  const recipe = candidates.find(
    (r) =>
      r.level <= p.skills.smithing.level &&
      r.inputs.every((i) => countItem(p.inventory, i.itemId) >= i.quantity) &&
      r.tools.every((t) => countItem(p.inventory, t) >= 1),
  );
  if (!recipe) return candidates.length ? refuse(p, "REQUIREMENTS_NOT_MET") : refuse(p, "NO_RECIPE");
  const success = w.clock.rng() < recipe.successChance;
  const out = w.content.items.get(recipe.output.itemId)!;
  const r = applyChanges(p.inventory, {
    remove: recipe.inputs.map((i) => ({ itemId: i.itemId, quantity: i.quantity })),
    add: success ? [{ item: out, quantity: recipe.output.quantity }] : [],
  });
  if (!r.ok) return refuseWith(p, fromDomain(r.error));
  p.inventory = r.value;
  p.safety.itemsChanged();
  if (success) {
    w.progress.grantXp(p, { smithing: recipe.xp });
    w.progress.countGoal(p, { type: "smithing", recipeId: recipe.id, itemId: out.id });
  }
  system(p, success ? `You make ${recipe.output.quantity} × ${out.name}.` : "The ore is too impure and you fail to refine it.");
  p.sync();
}
