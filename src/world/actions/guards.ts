/** Checks and distances shared by the event handlers. */
import { system } from "../messages.js";
import type { Player } from "../player.js";

/** Tiles within which a player can use a bank booth, a store counter or a station. */
export const INTERACT_RANGE = 3;

/** Refuse (and say why) while the player trades; a dead player does nothing either. */
export function busyWithTrade(p: Player): boolean {
  if (p.tradeId) {
    system(p, "You can't do that while trading.");
    return true;
  }
  return p.dead;
}
