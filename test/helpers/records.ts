/** Stored character records, and a bounded wait for queued promise chains, for unit tests that run the real World on fake storage. */
import assert from "node:assert/strict";
import type { CharacterRecord } from "../../src/world/ports/character-store.js";
import { SKILLS } from "../../src/domain/types.js";

/** The content's starter kit as inventory rows (what a new character holds). */
export const STARTER: CharacterRecord["inventory"] = [
  { slot: 0, itemId: "bronze_axe", quantity: 1 },
  { slot: 1, itemId: "bronze_pickaxe", quantity: 1 },
  { slot: 2, itemId: "small_fishing_net", quantity: 1 },
  { slot: 3, itemId: "tinderbox", quantity: 1 },
  { slot: 4, itemId: "shrimp", quantity: 1 },
  { slot: 5, itemId: "shrimp", quantity: 1 },
  { slot: 6, itemId: "bread", quantity: 1 },
];

export interface RecordOptions {
  accountId?: string;
  at?: { x: number; z: number };
  coins?: number;
  inventory?: CharacterRecord["inventory"];
  bank?: CharacterRecord["bank"];
}

/** A character at level 1 everywhere (constitution 10), with the given position, coins and items. */
export function characterRecord(id: string, o: RecordOptions = {}): CharacterRecord {
  const at = o.at ?? { x: 0, z: 0 };
  const c: CharacterRecord["character"] & Record<string, unknown> = {
    id,
    accountId: o.accountId ?? `account-${id}`,
    name: id,
    isAgent: false,
    positionX: at.x,
    positionY: 10,
    positionZ: at.z,
    health: 100,
    coins: o.coins ?? 25,
    goal: null,
    goalsPaused: false,
  };
  for (const s of SKILLS) c[`${s}Xp`] = s === "constitution" ? 1154 : 0;
  return { character: c, inventory: o.inventory ?? [], equipment: {}, bank: o.bank ?? [] };
}

/** Let queued promise chains run until `cond` holds (bounded: fails rather than spinning forever). */
export async function until(cond: () => boolean, what: string, turns = 1_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never happened: ${what}`);
}
