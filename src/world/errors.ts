/**
 * Errors the world throws at its callers (a join, an authentication): a stable code, the HTTP-like
 * status it means, and a message safe to show. The room and the `/ws` adapter turn them into their
 * own refusals (a Colyseus `ServerError`, a close code); the world imports neither.
 */
export const WORLD_ERROR = {
  /** The token is bound to another character, or the character belongs to another account. */
  CHARACTER_FORBIDDEN: 403,
  CHARACTER_NOT_FOUND: 404,
  /** An out-of-world change of the character (rename, delete) is queued or running. */
  CHARACTER_BUSY: 409,
  /** The character plays in a world of another process whose lease is still valid (docs/operations.md "Worlds"). */
  CHARACTER_ELSEWHERE: 409,
  /** The character is in combat in another world of this process: it can't be moved out of the fight. */
  CHARACTER_IN_COMBAT: 409,
  /** Too many authentication attempts from the address. */
  RATE_LIMITED: 429,
} as const;
export type WorldErrorCode = keyof typeof WORLD_ERROR;

export class WorldError extends Error {
  /** The HTTP status the refusal means (403, 404, 409, 429). */
  readonly status: number;
  constructor(
    readonly code: WorldErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "WorldError";
    this.status = WORLD_ERROR[code];
  }
}
