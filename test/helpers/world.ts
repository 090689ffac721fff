/**
 * A real `World` with no storage behind it (saves, kills and logouts go nowhere), for tests of the
 * simulation and for the in-process interest benchmark (loadtest/bench-interest.ts).
 */
import type { CharacterRepository } from "../../entities/character-repository.js";
import type { GameContent } from "../../src/content/load.js";
import { createLogger } from "../../src/logger.js";
import type { Metrics } from "../../src/metrics.js";
import { World } from "../../src/world/world.js";

/** An open PvP spot in the Ashlands, 60 tiles from any NPC. */
export const OPEN_SPOT = { x: 100, z: 110 };

const noStorage = { save: async () => undefined, saveLeaving: async () => 0, recordKill: async () => undefined, recordLogout: async () => undefined };

export function worldWithoutStorage(
  content: GameContent,
  o: { now: () => number; rng?: () => number; saveIntervalSeconds?: number; groundItemLifetimeTicks?: number; metrics?: Metrics },
): World {
  return new World({
    content,
    characters: noStorage as unknown as CharacterRepository,
    logger: createLogger("silent"),
    saveIntervalSeconds: o.saveIntervalSeconds ?? 600,
    checkAdminCode: () => "wrong",
    rng: o.rng ?? (() => 0.99),
    now: o.now,
    groundItemLifetimeTicks: o.groundItemLifetimeTicks,
    metrics: o.metrics,
  });
}
