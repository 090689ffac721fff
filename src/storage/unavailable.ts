/**
 * Storage that cannot serve a request right now — the pool has no free connection within its
 * acquire timeout, the server refuses or drops connections, or a statement or lock wait timed out —
 * as opposed to a bug or a broken rule. Callers turn it into a refusal the client may retry
 * (HTTP 503 `SERVER_BUSY`, docs/operations.md "When the server is busy") and log it once per burst
 * (`storageFailureLog`), not once per request.
 */
import type { Logger } from "../logger.js";

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

/** A short description of a storage failure for a log line (the first line of its message). */
const describe = (e: unknown): string => (e instanceof Error ? e.message : String(e)).split("\n")[0]!.slice(0, 200);

export interface FailureBurstLogOptions {
  /** A burst ends after this long without a failure (default 30 s). */
  quietMs?: number;
  /** A success ends the burst only this long after the last failure (default 2 s): flapping is one burst. */
  settleMs?: number;
  /** While a burst goes on, at most one line per this interval, with the count (default 60 s). */
  repeatMs?: number;
  now?: () => number;
}

/**
 * Logs a burst of failures of one kind once: an `error` line at the first failure, then at most one
 * `warn` line per `repeatMs` with the count while failures continue, and an `info` line with the
 * total when a success at least `settleMs` after the last failure ends the burst. A burst also ends
 * after `quietMs` without failures.
 */
export class FailureBurstLog {
  private burst: { started: number; last: number; lastLogged: number; count: number } | undefined;
  private readonly quietMs: number;
  private readonly settleMs: number;
  private readonly repeatMs: number;
  private readonly now: () => number;

  constructor(
    private readonly logger: Logger,
    private readonly message: string,
    opts: FailureBurstLogOptions = {},
  ) {
    this.quietMs = opts.quietMs ?? 30_000;
    this.settleMs = opts.settleMs ?? 2_000;
    this.repeatMs = opts.repeatMs ?? 60_000;
    this.now = opts.now ?? Date.now;
  }

  /** True while failures keep coming (no success and no quiet period since the first). */
  get inBurst(): boolean {
    return this.burst !== undefined && this.now() - this.burst.last < this.quietMs;
  }

  /** One failure; `context` goes into the line when this failure is the one logged. */
  failure(err: unknown, context: Record<string, unknown> = {}): void {
    const t = this.now();
    if (!this.inBurst) {
      this.burst = { started: t, last: t, lastLogged: t, count: 1 };
      this.logger.error({ ...context, cause: describe(err) }, `${this.message}; further failures are counted, not logged, until it recovers`);
      return;
    }
    const b = this.burst!;
    b.count++;
    b.last = t;
    if (t - b.lastLogged >= this.repeatMs) {
      this.logger.warn({ ...context, cause: describe(err), failures: b.count, sinceMs: t - b.started }, `${this.message} (still failing)`);
      b.lastLogged = t;
    }
  }

  /** A success: ends a burst (logged with its count) once no failure came for `settleMs`. */
  success(): void {
    const b = this.burst;
    if (!b) return;
    const since = this.now() - b.last;
    if (since < this.settleMs) return;
    this.burst = undefined;
    if (since < this.quietMs) this.logger.info({ failures: b.count, durationMs: b.last - b.started }, `${this.message}: recovered`);
  }
}

const logs = new WeakMap<Logger, FailureBurstLog>();

/**
 * The process's storage-failure log for `logger` (one per logger, so the HTTP error handler, the
 * rooms and the `/ws` adapter share a burst): "storage unavailable".
 */
export function storageFailureLog(logger: Logger): FailureBurstLog {
  let log = logs.get(logger);
  if (!log) logs.set(logger, (log = new FailureBurstLog(logger, "storage unavailable: refusing with SERVER_BUSY")));
  return log;
}
