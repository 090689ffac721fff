/**
 * A real `World` with no storage behind it (saves, kills and logouts go nowhere) and stored
 * character records to join it with: for the in-process interest benchmark
 * (loadtest/bench-interest.ts) and for the tests of the simulation (test/helpers/world.ts,
 * records.ts re-export them).
 */
import type { CharacterRecord } from "../../src/world/ports/character-store.js";
import type { GameContent } from "../../src/content/load.js";
import { createLogger } from "../../src/logger.js";
import type { Metrics } from "../../src/metrics.js";
import { SKILLS } from "../../src/domain/types.js";
import { World } from "../../src/world/world.js";
import { FakeCharacterStore } from "./fake-store.js";

/** An open PvP spot in the Ashlands, 60 tiles from any NPC. */
export const OPEN_SPOT = { x: 100, z: 110 };

export function worldWithoutStorage(
  content: GameContent,
  o: { now: () => number; rng?: () => number; saveIntervalSeconds?: number; groundItemLifetimeTicks?: number; metrics?: Metrics },
): World {
  return new World({
    content,
    // Saves, kills and logouts go nowhere: nothing is kept.
    characters: new FakeCharacterStore(false),
    logger: createLogger("silent"),
    saveIntervalSeconds: o.saveIntervalSeconds ?? 600,
    checkAdminCode: () => "wrong",
    rng: o.rng ?? (() => 0.99),
    now: o.now,
    groundItemLifetimeTicks: o.groundItemLifetimeTicks,
    metrics: o.metrics,
  });
}

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
