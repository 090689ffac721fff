/**
 * Operations surface (docs/operations.md "Operations"): the monitor at /colyseus and its old address, the
 * playground outside production only, the Prometheus listener on METRICS_PORT (never the public
 * port) with the game's counters moving, and the access log with request ids and no secrets.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { Writable } from "node:stream";
import { createLogger } from "../../../src/logger.js";
import { startServer, type GameServer } from "../../../src/server/server.js";
import { METRIC_NAMES } from "../../../src/metrics.js";
import { sdkPlayer, jsonPlayer, tokenFor, type TestPlayer } from "../../helpers/clients.js";
import { axeForCoins, requestTrade, roomGone } from "../../helpers/trade.js";
import { eventually } from "../../helpers/clients.js";
import { startTestServer, testConfig, TEST_ENV } from "../../helpers/server.js";
import { pgliteStorage } from "../../helpers/storage.js";

const basic = (password: string) => `Basic ${Buffer.from(`admin:${password}`).toString("base64")}`;

/** One sample value from a Prometheus text page (undefined when the series is absent). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split("\n")) {
    if (line.startsWith("#")) continue;
    const m = /^([a-zA-Z_:][\w:]*)(\{([^}]*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const got = Object.fromEntries([...(m[3] ?? "").matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[4]);
  }
  return undefined;
}

describe("operations: monitor, playground, metrics, access log", function () {
  // Start-up (a PGlite cluster, the world) is slow on a loaded machine.
  this.timeout(120_000);

  describe("in development (test) mode, with METRICS_PORT", () => {
    let server: GameServer;
    before(async () => {
      server = await startTestServer({ METRICS_PORT: "0" });
    });
    after(async () => server?.close());

    it("serves the monitor at /colyseus behind the admin code", async () => {
      assert.equal((await fetch(`${server.url}/colyseus/api`)).status, 401);
      assert.equal((await fetch(`${server.url}/colyseus/api`, { headers: { authorization: basic("wrong") } })).status, 401);
      const r = await fetch(`${server.url}/colyseus/api`, { headers: { authorization: basic(TEST_ENV.ADMIN_CODE!) } });
      assert.equal(r.status, 200);
      const body = (await r.json()) as { rooms: { name: string }[] };
      assert.ok(body.rooms.some((room) => room.name === "world"));
      const page = await fetch(`${server.url}/colyseus/`, { headers: { "x-admin-code": TEST_ENV.ADMIN_CODE! } });
      assert.equal(page.status, 200);
      assert.match(page.headers.get("content-type") ?? "", /html/);
    });

    it("redirects the old /admin/monitor address permanently, keeping the rest of the path and the query", async () => {
      for (const [from, to] of [
        ["/admin/monitor", "/colyseus/"],
        ["/admin/monitor/", "/colyseus/"],
        ["/admin/monitor/api", "/colyseus/api"],
        ["/admin/monitor/api/room?roomId=abc", "/colyseus/api/room?roomId=abc"],
      ]) {
        const r = await fetch(`${server.url}${from}`, { redirect: "manual" });
        assert.equal(r.status, 308, from);
        assert.equal(r.headers.get("location"), to, from);
      }
      // Following it still needs the admin code.
      assert.equal((await fetch(`${server.url}/admin/monitor/api`)).status, 401);
    });

    it("serves the playground at /playground, pointed at the /ws matchmaking prefix, with its API under both", async () => {
      const first = await fetch(`${server.url}/playground/`, { redirect: "manual" });
      assert.equal(first.status, 302);
      const location = first.headers.get("location")!;
      assert.equal(new URL(location, server.url).searchParams.get("endpoint"), `${server.url}/ws`);
      const page = await fetch(new URL(location, server.url));
      assert.equal(page.status, 200);
      assert.match(await page.text(), /Colyseus Playground/);
      for (const base of ["/playground", "/ws/playground"]) {
        const rooms = (await (await fetch(`${server.url}${base}/rooms`)).json()) as { rooms: string[]; roomsByType: Record<string, number> };
        assert.ok(rooms.rooms.includes("world"), base);
        assert.equal(rooms.roomsByType.world, 1, base);
      }
    });

    it("keeps metrics off the public port", async () => {
      assert.equal((await fetch(`${server.url}/metrics`)).status, 404);
      assert.ok(server.metricsUrl, "metrics listener started");
      assert.match(server.metricsUrl!, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, "bound to loopback by default");
      assert.equal((await fetch(server.metricsUrl!.replace("/metrics", "/"))).status, 404);
    });

    it("exports every documented metric, process defaults included, and counts the game's activity", async () => {
      const scrape = async () => (await fetch(server.metricsUrl!)).text();
      const before = await scrape();
      for (const name of METRIC_NAMES) assert.match(before, new RegExp(`^# TYPE ${name} `, "m"), name);
      assert.match(before, /^process_cpu_user_seconds_total /m);
      assert.match(before, /^nodejs_eventloop_lag_seconds /m);
      assert.equal(sample(before, "realm_rooms", { type: "world" }), 1);
      assert.equal(sample(before, "realm_db_pool_size"), 1, "PGlite is one connection");

      const sdk = await sdkPlayer(server);
      const json = await jsonPlayer(server);
      try {
        json.send("player:chat", { text: "hello metrics" });
        json.send("no-such-event", {});
        await json.next("chat:message", (d) => d.text === "hello metrics");
        // A refused join: a bad token on each transport.
        const bad = await fetch(`${server.url}/ws/matchmake/join/world`, {
          method: "POST",
          headers: { "content-type": "application/json", authorization: "Bearer not-a-token" },
          body: "{}",
        });
        assert.ok(bad.status >= 400);
        // A verb only the server may use, refused before Colyseus sees it, counts as well.
        const create = await fetch(`${server.url}/ws/matchmake/create/world`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
        assert.equal(create.status, 403);
        const after = await eventually(async () => {
          const t = await scrape();
          return (sample(t, "realm_tick_duration_seconds_count") ?? 0) > 0 && (sample(t, "realm_messages_out_total", { event: "world:update" }) ?? 0) > 0
            ? t
            : undefined;
        }, "ticks and world updates counted");
        assert.equal(sample(after, "realm_players_online", { world: "world" }), 2);
        assert.equal(sample(after, "realm_joins_total", { transport: "sdk" }), 1);
        assert.equal(sample(after, "realm_joins_total", { transport: "ws" }), 1);
        assert.equal(sample(after, "realm_messages_in_total", { event: "player:chat" }), 1);
        assert.equal(sample(after, "realm_messages_in_total", { event: "unknown" }), 1);
        assert.equal(sample(after, "realm_join_refusals_total", { transport: "sdk", code: String(bad.status) }), 1);
        assert.equal(sample(after, "realm_join_refusals_total", { transport: "sdk", code: "403" }), 1);
        assert.ok((sample(after, "realm_messages_out_total", { event: "player:sync" }) ?? 0) >= 2);
        assert.ok(sample(after, "realm_save_queue_depth") !== undefined);
      } finally {
        await sdk.close();
        json.ws?.close();
      }
    });

    it("exports every metric the Grafana dashboard (ops/grafana-dashboard.json) queries", async () => {
      const dashboard = JSON.parse(readFileSync(new URL("../../../ops/grafana-dashboard.json", import.meta.url), "utf8")) as {
        panels: { title: string; targets?: { expr: string }[] }[];
        templating: { list: { query?: unknown }[] };
      };
      const exprs = [
        ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
        ...dashboard.templating.list.map((v) => (typeof v.query === "object" && v.query ? (v.query as { query: string }).query : "")),
      ];
      const queried = new Set<string>();
      for (const e of exprs) for (const m of e.matchAll(/\b((?:realm|process|nodejs)_[a-z0-9_]+)/g)) queried.add(m[1]!);
      assert.ok(queried.size >= METRIC_NAMES.length, `the dashboard queries ${queried.size} metrics`);
      const exported = new Set(
        [...(await (await fetch(server.metricsUrl!)).text()).matchAll(/^# TYPE (\S+) (\w+)$/gm)].flatMap((m) =>
          // A histogram's series are its name with _bucket, _sum and _count.
          m[2] === "histogram" ? [`${m[1]}_bucket`, `${m[1]}_sum`, `${m[1]}_count`] : [m[1]!],
        ),
      );
      const missing = [...queried].filter((name) => !exported.has(name));
      assert.deepEqual(missing, [], "queried by the dashboard but not exported");
      for (const name of METRIC_NAMES)
        assert.ok(
          [...queried].some((q) => q.startsWith(name)),
          `the dashboard shows ${name}`,
        );
    });

    it("counts trades by outcome and times the settlement", async () => {
      const players: TestPlayer[] = [];
      try {
        const { a, b, tradeId, roomId } = await axeForCoins(server, players);
        const ma = a.mark();
        a.send("tradeAccept", { tradeId });
        b.send("tradeAccept", { tradeId });
        await a.next("tradeConfirmScreen", () => true, { after: ma });
        a.send("tradeAccept", { tradeId });
        b.send("tradeAccept", { tradeId });
        await a.next("tradeCompleted", () => true, { after: ma });
        await roomGone(roomId);
        // A declined request, between two other players.
        const [c, d] = [await sdkPlayer(server), await jsonPlayer(server)];
        players.push(c, d);
        const declined = await requestTrade(c, d);
        d.send("tradeRequestRespond", { tradeId: declined, accept: false });
        await c.next("tradeCancelled", (e) => e.tradeId === declined);
        const t = await (await fetch(server.metricsUrl!)).text();
        assert.equal(sample(t, "realm_trades_total", { outcome: "completed" }), 1);
        assert.equal(sample(t, "realm_trades_total", { outcome: "declined" }), 1);
        assert.equal(sample(t, "realm_trade_settlement_seconds_count", { result: "ok" }), 1);
        assert.ok((sample(t, "realm_rooms", { type: "trade" }) ?? 0) <= 1);
      } finally {
        for (const p of players) await p.close();
      }
    });

    it("counts flood drops and the block they lead to", async () => {
      const p = await jsonPlayer(server);
      try {
        const closed = new Promise<number>((resolve) => p.ws!.once("close", (code) => resolve(code)));
        // Far past 60 a second for long enough to be closed (three flooded windows).
        const flood = setInterval(() => {
          for (let i = 0; i < 100 && p.ws!.readyState === p.ws!.OPEN; i++) p.send("player:chat", { text: "x" });
        }, 100);
        try {
          assert.equal(await closed, 4029);
        } finally {
          clearInterval(flood);
        }
        const t = await (await fetch(server.metricsUrl!)).text();
        assert.ok((sample(t, "realm_flood_drops_total") ?? 0) > 0);
        assert.ok((sample(t, "realm_rate_limit_blocks_total", { scope: "account" }) ?? 0) >= 1);
        assert.ok((sample(t, "realm_rate_limit_blocks_total", { scope: "ip" }) ?? 0) >= 1);
      } finally {
        p.ws?.close();
      }
    });
  });

  describe("in development with PLAYGROUND=false", () => {
    let server: GameServer;
    before(async () => {
      server = await startTestServer({ PLAYGROUND: "false" });
    });
    after(async () => server?.close());

    it("has no playground (404 under both paths)", async () => {
      for (const path of ["/playground", "/playground/", "/playground/rooms", "/ws/playground/rooms"]) {
        assert.equal((await fetch(`${server.url}${path}`, { redirect: "manual" })).status, 404, path);
      }
    });
  });

  describe("in production", () => {
    let server: GameServer;
    before(async () => {
      const config = testConfig({
        NODE_ENV: "production",
        DATABASE_URL: "postgres://unused.invalid/none",
        JWT_SECRET: "production-secret-0123456789-abcdefghijkl",
        ADMIN_CODE: "a-production-admin-code-0123",
      });
      server = await startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1" });
    });
    after(async () => server?.close());

    it("has no playground (404 under both paths) and no metrics listener without METRICS_PORT", async () => {
      for (const path of ["/playground", "/playground/", "/playground/rooms", "/ws/playground/rooms"]) {
        assert.equal((await fetch(`${server.url}${path}`, { redirect: "manual" })).status, 404, path);
      }
      assert.equal(server.metricsUrl, undefined);
      assert.equal((await fetch(`${server.url}/metrics`)).status, 404);
    });
  });

  describe("access log", () => {
    let server: GameServer;
    const lines: Record<string, any>[] = [];
    before(async () => {
      const sink = new Writable({
        write(chunk, _enc, done) {
          for (const l of String(chunk).split("\n")) if (l.trim()) lines.push(JSON.parse(l));
          done();
        },
      });
      const config = testConfig({ LOG_LEVEL: "info" });
      // The server's own logger, writing to memory.
      server = await startServer(config, { storage: await pgliteStorage(), port: 0, host: "127.0.0.1", logger: createLogger("info", sink) });
    });
    after(async () => server?.close());

    it("writes one line per request with a request id echoed in X-Request-Id", async () => {
      const r = await fetch(`${server.url}/health`);
      const id = r.headers.get("x-request-id");
      assert.match(id ?? "", /^[0-9a-f-]{36}$/);
      const line = await eventually(() => lines.find((l) => l.req?.id === id), "access log line");
      assert.equal(line.req.method, "GET");
      assert.equal(line.req.url, "/health");
      assert.equal(line.res.statusCode, 200);
      assert.equal(typeof line.responseTime, "number");
      // A proxy's id is kept; a strange one is replaced.
      assert.equal((await fetch(`${server.url}/health`, { headers: { "x-request-id": "edge-1234" } })).headers.get("x-request-id"), "edge-1234");
      const odd = (await fetch(`${server.url}/health`, { headers: { "x-request-id": "bad id <script>" } })).headers.get("x-request-id");
      assert.notEqual(odd, "bad id <script>");
    });

    it("redacts tokens and secrets: Authorization, X-Admin-Code, token and _authToken parameters, cookies", async () => {
      const { token } = tokenFor();
      const secrets = [token, "admin-code-secret-value", "query-token-secret", "sdk-auth-token-secret", "cookie-secret-value", "basic-password-secret"];
      const requests: [string, RequestInit][] = [
        ["/api/auth/session", { headers: { authorization: `Bearer ${token}` } }],
        ["/api/admin/trades", { headers: { "x-admin-code": "admin-code-secret-value" } }],
        [
          "/ws/matchmake/join/world?token=query-token-secret&_authToken=sdk-auth-token-secret",
          { method: "POST", body: "{}", headers: { "content-type": "application/json" } },
        ],
        ["/health?x=1", { headers: { cookie: "session=cookie-secret-value" } }],
        ["/colyseus/api", { headers: { authorization: basic("basic-password-secret") } }],
      ];
      const ids: string[] = [];
      for (const [path, init] of requests) ids.push((await fetch(`${server.url}${path}`, init)).headers.get("x-request-id")!);
      const logged = await eventually(() => {
        const found = ids.map((id) => lines.find((l) => l.req?.id === id));
        return found.every(Boolean) ? found : undefined;
      }, "every request logged");
      const text = JSON.stringify(lines);
      for (const s of secrets) assert.ok(!text.includes(s), `secret in the log: ${s}`);
      assert.equal(logged[0]!.req.headers.authorization, "[redacted]");
      assert.equal(logged[1]!.req.headers["x-admin-code"], "[redacted]");
      assert.equal(logged[2]!.req.url, "/ws/matchmake/join/world?token=%5Bredacted%5D&_authToken=%5Bredacted%5D");
      assert.equal(logged[3]!.req.headers.cookie, "[redacted]");
      assert.equal(logged[3]!.req.url, "/health?x=1");
    });
  });
});
