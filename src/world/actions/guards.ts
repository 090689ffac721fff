/** Checks and distances shared by the event handlers. */
import { refuse } from "../refusals.js";
import type { Player } from "../player.js";

/** Tiles within which a player can use a bank booth, a store counter or a station. */
export const INTERACT_RANGE = 3;

/** Refuse (and say why) while the player trades; a dead player does nothing either. */
export function busyWithTrade(p: Player): boolean {
  if (p.tradeId) {
    refuse(p, "TRADING");
    return true;
  }
  return p.dead;
}
