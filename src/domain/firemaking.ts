/**
 * Firemaking: logs need a firemaking level to light, give XP and burn for a while. The numbers of
 * each kind of logs come from the content (`firemaking` of an item in the item manifests).
 */
import { err, ok, type Result } from "./errors.js";

export const FIREMAKING_ERROR = {
  LEVEL_TOO_LOW: "LEVEL_TOO_LOW",
} as const;
export type FiremakingErrorCode = (typeof FIREMAKING_ERROR)[keyof typeof FIREMAKING_ERROR];

/** What the content says about burning one kind of logs. */
export interface LogsDef {
  /** Firemaking level needed to light them. */
  readonly level: number;
  /** XP for lighting them. */
  readonly xp: number;
  /** Ticks the fire burns. */
  readonly burnTicks: number;
}

/** Lighting logs at a firemaking `level`: the XP earned and how long the fire burns, or LEVEL_TOO_LOW. */
export function lightLogs(level: number, logs: LogsDef): Result<{ xp: number; burnTicks: number }, FiremakingErrorCode> {
  if (level < logs.level) return err(FIREMAKING_ERROR.LEVEL_TOO_LOW, `You need firemaking level ${logs.level} to burn those.`);
  return ok({ xp: logs.xp, burnTicks: logs.burnTicks });
}
