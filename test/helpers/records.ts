/** Stored character records, and a bounded wait for queued promise chains, for unit tests that run the real World on fake storage. */
import assert from "node:assert/strict";
import type { CharacterRecord, CharacterRepository, ProgressSnapshot } from "../../src/storage/characters/repository.js";

export { characterRecord, type RecordOptions } from "../../loadtest/lib/world.js";

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

/** Let queued promise chains run until `cond` holds (bounded: fails rather than spinning forever). */
export async function until(cond: () => boolean, what: string, turns = 1_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await new Promise((r) => setImmediate(r));
  }
  assert.fail(`never happened: ${what}`);
}

/** What a death leaves in storage beside its lock: the player respawned at (0, 10, 0) with nothing left. */
export const respawned = (characterId: string): ProgressSnapshot => ({
  characterId,
  x: 0,
  y: 10,
  z: 0,
  health: 100,
  combatLevel: 3,
  skills: {},
  coins: 0,
  items: { inventory: [], equipment: {} },
});

/** Record a death of the character at (5, 100) that drops `dropped` and keeps nothing (its lock stays open). @returns the lock's id. */
export const recordTestDeath = (repo: CharacterRepository, characterId: string, dropped: { itemId: string; quantity: number }[]) =>
  repo.recordDeath({ characterId, x: 5, z: 100, items: { dropped, kept: [] } }, respawned(characterId));
