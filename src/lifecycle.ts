/**
 * Process lifecycle around a server: signal and crash handlers installed before start-up begins,
 * graceful stop with a 10 s bound, and readable start-up failures (one stderr line per problem).
 */
import type { Logger } from "./logger.js";

/** Anything the lifecycle can stop. */
export interface Stoppable {
  close(): Promise<void>;
}

/**
 * The lines that explain a start-up failure: one per entry of an error's `problems: string[]`
 * (configuration, content and manifest errors carry one), otherwise one per line of its message.
 */
export function startupErrorLines(e: unknown): string[] {
  const problems = (e as { problems?: unknown } | null)?.problems;
  if (Array.isArray(problems) && problems.length > 0 && problems.every((p) => typeof p === "string")) return problems;
  const message = e instanceof Error ? e.message : String(e);
  const lines = message
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  return lines.length > 0 ? lines : [e instanceof Error ? e.name : "unknown error"];
}

export interface RunOptions<T extends Stoppable> {
  logger: Logger;
  start: () => Promise<T>;
  /** Exit 1 when closing takes longer than this (default 10 s). */
  shutdownTimeoutMs?: number;
  /** A stop requested during start-up waits at most this long for the start (default 60 s). */
  startupGraceMs?: number;
  /** Where start-up failures are printed (default stderr). */
  printError?: (line: string) => void;
  proc?: NodeJS.Process;
}

/**
 * Start `start()` under signal and crash handling and exit the process when it stops:
 * - SIGTERM/SIGINT at any time, even while start-up runs: wait for the start, close, exit 0.
 * - an uncaught exception: log it, close gracefully, exit 1.
 * - start-up failure: one `start-up error: <line>` per problem on stderr, exit 1.
 * Closing that takes longer than 10 s exits 1.
 */
export function runProcess<T extends Stoppable>(opts: RunOptions<T>): void {
  const { logger } = opts;
  const proc = opts.proc ?? process;
  const timeoutMs = opts.shutdownTimeoutMs ?? 10_000;
  const startupGraceMs = opts.startupGraceMs ?? 60_000;
  const printError = opts.printError ?? ((line: string) => console.error(line));

  let exitCode = 0;
  let stopping = false;
  // eslint-disable-next-line prefer-const -- read by the handlers below, assigned once they are in place
  let starting!: Promise<T>;

  let started = false;
  const exitAfter = (ms: number, what: string) => {
    const t = setTimeout(() => {
      logger.error(`${what} took longer than ${ms / 1000} s; exiting`);
      proc.exit(1);
    }, ms);
    t.unref();
    return t;
  };

  const stop = (reason: string, code: number) => {
    exitCode = Math.max(exitCode, code);
    if (stopping) return;
    stopping = true;
    logger.info({ reason, duringStartup: !started }, "stopping");
    void (async () => {
      // A stop requested during start-up waits for the start (bounded), then closes what it built.
      const startBound = started ? undefined : exitAfter(startupGraceMs, "start-up after a stop request");
      let server: T;
      try {
        server = await starting;
      } catch {
        return; // start-up failed: reported by the start-up handler, which exits
      } finally {
        clearTimeout(startBound);
      }
      exitAfter(timeoutMs, "shutdown");
      try {
        await server.close();
      } catch (e) {
        logger.error({ err: e }, "shutdown failed");
        exitCode = 1;
      }
      proc.exit(exitCode);
    })();
  };

  proc.on("SIGTERM", () => stop("SIGTERM", 0));
  proc.on("SIGINT", () => stop("SIGINT", 0));
  proc.on("uncaughtException", (err) => {
    logger.fatal({ err }, "uncaught exception; shutting down");
    stop("uncaughtException", 1);
  });
  proc.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));

  // Handlers are in place before start-up begins, so a signal during start-up still ends cleanly.
  starting = opts.start();
  starting.then(
    () => {
      started = true;
      if (stopping) logger.info("start-up finished after a stop request; closing");
    },
    (e) => {
      logger.fatal({ err: e }, "start-up failed");
      for (const line of startupErrorLines(e)) printError(`start-up error: ${line}`);
      proc.exit(1);
    },
  );
}

export /** True when `p` settles (either way) within `ms`; never rejects. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const done = p.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([done, new Promise<boolean>((r) => (timer = setTimeout(() => r(false), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
