/**
 * Message flooding (docs/protocol.md#limits): past 60 messages in a second the excess is dropped; a
 * connection that keeps flooding for 3 seconds is closed with 4029 and its account and address are
 * blocked (matchmaking answers 429), while everyone else keeps playing. Each scenario gets its own
 * server, since the block covers the test's address (127.0.0.1).
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import WebSocket from "ws";
import type { WorldRoom } from "../../../rooms/WorldRoom.js";
import { CLOSE_CODES, MAX_MESSAGES_PER_SECOND, type ChatMessage } from "../../../src/events.js";
import { frameText } from "../../../src/net/adapter.js";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, eventually, RawPlayer, SdkPlayer, tokenFor, WAIT_MS } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

/**
 * Send `perSecond` messages a second in batches of a tenth of that, for at most `seconds`, stopping
 * early once `stop()` says so. Returns how many were sent.
 */
async function flood(send: (i: number) => void, stop: () => boolean, perSecond = 100, seconds = 4): Promise<number> {
  let sent = 0;
  const start = performance.now();
  for (let batch = 0; batch < seconds * 10 && !stop(); batch++) {
    for (let j = 0; j < perSecond / 10; j++) send(sent++);
    // Pace the batches to wall-clock tenths of a second.
    const due = start + (batch + 1) * 100;
    await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
  }
  return sent;
}

describe("message flood control", function () {
  this.timeout(40_000);
  let server: GameServer;
  let clients: (SdkPlayer | RawPlayer)[] = [];
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    await closeAll(clients);
    clients = [];
    await server?.close();
  });

  it(`a burst of 70 in one second keeps the connection; the ${70 - MAX_MESSAGES_PER_SECOND} over the limit are dropped`, async () => {
    const p = await RawPlayer.connect(server);
    clients.push(p);
    const m = p.log.mark();
    for (let i = 0; i < 70; i++) p.send("player:chat", { text: `burst-${i}` });
    // Once a later message gets through, a new window has started and the burst is settled.
    let marker = 0;
    const start = performance.now();
    while (!p.log.all<ChatMessage>("chat:message", m).some((c) => c.text.startsWith("marker-"))) {
      assert.ok(performance.now() - start < WAIT_MS && marker < 40, "no message got through after the burst");
      p.send("player:chat", { text: `marker-${marker++}` });
      await p.log.waitFor("chat:message", (c) => c.text.startsWith("marker-"), { since: m, timeoutMs: 250 }).catch(() => undefined);
    }
    const echoed = p.log
      .all<ChatMessage>("chat:message", m)
      .filter((c) => c.text.startsWith("burst-"))
      .map((c) => c.text);
    assert.equal(echoed.length, MAX_MESSAGES_PER_SECOND);
    assert.deepEqual(
      echoed,
      Array.from({ length: MAX_MESSAGES_PER_SECOND }, (_, i) => `burst-${i}`),
      "the first 60 pass, in order",
    );
    assert.equal(p.log.isClosed, false);
    p.send("player:move", { x: 2, z: 0 });
    await p.waitWorld((w) => w.players.get(p.id)?.x === 2, "still playing");
  });

  for (const transport of ["sdk", "raw"] as const) {
    it(`a ${transport} client sending 100 messages a second is closed with 4029 within 4 s and cannot rejoin; others keep playing`, async () => {
      const bystander = await SdkPlayer.join(server);
      const flooder = transport === "sdk" ? await SdkPlayer.join(server) : await RawPlayer.connect(server);
      clients.push(bystander, flooder);
      const t0 = performance.now();
      const flooding = flood(
        () => flooder.send("player:move", { x: 0, z: 0 }),
        () => flooder.log.isClosed,
      );
      // The bystander plays during the flood.
      bystander.send("player:move", { x: 4, z: 0 });
      await bystander.waitAt(4, 0);
      const closed = await flooder.log.waitClose(6_000);
      const elapsed = performance.now() - t0;
      await flooding;
      assert.equal(closed.code, CLOSE_CODES.FLOOD);
      assert.ok(elapsed >= 1_900 && elapsed < 4_500, `closed after ${Math.round(elapsed)} ms`);

      // The flooder's account is blocked on both transports…
      await assert.rejects(
        SdkPlayer.join(server, { token: flooder.token, accountId: flooder.accountId }),
        (e: any) => e.code === 429 || /429|too many|blocked/i.test(e.message),
      );
      const again = await RawPlayer.connect(server, { token: flooder.token, accountId: flooder.accountId, noWait: true });
      assert.equal((await again.log.waitClose()).code, CLOSE_CODES.FLOOD);
      // …and so is its address, for new accounts too.
      await assert.rejects(SdkPlayer.join(server), (e: any) => e.code === 429 || /429|too many|blocked/i.test(e.message));

      // The bystander, connected from before, keeps playing.
      assert.equal(bystander.log.isClosed, false);
      const m = bystander.log.mark();
      bystander.send("player:chat", { text: "still here" });
      await bystander.log.waitFor("chat:message", (c) => c.text === "still here", { since: m });
      bystander.send("player:move", { x: 0, z: 3 });
      await bystander.waitAt(0, 3);
      assert.ok(!server.world.isOnline(flooder.id), "the flooder's player is not connected");
    });
  }
});

/** Ask matchmaking for a seat the way the SDK does, with extra headers; resolves with the HTTP status. */
async function matchmake(server: GameServer, token: string, headers: Record<string, string> = {}): Promise<number> {
  const res = await fetch(`${server.url}/ws/matchmake/join/world`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
    body: "{}",
  });
  await res.arrayBuffer();
  return res.status;
}

/** A plain-WebSocket client with extra upgrade headers; resolves with its first event or its close code. */
function rawWithHeaders(server: GameServer, token: string, headers: Record<string, string>): Promise<{ ws: WebSocket; first: string | number }> {
  const ws = new WebSocket(`${server.url.replace(/^http/, "ws")}/ws?token=${token}`, { headers });
  ws.on("error", () => undefined);
  return new Promise((resolve) => {
    ws.once("message", (d) => resolve({ ws, first: JSON.parse(frameText(d)).event }));
    ws.once("close", (code) => resolve({ ws, first: code }));
  });
}

describe("flood blocks: reconnection and client addresses", function () {
  this.timeout(40_000);
  let server: GameServer | undefined;
  let clients: (SdkPlayer | RawPlayer)[] = [];
  const sockets: WebSocket[] = [];
  afterEach(async () => {
    for (const ws of sockets.splice(0)) ws.terminate();
    await closeAll(clients);
    clients = [];
    await server?.close();
    server = undefined;
  });

  // With the HTTP rate limits off, only the world's own checks stand between a blocked client and
  // the room, so these tests see exactly those checks.
  const start = async (env: NodeJS.ProcessEnv = {}) => (server = await startTestServer({ DISABLE_RATE_LIMIT: "true", ...env }));

  it("an SDK client closed for flooding (4029) gets no reconnection seat", async () => {
    const s = await start();
    const flooder = await SdkPlayer.join(s);
    clients.push(flooder);
    const flooding = flood(
      () => flooder.send("player:move", { x: 0, z: 0 }),
      () => flooder.log.isClosed,
    );
    assert.equal((await flooder.log.waitClose(6_000)).code, CLOSE_CODES.FLOOD);
    await flooding;
    await assert.rejects(flooder.client.reconnect(flooder.room.reconnectionToken));
    await eventually(() => !s.world.players.has(flooder.id), "the flooder's player removed (and saved)");
  });

  it("a dropped client whose account was blocked meanwhile cannot reconnect (onReconnect checks the block)", async () => {
    const s = await start();
    const p = await SdkPlayer.join(s);
    clients.push(p);
    const room = matchMaker.getLocalRoomById(p.room.roomId) as WorldRoom;
    (room.linkOf(p.id)!.client as unknown as { ref: WebSocket }).ref.terminate();
    await p.log.waitClose();
    await eventually(() => s.world.players.has(p.id) && !s.world.isOnline(p.id), "player lingering for reconnection");
    s.gate.block(p.accountId, undefined);
    await assert.rejects(p.client.reconnect(p.room.reconnectionToken), (e: any) => e.code === 429 || /blocked/.test(e.message));
    await eventually(() => !s.world.players.has(p.id), "the player left");
  });

  it("without TRUST_PROXY a spoofed X-Forwarded-For does not escape an address block", async () => {
    const s = await start();
    s.gate.block("someone", "127.0.0.1");
    const fresh = tokenFor();
    assert.equal(await matchmake(s, fresh.token, { "x-forwarded-for": "203.0.113.9", "x-real-ip": "203.0.113.9" }), 429);
    assert.equal(await matchmake(s, fresh.token), 429);
    const raw = await rawWithHeaders(s, fresh.token, { "x-forwarded-for": "203.0.113.9" });
    sockets.push(raw.ws);
    assert.equal(raw.first, CLOSE_CODES.FLOOD);
    // Room sockets (joins with a seat, reconnections) from the address are refused at the upgrade.
    const status = await new Promise<number>((resolve) => {
      const ws = new WebSocket(`${s.url.replace(/^http/, "ws")}/ws/proc/room?sessionId=x`);
      sockets.push(ws);
      ws.on("error", () => undefined);
      ws.on("unexpected-response", (_req, res) => resolve(res.statusCode ?? 0));
      ws.on("open", () => resolve(101));
    });
    assert.equal(status, 429);
  });

  it("with TRUST_PROXY the proxy's address is the key everywhere: a flood on /ws blocks that address on matchmaking too", async () => {
    const s = await start({ TRUST_PROXY: "true" });
    const a = tokenFor();
    const ws = new WebSocket(`${s.url.replace(/^http/, "ws")}/ws?token=${a.token}`, { headers: { "x-forwarded-for": "6.6.6.6, 203.0.113.9" } });
    sockets.push(ws);
    let closed: number | undefined;
    ws.on("close", (code) => (closed = code));
    await new Promise((r) => ws.once("message", r));
    await flood(
      () => ws.readyState === ws.OPEN && ws.send(JSON.stringify({ event: "player:move", data: { x: 0, z: 0 } })),
      () => closed !== undefined,
    );
    await eventually(() => closed, "flood close");
    assert.equal(closed, CLOSE_CODES.FLOOD);
    const other = tokenFor();
    assert.equal(await matchmake(s, other.token, { "x-forwarded-for": "203.0.113.9" }), 429, "the proxy-reported address is blocked");
    assert.equal(await matchmake(s, other.token, { "x-forwarded-for": "203.0.113.9, 198.51.100.1" }), 200, "another client behind the proxy is not");
    const second = await rawWithHeaders(s, other.token, { "x-forwarded-for": "203.0.113.9" });
    sockets.push(second.ws);
    assert.equal(second.first, CLOSE_CODES.FLOOD);
  });
});
