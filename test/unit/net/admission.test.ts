/**
 * Admission control (docs/operations.md "When the server is busy"): the gate's bounds, its priority lane, its
 * deadline and event-loop refusal, Retry-After from the observed service rate, storage failures as
 * refusals logged once per burst, and the database work limiter's priorities. No timing guesses:
 * every wait is on a promise the test controls.
 */
import assert from "node:assert/strict";
import { ServerError } from "@colyseus/core";
import { pino } from "pino";
import {
  Admission,
  AdmissionGate,
  LoopLagMonitor,
  RETRY_AFTER_MAX_S,
  retryAfterOf,
  SeatLedger,
  ServerBusyError,
  STORAGE_RETRY_AFTER_S,
  type Release,
} from "../../../src/net/admission.js";
import { configWarnings, ConfigError, loadConfig } from "../../../src/config.js";
import { DbWorkLimiter } from "../../../src/storage/limiter.js";
import { FailureBurstLog, isStorageUnavailable } from "../../../src/storage/unavailable.js";

/** A promise and its resolver. */
function deferred<T = void>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A logger whose lines the test reads. */
function memoryLogger() {
  const lines: { level: number; msg: string; [k: string]: unknown }[] = [];
  const logger = pino({ level: "trace", base: undefined }, { write: (s: string) => void lines.push(JSON.parse(s)) });
  return { logger, lines };
}

/** Let queued promise callbacks run. */
const settle = () => new Promise<void>((r) => setImmediate(r));

/** The outcome of a promise that may still be pending. */
function track<T>(p: Promise<T>) {
  const state: { done: boolean; value?: T; error?: unknown } = { done: false };
  p.then(
    (value) => Object.assign(state, { done: true, value }),
    (error) => Object.assign(state, { done: true, error }),
  );
  return state;
}

const limits = (concurrency: number, queue: number, waitMs = 60_000) => ({ concurrency, queue, waitMs });

describe("admission gate", () => {
  it("serves `concurrency` at once, queues up to `queue`, refuses the next at once with SERVER_BUSY and a Retry-After of 1–30 s", async () => {
    const gate = new AdmissionGate("world join", limits(2, 3));
    const held = [await gate.acquire(), await gate.acquire()];
    assert.equal(gate.inFlight, 2);
    const waiting = [gate.acquire(), gate.acquire(), gate.acquire()].map(track);
    await settle();
    assert.equal(gate.waiting, 3);
    assert.ok(waiting.every((w) => !w.done));
    const refused = await gate.acquire().then(
      () => assert.fail("admitted past the queue"),
      (e) => e,
    );
    assert.ok(refused instanceof ServerBusyError);
    assert.equal(refused.code, "SERVER_BUSY");
    assert.equal(refused.status, 503);
    assert.equal(refused.reason, "queue_full");
    assert.ok(refused.retryAfterSeconds >= 1 && refused.retryAfterSeconds <= RETRY_AFTER_MAX_S);
    assert.match(refused.message, /^server busy \(world join: too many waiting\); retry in \d+ s$/);
    assert.equal(refused.tagged, `SERVER_BUSY: ${refused.message}`);
    assert.equal(retryAfterOf(refused.tagged), refused.retryAfterSeconds);
    // Releasing hands the slots to the waiters in order; a second release of the same slot does nothing.
    held[0]!();
    held[0]!();
    await settle();
    assert.equal(gate.inFlight, 2);
    assert.deepEqual(
      waiting.map((w) => w.done),
      [true, false, false],
    );
    held[1]!();
    (waiting[0]!.value as Release)();
    await settle();
    assert.ok(waiting.every((w) => w.done && !w.error));
    for (const w of waiting) (w.value as Release)();
    assert.equal(gate.inFlight, 0);
    assert.equal(gate.waiting, 0);
  });

  it("queue 0: never waits, refuses as soon as every slot is held", async () => {
    const gate = new AdmissionGate("character creation", limits(1, 0));
    const release = await gate.acquire();
    await assert.rejects(gate.acquire(), (e: ServerBusyError) => e.reason === "queue_full");
    release();
    (await gate.acquire())();
  });

  it("a request that waits past the deadline is refused (wait_timeout) and leaves the queue", async () => {
    const gate = new AdmissionGate("world join", limits(1, 5, 30));
    const release = await gate.acquire();
    await assert.rejects(gate.acquire(), (e: ServerBusyError) => e.reason === "wait_timeout" && /waited too long/.test(e.message));
    assert.equal(gate.waiting, 0);
    release();
    assert.equal(gate.inFlight, 0);
  });

  it("admitted requests (stage 2 of a join) are served before new arrivals and never refused for the queue length", async () => {
    const gate = new AdmissionGate("world join", limits(1, 1));
    const first = await gate.acquire();
    const arrival = track(gate.acquire());
    await settle();
    // The arrivals lane is full, yet admitted requests still wait in their own lane.
    const admitted = [track(gate.acquire(true)), track(gate.acquire(true))];
    await assert.rejects(gate.acquire(), (e: ServerBusyError) => e.reason === "queue_full");
    first();
    await settle();
    assert.ok(admitted[0]!.done && !arrival.done, "the admitted request goes first");
    (admitted[0]!.value as Release)();
    await settle();
    assert.ok(admitted[1]!.done && !arrival.done);
    (admitted[1]!.value as Release)();
    await settle();
    assert.ok(arrival.done);
    (arrival.value as Release)();
  });

  it("refuses new arrivals (not admitted requests) while the event loop lags more than allowed", async () => {
    let lag = 0;
    const gate = new AdmissionGate("world join", limits(4, 4), { loopDelayMs: () => lag, maxLoopDelayMs: 200 });
    (await gate.acquire())();
    lag = 250;
    await assert.rejects(gate.acquire(), (e: ServerBusyError) => e.reason === "overloaded");
    (await gate.acquire(true))();
    lag = 150;
    (await gate.acquire())();
  });

  it("Retry-After follows the observed service rate: slow service and a long backlog ask for longer, bounded at 30 s", async () => {
    let now = 0;
    const gate = new AdmissionGate("world join", limits(1, 1000), { now: () => now });
    const serve = async (ms: number) => {
      const release = await gate.acquire();
      now += ms;
      release();
    };
    for (let i = 0; i < 20; i++) await serve(100);
    const fast = gate.retryAfterSeconds();
    for (let i = 0; i < 20; i++) await serve(2_000);
    const slow = gate.retryAfterSeconds();
    assert.equal(fast, 1);
    assert.ok(slow >= 2, `slow service: ${slow} s`);
    const hold = await gate.acquire();
    const queued = Array.from({ length: 100 }, () => gate.acquire().catch(() => undefined));
    assert.equal(gate.retryAfterSeconds(), RETRY_AFTER_MAX_S);
    gate.close();
    await Promise.all(queued);
    hold();
  });

  it("the loop-lag monitor ignores one long pause and reports a loop that stays late", async () => {
    const block = (ms: number) => {
      const until = performance.now() + ms;
      while (performance.now() < until);
    };
    const readings: number[] = [];
    let next = deferred();
    const monitor = new LoopLagMonitor(10, (lag) => {
      readings.push(lag);
      next.resolve();
    });
    const reading = async () => {
      next = deferred();
      await next.promise;
      return readings.at(-1)!;
    };
    try {
      for (let i = 0; i < 3; i++) await reading();
      block(300); // one pause
      assert.ok((await reading()) < 100, `one pause: ${readings.at(-1)}`);
      for (let i = 0; i < 4; i++) {
        block(150); // the loop stays busy: every firing is late
        await reading();
      }
      assert.ok(monitor.lagMs >= 100, `sustained: ${monitor.lagMs} (${readings.join(", ")})`);
    } finally {
      monitor.close();
    }
  });
});

describe("admission: seats waiting for their client (SeatLedger)", () => {
  it("counts reserved seats until their client enters or the reservation expires, and is full at its limit", () => {
    let now = 0;
    const seats = new SeatLedger(2, 1000, () => now);
    seats.reserve("a", "acc-a");
    now = 400;
    seats.reserve("b", "acc-b");
    assert.equal(seats.pending, 2);
    assert.ok(seats.full());
    seats.entered("a");
    assert.equal(seats.pending, 1, "a entered");
    now = 600;
    seats.reserve("c", "acc-c");
    now = 1400;
    assert.equal(seats.pending, 1, "b expired at 1400, c lasts until 1600");
    now = 1600;
    assert.equal(seats.pending, 0, "c expired");
    seats.entered("unknown");
    assert.ok(!seats.full());
  });

  it("an account counts one seat: reserving again replaces its seat, so one client looping on matchmaking cannot fill the ledger", () => {
    let now = 0;
    const seats = new SeatLedger(2, 1000, () => now);
    for (let i = 0; i < 50; i++) seats.reserve(`s${i}`, "looper");
    assert.equal(seats.pending, 1, "only its newest seat counts");
    assert.ok(!seats.full(), "others still get in");
    seats.reserve("other", "acc-other");
    assert.ok(seats.full());
    seats.entered("s3");
    assert.equal(seats.pending, 2, "a replaced seat entering changes nothing");
    seats.entered("s49");
    assert.equal(seats.pending, 1);
    now = 1000;
    assert.equal(seats.pending, 0, "expired");
    seats.reserve("s50", "looper");
    assert.equal(seats.pending, 1, "a new seat after expiry counts again");
  });

  it("Retry-After of a refusal for the seats: the seats ahead over the rate clients have been entering", () => {
    let now = 0;
    const seats = new SeatLedger(1000, 60_000, () => now);
    for (let i = 0; i < 400; i++) seats.reserve(`s${i}`, `acc-${i}`);
    // Clients enter 20 ms apart (50 a second): the moving average converges on it.
    for (let i = 0; i < 100; i++) {
      now += 20;
      seats.entered(`s${i}`);
    }
    const expected = (300 + 1) * 0.02;
    assert.ok(Math.abs(seats.secondsFor(seats.pending + 1) - expected) < 0.5, `${seats.secondsFor(seats.pending + 1)} ≈ ${expected} s for 300 seats ahead`);
    now += 60_000;
    seats.entered("s100");
    assert.equal(seats.pending, 0, "an entry after expiry counts nothing");
  });

  it("a join refused at stage 1 for its queue is told to wait at least for the seats and joins ahead at the rate clients enter", async () => {
    let now = 0;
    const admission = new Admission(
      { joins: limits(1, 0), seats: { limit: 1000, ttlMs: 600_000 }, creations: limits(1, 1), maxLoopDelayMs: 0 },
      { logger: memoryLogger().logger, now: () => now },
    );
    // Clients have been entering 500 ms apart.
    const seats = admission.seats;
    for (let i = 0; i < 60; i++) seats.reserve(`s${i}`, `acc-${i}`);
    for (let i = 0; i < 40; i++) {
      now += 500;
      seats.entered(`s${i}`);
    }
    const held = await admission.admitMatchmaking();
    await assert.rejects(admission.admitMatchmaking(), (e: ServerBusyError) => {
      assert.equal(e.reason, "queue_full");
      // 20 seats waiting + 1 join in flight + itself, 0.5 s apart: about 11 s.
      assert.ok(e.retryAfterSeconds >= 10 && e.retryAfterSeconds <= 12, `Retry-After ${e.retryAfterSeconds}`);
      return true;
    });
    held();
    admission.close();
  });

  it("stage 1 of a join is refused with SERVER_BUSY while the seats are full, with Retry-After behind them; free again once one enters", async () => {
    const admission = new Admission(
      { joins: limits(4, 4), seats: { limit: 2, ttlMs: 60_000 }, creations: limits(1, 1), maxLoopDelayMs: 0 },
      { logger: memoryLogger().logger },
    );
    admission.seats.reserve("a", "acc-a");
    admission.seats.reserve("b", "acc-b");
    await assert.rejects(admission.admitMatchmaking(), (e: ServerBusyError) => {
      assert.ok(e instanceof ServerBusyError);
      assert.equal(e.reason, "queue_full");
      assert.ok(e.retryAfterSeconds >= 1);
      return true;
    });
    assert.equal(admission.joins.inFlight, 0, "no slot taken by the refusal");
    admission.seats.entered("a");
    const release = await admission.admitMatchmaking();
    release();
    admission.close();
  });
});

describe("admission: joins, creations and storage failures", () => {
  const settings = { joins: limits(1, 1), creations: limits(1, 1), maxLoopDelayMs: 0 };
  const poolTimeout = () => new Error("timeout exceeded when trying to connect");

  it("a join refused for the queue or failing on storage is a ServerError 503 `SERVER_BUSY: …`; other errors pass unchanged", async () => {
    const { logger } = memoryLogger();
    const admission = new Admission(settings, { logger });
    const hold = deferred();
    const first = admission.join(() => hold.promise, { admitted: false });
    const second = track(admission.join(async () => "second", { admitted: false }));
    await settle();
    await assert.rejects(
      admission.join(async () => "third", { admitted: false }),
      (e: ServerError) => {
        assert.ok(e instanceof ServerError);
        assert.equal(e.code, 503);
        assert.match(e.message, /^SERVER_BUSY: server busy \(world join: too many waiting\); retry in \d+ s$/);
        return true;
      },
    );
    hold.resolve();
    await first;
    await settle();
    assert.equal(second.value, "second");
    await assert.rejects(
      admission.join(() => Promise.reject(poolTimeout()), { admitted: true }),
      (e: ServerError) =>
        e instanceof ServerError &&
        e.code === 503 &&
        e.message === `SERVER_BUSY: server busy (world join: storage unavailable); retry in ${STORAGE_RETRY_AFTER_S} s`,
    );
    const notFound = new ServerError(404, "no such character");
    await assert.rejects(
      admission.join(() => Promise.reject(notFound), { admitted: true }),
      (e) => e === notFound,
    );
    const bug = new TypeError("x is undefined");
    await assert.rejects(
      admission.join(() => Promise.reject(bug), { admitted: true }),
      (e) => e === bug,
    );
    await assert.rejects(
      admission.guardJoin(() => Promise.reject(poolTimeout())),
      (e: ServerError) => e.code === 503,
    );
    admission.close();
  });

  it("a creation refused or failing on storage is a ServerBusyError; a burst of storage failures over joins and creations is logged once", async () => {
    const { logger, lines } = memoryLogger();
    const admission = new Admission(settings, { logger });
    for (let i = 0; i < 25; i++) {
      await assert.rejects(
        admission.create(() => Promise.reject(poolTimeout())),
        (e: ServerBusyError) => e instanceof ServerBusyError && e.reason === "storage",
      );
      await assert.rejects(
        admission.join(() => Promise.reject(poolTimeout()), { admitted: false }),
        (e: ServerError) => e.code === 503,
      );
    }
    const errors = lines.filter((l) => l.level >= 50);
    assert.equal(errors.length, 1, JSON.stringify(lines));
    assert.match(errors[0]!.msg, /storage unavailable/);
    // Successes between failures (flapping) do not end the burst.
    assert.equal(await admission.create(async () => 7), 7);
    await assert.rejects(
      admission.create(() => Promise.reject(poolTimeout())),
      ServerBusyError,
    );
    assert.equal(lines.filter((l) => l.level >= 50).length, 1);
    admission.close();
  });

  it("joins and creations run as interactive database work", async () => {
    const db = new DbWorkLimiter({ max: 3, background: 2 });
    const admission = new Admission({ ...settings, joins: limits(2, 2), creations: limits(2, 2) }, { logger: memoryLogger().logger, db });
    const hold = deferred();
    const join = admission.join(() => hold.promise, { admitted: false });
    const create = admission.create(() => hold.promise);
    await settle();
    assert.equal(db.stats.interactive, 2);
    hold.resolve();
    await Promise.all([join, create]);
    assert.equal(db.stats.interactive, 0);
    admission.close();
  });
});

describe("storage failures", () => {
  it("recognises pool timeouts, refused and dropped connections and PostgreSQL's 'not now' states, not a broken rule", () => {
    const yes = [
      new Error("timeout exceeded when trying to connect"),
      Object.assign(new Error("driver"), { cause: new Error("Connection terminated unexpectedly") }),
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED" }),
      Object.assign(new Error("too many"), { code: "53300" }),
      Object.assign(new Error("canceling statement due to statement timeout"), { code: "57014" }),
      Object.assign(new Error("lock"), { sqlState: "55P03" }),
      Object.assign(new Error("admin shutdown"), { code: "57P01" }),
      new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })]),
    ];
    const no = [new Error("duplicate key"), Object.assign(new Error("unique"), { code: "23505" }), new TypeError("undefined"), undefined, "text"];
    for (const e of yes) assert.ok(isStorageUnavailable(e), String(e));
    for (const e of no) assert.ok(!isStorageUnavailable(e), String(e));
  });

  it("a burst log: one error line, one warning per repeat interval while it goes on, a new burst after a quiet period", () => {
    const { logger, lines } = memoryLogger();
    let now = 0;
    const log = new FailureBurstLog(logger, "storage unavailable", { quietMs: 1_000, repeatMs: 5_000, now: () => now });
    for (let i = 0; i <= 100; i++) {
      log.failure(new Error("timeout exceeded when trying to connect"));
      if (i < 100) now += 100; // 10 s of failures, one every 100 ms
    }
    assert.deepEqual(
      lines.map((l) => l.level),
      [50, 40, 40],
    );
    assert.equal(lines[1]!.failures, 51);
    assert.equal(lines[2]!.failures, 101);
    now += 2_000; // quiet: the burst is over
    log.failure(new Error("again"));
    assert.equal(lines.length, 4);
    assert.equal(lines[3]!.level, 50);
  });

  it("a burst log: a success right after a failure does not end the burst; one after the settle time does, with one recovery line", () => {
    const { logger, lines } = memoryLogger();
    let now = 0;
    const log = new FailureBurstLog(logger, "storage unavailable", { quietMs: 30_000, settleMs: 2_000, now: () => now });
    log.failure(new Error("timeout exceeded when trying to connect"));
    now += 500;
    log.success();
    log.failure(new Error("timeout exceeded when trying to connect"));
    assert.equal(lines.length, 1, "still one burst");
    now += 2_000;
    log.success();
    log.success();
    assert.equal(lines.length, 2);
    assert.equal(lines[1]!.level, 30);
    assert.match(lines[1]!.msg, /recovered/);
    assert.equal(lines[1]!.failures, 2);
    log.failure(new Error("again"));
    assert.equal(lines[2]!.level, 50, "a new burst");
  });
});

describe("database work limiter", () => {
  it("bounds background work, serves interactive work first, and always leaves background work a slot", async () => {
    const db = new DbWorkLimiter({ max: 4, background: 2 });
    const holds: ReturnType<typeof deferred<void>>[] = [];
    const job = (priority: "interactive" | "background", log: string[], name: string) => {
      const d = deferred();
      holds.push(d);
      return db.run(priority, async () => {
        log.push(name);
        await d.promise;
      });
    };
    const started: string[] = [];
    // Three saves: only two run.
    const saves = [job("background", started, "s1"), job("background", started, "s2"), job("background", started, "s3")];
    await settle();
    assert.deepEqual(started, ["s1", "s2"]);
    assert.equal(db.stats.waitingBackground, 1);
    // Interactive work takes the free slots, then waits; interactive never takes the last slot from saves.
    const joins = [job("interactive", started, "j1"), job("interactive", started, "j2"), job("interactive", started, "j3"), job("interactive", started, "j4")];
    await settle();
    assert.deepEqual(started, ["s1", "s2", "j1", "j2"]);
    // A save finishes: its slot goes to the waiting join, not to the waiting save.
    holds[0]!.resolve();
    await settle();
    assert.deepEqual(started, ["s1", "s2", "j1", "j2", "j3"]);
    // Interactive work is capped at max - 1 = 3, so the next free slot can only serve the save.
    holds[1]!.resolve();
    await settle();
    assert.deepEqual(started, ["s1", "s2", "j1", "j2", "j3", "s3"]);
    // Joins finish: the last join runs.
    holds[3]!.resolve();
    await settle();
    assert.deepEqual(started, ["s1", "s2", "j1", "j2", "j3", "s3", "j4"]);
    for (const h of holds) h.resolve();
    await Promise.all([...saves, ...joins]);
    assert.deepEqual(db.stats, { interactive: 0, background: 0, waitingInteractive: 0, waitingBackground: 0 });
  });

  it("while interactive work waits, background work gets one slot; a failing job frees its slot", async () => {
    const db = new DbWorkLimiter({ max: 3, background: 3 });
    const hold = deferred();
    const joins = [db.interactive(() => hold.promise), db.interactive(() => hold.promise)];
    const waitingJoin = db.interactive(() => hold.promise);
    await settle();
    assert.equal(db.stats.waitingInteractive, 1);
    // One slot is left and background may use it (only one while a join waits).
    const save = db.background(() => Promise.reject(new Error("save failed")));
    await assert.rejects(save, /save failed/);
    assert.equal(db.stats.background, 0);
    hold.resolve();
    await Promise.all([...joins, waitingJoin]);
  });
});

describe("admission settings", () => {
  const base = { NODE_ENV: "test" };

  it("defaults: joins 12 at once with 256 waiting up to 10 s and 256 seats waiting for their client, creations 4/64/10 s, saves 4, a pool of 20 with a 5 s acquire timeout, 500 ms loop lag; no warning", () => {
    const c = loadConfig(base);
    assert.deepEqual(c.admission, {
      joins: { concurrency: 12, queue: 256, waitMs: 10_000 },
      seats: { limit: 256, ttlMs: 30_000 },
      creations: { concurrency: 4, queue: 64, waitMs: 10_000 },
      maxLoopDelayMs: 500,
    });
    assert.deepEqual(c.dbPool, { max: 20, acquireTimeoutMs: 5_000 });
    assert.equal(c.saveConcurrency, 4);
    assert.ok(!configWarnings(c).some((w) => /DB_POOL_MAX/.test(w)));
  });

  it("reads every setting, refuses bad values, and warns when joins, creations and saves together exceed the pool", () => {
    const c = loadConfig({
      ...base,
      JOIN_CONCURRENCY: "1",
      JOIN_QUEUE: "0",
      JOIN_QUEUE_WAIT_MS: "50",
      CREATE_CONCURRENCY: "2",
      CREATE_QUEUE: "3",
      CREATE_QUEUE_WAIT_MS: "60",
      SAVE_CONCURRENCY: "30",
      DB_POOL_MAX: "8",
      DB_POOL_ACQUIRE_TIMEOUT_MS: "700",
      ADMISSION_MAX_LOOP_DELAY_MS: "0",
      JOIN_PENDING_SEATS: "7",
      SEAT_RESERVATION_SECONDS: "9",
    });
    assert.deepEqual(c.admission.joins, { concurrency: 1, queue: 0, waitMs: 50 });
    assert.deepEqual(c.admission.seats, { limit: 7, ttlMs: 9_000 });
    assert.deepEqual(c.admission.creations, { concurrency: 2, queue: 3, waitMs: 60 });
    assert.equal(c.admission.maxLoopDelayMs, 0);
    assert.deepEqual(c.dbPool, { max: 8, acquireTimeoutMs: 700 });
    assert.ok(configWarnings(c).some((w) => /exceed DB_POOL_MAX \(8\)/.test(w)));
    assert.throws(
      () => loadConfig({ ...base, JOIN_CONCURRENCY: "0", JOIN_QUEUE: "-1", DB_POOL_MAX: "x", JOIN_QUEUE_WAIT_MS: "1", JOIN_PENDING_SEATS: "0" }),
      (e: ConfigError) =>
        e.problems.length === 5 &&
        ["JOIN_CONCURRENCY", "JOIN_QUEUE", "DB_POOL_MAX", "JOIN_QUEUE_WAIT_MS", "JOIN_PENDING_SEATS"].every((n) => e.problems.some((p) => p.startsWith(n))),
    );
  });
});
