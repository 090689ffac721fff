/** What the world tells the systems around it (the trade service, the room). */

/** Why a player's open trade ends. */
export type InterruptReason = "moved_away" | "player_died" | "disconnected";

/** Tell whoever listens that a player in a trade moved, died or left. */
export type Interrupt = (playerId: string, reason: InterruptReason) => void;
