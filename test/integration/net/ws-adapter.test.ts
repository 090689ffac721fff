/**
 * The plain-WebSocket adapter at exactly `/ws` (docs/protocol.md#plain-websocket) with a raw `ws` client:
 * authentication by query and header, JSON envelopes, `player:sync` first, `world:update` deltas,
 * feedback instead of disconnects for bad frames, and play together with SDK clients.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import WebSocket from "ws";
import { signServerToken } from "../../../src/auth/tokens.js";
import { CLOSE_CODES, type WorldUpdate } from "../../../src/events.js";
import { frameText } from "../../../src/net/adapter.js";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

const PLAYER_FIELDS = [
  "activity",
  "combatLevel",
  "health",
  "id",
  "isAgent",
  "maxHealth",
  "moving",
  "name",
  "protection",
  "running",
  "targetId",
  "weapon",
  "x",
  "z",
];

describe("/ws plain-WebSocket adapter", function () {
  this.timeout(30_000);
  let server: GameServer;
  let clients: (RawPlayer | SdkPlayer)[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(clients);
    clients = [];
  });

  const raw = async (opts: Parameters<typeof RawPlayer.connect>[1] = {}) => {
    const p = await RawPlayer.connect(server, opts);
    clients.push(p);
    return p;
  };
  const sdk = async (opts: Parameters<typeof SdkPlayer.join>[1] = {}) => {
    const p = await SdkPlayer.join(server, opts);
    clients.push(p);
    return p;
  };

  describe("connecting", () => {
    it("accepts the token in the query string and sends player:sync first", async () => {
      const p = await raw();
      const first = JSON.parse(p.frames[0]!);
      assert.equal(first.event, "player:sync");
      assert.equal(first.data.accountId, p.accountId);
      assert.deepEqual(Object.keys(first).sort(), ["data", "event"]);
      assert.ok(Array.isArray(first.data.inventory) && first.data.inventory.length > 0);
    });

    it("accepts the token in an Authorization: Bearer header", async () => {
      const p = await raw({ header: true });
      assert.equal(p.log.last("player:sync").accountId, p.accountId);
    });

    it("closes with 4001 on a bad token, an expired token or a token signed with another secret", async () => {
      const expired = signServerToken("test-secret-0123456789-abcdefghijkl", { sub: randomUUID() }, -10).token;
      const forged = signServerToken("another-secret-0123456789-abcdefgh", { sub: randomUUID() }).token;
      for (const token of ["garbage", expired, forged]) {
        const p = await raw({ token, noWait: true });
        const closed = await p.log.waitClose();
        assert.equal(closed.code, CLOSE_CODES.BAD_TOKEN, `token ${token.slice(0, 12)}…`);
        assert.equal(p.log.all("player:sync").length, 0);
      }
    });

    it("joins anonymously without a token (anonymous mode)", async () => {
      const p = await raw({ token: "" });
      const sync = p.log.last("player:sync");
      assert.ok(sync.id && sync.accountId);
    });

    it("refuses a non-JSON upgrade path next to /ws", async () => {
      const ws = new WebSocket(server.url.replace(/^http/, "ws") + "/wsx");
      ws.on("error", () => undefined);
      const status = await new Promise<number>((resolve) =>
        ws.on("unexpected-response", (req, res) => {
          resolve(res.statusCode ?? 0);
          req.destroy();
        }),
      );
      assert.equal(status, 404);
    });

    it("processes frames sent before the join completed", async () => {
      const { token } = tokenFor();
      const ws = new WebSocket(server.url.replace(/^http/, "ws") + `/ws?token=${token}`);
      const events: { event: string; data: any }[] = [];
      ws.on("message", (d) => events.push(JSON.parse(frameText(d))));
      ws.on("open", () => ws.send(JSON.stringify({ event: "player:chat", data: { text: "early bird" } })));
      const start = performance.now();
      while (!events.some((e) => e.event === "chat:message" && e.data.text === "early bird")) {
        assert.ok(performance.now() - start < 10_000, "the early frame was never processed");
        await new Promise((r) => ws.once("message", r));
      }
      assert.equal(events[0]!.event, "player:sync");
      ws.close();
    });

    it("a second connection for the same character closes the first with 4009", async () => {
      const a = await raw();
      const b = await raw({ token: a.token, accountId: a.accountId });
      assert.equal(b.id, a.id);
      assert.equal((await a.log.waitClose()).code, CLOSE_CODES.REPLACED);
      b.send("player:move", { x: 1, z: 0 });
      await b.waitWorld((w) => w.players.get(b.id)?.x === 1, "b moved");
    });

    it("closes with 1009 on a frame larger than the payload limit", async () => {
      const p = await raw();
      p.sendText(JSON.stringify({ event: "player:chat", data: { text: "x".repeat(64 * 1024) } }));
      assert.equal((await p.log.waitClose()).code, 1009);
    });
  });

  describe("world:update", () => {
    it("starts with full entries, then sends changed fields only, and null when something leaves the view", async () => {
      const p = await raw();
      const first = p.log.waitFor("world:update");
      const u = await first;
      assert.equal(typeof u.tick, "number");
      for (const kind of ["players", "npcs", "resources", "groundItems"]) assert.equal(typeof u[kind], "object", kind);
      assert.deepEqual(Object.keys(u.players[p.id]).sort(), PLAYER_FIELDS);
      assert.ok(Object.keys(u.resources).length > 0, "resources near spawn");

      // A change: only the fields that changed.
      const m = p.log.mark();
      p.send("player:move", { x: 2, z: 0 });
      const moved = await p.log.waitFor("world:update", (w) => w.players?.[p.id]?.x !== undefined, { since: m });
      const fields = Object.keys(moved.players[p.id]);
      assert.ok(fields.includes("x"));
      assert.ok(!fields.includes("name") && !fields.includes("id") && !fields.includes("maxHealth"), `only changes: ${fields}`);
      await p.waitWorld((w) => w.players.get(p.id)?.x === 2 && w.players.get(p.id)?.moving === false, "arrived at x=2");

      // Someone new in view: a full entry. Then gone: null.
      const m2 = p.log.mark();
      const other = await sdk();
      const arrived = await p.log.waitFor("world:update", (w) => w.players?.[other.id] != null, { since: m2 });
      assert.deepEqual(Object.keys(arrived.players[other.id]).sort(), PLAYER_FIELDS);
      const m3 = p.log.mark();
      await other.leave();
      await p.log.waitFor("world:update", (w) => w.players?.[other.id] === null, { since: m3 });
      assert.equal(p.world.players.has(other.id), false);
    });

    it("does not send updates when nothing in view changed", async () => {
      const p = await raw();
      await p.waitWorld((w) => w.players.has(p.id), "myself");
      const ticks = p.log.all<WorldUpdate>("world:update").map((u) => u.tick);
      // Wait for 20 server ticks to pass (observed through another client's patches).
      const watcher = await sdk();
      const t0 = watcher.state.tick;
      await watcher.waitState((s) => s.tick >= t0 + 20, "20 ticks");
      const quiet = p.log.all("world:update").slice(ticks.length);
      // The watcher's own arrival is one update; resource respawns or NPC wanders nearby can add a few, but
      // an idle view is far from one update per tick.
      assert.ok(quiet.length < 10, `${quiet.length} updates over 20 idle ticks`);
    });
  });

  describe("bad frames", () => {
    it("answers a non-JSON frame with a system message and stays connected", async () => {
      const p = await raw();
      const m = p.log.mark();
      p.sendText("{not json");
      const msg = await p.log.system(/must be JSON/, m);
      assert.equal(msg.type, "system");
      p.ws.send(Buffer.from([1, 2, 3]), { binary: true });
      await p.log.system(/must be JSON/, m + 1);
      assert.equal(p.log.isClosed, false);
    });

    it("answers an invalid payload or unknown event with a system message and changes nothing", async () => {
      const p = await raw();
      await p.waitWorld((w) => w.players.get(p.id)?.x === 0, "myself at spawn");
      for (const [frame, re] of [
        [{ event: "player:move", data: { x: "far", z: 0 } }, /Invalid player:move/],
        [{ event: "player:move" }, /Invalid player:move/],
        [{ event: "player:chat", data: { text: "" } }, /Invalid player:chat/],
        [{ event: "bank:withdraw", data: { itemId: "coins", quantity: -1 } }, /Invalid bank:withdraw/],
        [{ event: "inventory:use", data: { slot: 28 } }, /Invalid inventory:use/],
        [{ event: "no:such:thing", data: {} }, /Unknown event/],
        [{ data: {} }, /Unknown event/],
        [[1, 2, 3], /Unknown event/],
      ] as const) {
        const m = p.log.mark();
        p.sendText(JSON.stringify(frame));
        await p.log.system(re, m);
      }
      assert.equal(p.log.isClosed, false);
      assert.equal(p.world.players.get(p.id)?.x, 0);
      assert.deepEqual(p.log.last("player:sync").inventory, p.log.all("player:sync")[0].inventory);
    });

    it("answers an invalid trade payload with tradeError", async () => {
      const p = await raw();
      const m = p.log.mark();
      p.send("tradeRequest", {});
      const err = await p.log.waitFor("tradeError", () => true, { since: m });
      assert.equal(err.code, "INVALID_REQUEST");
    });
  });

  describe("together with SDK clients", () => {
    it("SDK and raw clients see each other move and chat", async () => {
      const r = await raw();
      const s = await sdk();
      await s.waitState((st) => st.players.get(r.id) !== undefined, "raw player in SDK state");
      await r.waitWorld((w) => w.players.has(s.id), "SDK player in raw world");

      r.send("player:move", { x: -3, z: 2 });
      await s.waitState((st) => st.players.get(r.id)?.x === -3 && st.players.get(r.id)?.z === 2, "raw player's move seen by SDK");
      s.send("player:move", { x: 3, z: -2 });
      await r.waitWorld((w) => w.players.get(s.id)?.x === 3 && w.players.get(s.id)?.z === -2, "SDK player's move seen by raw");

      const ms = s.log.mark();
      r.send("player:chat", { text: "hi from json" });
      const c1 = await s.log.waitFor("chat:message", (c) => c.text === "hi from json", { since: ms });
      assert.equal(c1.fromId, r.id);
      const mr = r.log.mark();
      s.send("player:chat", { text: "hi from sdk" });
      const c2 = await r.log.waitFor("chat:message", (c) => c.text === "hi from sdk", { since: mr });
      assert.equal(c2.fromId, s.id);
      assert.equal(c2.type, "public");
    });

    it("the same character over SDK then raw: the raw join replaces the SDK connection", async () => {
      const s = await sdk();
      const r = await raw({ token: s.token, accountId: s.accountId });
      assert.equal(r.id, s.id);
      assert.equal((await s.log.waitClose()).code, CLOSE_CODES.REPLACED);
    });
  });
});

describe("patch timing: SDK patches and world:update leave in the same tick", function () {
  this.timeout(30_000);
  const TICK_MS = 300;
  let server: GameServer;
  let clients: (RawPlayer | SdkPlayer)[] = [];
  before(async () => {
    server = await startTestServer({ TICK_MS: String(TICK_MS) });
  });
  after(async () => {
    await closeAll(clients);
    await server?.close();
  });

  it("a move reaches an SDK watcher no later than a raw watcher (no extra patch interval of delay)", async () => {
    const mover = await SdkPlayer.join(server);
    const sdk = await SdkPlayer.join(server);
    const raw = await RawPlayer.connect(server);
    clients = [mover, sdk, raw];
    await sdk.waitState((s) => s.players.get(mover.id) !== undefined, "mover in view");
    await raw.waitWorld((w) => w.players.has(mover.id), "mover in raw view");
    const lags: number[] = [];
    for (let i = 1; i <= 4; i++) {
      const x = i % 2 === 0 ? 0 : 1;
      const rawSaw = raw.waitWorld((w) => w.players.get(mover.id)?.x === x, `raw sees x=${x}`).then(() => performance.now());
      const sdkSaw = sdk.waitState((s) => s.players.get(mover.id)?.x === x, `sdk sees x=${x}`).then(() => performance.now());
      mover.send("player:move", { x, z: 0 });
      const [r, s] = await Promise.all([rawSaw, sdkSaw]);
      lags.push(Math.round(s - r));
      await mover.waitAt(x, 0);
    }
    assert.ok(
      lags.every((l) => l < TICK_MS / 2),
      `SDK lag behind raw per move (ms): ${lags.join(", ")}`,
    );
  });
});
