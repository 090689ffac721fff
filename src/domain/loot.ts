/** The loot an NPC leaves: its always-drops plus weighted rolls on its drop table. */
import type { ItemCount } from "./death.js";

/** A weighted entry of a drop table: `min`..`max` of an item. */
export interface LootEntry {
  itemId: string;
  min: number;
  max: number;
  weight: number;
}

/** An NPC's drops as the content gives them. */
export interface LootTable {
  always: readonly ItemCount[];
  /** Rolls on `table` per kill. */
  rolls: number;
  /** Weight of rolling nothing. */
  nothingWeight: number;
  table: readonly LootEntry[];
}

/**
 * Roll the loot of one kill: the always-drops, then `rolls` draws on the table (each draws `rng()`
 * once, and once more for the quantity when it lands on an entry). A draw lands on nothing with
 * weight `nothingWeight`, else on an entry in proportion to its weight.
 */
export function rollLoot(drops: LootTable, rng: () => number): ItemCount[] {
  const out: ItemCount[] = drops.always.map((d) => ({ itemId: d.itemId, quantity: d.quantity }));
  const total = drops.nothingWeight + drops.table.reduce((s, d) => s + d.weight, 0);
  for (let i = 0; i < drops.rolls; i++) {
    let roll = rng() * total - drops.nothingWeight;
    if (roll < 0) continue;
    for (const d of drops.table) {
      roll -= d.weight;
      if (roll < 0) {
        out.push({ itemId: d.itemId, quantity: d.min + Math.floor(rng() * (d.max - d.min + 1)) });
        break;
      }
    }
  }
  return out;
}
