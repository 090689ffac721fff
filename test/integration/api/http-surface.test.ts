import assert from "node:assert/strict";
import { startTestServer, TEST_ENV } from "../../helpers/server.js";
import type { GameServer } from "../../../src/server/server.js";
import jwt from "jsonwebtoken";
import { request as httpRequest } from "node:http";
import { WebSocket } from "ws";
import { signServerToken } from "../../../src/auth/tokens.js";

interface Opened {
  result: "open";
  ws: WebSocket;
  /** Resolves with the first JSON frame whose `event` is `name` (frames are recorded from the start). */
  event(name: string): Promise<unknown>;
  /** Resolves on the first frame of any kind. */
  firstFrame: Promise<void>;
}

/** Open a WebSocket with an Origin header: "open" when the upgrade is accepted, else the HTTP status. */
function upgrade(url: string, origin: string): Promise<Opened | { result: number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { origin });
    // Frames can arrive in the same packet as the upgrade response: record them from the start.
    const frames: { event: string; data: unknown }[] = [];
    const waiters: (() => void)[] = [];
    let gotFrame!: () => void;
    const firstFrame = new Promise<void>((r) => (gotFrame = r));
    ws.on("message", (raw: Buffer) => {
      gotFrame();
      try {
        frames.push(JSON.parse(raw.toString()));
      } catch {
        return; // binary (Colyseus protocol) frames
      }
      for (const w of waiters.splice(0)) w();
    });
    const event = (name: string) =>
      new Promise<unknown>((res) => {
        const check = () => {
          const f = frames.find((x) => x.event === name);
          if (f) res(f.data);
          else waiters.push(check);
        };
        check();
      });
    ws.once("open", () => resolve({ result: "open", ws, event, firstFrame }));
    ws.once("unexpected-response", (_req, res) => {
      resolve({ result: res.statusCode ?? 0 });
      res.resume();
      ws.terminate();
    });
    ws.once("error", (e) => reject(e));
  });
}

const ALLOWED = "http://localhost:3333";
const DISALLOWED = "https://evil.example";

describe("HTTP surface", function () {
  let server: GameServer;
  before(async () => {
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  });
  after(async () => server?.close());

  const get = (path: string, init?: RequestInit) => fetch(server.url + path, init);

  it("GET /health returns the health report", async () => {
    const r = await get("/health");
    assert.equal(r.status, 200);
    const body = await r.json();
    assert.equal(body.status, "ok");
    assert.match(body.version, /^\d+\.\d+\.\d+$/);
    assert.ok(!Number.isNaN(Date.parse(body.timestamp)));
    assert.match(body.timestamp, /Z$/);
  });

  it("GET /status reports storage and players", async () => {
    const r = await get("/status");
    const body = await r.json();
    assert.deepEqual(Object.keys(body).sort(), ["playersOnline", "status", "storage", "uptime", "version"]);
    assert.equal(body.status, "ok");
    assert.equal(body.storage, "ok");
  });

  it("GET /env.js exposes public settings only", async () => {
    const r = await get("/env.js");
    assert.match(r.headers.get("content-type")!, /javascript/);
    const text = await r.text();
    assert.match(text, /window\.__ENV__/);
    assert.ok(!text.includes(TEST_ENV.JWT_SECRET!));
    assert.ok(!text.includes(TEST_ENV.ADMIN_CODE!));
    assert.match(text, /PUBLIC_WS_URL/);
  });

  it("unknown routes are 404 with the error body", async () => {
    const r = await get("/api/does-not-exist");
    assert.equal(r.status, 404);
    assert.equal((await r.json()).error.code, "NOT_FOUND");
  });

  it("malformed JSON is 400 INVALID_JSON", async () => {
    const r = await get("/api/auth/anonymous", { method: "POST", headers: { "content-type": "application/json" }, body: "{nope" });
    assert.equal(r.status, 400);
    assert.equal((await r.json()).error.code, "INVALID_JSON");
  });

  it("an oversized body is 413 with the error body", async () => {
    const big = JSON.stringify({ name: "x".repeat(100_000) });
    const r = await get("/api/auth/anonymous", { method: "POST", headers: { "content-type": "application/json" }, body: big });
    assert.equal(r.status, 413);
    assert.equal((await r.json()).error.code, "PAYLOAD_TOO_LARGE");
  });

  describe("matchmaking bodies", () => {
    const matchmake = (body: string, headers: Record<string, string> = {}) =>
      get("/ws/matchmake/join/world", { method: "POST", headers: { "content-type": "application/json", ...headers }, body });

    it("an oversized body is 413 PAYLOAD_TOO_LARGE with the error body (and CORS for an allowed origin)", async () => {
      const r = await matchmake(JSON.stringify({ pad: "x".repeat(17 * 1024) }), { origin: ALLOWED });
      assert.equal(r.status, 413);
      assert.equal(r.headers.get("access-control-allow-origin"), ALLOWED);
      const body = await r.json();
      assert.equal(body.error.code, "PAYLOAD_TOO_LARGE");
      assert.equal(typeof body.error.message, "string");
    });

    it("an oversized chunked body (no Content-Length) is 413 too", async () => {
      const { status, text } = await new Promise<{ status: number; text: string }>((resolve, reject) => {
        const req = httpRequest(`${server.url}/ws/matchmake/join/world`, {
          method: "POST",
          headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        });
        req.on("response", (res) => {
          let text = "";
          res.on("data", (d) => (text += d));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
        });
        req.on("error", reject);
        req.write('{"pad":"');
        for (let i = 0; i < 20; i++) req.write("y".repeat(1024));
        req.end('"}');
      });
      assert.equal(status, 413);
      assert.equal(JSON.parse(text).error.code, "PAYLOAD_TOO_LARGE");
    });

    it("malformed JSON is 400 INVALID_JSON; JSON that is not an object is 400 INVALID_REQUEST", async () => {
      const bad = await matchmake("{nope");
      assert.equal(bad.status, 400);
      assert.equal((await bad.json()).error.code, "INVALID_JSON");
      const arr = await matchmake("[1,2]");
      assert.equal(arr.status, 400);
      assert.equal((await arr.json()).error.code, "INVALID_REQUEST");
    });

    it("a good body still reaches Colyseus (seat reservation), also with an empty body", async () => {
      const token = signServerToken(TEST_ENV.JWT_SECRET!, { sub: "acct-matchmake-body" }).token;
      const withBody = await matchmake(JSON.stringify({}), { authorization: `Bearer ${token}` });
      assert.equal(withBody.status, 200);
      assert.ok((await withBody.json()).sessionId);
      const empty = await get("/ws/matchmake/join/world", { method: "POST", headers: { authorization: `Bearer ${token}` } });
      assert.equal(empty.status, 200);
      assert.ok((await empty.json()).sessionId);
      const unknownRoom = await get("/ws/matchmake/joinOrCreate/no_such_room", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      assert.ok(unknownRoom.status >= 400);
    });
  });

  it("a body failing validation is 400 INVALID_REQUEST with details per field", async () => {
    const r = await get("/api/auth/anonymous", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "", extra: 1 }),
    });
    assert.equal(r.status, 400);
    const body = await r.json();
    assert.equal(body.error.code, "INVALID_REQUEST");
    assert.ok(Array.isArray(body.error.details) && body.error.details.length >= 1);
    assert.ok(body.error.details.every((d: { field: string }) => d.field.startsWith("body")));
  });

  it("a path parameter that is not valid percent-encoding is 400 INVALID_REQUEST, not a 500 (found by the soak run)", async () => {
    const a = await get("/api/auth/anonymous", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    const { token } = await a.json();
    for (const [method, path] of [
      ["PATCH", "/api/character/%00%ff"],
      ["GET", "/api/characters/%E0%A4%A/skills"],
      ["GET", "/api/agents/%ff/goal"],
    ] as const) {
      const r = await get(path, {
        method,
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        ...(method === "PATCH" ? { body: JSON.stringify({ name: "Valid" }) } : {}),
      });
      assert.equal(r.status, 400, `${method} ${path}`);
      const body = await r.json();
      assert.equal(body.error.code, "INVALID_REQUEST", `${method} ${path}`);
      assert.doesNotMatch(JSON.stringify(body), /URIError|at .*\.(js|ts)/);
    }
  });

  it("anonymous mode issues a token that authenticates", async () => {
    const r = await get("/api/auth/anonymous", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    assert.equal(r.status, 201);
    const { token, accountId, expiresAt } = await r.json();
    assert.ok(token && accountId && expiresAt);
    const me = await get("/api/auth/session", { headers: { authorization: `Bearer ${token}` } });
    assert.equal(me.status, 200);
    const body = await me.json();
    assert.equal(body.accountId, accountId);
    assert.equal(body.anonymous, true);
  });

  it("protected routes answer 401 without or with a bad token", async () => {
    assert.equal((await get("/api/auth/session")).status, 401);
    const bad = await get("/api/auth/session", { headers: { authorization: "Bearer abc.def.ghi" } });
    assert.equal(bad.status, 401);
    assert.equal((await bad.json()).error.code, "UNAUTHORIZED");
  });

  describe("server tokens rejected at the HTTP level", () => {
    const secret = TEST_ENV.JWT_SECRET!;
    const now = () => Math.floor(Date.now() / 1000);
    const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const cases: [string, () => string][] = [
      ["alg none", () => `${b64({ alg: "none", typ: "JWT" })}.${b64({ sub: "acct-none", exp: now() + 600, roles: ["admin"] })}.`],
      ["expired", () => jwt.sign({ sub: "acct-expired", iat: now() - 120, exp: now() - 60 }, secret, { algorithm: "HS256" })],
      ["no exp", () => jwt.sign({ sub: "acct-no-exp", iat: now() }, secret, { algorithm: "HS256" })],
      ["HS512 with the right secret", () => jwt.sign({ sub: "acct-hs512", iat: now(), exp: now() + 600 }, secret, { algorithm: "HS512" })],
      [
        "a tampered payload",
        () => {
          const [h, , sig] = signServerToken(secret, { sub: "acct-plain" }).token.split(".");
          return `${h}.${b64({ sub: "acct-plain", roles: ["admin"], iat: now(), exp: now() + 600 })}.${sig}`;
        },
      ],
    ];
    for (const [name, make] of cases) {
      it(`${name}: 401 UNAUTHORIZED on protected routes`, async () => {
        const token = make();
        for (const path of ["/api/v1/player", "/api/auth/session"]) {
          const r = await get(path, { headers: { authorization: `Bearer ${token}` } });
          assert.equal(r.status, 401, path);
          assert.equal((await r.json()).error.code, "UNAUTHORIZED");
        }
      });
    }
  });

  it("a valid server token for an unknown account creates it on first use", async () => {
    const { token } = signServerToken(TEST_ENV.JWT_SECRET!, { sub: "operator-made-account", roles: ["admin"] });
    const r = await get("/api/auth/session", { headers: { authorization: `Bearer ${token}` } });
    assert.equal(r.status, 200);
    assert.deepEqual((await r.json()).roles, ["admin"]);
  });

  it("serves an OpenAPI document that lists the routes", async () => {
    const doc = await (await get("/api/openapi.json")).json();
    assert.equal(doc.openapi, "3.1.0");
    for (const p of ["/health", "/status", "/api/auth/anonymous", "/api/auth/exchange"]) assert.ok(doc.paths[p], p);
  });

  it("guards the Colyseus monitor with the admin code", async () => {
    assert.equal((await get("/colyseus/api")).status, 401);
    const wrong = Buffer.from("admin:nope").toString("base64");
    assert.equal((await get("/colyseus/api", { headers: { authorization: `Basic ${wrong}` } })).status, 401);
    const right = Buffer.from(`admin:${TEST_ENV.ADMIN_CODE}`).toString("base64");
    const r = await get("/colyseus/api", { headers: { authorization: `Basic ${right}` } });
    assert.equal(r.status, 200);
    assert.ok(Array.isArray((await r.json()).rooms));
  });

  describe("CORS", () => {
    it("answers an allowed origin with its own origin and credentials", async () => {
      const r = await get("/health", { headers: { origin: ALLOWED } });
      assert.equal(r.headers.get("access-control-allow-origin"), ALLOWED);
      assert.equal(r.headers.get("access-control-allow-credentials"), "true");
      assert.match(r.headers.get("vary") ?? "", /Origin/);
    });

    for (const origin of [
      "https://www.realm.game",
      "https://realm.game",
      "https://pr-12.realm-client.pages.dev",
      "https://realm-server-pr-7.up.railway.app",
      "https://warpcast.com",
      "http://127.0.0.1:8080",
      "https://localhost",
    ]) {
      it(`allows ${origin}`, async () => {
        const r = await get("/health", { headers: { origin } });
        assert.equal(r.headers.get("access-control-allow-origin"), origin);
      });
    }

    for (const origin of [DISALLOWED, "https://realm.game.evil.example", "https://evilrealm.game", "http://localhost.evil.example", "null"]) {
      it(`never answers ${origin}`, async () => {
        const r = await get("/health", { headers: { origin } });
        assert.equal(r.headers.get("access-control-allow-origin"), null);
      });
    }

    it("answers an allowed preflight with the allowed methods and headers", async () => {
      const r = await get("/api/auth/anonymous", {
        method: "OPTIONS",
        headers: { origin: ALLOWED, "access-control-request-method": "POST", "access-control-request-headers": "content-type,authorization" },
      });
      assert.equal(r.status, 204);
      assert.equal(r.headers.get("access-control-allow-origin"), ALLOWED);
      assert.equal(r.headers.get("access-control-allow-methods"), "GET, PUT, POST, DELETE, OPTIONS, PATCH");
      assert.equal(r.headers.get("access-control-allow-headers"), "Content-Type, Authorization, X-Requested-With");
    });

    it("refuses a disallowed preflight, including on the matchmaking route", async () => {
      for (const path of ["/api/auth/anonymous", "/ws/matchmake/join/world"]) {
        const r = await get(path, { method: "OPTIONS", headers: { origin: DISALLOWED, "access-control-request-method": "POST" } });
        assert.equal(r.headers.get("access-control-allow-origin"), null, path);
        assert.notEqual(r.status, 204, path);
      }
    });

    it("answers an allowed origin on matchmaking with the CORS headers", async () => {
      const token = signServerToken(TEST_ENV.JWT_SECRET!, { sub: "acct-cors-matchmake" }).token;
      const r = await get("/ws/matchmake/join/world", {
        method: "POST",
        headers: { origin: ALLOWED, "content-type": "application/json", authorization: `Bearer ${token}` },
        body: "{}",
      });
      assert.equal(r.status, 200);
      assert.equal(r.headers.get("access-control-allow-origin"), ALLOWED);
      assert.equal(r.headers.get("access-control-allow-credentials"), "true");
      assert.match(r.headers.get("vary") ?? "", /Origin/);
      const seat = await r.json();
      assert.ok(seat.sessionId && seat.roomId && seat.processId);
      const preflight = await get("/ws/matchmake/join/world", {
        method: "OPTIONS",
        headers: { origin: ALLOWED, "access-control-request-method": "POST", "access-control-request-headers": "content-type,authorization" },
      });
      assert.equal(preflight.status, 204);
      assert.equal(preflight.headers.get("access-control-allow-origin"), ALLOWED);
      assert.equal(preflight.headers.get("access-control-allow-methods"), "GET, PUT, POST, DELETE, OPTIONS, PATCH");
    });

    it("refuses a WebSocket upgrade to a room path from a disallowed origin (403) and accepts an allowed one", async () => {
      const token = signServerToken(TEST_ENV.JWT_SECRET!, { sub: "acct-cors-room-socket" }).token;
      const r = await get("/ws/matchmake/join/world", {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body: "{}",
      });
      const seat = await r.json();
      const url = `${server.url.replace(/^http/, "ws")}/ws/${seat.processId}/${seat.roomId}?sessionId=${seat.sessionId}&_authToken=${token}`;
      assert.deepEqual(await upgrade(url, DISALLOWED), { result: 403 });
      const ok = await upgrade(url, ALLOWED);
      assert.equal(ok.result, "open");
      if (ok.result === "open") {
        await ok.firstFrame; // the room's join message: the seat was taken
        const closed = new Promise((res) => ok.ws.once("close", res));
        ok.ws.close();
        await closed;
      }
    });

    it("refuses a WebSocket upgrade to /ws from a disallowed origin (403) and accepts an allowed one", async () => {
      const token = signServerToken(TEST_ENV.JWT_SECRET!, { sub: "acct-cors-plain-socket" }).token;
      const url = `${server.url.replace(/^http/, "ws")}/ws?token=${token}`;
      assert.deepEqual(await upgrade(url, DISALLOWED), { result: 403 });
      assert.deepEqual(await upgrade(url, "https://realm.game.evil.example"), { result: 403 });
      const ok = await upgrade(url, "https://www.realm.game");
      assert.equal(ok.result, "open");
      if (ok.result === "open") {
        await ok.event("player:sync");
        const closed = new Promise((res) => ok.ws.once("close", res));
        ok.ws.close();
        await closed;
      }
    });

    it("matchmaking responses carry no permissive CORS headers for a disallowed origin", async () => {
      const r = await get("/ws/matchmake/joinOrCreate/no_such_room", {
        method: "POST",
        headers: { origin: DISALLOWED, "content-type": "application/json" },
        body: "{}",
      });
      assert.equal(r.headers.get("access-control-allow-origin"), null);
    });
  });
});

describe("CORS origins from settings", function () {
  let server: GameServer;
  before(async () => {
    server = await startTestServer({
      DISABLE_RATE_LIMIT: "true",
      CLIENT_URL: "https://client.example:8443/play/",
      PUBLIC_APP_URL: "https://app.example",
      AGENT_FRAMEWORK_URL: "http://agents.example:4000",
      AGENT_FRAMEWORK_API_URL: "https://agents-api.example/v1",
      PUBLIC_IDP_APP_ID: "cors-app-id",
      IDP_ISSUER: "https://auth.idp.example",
      IDP_JWKS_URL: "https://keys.idp.example:9443/.well-known/jwks.json",
    });
  });
  after(async () => server?.close());

  const allowOrigin = async (origin: string) => (await fetch(`${server.url}/health`, { headers: { origin } })).headers.get("access-control-allow-origin");

  for (const [setting, origin] of [
    ["CLIENT_URL", "https://client.example:8443"],
    ["PUBLIC_APP_URL", "https://app.example"],
    ["AGENT_FRAMEWORK_URL", "http://agents.example:4000"],
    ["AGENT_FRAMEWORK_API_URL", "https://agents-api.example"],
    ["IDP_ISSUER", "https://auth.idp.example"],
    ["IDP_JWKS_URL", "https://keys.idp.example:9443"],
  ]) {
    it(`allows the exact origin of ${setting} (${origin})`, async () => {
      assert.equal(await allowOrigin(origin), origin);
    });
  }

  it("allows nothing else on those hosts: other scheme, port or subdomain", async () => {
    for (const origin of [
      "http://client.example:8443",
      "https://client.example",
      "https://app.example:8443",
      "https://evil.app.example",
      "https://agents.example:4000",
      "http://auth.idp.example",
      "https://login.auth.idp.example",
      "https://keys.idp.example",
      "https://idp.example",
    ]) {
      assert.equal(await allowOrigin(origin), null, origin);
    }
  });

  it("answers a preflight from a settings origin", async () => {
    const r = await fetch(`${server.url}/api/auth/exchange`, {
      method: "OPTIONS",
      headers: { origin: "https://app.example", "access-control-request-method": "POST", "access-control-request-headers": "authorization" },
    });
    assert.equal(r.status, 204);
    assert.equal(r.headers.get("access-control-allow-origin"), "https://app.example");
  });

  it("checks WebSocket upgrades against the same list", async () => {
    const url = `${server.url.replace(/^http/, "ws")}/ws`;
    assert.deepEqual(await upgrade(url, "https://evil.app.example"), { result: 403 });
  });
});

describe("rate limits", function () {
  let server: GameServer;
  before(async () => {
    server = await startTestServer({ RATE_LIMIT_BLOCK_SECONDS: "60" });
  });
  after(async () => server?.close());

  it("blocks after 100 REST requests a minute with 429, Retry-After, and keeps /status and /health open", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 101; i++) statuses.push((await fetch(`${server.url}/api/openapi.json`)).status);
    assert.equal(
      statuses.slice(0, 100).every((s) => s === 200),
      true,
    );
    assert.equal(statuses[100], 429);
    const blocked = await fetch(`${server.url}/api/nothing`);
    assert.equal(blocked.status, 429);
    assert.equal((await blocked.json()).error.code, "RATE_LIMITED");
    assert.ok(Number(blocked.headers.get("retry-after")) > 0);
    // The block covers every request, not only /api.
    assert.equal((await fetch(`${server.url}/env.js`)).status, 429);
    assert.equal((await fetch(`${server.url}/status`)).status, 200);
    assert.equal((await fetch(`${server.url}/health`)).status, 200);
  });
});

describe("authentication attempt limit", function () {
  let server: GameServer;
  beforeEach(async () => {
    server = await startTestServer({});
  });
  afterEach(async () => server?.close());

  it("blocks a client after 10 invalid tokens in a minute", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) {
      const r = await fetch(`${server.url}/api/auth/session`, { headers: { authorization: "Bearer invalid.token.value" } });
      statuses.push(r.status);
    }
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.equal(statuses[10], 429);
    assert.equal((await fetch(`${server.url}/api/openapi.json`)).status, 429);
  });

  it("counts invalid tokens outside /api/auth: after 10, even a good token gets 429 with Retry-After", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${server.url}/api/v1/player`, { headers: { authorization: "Bearer invalid.token.value" } });
      assert.equal(r.status, 401, `attempt ${i + 1}`);
    }
    const good = signServerToken(TEST_ENV.JWT_SECRET!, { sub: "acct-good-after-bad" }).token;
    const r = await fetch(`${server.url}/api/v1/player`, { headers: { authorization: `Bearer ${good}` } });
    assert.equal(r.status, 429);
    assert.equal((await r.json()).error.code, "RATE_LIMITED");
    assert.ok(Number(r.headers.get("retry-after")) > 0);
    assert.equal((await fetch(`${server.url}/status`)).status, 200);
  });

  it("fewer than 10 invalid tokens do not block a good one", async () => {
    for (let i = 0; i < 9; i++) {
      assert.equal((await fetch(`${server.url}/api/v1/player`, { headers: { authorization: "Bearer invalid.token.value" } })).status, 401);
    }
    const good = signServerToken(TEST_ENV.JWT_SECRET!, { sub: "acct-good-after-nine" }).token;
    const r = await fetch(`${server.url}/api/v1/player`, { headers: { authorization: `Bearer ${good}` } });
    assert.equal(r.status, 404); // authenticated; the account has no character
  });

  it("11 POSTs to /api/auth/anonymous: the 11th is 429 with Retry-After", async () => {
    const statuses: number[] = [];
    let last: Response | undefined;
    for (let i = 0; i < 11; i++) {
      last = await fetch(`${server.url}/api/auth/anonymous`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      statuses.push(last.status);
    }
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(201));
    assert.equal(statuses[10], 429);
    assert.equal((await last!.json()).error.code, "RATE_LIMITED");
    assert.ok(Number(last!.headers.get("retry-after")) > 0);
  });
});

describe("admin code guessing", function () {
  let server: GameServer;
  beforeEach(async () => {
    server = await startTestServer({});
  });
  afterEach(async () => server?.close());

  const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString("base64")}`;
  const expectBlocked = async (r: Response) => {
    assert.equal(r.status, 429);
    assert.equal((await r.json()).error.code, "RATE_LIMITED");
    assert.ok(Number(r.headers.get("retry-after")) > 0);
  };

  it("10 wrong HTTP Basic passwords on the monitor block the address, even for the right password", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${server.url}/colyseus/api`, { headers: { authorization: basic(`guess-${i}`) } });
      assert.equal(r.status, 401, `guess ${i + 1}`);
    }
    await expectBlocked(await fetch(`${server.url}/colyseus/api`, { headers: { authorization: basic(TEST_ENV.ADMIN_CODE!) } }));
  });

  it("10 wrong X-Admin-Code headers on the monitor block the address", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${server.url}/colyseus/api`, { headers: { "x-admin-code": `guess-${i}` } });
      assert.equal(r.status, 401, `guess ${i + 1}`);
    }
    await expectBlocked(await fetch(`${server.url}/colyseus/api`, { headers: { "x-admin-code": TEST_ENV.ADMIN_CODE! } }));
  });

  it("10 wrong X-Admin-Code headers on /api/admin block the address", async () => {
    for (let i = 0; i < 10; i++) {
      const r = await fetch(`${server.url}/api/admin/trades`, { headers: { "x-admin-code": `guess-${i}` } });
      assert.equal(r.status, 403, `guess ${i + 1}`);
    }
    await expectBlocked(await fetch(`${server.url}/api/admin/trades`, { headers: { "x-admin-code": TEST_ENV.ADMIN_CODE! } }));
  });

  it("requests without any code get the challenge and are not counted", async () => {
    for (let i = 0; i < 12; i++) {
      const r = await fetch(`${server.url}/colyseus/api`);
      assert.equal(r.status, 401);
      assert.match(r.headers.get("www-authenticate") ?? "", /Basic/);
    }
    const ok = await fetch(`${server.url}/colyseus/api`, { headers: { authorization: basic(TEST_ENV.ADMIN_CODE!) } });
    assert.equal(ok.status, 200);
    const trades = await fetch(`${server.url}/api/admin/trades`, { headers: { "x-admin-code": TEST_ENV.ADMIN_CODE! } });
    assert.equal(trades.status, 200);
  });
});
