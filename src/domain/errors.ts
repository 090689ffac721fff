/**
 * The result type every domain function returns: the next value, or a typed error with a stable
 * code and a message safe to show a player. Domain functions never throw for bad input; they
 * return `err(...)`. Throwing is kept for programmer mistakes (see `unwrap`).
 */

/** A failure with a stable machine-readable code and a human-readable message. */
export interface DomainError<C extends string = string> {
  readonly code: C;
  readonly message: string;
}

/** Success branch of a `Result`. */
export interface Ok<T> {
  readonly ok: true;
  readonly value: T;
}

/** Failure branch of a `Result`. */
export interface Err<C extends string = string> {
  readonly ok: false;
  readonly error: DomainError<C>;
}

/**
 * `{ ok: true, value }` or `{ ok: false, error: { code, message } }`.
 * The second parameter is the union of error codes the function can return.
 */
export type Result<T, C extends string = string> = Ok<T> | Err<C>;

/** Wraps a value as a success. */
export function ok<T>(value: T): Ok<T> {
  return { ok: true, value };
}

/** Builds a failure with the given code and message. */
export function err<C extends string>(code: C, message: string): Err<C> {
  return { ok: false, error: { code, message } };
}

/** Narrows a result to its success branch. */
export function isOk<T, C extends string>(result: Result<T, C>): result is Ok<T> {
  return result.ok;
}

/** Narrows a result to its failure branch. */
export function isErr<T, C extends string>(result: Result<T, C>): result is Err<C> {
  return !result.ok;
}

/** Transforms the value of a success and passes a failure through unchanged. */
export function mapResult<T, U, C extends string>(result: Result<T, C>, fn: (value: T) => U): Result<U, C> {
  return result.ok ? ok(fn(result.value)) : result;
}

/** Thrown by `unwrap` when a failure is unwrapped; carries the domain error code. */
export class DomainException extends Error {
  readonly code: string;
  constructor(error: DomainError) {
    super(error.message);
    this.name = "DomainException";
    this.code = error.code;
  }
}

/**
 * Returns the value of a success or throws a `DomainException` for a failure.
 * For tests and for call sites where failure would be a programming error.
 */
export function unwrap<T, C extends string>(result: Result<T, C>): T {
  if (!result.ok) throw new DomainException(result.error);
  return result.value;
}
