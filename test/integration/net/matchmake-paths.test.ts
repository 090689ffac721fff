/**
 * The matchmaking guard decides on the path Colyseus acts on (docs/http.md#matchmaking-requests):
 * Colyseus re-reads the URL with WHATWG `URL` (`\` becomes `/`, dot segments and `%2e%2e` resolve),
 * so every other spelling of a matchmaking path is refused with 400 `MATCHMAKE_PATH_INVALID`, and the
 * body limit applies to each of them first (413). Sent as raw HTTP: `fetch` would normalise the path.
 */
import assert from "node:assert/strict";
import { request } from "node:http";
import { matchMaker } from "@colyseus/core";
import type { GameServer } from "../../../src/server/server.js";
import { colyseusPath, matchmakePath } from "../../../src/http/matchmaking.js";
import { startTestServer } from "../../helpers/server.js";
import { tokenFor } from "../../helpers/clients.js";

type Answer = { status: number; body: any };

/** POST `path` exactly as written (no client-side normalisation) with `body`. */
function rawPost(port: number, path: string, body: string, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method: "POST",
        path,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), authorization: `Bearer ${token}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // not JSON: kept as text for the assertion message
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
      },
    );
    // The server may answer (413) before the whole body is written and close: the answer still comes.
    req.on("error", reject);
    req.end(body);
  });
}

describe("matchmaking guard: every spelling of a matchmaking path", function () {
  this.timeout(60_000);
  let server: GameServer;

  before(async function () {
    this.timeout(180_000);
    server = await startTestServer();
  });
  after(async () => {
    await server?.close();
  });

  /** Clients of the world room plus the seats it holds for clients not connected yet (its listing). */
  const reserved = async () => (await matchMaker.query({ name: "world" }))[0]!.clients;

  const SPELLINGS = [
    "/ws/matchmake\\join/world",
    "/ws/matchmake/./join/world",
    "/ws/matchmake/x/../join/world",
    "/ws/x/%2e%2e/matchmake/join/world",
    "/ws/x/%2E%2E/matchmake/create/world",
    "/ws/matchmake/join%2Fworld",
    "/ws/matchmake/join/w%6Frld",
    "/ws/matchmake//join/world",
    "/ws//matchmake/join/world",
    "/ws/matchmake/join//world",
    "/ws/matchmake/x/%2e%2e/create/world",
  ];

  it("Colyseus's reading of each spelling is what the guard compares with", () => {
    assert.equal(colyseusPath("/matchmake\\join/world"), "/matchmake/join/world");
    assert.equal(colyseusPath("/x/%2e%2e/matchmake/create/world"), "/matchmake/create/world");
    assert.deepEqual(matchmakePath("/matchmake/join/world?x=1"), { verb: "join", target: "world" });
    for (const p of SPELLINGS) assert.equal(matchmakePath(p.slice("/ws".length)), undefined, p);
  });

  it("a small body: 400 MATCHMAKE_PATH_INVALID for every other spelling, and no seat reserved", async () => {
    const { token } = tokenFor();
    const seats = await reserved();
    for (const path of SPELLINGS) {
      const a = await rawPost(server.port, path, "{}", token);
      assert.equal(a.status, 400, `${path}: ${JSON.stringify(a.body)}`);
      assert.equal(a.body.error.code, "MATCHMAKE_PATH_INVALID", path);
      assert.equal(a.body.message, a.body.error.message, `${path}: the SDK's message`);
    }
    assert.equal(await reserved(), seats, "no seat reserved by any spelling");
    // The canonical spelling still works.
    const ok = await rawPost(server.port, "/ws/matchmake/join/world", "{}", token);
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    assert.equal(typeof ok.body.sessionId, "string");
  });

  it("a 200 KB body: 413 PAYLOAD_TOO_LARGE for every spelling, the canonical one included", async () => {
    const { token } = tokenFor();
    const big = JSON.stringify({ pad: "x".repeat(200 * 1024) });
    const seats = await reserved();
    for (const path of [...SPELLINGS, "/ws/matchmake/join/world"]) {
      const a = await rawPost(server.port, path, big, token);
      assert.equal(a.status, 413, `${path}: ${JSON.stringify(a.body).slice(0, 200)}`);
      assert.equal(a.body.error.code, "PAYLOAD_TOO_LARGE", path);
    }
    assert.equal(await reserved(), seats, "no seat reserved");
  });
});
