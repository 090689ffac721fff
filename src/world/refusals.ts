/** Stable codes of system refusals (`chat:message` `code`), as `as const` (README "Refusal codes"). */
import type { Player } from "./player.js";
import { chatMessage } from "./messages.js";

export const REFUSAL = {
  /** The player is dead (its death is being written): nothing can be done until it respawns. */
  PLAYER_DEAD: "PLAYER_DEAD",
} as const;
export type RefusalCode = (typeof REFUSAL)[keyof typeof REFUSAL];

/** A system refusal with a stable code. */
export function refuse(p: Player, code: RefusalCode, text: string): void {
  p.send("chat:message", { ...chatMessage("system", text), code });
}
