/**
 * Typed errors of the application services (characters, social graph, agents). Services are free
 * of HTTP types so the world can call them too; the REST layer maps each code onto its HTTP error
 * (`INVALID` → 400 INVALID_REQUEST, `NOT_FOUND` → 404, `FORBIDDEN` → 403, the rest → 409).
 */

export const SERVICE_ERROR = {
  /** The input breaks a rule (bad name, unknown template, befriending oneself...). */
  INVALID: "INVALID",
  /** The record does not exist. */
  NOT_FOUND: "NOT_FOUND",
  /** The caller may not act on the record. */
  FORBIDDEN: "FORBIDDEN",
  /** A character name is already used (case-insensitive). */
  NAME_TAKEN: "NAME_TAKEN",
  /** The record's state does not allow the action (online, full list, already done...). */
  CONFLICT: "CONFLICT",
  /** An agent tried to set its own goal while its goals are paused. */
  GOALS_PAUSED: "GOALS_PAUSED",
  /** The target already has the most incoming friend requests it may hold (`MAX_INCOMING_REQUESTS`). */
  FRIEND_REQUESTS_FULL: "FRIEND_REQUESTS_FULL",
} as const;
export type ServiceErrorCode = (typeof SERVICE_ERROR)[keyof typeof SERVICE_ERROR];

/** A rule a service refused, with a message safe to show and, for INVALID, the offending field. */
export class ServiceError extends Error {
  override readonly name = "ServiceError";
  constructor(
    readonly code: ServiceErrorCode,
    message: string,
    /** Input field the error is about (for validation details), e.g. `name`. */
    readonly field?: string,
  ) {
    super(message);
  }
}

export const invalid = (message: string, field?: string) => new ServiceError(SERVICE_ERROR.INVALID, message, field);
export const missing = (what: string) => new ServiceError(SERVICE_ERROR.NOT_FOUND, `${what} not found`);
export const conflict = (message: string) => new ServiceError(SERVICE_ERROR.CONFLICT, message);
