/**
 * Admission control end to end (docs/operations.md "When the server is busy"): with one join slot and two
 * places in the queue, a burst beyond them is refused with 503 `SERVER_BUSY` and `Retry-After` —
 * over plain HTTP matchmaking, through the SDK (a `MatchMakeError` with code 503 and a
 * `SERVER_BUSY: …` message) and on `/ws` (close 4503) — while the queued requests succeed and
 * nothing else fails. Character creations likewise. A storage failure during a join or a creation
 * is the same refusal and is logged once. The slot is held by the test itself (the gate's own
 * `acquire`), so the burst is deterministic: every wait is on an event, never on a guessed time.
 */
import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { Client, type Room } from "@colyseus/sdk";
import WebSocket from "ws";
import { createLogger } from "../../../src/logger.js";
import { frameText } from "../../../src/net/adapter.js";
import type { Release } from "../../../src/net/admission.js";
import { startServer, type GameServer } from "../../../src/server/server.js";
import { openStorage, type Storage } from "../../../src/storage/orm.js";
import { jsonPlayer, sdkPlayer, tokenFor, type TestPlayer } from "../../helpers/clients.js";
import { testConfig } from "../../helpers/server.js";
import { pgliteStorage, postgresStorage, TEST_DATABASE_URL } from "../../helpers/storage.js";
import { until } from "../../helpers/trade.js";

const LIMITS = {
  JOIN_CONCURRENCY: "1",
  JOIN_QUEUE: "2",
  JOIN_QUEUE_WAIT_MS: "60000",
  CREATE_CONCURRENCY: "1",
  CREATE_QUEUE: "2",
  CREATE_QUEUE_WAIT_MS: "60000",
  ADMISSION_MAX_LOOP_DELAY_MS: "0",
  DISABLE_RATE_LIMIT: "true",
};

type LogLine = { level: number; msg: string; [k: string]: unknown };

/** Start a server with small admission limits, its log lines kept. */
async function start(storage: Storage, extra: NodeJS.ProcessEnv = {}): Promise<{ server: GameServer; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk, _enc, cb) {
      for (const l of chunk.toString().split("\n")) if (l.trim()) lines.push(JSON.parse(l));
      cb();
    },
  });
  const config = testConfig({ ...LIMITS, ...extra, LOG_LEVEL: "info" });
  const server = await startServer(config, { storage, port: 0, host: "127.0.0.1", logger: createLogger("info", sink) });
  return { server, lines };
}

/** A 503 SERVER_BUSY answer in the API's error format with a Retry-After of 1–30 s. */
async function assertBusyAnswer(r: Response, what: string, matchmaking = false) {
  const body = await r.json();
  assert.equal(r.status, 503, `${what}: ${JSON.stringify(body)}`);
  const retry = Number(r.headers.get("retry-after"));
  assert.ok(Number.isInteger(retry) && retry >= 1 && retry <= 30, `${what}: Retry-After ${r.headers.get("retry-after")}`);
  assert.equal(body.error.code, "SERVER_BUSY", what);
  assert.match(body.error.message, new RegExp(`^server busy \\(.+\\); retry in ${retry} s$`), what);
  if (matchmaking) assert.equal(body.message, `SERVER_BUSY: ${body.error.message}`, `${what}: the SDK's message`);
  assert.doesNotMatch(JSON.stringify(body), /\bat [\w.<>]+ \(|\.ts:\d+|node_modules/, `${what}: no stack`);
}

/** An SDK join that must be refused as busy. */
async function assertSdkBusy(join: Promise<unknown>, what: string, reason = /too many waiting|storage unavailable/) {
  await assert.rejects(join, (e: any) => {
    assert.equal(e.name, "MatchMakeError", `${what}: ${e}`);
    assert.equal(e.code, 503, `${what}: code`);
    assert.match(e.message, /^SERVER_BUSY: server busy \(world join: .+\); retry in \d+ s$/, `${what}: message`);
    assert.match(e.message, reason, `${what}: reason`);
    return true;
  });
}

/** A `/ws` connection that must be closed with 4503 `SERVER_BUSY: …`. */
async function assertWsBusy(server: GameServer, token: string, what: string, reason = /too many waiting|storage unavailable/) {
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/ws?token=${token}`);
  const frames: string[] = [];
  ws.on("message", (d) => frames.push(frameText(d)));
  const { code, reason: text } = await new Promise<{ code: number; reason: string }>((resolve, reject) => {
    ws.once("close", (c, r) => resolve({ code: c, reason: r.toString() }));
    ws.once("error", reject);
  });
  assert.equal(code, 4503, `${what}: close code (${text})`);
  assert.match(text, /^SERVER_BUSY: server busy \(world join: .+\); retry in \d+ s$/, what);
  assert.match(text, reason, what);
  assert.deepEqual(frames, [], `${what}: nothing sent before the refusal`);
}

/** POST /ws/matchmake/join/world as a plain HTTP client. */
const matchmake = (server: GameServer, token: string) =>
  fetch(`${server.url}/ws/matchmake/join/world`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: "{}",
  });

/** Create a character over REST. */
const create = (server: GameServer, path: "/api/v1/player" | "/api/character", token: string, name: string) =>
  fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name }),
  });

/** Errors the server logged (error level and above). */
const errorsIn = (lines: LogLine[]) => lines.filter((l) => l.level >= 50);

let names = 0;
const freshName = () => `Adm${process.pid % 1000}x${names++}`.slice(0, 12);

describe("admission control: a burst beyond the join and creation queues is refused with 503 SERVER_BUSY, the rest succeed", function () {
  this.timeout(120_000);
  let server: GameServer;
  let lines: LogLine[];
  let players: TestPlayer[] = [];
  let rooms: Room[] = [];
  let held: Release | undefined;

  before(async function () {
    this.timeout(180_000);
    ({ server, lines } = await start(await pgliteStorage()));
  });
  after(async () => {
    await server?.close();
  });
  afterEach(async () => {
    held?.();
    held = undefined;
    await Promise.all(players.map((p) => p.close()));
    await Promise.all(rooms.map((r) => r.leave().catch(() => undefined)));
    players = [];
    rooms = [];
  });

  it("matchmaking: the two queued joins succeed once the slot frees; three more are refused at once, over HTTP and through the SDK", async () => {
    const joins = server.admission.joins;
    held = await joins.acquire();
    // Two SDK joins wait in the queue (their matchmaking requests are held before any seat).
    const queued = [sdkPlayer(server), sdkPlayer(server)];
    await until(() => joins.waiting === 2, "two joins queued");
    const metrics = await server.metrics.text();
    assert.match(metrics, /^realm_admission_waiting\{gate="join"\} 2$/m);
    assert.match(metrics, /^realm_admission_in_flight\{gate="join"\} 1$/m);
    // Past the queue: refused at once, before Colyseus reserves a seat.
    await assertBusyAnswer(await matchmake(server, tokenFor().token), "plain HTTP join", true);
    await assertSdkBusy(sdkPlayer(server), "SDK join");
    const client = new Client(`${server.url}/ws`);
    client.auth.token = tokenFor().token;
    await assertSdkBusy(client.join("world", {}), "SDK join with its own client");
    assert.equal(joins.waiting, 2, "the refusals did not queue");
    held();
    held = undefined;
    players.push(...(await Promise.all(queued)));
    for (const p of players) assert.ok(p.sync()?.id, "joined and synced");
    assert.equal(joins.inFlight, 0);
    assert.match(await server.metrics.text(), /^realm_join_refusals_total\{transport="sdk",code="503"\} 3$/m);
    assert.deepEqual(errorsIn(lines), [], "nothing logged as an error");
  });

  it("/ws: the two queued joins succeed; a third is closed with 4503 and a SERVER_BUSY reason; nothing is sent to it first", async () => {
    const joins = server.admission.joins;
    held = await joins.acquire();
    const queued = [jsonPlayer(server), jsonPlayer(server)];
    await until(() => joins.waiting === 2, "two /ws joins queued");
    await assertWsBusy(server, tokenFor().token, "/ws join past the queue");
    held();
    held = undefined;
    players.push(...(await Promise.all(queued)));
    for (const p of players) assert.ok(p.sync()?.id, "joined and synced");
    assert.deepEqual(errorsIn(lines), []);
  });

  for (const path of ["/api/v1/player", "/api/character"] as const) {
    it(`POST ${path}: the two queued creations answer 201 once the slot frees; one more is refused with 503 SERVER_BUSY and Retry-After`, async () => {
      const creations = server.admission.creations;
      held = await creations.acquire();
      const queued = [create(server, path, tokenFor().token, freshName()), create(server, path, tokenFor().token, freshName())];
      await until(() => creations.waiting === 2, "two creations queued");
      await assertBusyAnswer(await create(server, path, tokenFor().token, freshName()), `POST ${path}`);
      held();
      held = undefined;
      for (const r of await Promise.all(queued)) assert.equal(r.status, 201, await r.text());
      assert.deepEqual(errorsIn(lines), []);
    });
  }

  it("a burst of 12 SDK and 6 /ws joins while the slot is held: 2 queue, 16 are told to retry (503 / 4503); retrying once the slot frees gets everyone in", async () => {
    const joins = server.admission.joins;
    /** One join attempt: joined (with what to close), or refused as busy; anything else fails the test. */
    const sdkAttempt = async (token: string): Promise<(() => Promise<void>) | "busy"> => {
      try {
        const p = await sdkPlayer(server, { token });
        return () => p.close();
      } catch (e: any) {
        if (e?.name === "MatchMakeError" && e.code === 503 && /^SERVER_BUSY: /.test(e.message)) return "busy";
        throw e;
      }
    };
    const wsAttempt = (token: string) =>
      new Promise<(() => Promise<void>) | "busy">((resolve, reject) => {
        const ws = new WebSocket(`${server.url.replace("http", "ws")}/ws?token=${token}`);
        const closed = new Promise<void>((r) => ws.once("close", () => r()));
        ws.on("message", (d) => {
          if (JSON.parse(frameText(d)).event === "player:sync") resolve(() => (ws.close(), closed));
        });
        ws.once("close", (code, reason) =>
          code === 4503 && /^SERVER_BUSY: /.test(reason.toString()) ? resolve("busy") : reject(new Error(`closed ${code} ${reason}`)),
        );
        ws.once("error", reject);
      });
    const tokens = Array.from({ length: 18 }, () => tokenFor().token);
    let firstRefusals = 0;
    let allRefused!: () => void;
    const refusedAtFirst = new Promise<void>((r) => (allRefused = r));
    let reopen!: () => void;
    const reopened = new Promise<void>((r) => (reopen = r));
    const joinOne = async (i: number): Promise<() => Promise<void>> => {
      for (let tries = 0; tries < 10_000; tries++) {
        const r = i < 12 ? await sdkAttempt(tokens[i]!) : await wsAttempt(tokens[i]!);
        if (r !== "busy") return r;
        if (tries === 0 && ++firstRefusals === 16) allRefused();
        await reopened; // retry once the slot is free (at once after that)
      }
      throw new Error("never admitted");
    };
    held = await joins.acquire();
    const all = tokens.map((_, i) => joinOne(i));
    await refusedAtFirst;
    assert.equal(joins.waiting, 2, "two joins queued, the other 16 refused at once");
    held();
    held = undefined;
    reopen();
    const closers = await Promise.all(all);
    assert.equal(closers.length, 18);
    await Promise.all(closers.map((c) => c()));
    assert.deepEqual(errorsIn(lines), [], "no uncaught exception, no failed join logged");
  });
});

describe("admission control: seats reserved and not yet entered are bounded (JOIN_PENDING_SEATS)", function () {
  this.timeout(120_000);
  let server: GameServer;
  let lines: LogLine[];
  const rooms: Room[] = [];

  before(async function () {
    this.timeout(180_000);
    ({ server, lines } = await start(await pgliteStorage(), { JOIN_CONCURRENCY: "4", JOIN_QUEUE: "16", JOIN_PENDING_SEATS: "2" }));
  });
  after(async () => {
    await Promise.all(rooms.map((r) => r.leave().catch(() => undefined)));
    await server?.close();
  });

  it("two seats reserved and not taken: the next join is refused with 503 SERVER_BUSY (HTTP and SDK); once a seat's client enters, joins go on", async () => {
    const seats = server.admission.seats;
    const tokens = [tokenFor().token, tokenFor().token];
    const reservations: unknown[] = [];
    for (const token of tokens) {
      const r = await matchmake(server, token);
      assert.equal(r.status, 200, "a seat is reserved");
      reservations.push(await r.json());
    }
    assert.equal(seats.pending, 2, "both seats wait for their client");
    await assertBusyAnswer(await matchmake(server, tokenFor().token), "plain HTTP join past the seats", true);
    await assertSdkBusy(sdkPlayer(server), "SDK join past the seats");
    assert.equal(seats.pending, 2, "the refusals reserved nothing");
    // The first seat's client connects: its seat no longer waits, and a new join is admitted.
    const client = new Client(`${server.url}/ws`);
    client.auth.token = tokens[0]!;
    rooms.push(await client.consumeSeatReservation(reservations[0] as Parameters<Client["consumeSeatReservation"]>[0]));
    await until(() => seats.pending === 1, "the entered seat left the count");
    const next = await sdkPlayer(server);
    assert.ok(next.sync()?.id, "joined and synced");
    await next.close();
    assert.deepEqual(errorsIn(lines), [], "nothing logged as an error");
  });
});

describe("admission control: a storage failure during a join or a creation is a clean refusal, logged once", function () {
  this.timeout(120_000);
  let server: GameServer;
  let lines: LogLine[];

  before(async function () {
    this.timeout(180_000);
    ({ server, lines } = await start(await pgliteStorage(), { JOIN_CONCURRENCY: "4", JOIN_QUEUE: "16", CREATE_CONCURRENCY: "4", CREATE_QUEUE: "16" }));
  });
  after(async () => {
    await server?.close();
  });

  it("joins (SDK and /ws) and creations while the pool times out: 503 SERVER_BUSY / 4503 every time, one error line for the burst; then they succeed", async () => {
    // The account lookup of a join without a character id, and of a creation, fails like a starved pool.
    const repo = server.characters;
    const original = repo.listByAccount;
    const originalFirst = repo.firstOfAccount;
    repo.listByAccount = repo.firstOfAccount = async () => {
      throw new Error("timeout exceeded when trying to connect");
    };
    const before = lines.length;
    try {
      for (let round = 0; round < 3; round++) {
        await assertSdkBusy(sdkPlayer(server), `SDK join, round ${round}`, /storage unavailable/);
        await assertWsBusy(server, tokenFor().token, `/ws join, round ${round}`, /storage unavailable/);
        for (const path of ["/api/v1/player", "/api/character"] as const) {
          await assertBusyAnswer(await create(server, path, tokenFor().token, freshName()), `POST ${path}, round ${round}`);
        }
      }
      assert.equal(server.world.playersOnline(), 0, "no refused join left a player in the world");
      const errors = errorsIn(lines.slice(before));
      assert.equal(errors.length, 1, `one error line for the burst: ${JSON.stringify(errors)}`);
      assert.match(errors[0]!.msg, /storage unavailable/);
      assert.ok(!lines.slice(before).some((l) => /uncaught|unhandled|join failed/.test(l.msg)), "no uncaught exception, no failed-join line");
    } finally {
      repo.listByAccount = original;
      repo.firstOfAccount = originalFirst;
    }
    const players = [await sdkPlayer(server), await jsonPlayer(server)];
    try {
      for (const p of players) assert.ok(p.sync()?.id);
      const r = await create(server, "/api/v1/player", tokenFor().token, freshName());
      assert.equal(r.status, 201, await r.text());
    } finally {
      await Promise.all(players.map((p) => p.close()));
    }
  });
});

(TEST_DATABASE_URL ? describe : describe.skip)(
  "admission control on PostgreSQL: a starved pool gives 503 SERVER_BUSY, never a 500 or a timeout error",
  function () {
    this.timeout(120_000);
    let server: GameServer;
    let lines: LogLine[];
    let storage: Storage;

    before(async function () {
      this.timeout(180_000);
      await postgresStorage(); // the schema, migrated once per process
      storage = await openStorage({ url: TEST_DATABASE_URL, poolMax: 2, connectTimeoutMs: 300, migrate: false });
      ({ server, lines } = await start(storage, { JOIN_CONCURRENCY: "4", JOIN_QUEUE: "16" }));
    });
    after(async () => {
      await server?.close();
      await storage?.close();
    });

    it("with every pool connection held: SDK and /ws joins of new accounts and REST creations are refused 503 / 4503 and logged once; once freed, they succeed", async () => {
      // Hold both connections in open transactions until the test lets them go.
      let free!: () => void;
      const hold = new Promise<void>((r) => (free = r));
      let entered = 0;
      const holders = [0, 1].map(() =>
        storage.orm.em.fork().transactional(async (em) => {
          await em.execute("select 1");
          entered++;
          await hold;
        }),
      );
      await until(() => entered === 2, "both pool connections held");
      const before = lines.length;
      const tokens = Array.from({ length: 3 }, () => tokenFor().token);
      try {
        await assertBusyAnswer(await matchmake(server, tokens[0]!), "plain HTTP join (onAuth)", true);
        await assertSdkBusy(sdkPlayer(server, { token: tokens[0]! }), "SDK join", /storage unavailable/);
        await assertWsBusy(server, tokens[1]!, "/ws join", /storage unavailable/);
        await assertBusyAnswer(await create(server, "/api/character", tokens[2]!, freshName()), "POST /api/character");
        const errors = errorsIn(lines.slice(before));
        assert.equal(errors.length, 1, `one error line: ${JSON.stringify(errors)}`);
        assert.match(errors[0]!.msg, /storage unavailable/);
      } finally {
        free();
        await Promise.all(holders);
      }
      const players = [await sdkPlayer(server, { token: tokens[0]! }), await jsonPlayer(server, { token: tokens[1]! })];
      try {
        for (const p of players) assert.ok(p.sync()?.id);
        const r = await create(server, "/api/character", tokens[2]!, freshName());
        assert.equal(r.status, 201, await r.text());
      } finally {
        await Promise.all(players.map((p) => p.close()));
      }
    });
  },
);
