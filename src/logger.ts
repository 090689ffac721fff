/** Structured logging (pino), secrets redacted by path wherever they could appear; and the once-per-burst log of a failure that repeats (storage down). */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

export type { Logger };

/** Create the process logger (writing to stdout unless a destination is given, as tests do). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions<never> = {
    level,
    base: undefined,
    redact: {
      paths: [
        "token",
        "*.token",
        "authorization",
        "*.authorization",
        "headers.authorization",
        "req.headers.authorization",
        "jwtSecret",
        "*.jwtSecret",
        "adminCode",
        "*.adminCode",
        "password",
        "*.password",
        "databaseUrl",
        "*.databaseUrl",
      ],
      censor: "[redacted]",
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A short description of a failure for a log line (the first line of its message). */
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
