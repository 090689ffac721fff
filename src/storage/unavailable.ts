/**
 * Storage that cannot serve a request right now — the pool has no free connection within its
 * acquire timeout, the server refuses or drops connections, or a statement or lock wait timed out —
 * as opposed to a bug or a broken rule. Callers turn it into a refusal the client may retry
 * (HTTP 503 `SERVER_BUSY`, docs/operations.md "When the server is busy") and log it once per burst
 * (`storageFailureLog`), not once per request.
 */
import { FailureBurstLog, storageFailureLog, type FailureBurstLogOptions } from "../logger.js";

/** The once-per-burst log lives with the logger (the world logs storage failures too, without importing storage). */
export { FailureBurstLog, storageFailureLog, type FailureBurstLogOptions };

/** Messages of the `pg` pool and client when no connection can be had. */
const UNAVAILABLE_MESSAGES = [
  "timeout exceeded when trying to connect", // pg-pool: acquire timeout (connectionTimeoutMillis)
  "connection terminated", // pg: the server or the connect timeout ended the connection
  "connection timeout",
  "cannot use a pool after calling end",
  "client has encountered a connection error",
  "sorry, too many clients already",
  "the database system is starting up",
  "the database system is shutting down",
];
/** Socket errors of a database connection. */
const NETWORK_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);
/**
 * PostgreSQL SQLSTATEs meaning "not now": class 08 (connection exception), 53300 too many
 * connections, 57P01–57P03 (shutdown, cannot connect now), 57014 statement timeout, 55P03 lock timeout.
 */
const SQLSTATE_UNAVAILABLE = /^(08...|53300|57P0[123]|57014|55P03)$/;

/** True when `e` (or an error it wraps) says storage is unavailable or overloaded, not that the request is wrong. */
export function isStorageUnavailable(e: unknown): boolean {
  for (let cur: unknown = e, depth = 0; cur && typeof cur === "object" && depth < 5; depth++) {
    const err = cur as { code?: unknown; sqlState?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    const code = typeof err.code === "string" ? err.code : undefined;
    const sqlState = typeof err.sqlState === "string" ? err.sqlState : undefined;
    if (code && (NETWORK_CODES.has(code) || SQLSTATE_UNAVAILABLE.test(code))) return true;
    if (sqlState && SQLSTATE_UNAVAILABLE.test(sqlState)) return true;
    const message = typeof err.message === "string" ? err.message.toLowerCase() : "";
    if (UNAVAILABLE_MESSAGES.some((m) => message.includes(m))) return true;
    // Node's AggregateError (every address of a host refused the connection).
    if (Array.isArray(err.errors) && err.errors.some((x) => isStorageUnavailable(x))) return true;
    cur = err.cause;
  }
  return false;
}
