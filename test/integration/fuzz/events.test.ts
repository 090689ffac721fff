/**
 * Property-based fuzzing of every client event over both transports (plain `/ws` JSON frames and
 * the SDK's msgpack `room.send`) against the real server (TICK_MS=50, shared PGlite).
 *
 * For every payload the event's zod schema refuses (hostile values, or a valid payload with one
 * field corrupted): the sender gets the documented refusal (a system `chat:message` "Invalid
 * <event>: …", or `tradeError` for trade events: INVALID_REQUEST, or INVALID_SLOT / INVALID_QUANTITY
 * when the failing field is a slot, quantity or coin amount), the connection stays open, the
 * player's stored state (character row, inventory, equipment, bank) and visible state (its
 * `player:sync` and public view) do not change, no `player:sync` is sent, the server logs no
 * error and the process sees no uncaught exception or unhandled rejection. Payloads the schema
 * accepts are fuzzed separately for "no crash" only (they may legitimately change state).
 * The event list is CLIENT_EVENTS, so a new event is fuzzed without touching this file.
 *
 * Seeded (FUZZ_SEED) and bounded; see test/helpers/fuzz.ts.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { CLIENT_EVENTS, CLIENT_EVENT_NAMES, MAX_MESSAGES_PER_SECOND, schemaRefusal, TRADE_EVENTS, type ClientEventName } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, RawPlayer, SdkPlayer, type Received } from "../../helpers/clients.js";
import {
  accepted,
  almostValid,
  check,
  FUZZ_SEED,
  hostileString,
  hostileValue,
  msgpackOnlyNumber,
  plain,
  processFaults,
  recordingLogger,
  storedCharacter,
  validFor,
} from "../../helpers/fuzz.js";
import { pgliteStorage } from "../../helpers/storage.js";
import { loadConfig } from "../../../src/config.js";
import { TEST_ENV } from "../../helpers/server.js";
import { startServer } from "../../../src/server/server.js";

type Transport = "json" | "sdk";
type Fuzzed = SdkPlayer | RawPlayer;
const TRANSPORTS: Transport[] = ["json", "sdk"];
/** Frames above this size close the socket by design (1009); the fuzzed ones stay well below. */
const MAX_FRAME_TEXT = 12_000;
/** The sender stays under the server's flood limit (its excess would be dropped without answer). */
const SEND_BUDGET = MAX_MESSAGES_PER_SECOND - 20;
const REPLY_MS = 5_000;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
/** A message type the SDK can encode (see the unknown-names property). */
const sdkType = (s: string) => !LONE_SURROGATE.test(s) && Buffer.byteLength(s) < 200;

/** One fuzzing connection: its player and the times of its last sends (to pace under the limit). */
interface Seat {
  transport: Transport;
  p: Fuzzed;
  sentAt: number[];
}

const isTrade = (event: string) => (TRADE_EVENTS as readonly string[]).includes(event);
const eventsOf = (log: Fuzzed["log"], since: number, type: string): Received[] => log.events.slice(since).filter((e) => e.type === type);

describe("fuzz: client events over both transports", function () {
  this.timeout(120_000);
  let server: GameServer;
  const recorder = recordingLogger();
  let crash: ReturnType<typeof processFaults>;
  const seats: Record<Transport, Seat[]> = { json: [], sdk: [] };
  /** Players of the valid-payload property (valid moves walk, so they are kept apart). */
  const validSeats = {} as Record<Transport, Seat>;
  const turn: Record<Transport, number> = { json: 0, sdk: 0 };

  before(async function () {
    // Start-up (PGlite, content) is most of this suite's time on a busy machine.
    this.timeout(300_000);
    crash = processFaults();
    const config = loadConfig({ ...TEST_ENV, DISABLE_RATE_LIMIT: "true" });
    server = await startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1", logger: recorder.logger });
    const seat = async (transport: Transport): Promise<Seat> => ({
      transport,
      p: transport === "json" ? await RawPlayer.connect(server) : await SdkPlayer.join(server),
      sentAt: [],
    });
    [seats.json, seats.sdk] = await Promise.all([Promise.all([1, 2, 3].map(() => seat("json"))), Promise.all([1, 2, 3].map(() => seat("sdk")))]);
    [validSeats.json, validSeats.sdk] = await Promise.all([seat("json"), seat("sdk")]);
    console.log(`      fuzz seed ${FUZZ_SEED} (set FUZZ_SEED to replay another)`);
  });
  after(async () => {
    crash?.stop();
    await closeAll([...seats.json, ...seats.sdk, ...Object.values(validSeats)].map((s) => s.p));
    await server?.close();
  });
  afterEach(function () {
    // Every property also ends clean: nothing logged at error level, no process-level fault.
    assert.deepEqual(crash.faults, [], "no uncaught exception or unhandled rejection");
    assert.deepEqual(
      recorder.errors.map((e) => `${e.msg} ${JSON.stringify(e.err ?? "")}`),
      [],
      "the server logged no error",
    );
  });

  /** The next seat of a transport (round robin), paced under the flood limit. */
  const nextSeat = async (transport: Transport): Promise<Seat> => {
    const seat = seats[transport][turn[transport]++ % seats[transport].length]!;
    await pace(seat);
    return seat;
  };
  /** Wait until one more send keeps the seat under SEND_BUDGET messages in any 1.1 s. */
  const pace = async (seat: Seat) => {
    const now = performance.now();
    seat.sentAt = seat.sentAt.filter((t) => now - t < 1_100);
    if (seat.sentAt.length >= SEND_BUDGET) await new Promise((r) => setTimeout(r, 1_100 - (now - seat.sentAt[0]!)));
    seat.sentAt.push(performance.now());
  };

  /** What must not change: stored rows (via storage), the private sync and the public view. */
  const snapshot = async (p: Fuzzed) => ({
    stored: await storedCharacter(server.storage, p.id),
    sync: plain(server.world.access.livePlayerSync(p.id)),
    view: plain(server.world.publicView("players", p.id)),
  });

  const isOpen = (p: Fuzzed) => (p instanceof RawPlayer ? p.ws.readyState === p.ws.OPEN : !p.log.isClosed);

  /** Send raw over a seat: an event with a payload (either transport) or a text/binary frame (`/ws`). */
  const send = (seat: Seat, frame: { event: string | number; data?: unknown } | { text: string } | { binary: Uint8Array }) => {
    const p = seat.p;
    if ("text" in frame) (p as RawPlayer).ws.send(frame.text);
    else if ("binary" in frame) (p as RawPlayer).ws.send(frame.binary, { binary: true });
    else if (p instanceof RawPlayer) p.ws.send(JSON.stringify(frame.data === undefined ? { event: frame.event } : { event: frame.event, data: frame.data }));
    else p.room.send(frame.event as string, frame.data);
  };

  /**
   * The documented refusal for a bad payload of `event`; a trade event's `tradeError` carries `code`
   * (INVALID_REQUEST, or the code of the failing field: docs/trading.md#error-codes).
   */
  const refusal = (p: Fuzzed, event: string, since: number, code = "INVALID_REQUEST") =>
    isTrade(event)
      ? p.log.waitFor("tradeError", (d: { code: string; message: string }) => d.code === code && d.message.startsWith(`Invalid ${event}:`), {
          since,
          timeoutMs: REPLY_MS,
        })
      : p.log.waitFor("chat:message", (m: { type: string; text: string }) => m.type === "system" && m.text.startsWith(`Invalid ${event}:`), {
          since,
          timeoutMs: REPLY_MS,
        });

  /** Any system line (or trade refusal) after `since`: the answer to a frame the router cannot read. */
  const anyRefusal = (p: Fuzzed, since: number, re: RegExp) =>
    p.log.waitFor("chat:message", (m: { type: string; text: string }) => m.type === "system" && re.test(m.text), { since, timeoutMs: REPLY_MS });

  /**
   * One fuzz run: snapshot, send, wait for the answer, then the state is unchanged, nothing was
   * re-synced, the connection is open and nothing crashed.
   */
  const refusedRun = async (seat: Seat, sendIt: () => void, answer: (since: number) => Promise<unknown>) => {
    const before = await snapshot(seat.p);
    const since = seat.p.log.mark();
    sendIt();
    await Promise.race([
      answer(since),
      seat.p.log.waitClose(REPLY_MS + 1_000).then(
        (c) => Promise.reject(new Error(`the connection closed (${c.code} ${c.reason}) instead of answering`)),
        () => undefined,
      ),
    ]);
    assert.ok(isOpen(seat.p), "the connection stays open");
    assert.deepEqual(eventsOf(seat.p.log, since, "player:sync"), [], "no player:sync (nothing changed)");
    assert.deepEqual(await snapshot(seat.p), before, "stored and visible state unchanged");
    assert.deepEqual(crash.faults, []);
    assert.deepEqual(recorder.errors, []);
  };

  /** What a payload looks like on arrival: JSON drops undefined and turns -0 into 0 … */
  const overJson = (v: unknown) => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));
  const fits = (v: unknown) => v === undefined || JSON.stringify(v).length < MAX_FRAME_TEXT;

  describe("regressions found by the fuzzer", () => {
    // Event names are client-supplied: a name inherited from Object.prototype used to be taken for
    // an event schema (CLIENT_EVENTS["constructor"] is Object), so the router threw, the sender got
    // no answer and the server logged an error.
    for (const transport of TRANSPORTS)
      it(`${transport}: an event named like an Object.prototype member gets "Unknown event"`, async () => {
        for (const event of ["__proto__", "constructor", "toString", "hasOwnProperty", "valueOf"]) {
          const seat = await nextSeat(transport);
          await refusedRun(
            seat,
            () => send(seat, { event, data: {} }),
            (since) => anyRefusal(seat.p, since, /^Unknown event /),
          );
        }
      });
  });

  for (const transport of TRANSPORTS) {
    describe(`${transport === "json" ? "/ws JSON frames" : "SDK room.send (msgpack)"}`, () => {
      const hostile = hostileValue(transport === "sdk" ? msgpackOnlyNumber : undefined);

      CLIENT_EVENT_NAMES.forEach((event, i) => {
        const schema = CLIENT_EVENTS[event];
        it(`${event}: every payload the schema refuses gets the documented refusal and changes nothing`, async () => {
          const payload = fc
            .oneof(hostile, almostValid(schema, hostile), fc.constant(undefined))
            .filter((v) => fits(v) && !accepted(schema, transport === "json" ? overJson(v) : v));
          await check(
            fc.asyncProperty(payload, async (data) => {
              const seat = await nextSeat(transport);
              const { code } = schemaRefusal(event, schema.safeParse((transport === "json" ? overJson(data) : data) ?? {}).error!);
              await refusedRun(
                seat,
                () => send(seat, { event, data }),
                (since) => refusal(seat.p, event, since, code),
              );
            }),
            20,
            i * 7 + (transport === "sdk" ? 1000 : 0),
          );
        });
      });

      it('unknown event names (prototype keys, unicode, empty) get "Unknown event" and change nothing', async () => {
        // The SDK writes a message type with a lone surrogate as a malformed frame (its UTF-8 length
        // and bytes disagree), which the server closes as undecodable (4002, documented), and throws
        // in room.send for a type of a few hundred bytes: such names are fuzzed on /ws only.
        const name = hostileString.filter((s) => !Object.hasOwn(CLIENT_EVENTS, s) && (transport === "json" || sdkType(s)));
        await check(
          fc.asyncProperty(name, hostile.filter(fits), async (event, data) => {
            const seat = await nextSeat(transport);
            await refusedRun(
              seat,
              () => send(seat, { event, data }),
              (since) => anyRefusal(seat.p, since, /^Unknown event /),
            );
          }),
          40,
          transport === "sdk" ? 2001 : 2000,
        );
      });

      it("payloads the schema accepts never crash the server or close the connection", async () => {
        const event = fc.constantFrom(...CLIENT_EVENT_NAMES);
        const valid = event
          .chain((e) => validFor(CLIENT_EVENTS[e]).map((data) => ({ event: e as ClientEventName, data })))
          // A wrong admin code counts as an authentication attempt of the address (and would block it).
          .filter(({ event: e, data }) => !(e === "player:chat" && /^\s*\/admin/i.test((data as { text: string }).text)));
        await check(
          fc.asyncProperty(valid, async ({ event: e, data }) => {
            assert.ok(accepted(CLIENT_EVENTS[e], data), "generated payload is valid");
            const seat = validSeats[transport];
            await pace(seat);
            send(seat, { event: e, data });
            // A probe after it: once its refusal is back, the valid message was handled.
            const since = seat.p.log.mark();
            await pace(seat);
            send(seat, { event: "player:move", data: { x: "probe" } });
            await refusal(seat.p, "player:move", since);
            assert.ok(isOpen(seat.p), "the connection stays open");
            assert.deepEqual(crash.faults, []);
            assert.deepEqual(recorder.errors, []);
          }),
          40,
          transport === "sdk" ? 3001 : 3000,
        );
      });
    });
  }

  describe("/ws frames that are not an event envelope", () => {
    it("non-JSON text, binary frames and wrong envelopes get a system answer and change nothing", async () => {
      const bytes = fc.uint8Array({ maxLength: 256 });
      const envelope = hostileValue()
        .filter(fits)
        .filter((v) => {
          // A JSON envelope that happens to name an event with a valid payload is not a bad frame.
          const f = v as { event?: unknown; data?: unknown } | null;
          return !(typeof f?.event === "string" && Object.hasOwn(CLIENT_EVENTS, f.event) && accepted(CLIENT_EVENTS[f.event as ClientEventName], f.data));
        });
      const notJson = fc.string({ unit: "binary", maxLength: 200 }).filter((s) => {
        try {
          JSON.parse(s);
          return false;
        } catch {
          return true;
        }
      });
      const frame = fc.oneof(
        notJson.map((text) => ({ text })),
        bytes.map((binary) => ({ binary })),
        envelope.map((v) => ({ text: JSON.stringify(v ?? null) })),
        fc
          .tuple(fc.constantFrom(...CLIENT_EVENT_NAMES), hostileValue().filter(fits), fc.constantFrom("payload", "Data", "body", "__proto__"))
          .map(([event, value, key]) => ({
            text: `{"event":${JSON.stringify(event)},${JSON.stringify(key)}:${JSON.stringify(value ?? null)}}`,
          })),
      );
      await check(
        fc.asyncProperty(frame, async (f) => {
          const seat = await nextSeat("json");
          await refusedRun(
            seat,
            () => send(seat, f),
            (since) =>
              Promise.race([
                anyRefusal(seat.p, since, /^(Messages must be JSON|Unknown event |Invalid )/),
                seat.p.log.waitFor("tradeError", (d: { code: string }) => d.code === "INVALID_REQUEST", { since, timeoutMs: REPLY_MS }),
              ]),
          );
        }),
        60,
        4000,
      );
    });
  });

  describe("frames the transport refuses by closing (documented)", () => {
    /** A fresh connection's stored state, the frame, the close code; then nothing changed and the server still answers others. */
    const closedRun = async (transport: Transport, frame: (p: Fuzzed) => void, code: number) => {
      const p = transport === "json" ? await RawPlayer.connect(server) : await SdkPlayer.join(server);
      try {
        const before = await storedCharacter(server.storage, p.id);
        const sync = plain(server.world.access.livePlayerSync(p.id));
        frame(p);
        assert.equal((await p.log.waitClose()).code, code);
        // Once the world has let the player go (or kept it dropped), its stored state is what it was.
        assert.deepEqual(await storedCharacter(server.storage, p.id), before, "stored state unchanged");
        const live = server.world.access.livePlayerSync(p.id);
        if (live) assert.deepEqual(plain(live), sync, "live state unchanged");
        const seat = await nextSeat(transport);
        await refusedRun(
          seat,
          () => send(seat, { event: "player:move", data: {} }),
          (since) => refusal(seat.p, "player:move", since),
        );
      } finally {
        await closeAll([p]);
      }
    };

    it("frames above 16 KB close the socket with 1009 (both transports)", async () => {
      await check(
        fc.asyncProperty(fc.integer({ min: 16 * 1024 + 1, max: 64 * 1024 }), fc.constantFrom(...TRANSPORTS), async (size, transport) => {
          await closedRun(transport, (p) => p.send("player:chat", { text: "w".repeat(size) }), 1009);
        }),
        4,
        8000,
      );
    });

    it("SDK: a room-data frame that is not valid msgpack closes the connection with 4002", async () => {
      // 0xc1 is the one byte msgpack never uses.
      const garbage = fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Uint8Array.from([13, 0xa4, 0x6d, 0x6f, 0x76, 0x65, 0xc1, ...b]));
      await check(
        fc.asyncProperty(garbage, async (bytes) => {
          await closedRun("sdk", (p) => (p as SdkPlayer).room.connection.send(bytes), 4002);
        }),
        3,
        9000,
      );
    });
  });

  describe("SDK frames with numeric types and raw bytes", () => {
    it("numeric message types and sendBytes frames get a refusal and change nothing", async () => {
      const frame = fc.oneof(
        fc
          .tuple(fc.integer({ min: 0, max: 2 ** 31 }), hostileValue(msgpackOnlyNumber).filter(fits))
          .map(([type, data]) => ({ type, data, bytes: false as const })),
        fc
          .tuple(fc.oneof(fc.constantFrom(...CLIENT_EVENT_NAMES), hostileString.filter(sdkType)), fc.uint8Array({ maxLength: 128 }))
          .map(([type, data]) => ({ type, data, bytes: true as const })),
      );
      await check(
        fc.asyncProperty(frame, async (f) => {
          const seat = await nextSeat("sdk");
          const p = seat.p as SdkPlayer;
          await refusedRun(
            seat,
            () => (f.bytes ? p.room.sendBytes(f.type, f.data) : p.room.send(f.type as unknown as string, f.data)),
            (since) =>
              Promise.race([
                anyRefusal(p, since, /^(Unknown event |Invalid )/),
                p.log.waitFor("tradeError", (d: { code: string }) => d.code === "INVALID_REQUEST", { since, timeoutMs: REPLY_MS }),
              ]),
          );
        }),
        40,
        5000,
      );
    });
  });
});
