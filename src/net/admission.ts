/**
 * Admission control (docs/operations.md "When the server is busy"): world joins and character creations run
 * through bounded gates — at most `concurrency` at once, at most `queue` waiting, none waiting longer
 * than `waitMs` — and a request the gate cannot take is refused at once with a reason the client can
 * act on: HTTP 503 `SERVER_BUSY` with `Retry-After`, a matchmaking error with code 503 for the SDK,
 * close code 4503 on `/ws`. A storage failure during a join or a creation (no pool connection, the
 * database refusing connections) is the same refusal, logged once per burst.
 *
 * A join has two stages that share the join gate:
 * 1. admission — the matchmaking request (`src/http/matchmaking.ts`: token check and seat
 *    reservation) or the `/ws` token check: new arrivals, refused when the queue is full, when they
 *    waited too long, or while the event loop is overloaded;
 * 2. entering the world — the room's `onJoin` or the `/ws` attach, which loads (or creates) the
 *    character: served before any new arrival and never refused for the queue length, only for the
 *    deadline, so a client admitted in stage 1 is almost never refused after its seat.
 *
 * Nothing here knows the rooms or the world: the rooms and the `/ws` adapter call `join`.
 */
import { ServerError } from "@colyseus/core";
import type { Logger } from "../logger.js";
import type { DbWorkLimiter } from "../storage/limiter.js";
import { isStorageUnavailable, storageFailureLog, type FailureBurstLog } from "../storage/unavailable.js";
import { SeatLedger } from "./seat-ledger.js";

export { SeatLedger };

/** The error code of every busy refusal. */
export const SERVER_BUSY = "SERVER_BUSY";
/** The code of the account's matchmaking limit, raised in the world's `onAuth` as `RATE_LIMITED: … retry in N s` (src/http/limits.ts). */
export const MATCHMAKE_RATE_LIMITED = "RATE_LIMITED";
/** Bounds of `Retry-After` (seconds). */
export const RETRY_AFTER_MIN_S = 1;
export const RETRY_AFTER_MAX_S = 30;
/** `Retry-After` of a refusal for a storage failure (the pool or the database, not the queue). */
export const STORAGE_RETRY_AFTER_S = 5;
/** HTTP status of a busy refusal; on `/ws` the close code is 4000 + it (CLOSE_CODES.SERVER_BUSY). */
export const SERVER_BUSY_STATUS = 503;

export type BusyReason = "queue_full" | "wait_timeout" | "overloaded" | "storage" | "unreachable";

const REASONS: Record<BusyReason, string> = {
  queue_full: "too many waiting",
  wait_timeout: "waited too long",
  overloaded: "overloaded",
  storage: "storage unavailable",
  unreachable: "the server hosting the character did not answer",
};

const clampRetry = (s: number) => Math.min(RETRY_AFTER_MAX_S, Math.max(RETRY_AFTER_MIN_S, Math.ceil(s)));

/** A refusal the client may retry after `retryAfterSeconds`. */
export class ServerBusyError extends Error {
  readonly code = SERVER_BUSY;
  readonly status = SERVER_BUSY_STATUS;
  readonly retryAfterSeconds: number;
  constructor(
    readonly reason: BusyReason,
    retryAfterSeconds: number,
    /** What was refused, e.g. "world join". */
    readonly what: string,
  ) {
    const retry = clampRetry(retryAfterSeconds);
    super(`server busy (${what}: ${REASONS[reason]}); retry in ${retry} s`);
    this.name = "ServerBusyError";
    this.retryAfterSeconds = retry;
  }

  /** The message with the code in front, where the code cannot travel beside it (SDK errors, close reasons). */
  get tagged(): string {
    return `${SERVER_BUSY}: ${this.message}`;
  }
}

/** Limits of one gate. */
export interface GateLimits {
  /** Requests served at once. */
  concurrency: number;
  /** New arrivals that may wait for a slot; one more is refused at once (0: never wait). */
  queue: number;
  /** Longest wait for a slot before the request is refused. */
  waitMs: number;
}

export interface GateOptions {
  /** Current event-loop delay in ms; with `maxLoopDelayMs`, new arrivals are refused while above it. */
  loopDelayMs?: () => number;
  maxLoopDelayMs?: number;
  now?: () => number;
}

interface Waiter {
  grant(release: () => void): void;
  refuse(e: ServerBusyError): void;
  timer: NodeJS.Timeout;
}

/** Releases a slot; calling it again does nothing. */
export type Release = () => void;

/**
 * Bounded concurrency plus a bounded, deadline-limited waiting queue, with a priority lane for
 * requests already admitted once (see the module comment). `Retry-After` comes from the observed
 * service rate: the average time a slot is held (moving average) over the concurrency.
 */
export class AdmissionGate {
  private held = 0;
  private readonly lanes: { admitted: Waiter[]; arrivals: Waiter[] } = { admitted: [], arrivals: [] };
  /** Moving average of how long a slot is held, in ms (starts at a guess until measured). */
  private avgHoldMs = 500;
  private readonly now: () => number;

  constructor(
    /** What the gate admits, for messages ("world join"). */
    readonly what: string,
    readonly limits: GateLimits,
    private readonly opts: GateOptions = {},
  ) {
    this.now = opts.now ?? (() => performance.now());
  }

  /** Slots held now. */
  get inFlight(): number {
    return this.held;
  }

  /** Requests waiting for a slot (both lanes). */
  get waiting(): number {
    return this.lanes.admitted.length + this.lanes.arrivals.length;
  }

  /** Seconds a refused client should wait: the backlog over the observed service rate, 1–30. */
  retryAfterSeconds(): number {
    const perSecond = (Math.max(1, this.limits.concurrency) * 1000) / Math.max(1, this.avgHoldMs);
    return clampRetry((this.held + this.waiting + 1) / perSecond);
  }

  /** A busy refusal of this gate. */
  busy(reason: BusyReason): ServerBusyError {
    return new ServerBusyError(reason, reason === "storage" ? STORAGE_RETRY_AFTER_S : this.retryAfterSeconds(), this.what);
  }

  /** True while the event loop is slower than allowed. */
  overloaded(): boolean {
    const max = this.opts.maxLoopDelayMs ?? 0;
    return max > 0 && (this.opts.loopDelayMs?.() ?? 0) > max;
  }

  /**
   * A slot: at once when one is free, else after waiting in line.
   * @param admitted the request was admitted once already (stage 2 of a join): it is served before
   * every new arrival and is not refused for the queue length or the event loop, only the deadline.
   * @throws ServerBusyError (queue full, deadline passed, event loop overloaded)
   */
  acquire(admitted = false): Promise<Release> {
    if (!admitted && this.overloaded()) return Promise.reject(this.busy("overloaded"));
    const free = this.held < this.limits.concurrency && this.lanes.admitted.length === 0 && (admitted || this.lanes.arrivals.length === 0);
    if (free) return Promise.resolve(this.grant());
    if (!admitted && this.lanes.arrivals.length >= this.limits.queue) return Promise.reject(this.busy("queue_full"));
    const lane = admitted ? this.lanes.admitted : this.lanes.arrivals;
    return new Promise<Release>((resolve, reject) => {
      const waiter: Waiter = {
        grant: resolve,
        refuse: reject,
        timer: setTimeout(() => {
          const i = lane.indexOf(waiter);
          if (i >= 0) lane.splice(i, 1);
          reject(this.busy("wait_timeout"));
        }, this.limits.waitMs),
      };
      lane.push(waiter);
    });
  }

  /** Run `work` holding a slot (see `acquire`). */
  async run<T>(work: () => Promise<T>, admitted = false): Promise<T> {
    const release = await this.acquire(admitted);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Refuse everyone waiting (shutdown). */
  close(): void {
    for (const lane of [this.lanes.admitted, this.lanes.arrivals]) {
      for (const w of lane.splice(0)) {
        clearTimeout(w.timer);
        w.refuse(this.busy("overloaded"));
      }
    }
  }

  private grant(): Release {
    this.held++;
    const started = this.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.held--;
      this.avgHoldMs += 0.2 * (this.now() - started - this.avgHoldMs);
      this.dispatch();
    };
  }

  private dispatch() {
    while (this.held < this.limits.concurrency) {
      const next = this.lanes.admitted.shift() ?? this.lanes.arrivals.shift();
      if (!next) return;
      clearTimeout(next.timer);
      next.grant(this.grant());
    }
  }
}

/**
 * Event-loop lag: a timer every `intervalMs` measures how late it fires. The reading is the
 * smallest lateness of the last `samples` firings, so one long pause (a garbage collection, a
 * start-up step) refuses nobody, but a loop that stays saturated does.
 */
export class LoopLagMonitor {
  private readonly recent: number[] = [];
  private last: number;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly intervalMs = 200,
    /** Told every reading (tests wait for one). */
    private readonly onSample?: (lagMs: number) => void,
    private readonly samples = 3,
  ) {
    this.last = performance.now();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  /** How late the loop has been at least, over the last readings, in ms (0 until there are enough). */
  get lagMs(): number {
    return this.recent.length < this.samples ? 0 : Math.min(...this.recent);
  }

  close(): void {
    clearInterval(this.timer);
  }

  private sample() {
    const t = performance.now();
    this.recent.push(Math.max(0, t - this.last - this.intervalMs));
    if (this.recent.length > this.samples) this.recent.shift();
    this.last = t;
    this.onSample?.(this.lagMs);
  }
}

/** The admission settings (src/config.ts). */
export interface AdmissionSettings {
  joins: GateLimits;
  /** Reserved seats waiting for their client at most (JOIN_PENDING_SEATS), and how long a reservation lasts. */
  seats?: { limit: number; ttlMs: number };
  creations: GateLimits;
  /** New joins and creations are refused while the event-loop lag is above this (0: never). */
  maxLoopDelayMs: number;
}

export interface AdmissionDeps {
  logger: Logger;
  /** Database work limiter: joins and creations run as interactive work in it. */
  db?: DbWorkLimiter;
  /** Event-loop lag source; a `LoopLagMonitor` is started when absent and `maxLoopDelayMs` > 0. */
  loopDelayMs?: () => number;
  /** The seats' clock, in ms (tests); `performance.now()` without it. */
  now?: () => number;
}

/** The gates of one server process. */
export class Admission {
  readonly joins: AdmissionGate;
  readonly creations: AdmissionGate;
  /** Reserved seats waiting for their client (unbounded without `settings.seats`). */
  readonly seats: SeatLedger;
  private readonly monitor: LoopLagMonitor | undefined;
  private readonly failures: FailureBurstLog;

  constructor(
    readonly settings: AdmissionSettings,
    private readonly deps: AdmissionDeps,
  ) {
    let loopDelayMs = deps.loopDelayMs;
    if (!loopDelayMs && settings.maxLoopDelayMs > 0) {
      const monitor = (this.monitor = new LoopLagMonitor());
      loopDelayMs = () => monitor.lagMs;
    }
    const gateOpts = { loopDelayMs, maxLoopDelayMs: settings.maxLoopDelayMs };
    this.joins = new AdmissionGate("world join", settings.joins, gateOpts);
    this.creations = new AdmissionGate("character creation", settings.creations, gateOpts);
    this.seats = new SeatLedger(settings.seats?.limit ?? Infinity, settings.seats?.ttlMs ?? 0, deps.now);
    this.failures = storageFailureLog(deps.logger);
  }

  /**
   * Stage 1 of an SDK join: a slot for the matchmaking request, released when its answer is sent;
   * refused while `seats.limit` reserved seats wait for their clients. A refusal's `Retry-After` is
   * at least the work ahead (seats waiting, joins in flight and queued) at the rate clients have been
   * entering the world: the matchmaking requests themselves are quick, and told only their own
   * pace, a burst's clients came back many times over before there was room.
   * @throws ServerBusyError
   */
  admitMatchmaking(): Promise<Release> {
    const busy = (reason: BusyReason, atLeast = 0) =>
      new ServerBusyError(reason, Math.max(atLeast, this.seats.secondsFor(this.seats.pending + this.joins.inFlight + this.joins.waiting + 1)), this.joins.what);
    if (this.seats.full()) return Promise.reject(busy("queue_full"));
    return this.joins.acquire(false).catch((e: unknown) => {
      throw e instanceof ServerBusyError && e.reason !== "storage" ? busy(e.reason, e.retryAfterSeconds) : e;
    });
  }

  /**
   * Run join work through the join gate, as database work of interactive priority.
   * @param admitted stage 2 (the room's `onJoin`, the `/ws` attach): see `AdmissionGate.acquire`
   * @throws ServerError 503 with a `SERVER_BUSY: …` message when refused or when storage failed
   * (logged once per burst); any other error as it is.
   */
  async join<T>(work: () => Promise<T>, opts: { admitted: boolean }): Promise<T> {
    try {
      const out = await this.joins.run(() => this.interactive(work), opts.admitted);
      this.failures.success();
      return out;
    } catch (e) {
      throw this.asJoinRefusal(e);
    }
  }

  /**
   * Storage work of a join outside the gate (the world room's `onAuth`, which runs inside the
   * matchmaking request's slot): a storage failure becomes the 503 refusal.
   */
  async guardJoin<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (e) {
      throw this.asJoinRefusal(e);
    }
  }

  /**
   * Run a character creation through the creation gate.
   * @throws ServerBusyError when refused or when storage failed (logged once per burst)
   */
  async create<T>(work: () => Promise<T>): Promise<T> {
    try {
      const out = await this.creations.run(() => this.interactive(work));
      this.failures.success();
      return out;
    } catch (e) {
      if (e instanceof ServerBusyError || !isStorageUnavailable(e)) throw e;
      this.failures.failure(e, { what: this.creations.what });
      throw this.creations.busy("storage");
    }
  }

  /** Stop the lag monitor and refuse everyone waiting. */
  close(): void {
    this.monitor?.close();
    this.joins.close();
    this.creations.close();
  }

  private interactive<T>(work: () => Promise<T>): Promise<T> {
    return this.deps.db ? this.deps.db.interactive(work) : work();
  }

  /** A busy refusal or a storage failure as the room's refusal (ServerError 503); anything else unchanged. */
  private asJoinRefusal(e: unknown): unknown {
    if (e instanceof ServerBusyError) return new ServerError(SERVER_BUSY_STATUS, e.tagged);
    if (e instanceof ServerError || !isStorageUnavailable(e)) return e;
    this.failures.failure(e, { what: this.joins.what });
    return new ServerError(SERVER_BUSY_STATUS, this.joins.busy("storage").tagged);
  }
}

/** The Retry-After of a `SERVER_BUSY: … retry in N s` message (the rooms' refusals carry it only there). */
export function retryAfterOf(message: string): number | undefined {
  const m = /retry in (\d+) s/.exec(message);
  return m ? clampRetry(Number(m[1])) : undefined;
}
