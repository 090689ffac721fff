/**
 * Attack checklist at the socket edge (docs/protocol.md "WebSocket protocol"): the per-address cap on concurrent
 * sockets across both transports, the slow consumer on an SDK room socket, tokens given in a
 * WebSocket query never reaching a log line, and clients that reset refused upgrades.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { connect } from "node:net";
import { Writable } from "node:stream";
import { matchMaker } from "@colyseus/core";
import WebSocket from "ws";
import { signServerToken } from "../../../src/auth/tokens.js";
import { createLogger } from "../../../src/logger.js";
import { startServer, type GameServer } from "../../../src/server/server.js";
import { closeAll, eventually, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { startTestServer, testConfig } from "../../helpers/server.js";
import { pgliteStorage } from "../../helpers/storage.js";
import type { ChatMessage } from "../../../src/events.js";

/** Matchmake a seat in the world room the way the SDK does (`join`), returning what the room socket needs. */
async function reserveSeat(server: GameServer, token: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${server.url}/ws/matchmake/join/world`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
    body: "{}",
  });
  const body = (await res.json()) as any;
  return {
    status: res.status,
    body,
    seat: body.sessionId ? { roomId: body.roomId as string, processId: body.processId as string, sessionId: body.sessionId as string } : undefined,
  };
}

/** The room socket URL of a seat, with the token as the SDK sends it (`_authToken`). */
const roomSocketUrl = (server: GameServer, seat: { processId: string; roomId: string; sessionId: string }, token: string) =>
  `${server.url.replace(/^http/, "ws")}/ws/${seat.processId}/${seat.roomId}?sessionId=${seat.sessionId}&_authToken=${encodeURIComponent(token)}`;

/** Resolves with the HTTP status of a refused upgrade, or "open". */
function upgradeOutcome(url: string, headers: Record<string, string> = {}): Promise<{ outcome: number | "open"; ws: WebSocket }> {
  const ws = new WebSocket(url, { headers });
  return new Promise((resolve) => {
    ws.once("open", () => resolve({ outcome: "open", ws }));
    ws.once("unexpected-response", (_req, res) => {
      resolve({ outcome: res.statusCode ?? 0, ws });
      res.resume();
    });
    ws.on("error", () => undefined);
  });
}

describe("socket edges", function () {
  // Starting the first server of a process opens the shared PGlite (slow on a loaded machine).
  this.timeout(180_000);

  describe("per-address cap on concurrent sockets (MAX_SOCKETS_PER_ADDRESS)", () => {
    let server: GameServer;
    const players: (RawPlayer | SdkPlayer)[] = [];
    const extra: WebSocket[] = [];
    before(async () => {
      server = await startTestServer({ MAX_SOCKETS_PER_ADDRESS: "3", TRUST_PROXY: "true" });
    });
    after(async () => {
      await closeAll(players);
      for (const ws of extra) ws.terminate();
      await server?.close();
    });

    it("counts /ws and SDK sockets together; over the cap /ws answers 429, SDK matchmaking a clean 429 error, a room socket 429; a closed socket frees its place", async () => {
      const a = await RawPlayer.connect(server);
      const b = await SdkPlayer.join(server);
      // Reserve a seat while there is room, then fill the cap: the room socket itself is refused.
      const late = tokenFor();
      const reserved = await reserveSeat(server, late.token);
      assert.equal(reserved.status, 200, JSON.stringify(reserved.body));
      const c = await RawPlayer.connect(server);
      players.push(a, b, c);

      const ws = await upgradeOutcome(`${server.url.replace(/^http/, "ws")}/ws?token=${tokenFor().token}`);
      extra.push(ws.ws);
      assert.equal(ws.outcome, 429, "/ws over the cap");
      const room = await upgradeOutcome(roomSocketUrl(server, reserved.seat!, late.token));
      extra.push(room.ws);
      assert.equal(room.outcome, 429, "room socket over the cap");
      const mm = await reserveSeat(server, tokenFor().token);
      assert.equal(mm.status, 429);
      assert.deepEqual(mm.body, { code: 429, error: "too many connections from this address" }, "no stack, Colyseus's error shape");
      await assert.rejects(SdkPlayer.join(server), (e: any) => e.code === 429 && /too many connections/.test(e.message), "the SDK raises a matchmaking error");

      // Another address (through the trusted proxy) has its own count.
      const other = await RawPlayer.connect(server, { headers: { "x-forwarded-for": "203.0.113.20" } });
      players.push(other);

      await a.close();
      const again = await eventually(async () => {
        const p = await RawPlayer.connect(server).catch(() => undefined);
        return p;
      }, "a socket after one closed");
      players.push(again);
    });
  });

  describe("slow consumer on an SDK room socket", () => {
    let server: GameServer;
    const players: SdkPlayer[] = [];
    let raw: WebSocket | undefined;
    before(async () => {
      server = await startTestServer({}, undefined);
    });
    after(async () => {
      raw?.terminate();
      await closeAll(players);
      await server?.close();
    });

    it("a client that completes the handshake then stops reading is terminated once 1 MiB waits for it; the others play on", async () => {
      const other = await SdkPlayer.join(server);
      players.push(other);
      const t = tokenFor();
      const { seat } = await reserveSeat(server, t.token);
      assert.ok(seat);
      raw = new WebSocket(roomSocketUrl(server, seat, t.token));
      const joined = new Promise<void>((resolve, reject) => {
        raw!.once("error", reject);
        raw!.on("message", (data: Buffer) => {
          // The server's JOIN_ROOM (10): acknowledge it as the SDK does, then stop reading.
          if (data[0] === 10) {
            raw!.send(Buffer.from([10]));
            resolve();
          }
        });
      });
      await joined;
      const player = await eventually(
        () => [...server.world.players.values()].find((p) => p.accountId === t.accountId && p.connection),
        "the raw client's player",
      );
      (raw as unknown as { _socket: { pause(): void } })._socket.pause();

      // Traffic for the paused client only, in 64 KiB messages through the room's public API, with a
      // turn of the event loop between them, until the server gives up on it (bounded at 64 MiB).
      const client = matchMaker.getLocalRoomById(seat.roomId)!.clients.getById(seat.sessionId)!;
      const text = "x".repeat(64 * 1024);
      let sent = 0;
      while (!player.dropped && sent < 1024) {
        client.send("chat:message", { type: "system", text });
        sent++;
        await new Promise((r) => setImmediate(r));
      }
      assert.ok(player.dropped, `the paused client was not dropped after ${sent} messages of 64 KiB`);
      assert.ok(sent > 16, `it was dropped only once more than 1 MiB could wait (${sent} messages sent)`);
      // The rest of the world is fine: the other player still gets answers.
      const m = other.log.mark();
      other.send("player:chat", { text: "still here" });
      await other.log.waitFor<ChatMessage>("chat:message", (c) => c.text === "still here", { since: m });
    });
  });

  describe("tokens in WebSocket queries never reach a log line", () => {
    let server: GameServer;
    const lines: string[] = [];
    const players: (RawPlayer | SdkPlayer)[] = [];
    before(async () => {
      const sink = new Writable({
        write(chunk, _enc, cb) {
          lines.push(chunk.toString());
          cb();
        },
      });
      const config = testConfig({ LOG_LEVEL: "debug", MAX_SOCKETS_PER_ADDRESS: "4" });
      server = await startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1", logger: createLogger("debug", sink) });
    });
    after(async () => {
      await closeAll(players);
      await server?.close();
    });

    it("a join on both transports, a bad token, a refused upgrade and an error leave no token in the log", async () => {
      const tokens: string[] = [];
      const fresh = () => {
        const t = tokenFor();
        tokens.push(t.token);
        return t;
      };
      // Joins: /ws with ?token=, and a raw SDK room socket with _authToken.
      const a = await RawPlayer.connect(server, { token: fresh().token });
      players.push(a);
      const b = fresh();
      const { seat } = await reserveSeat(server, b.token);
      const room = new WebSocket(roomSocketUrl(server, seat!, b.token));
      await new Promise<void>((resolve) => room.once("message", () => resolve()));
      // A bad token (a real signature with another secret) on /ws.
      const bad = signServerToken("another-secret-0123456789-abcdefgh", { sub: randomUUID() }).token;
      tokens.push(bad);
      const refused = await RawPlayer.connect(server, { token: bad, noWait: true });
      assert.equal((await refused.log.waitClose()).code, 4001);
      // A refused upgrade: over the cap (4 sockets: a, room, and two more).
      const c = await RawPlayer.connect(server, { token: fresh().token });
      const d = await RawPlayer.connect(server, { token: fresh().token });
      players.push(c, d);
      const over = await upgradeOutcome(`${server.url.replace(/^http/, "ws")}/ws?token=${fresh().token}`);
      assert.equal(over.outcome, 429);
      // An error: a room socket for a seat that does not exist, with a token in its query.
      room.terminate();
      await eventually(() => (server.world.players.size >= 0 ? true : false), "settle");
      const ghost = await upgradeOutcome(
        roomSocketUrl(server, { processId: seat!.processId, roomId: "nosuchroom", sessionId: "nosuchsession" }, fresh().token),
      );
      ghost.ws.terminate();
      await a.close();

      // The events were logged (so the capture works), with what they need and no token.
      const log = lines.join("");
      for (const msg of ["adapter: joined", "adapter: invalid token; closing", "room socket upgrade", "upgrade refused"]) {
        assert.ok(log.includes(`"msg":"${msg}"`), `no "${msg}" line in:\n${log}`);
      }
      const leaked = lines.filter((l) => tokens.some((t) => l.includes(t) || l.includes(t.split(".")[2]!)));
      assert.deepEqual(leaked, [], "log lines holding a token");
      assert.ok(!lines.some((l) => /_authToken=|[?&]token=/.test(l)), "no query token parameter in any line");
    });
  });

  describe("clients that reset a refused upgrade", () => {
    let server: GameServer;
    before(async () => {
      server = await startTestServer({});
    });
    after(async () => {
      await server?.close();
    });

    /** Send an upgrade request for `path` with `origin`, and reset the connection as soon as it is written; resolves once closed. */
    function resetUpgrade(path: string, origin: string): Promise<void> {
      const { port } = new URL(server.url);
      return new Promise((resolve) => {
        const s = connect(Number(port), "127.0.0.1", () => {
          s.write(
            `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: ${origin}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
              `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n`,
            () => setImmediate(() => s.resetAndDestroy()),
          );
        });
        s.on("error", () => undefined);
        s.on("close", () => resolve());
      });
    }

    it("a peer that resets while its upgrade is refused (unknown path, forbidden origin) does not take the process down", async () => {
      // Before the fix this raised "read ECONNRESET" with no listener (an uncaught exception) within a few hundred tries.
      for (let round = 0; round < 4; round++) {
        await Promise.all(
          Array.from({ length: 100 }, (_, i) => resetUpgrade(i % 2 ? "/no-such-path" : "/ws", i % 2 ? "http://localhost" : "https://evil.example")),
        );
      }
      const health = await fetch(`${server.url}/health`);
      assert.equal(health.status, 200);
      const player = await RawPlayer.connect(server, { token: tokenFor().token });
      await player.close();
    });
  });
});
