/**
 * Socket robustness of the world: what happens to connections the server has already let go of
 * (replaced, revoked, flood-closed) but whose sockets still deliver frames during the closing
 * handshake. A hand-written WebSocket client that ignores the server's close frame keeps sending,
 * so the frames arrive deterministically after the server closed the connection.
 */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import { randomBytes } from "node:crypto";
import { CLOSE_CODES, type ChatMessage } from "../../../src/events.js";
import { createLogger } from "../../../src/logger.js";
import { startServer, type GameServer } from "../../../src/server/server.js";
import { RECONNECT_SECONDS } from "../../../src/world/world.js";
import { closeAll, eventually, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { startTestServer, testConfig } from "../../helpers/server.js";
import { pgliteStorage } from "../../helpers/storage.js";

/** A server frame as the stubborn client parsed it. */
interface Frame {
  opcode: number;
  payload: Buffer;
}

/**
 * A minimal WebSocket client over a raw TCP socket: it performs the upgrade, then sends masked text
 * frames whenever told to, and never answers a close frame (so the server keeps receiving).
 */
class StubbornSocket {
  readonly frames: Frame[] = [];
  private buf = Buffer.alloc(0);
  private upgraded = false;
  private waiters: (() => void)[] = [];
  status = 0;
  ended = false;

  private constructor(readonly socket: Socket) {
    socket.on("data", (d) => this.onData(d));
    socket.on("close", () => {
      this.ended = true;
      this.wake();
    });
    socket.on("error", () => undefined);
  }

  static open(server: GameServer, path: string, headers: Record<string, string> = {}): Promise<StubbornSocket> {
    const url = new URL(server.url);
    const socket = connect(Number(url.port), url.hostname);
    const s = new StubbornSocket(socket);
    const extra = Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("");
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${url.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString("base64")}\r\nSec-WebSocket-Version: 13\r\n${extra}\r\n`,
    );
    return s.until(() => s.upgraded || s.ended, "upgrade answer").then(() => s);
  }

  private wake() {
    for (const w of this.waiters.splice(0)) w();
  }

  private onData(d: Buffer) {
    this.buf = Buffer.concat([this.buf, d]);
    if (!this.upgraded) {
      const end = this.buf.indexOf("\r\n\r\n");
      if (end < 0) return;
      this.status = Number(/^HTTP\/1\.1 (\d+)/.exec(this.buf.subarray(0, end).toString())?.[1] ?? 0);
      this.buf = this.buf.subarray(end + 4);
      this.upgraded = true;
    }
    for (;;) {
      if (this.buf.length < 2) break;
      const opcode = this.buf[0]! & 0x0f;
      let len = this.buf[1]! & 0x7f;
      let off = 2;
      if (len === 126) {
        if (this.buf.length < 4) break;
        len = this.buf.readUInt16BE(2);
        off = 4;
      } else if (len === 127) {
        if (this.buf.length < 10) break;
        len = Number(this.buf.readBigUInt64BE(2));
        off = 10;
      }
      if (this.buf.length < off + len) break;
      this.frames.push({ opcode, payload: this.buf.subarray(off, off + len) });
      this.buf = this.buf.subarray(off + len);
    }
    this.wake();
  }

  /** Send one masked text frame (as a client must). */
  sendText(text: string) {
    if (this.socket.destroyed) return;
    const payload = Buffer.from(text);
    const mask = randomBytes(4);
    const head =
      payload.length < 126 ? Buffer.from([0x81, 0x80 | payload.length]) : Buffer.from([0x81, 0x80 | 126, payload.length >> 8, payload.length & 0xff]);
    const body = Buffer.from(payload.map((b, i) => b ^ mask[i % 4]!));
    this.socket.write(Buffer.concat([head, mask, body]));
  }

  /** JSON events received (text frames). */
  events(): { event: string; data: any }[] {
    return this.frames.filter((f) => f.opcode === 1).map((f) => JSON.parse(f.payload.toString()));
  }

  /** The close code the server sent, if it did. */
  get closeCode(): number | undefined {
    const f = this.frames.find((x) => x.opcode === 8);
    return f && f.payload.length >= 2 ? f.payload.readUInt16BE(0) : undefined;
  }

  until(cond: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    if (cond()) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeoutMs);
      const check = () => {
        if (cond()) {
          clearTimeout(t);
          resolve();
        } else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }

  destroy() {
    this.socket.destroy();
  }
}

describe("world sockets: connections the server let go of", function () {
  this.timeout(40_000);
  let server: GameServer;
  let clients: (SdkPlayer | RawPlayer)[] = [];
  let stubborn: StubbornSocket[] = [];

  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    for (const s of stubborn) s.destroy();
    stubborn = [];
    await closeAll(clients);
    clients = [];
  });

  const openStubborn = async (token: string) => {
    const s = await StubbornSocket.open(server, `/ws?token=${token}`);
    stubborn.push(s);
    assert.equal(s.status, 101);
    await s.until(() => s.events().some((e) => e.event === "player:sync"), "player:sync");
    return s;
  };

  it("a revoked connection that keeps sending garbage during the close handshake is ignored; the server stays up", async () => {
    const t = tokenFor();
    const s = await openStubborn(t.token);
    const id = s.events().find((e) => e.event === "player:sync")!.data.id as string;
    // What an agent-token revocation does: close the connection and remove the player.
    server.world.access.disconnect(id, CLOSE_CODES.REVOKED, "agent token revoked");
    await s.until(() => s.closeCode !== undefined, "the server's close frame");
    assert.equal(s.closeCode, CLOSE_CODES.REVOKED);
    assert.equal(server.world.player(id), undefined, "the player is gone");
    const seen = s.frames.length;
    for (let i = 0; i < 20; i++) {
      s.sendText(`garbage ${i}`);
      s.sendText(JSON.stringify({ event: "player:chat", data: { text: "still here?" } }));
      s.sendText(JSON.stringify({ event: "nonsense", data: 1 }));
    }
    // The server is alive and serves others; the stale socket got nothing more.
    const other = await RawPlayer.connect(server);
    clients.push(other);
    const m = other.log.mark();
    other.send("player:chat", { text: "hello" });
    await other.log.waitFor("chat:message", (c) => c.text === "hello", { since: m });
    assert.equal(s.frames.length, seen, "no answer to frames after the close");
  });

  it("a replaced connection's late frames reach neither the new connection nor the world", async () => {
    const t = tokenFor();
    const s = await openStubborn(t.token);
    const fresh = await RawPlayer.connect(server, { token: t.token, accountId: t.accountId });
    clients.push(fresh);
    await s.until(() => s.closeCode !== undefined, "the server's close frame");
    assert.equal(s.closeCode, CLOSE_CODES.REPLACED);
    const m = fresh.log.mark();
    for (let i = 0; i < 10; i++) {
      s.sendText(`garbage ${i}`);
      s.sendText(JSON.stringify({ event: "player:move", data: { x: 5, z: 5 } }));
      s.sendText(JSON.stringify({ event: "player:chat", data: { text: `ghost ${i}` } }));
    }
    // The server reads every frame before it sees the end of the stream and closes its side.
    s.socket.end();
    await s.until(() => s.ended, "the server to close the stale socket");
    fresh.send("player:chat", { text: "marker" });
    await fresh.log.waitFor("chat:message", (c) => c.text === "marker", { since: m });
    const lines = fresh.log.all<ChatMessage>("chat:message", m).map((c) => c.text);
    assert.deepEqual(lines, ["marker"], "no system lines or chat caused by the old socket");
    assert.deepEqual({ x: server.world.player(fresh.id)!.x, z: server.world.player(fresh.id)!.z }, { x: 0, z: 0 });
    assert.equal(server.world.player(fresh.id)!.path.length, 0, "the old socket's move was ignored");
  });
});

describe("SDK frames that are not valid msgpack", function () {
  this.timeout(40_000);
  let server: GameServer;
  let clients: SdkPlayer[] = [];
  before(async () => {
    server = await startTestServer();
  });
  after(async () => server?.close());
  afterEach(async () => {
    await closeAll(clients);
    clients = [];
  });

  it("close the connection (Colyseus decodes before the room sees them) with no reconnection seat; the player is saved and others play on", async () => {
    const other = await SdkPlayer.join(server);
    const p = await SdkPlayer.join(server);
    clients.push(other, p);
    p.send("player:move", { x: 2, z: 0 });
    await p.waitAt(2, 0);
    // ROOM_DATA (13), the event name as a schema string (0xa0 | length), then a truncated msgpack
    // array (two elements announced, one sent).
    const name = Buffer.from("player:move");
    p.room.connection.send(Buffer.concat([Buffer.from([13, 0xa0 | name.length]), name, Buffer.from([0x92, 0x01])]));
    const closed = await p.log.waitClose();
    assert.equal(closed.code, 4002);
    await assert.rejects(p.client.reconnect(p.room.reconnectionToken));
    await eventually(() => !server.world.players.has(p.id), "the player left");
    assert.equal((await server.characters.load(p.id))!.character.positionX, 2, "saved on leave");
    const m = other.log.mark();
    other.send("player:chat", { text: "still fine" });
    await other.log.waitFor("chat:message", (c) => c.text === "still fine", { since: m });
  });
});

describe("/ws adapter heartbeat and backpressure", function () {
  this.timeout(40_000);
  const HEARTBEAT_MS = 150;
  const MAX_BUFFERED = 32 * 1024;
  let server: GameServer;
  let clients: RawPlayer[] = [];
  let stubborn: StubbornSocket[] = [];

  before(async () => {
    const config = testConfig();
    server = await startServer(config, {
      storage: await pgliteStorage(),
      port: 0,
      host: "127.0.0.1",
      logger: createLogger(config.logLevel),
      adapter: { heartbeatMs: HEARTBEAT_MS, maxBufferedBytes: MAX_BUFFERED },
    });
  });
  after(async () => server?.close());
  afterEach(async () => {
    for (const s of stubborn) s.destroy();
    stubborn = [];
    await closeAll(clients);
    clients = [];
    server.world.reconnectSeconds = RECONNECT_SECONDS;
  });

  it("a client that answers pings stays connected across many heartbeats", async () => {
    const p = await RawPlayer.connect(server);
    clients.push(p);
    let pings = 0;
    p.ws.on("ping", () => pings++); // ws answers each ping with a pong by itself
    await eventually(() => pings >= 10, "ten pings");
    assert.equal(p.log.isClosed, false);
    p.send("player:move", { x: 1, z: 0 });
    await p.waitWorld((w) => w.players.get(p.id)?.x === 1, "still playing");
  });

  it("a half-open client (never answers a ping) is terminated; its player leaves and is saved", async () => {
    server.world.reconnectSeconds = 0;
    const t = tokenFor();
    const s = await StubbornSocket.open(server, `/ws?token=${t.token}`);
    stubborn.push(s);
    await s.until(() => s.events().some((e) => e.event === "player:sync"), "player:sync");
    const id = s.events().find((e) => e.event === "player:sync")!.data.id as string;
    s.sendText(JSON.stringify({ event: "player:move", data: { x: 2, z: 0 } }));
    await eventually(() => server.world.player(id)?.x === 2, "moved");
    await s.until(() => s.frames.some((f) => f.opcode === 9), "a ping");
    await s.until(() => s.ended, "the server to drop the socket", 5_000);
    await eventually(() => !server.world.players.has(id), "the player left");
    const rows = await eventually(
      async () =>
        (
          await server.storage.orm.em
            .fork()
            .getConnection()
            .execute("select end_reason from player_logins where character_id = ? and ended_at is not null", [id])
        )[0],
      "login closed",
    );
    assert.ok(rows);
    assert.equal((await server.characters.load(id))!.character.positionX, 2, "saved on leave");
  });

  it("a client that stops reading is cut off once its unsent backlog passes the bound; others keep playing", async () => {
    const watcher = await RawPlayer.connect(server);
    clients.push(watcher);
    // Find the server's end of the slow client's TCP connection. Loopback kernel buffers take
    // megabytes before a non-reading peer pushes back, so the test stops the server's socket from
    // flushing (cork): every frame then waits in the process, exactly as behind a full kernel buffer.
    const serverSockets: Socket[] = [];
    const onConnection = (sock: Socket) => serverSockets.push(sock);
    server.httpServer.on("connection", onConnection);
    const slow = await RawPlayer.connect(server);
    server.httpServer.off("connection", onConnection);
    clients.push(slow);
    const serverSide = serverSockets.find((sock) => sock.remotePort === (slow.ws as any)._socket.localPort)!;
    assert.ok(serverSide, "found the server side of the slow connection");
    serverSide.cork();
    // Each /style answers with a system line and a player:sync (~2 KB): well past 32 KB in a second.
    for (let i = 0; i < 50; i++) slow.send("player:chat", { text: "/style attack" });
    await eventually(() => !server.world.isOnline(slow.id), "the slow client cut off");
    serverSide.uncork();
    await slow.log.waitClose();
    const m = watcher.log.mark();
    watcher.send("player:chat", { text: "/style strength" });
    await watcher.log.system(/Combat style set to strength/, m);
  });
});
