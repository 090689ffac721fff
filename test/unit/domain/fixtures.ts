/** Shared fixtures for the domain unit tests: a tiny item catalogue and builders. */
import { unwrap } from "../../../src/domain/errors.js";
import { inventoryFromSlots, type Inventory, type ItemLookup } from "../../../src/domain/inventory.js";
import type { ItemDef } from "../../../src/domain/types.js";

function item(id: string, value: number, stackable: boolean, tradeable = true): ItemDef {
  return Object.freeze({ id, name: id.replace(/_/g, " "), value, stackable, tradeable });
}

export const ITEMS = {
  axe: item("bronze_axe", 16, false),
  logs: item("logs", 4, false),
  feather: item("feather", 2, true),
  rune: item("air_rune", 10, true),
  token: item("quest_token", 0, false, false),
} as const;

export const lookup: ItemLookup = (id) => Object.values(ITEMS).find((i) => i.id === id);
export const valueOf = (id: string): number => lookup(id)?.value ?? 0;

/** An inventory from `[slot, itemId, quantity]` triples. */
export function inv(...entries: [number, string, number][]): Inventory {
  return unwrap(inventoryFromSlots(entries.map(([slot, itemId, quantity]) => ({ slot, itemId, quantity }))));
}

/** An inventory with every slot holding one `logs` except the listed free slots. */
export function fullExcept(...free: number[]): Inventory {
  const entries: [number, string, number][] = [];
  for (let s = 0; s < 28; s++) if (!free.includes(s)) entries.push([s, "logs", 1]);
  return inv(...entries);
}

/** A deterministic rng returning the given values in turn (then repeating the last). */
export function seq(...values: number[]): () => number {
  let i = 0;
  return () => values[Math.min(i++, values.length - 1)]!;
}

/** A fake clock for tests: `now` only moves when told. */
export class FakeClock {
  constructor(public now = 1_700_000_000_000) {}
  advance(ms: number): number {
    this.now += ms;
    return this.now;
  }
}
