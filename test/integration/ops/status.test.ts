/**
 * GET /status with storage really down (docs/http.md#status-and-health: answers within 3 s, `degraded`/`down`).
 * Two real outages: the embedded database's only connection held by an open transaction, and a
 * PostgreSQL address that accepts TCP connections but never answers.
 */
import assert from "node:assert/strict";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { AuthService } from "../../../src/auth/service.js";
import { createApp } from "../../../src/http/app.js";
import { CorsPolicy } from "../../../src/http/cors.js";
import { Blocklist, createLimits } from "../../../src/http/limits.js";
import { createLogger } from "../../../src/logger.js";
import { openStorage, type Storage } from "../../../src/storage/orm.js";
import type { GameServer } from "../../../src/server/server.js";
import { startTestServer, testConfig } from "../../helpers/server.js";
import { pgliteStorage } from "../../helpers/storage.js";

async function timedStatus(url: string): Promise<{ ms: number; status: number; body: Record<string, unknown> }> {
  const t0 = performance.now();
  const r = await fetch(`${url}/status`);
  const body = (await r.json()) as Record<string, unknown>;
  return { ms: performance.now() - t0, status: r.status, body };
}

describe("GET /status with storage down", function () {
  this.timeout(20_000);

  describe("embedded database busy (its single connection held by an open transaction)", () => {
    let server: GameServer;
    let storage: Storage;
    before(async () => {
      storage = await pgliteStorage();
      server = await startTestServer({}, storage);
    });
    after(async () => server?.close());

    it("answers 200 degraded/down within 3 s, and ok again once storage answers", async () => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let entered!: () => void;
      const inside = new Promise<void>((r) => (entered = r));
      const tx = storage.orm.em.fork().transactional(async (em) => {
        await em.execute("select 1");
        entered();
        await held;
      });
      try {
        await inside;
        const down = await timedStatus(server.url);
        assert.equal(down.status, 200);
        assert.equal(down.body.status, "degraded");
        assert.equal(down.body.storage, "down");
        assert.ok(down.ms < 3_000, `took ${down.ms} ms`);
      } finally {
        release();
        await tx;
      }
      const up = await timedStatus(server.url);
      assert.equal(up.body.status, "ok");
      assert.equal(up.body.storage, "ok");
    });
  });

  describe("PostgreSQL address that accepts connections and never answers", () => {
    let blackhole: TcpServer;
    const sockets = new Set<Socket>();
    let storage: Storage;
    let http: HttpServer;
    let url: string;
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);

    before(async () => {
      process.on("unhandledRejection", onUnhandled);
      blackhole = createTcpServer((s) => {
        sockets.add(s);
        s.on("error", () => undefined);
        s.on("close", () => sockets.delete(s));
      });
      await new Promise<void>((r) => blackhole.listen(0, "127.0.0.1", r));
      const port = (blackhole.address() as AddressInfo).port;
      // The connection timeout (1.5 s) is longer than the /status probe's (1 s): the probe's
      // query fails only after /status has answered.
      storage = await openStorage({ url: `postgres://game@127.0.0.1:${port}/game`, migrate: false, connectTimeoutMs: 1_500 });
      const config = testConfig();
      const { app } = createApp({
        config,
        logger: createLogger("silent"),
        auth: new AuthService(config, storage.orm),
        limits: createLimits({ enabled: false, blockSeconds: 60, blocklist: new Blocklist() }),
        cors: new CorsPolicy(config),
        storagePing: () => storage.ping(1_000),
        playersOnline: () => 0,
      });
      http = createHttpServer(app);
      await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
      url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    });
    after(async () => {
      process.off("unhandledRejection", onUnhandled);
      http?.close();
      for (const s of sockets) s.destroy();
      await storage?.close().catch(() => undefined);
      blackhole?.close();
    });

    it("answers 200 degraded/down within 3 s; the late failure of the probe is handled", async () => {
      const [a, b] = await Promise.all([timedStatus(url), timedStatus(url)]);
      for (const r of [a, b]) {
        assert.equal(r.status, 200);
        assert.equal(r.body.status, "degraded");
        assert.equal(r.body.storage, "down");
        assert.ok(r.ms < 3_000, `took ${r.ms} ms`);
      }
      assert.ok(sockets.size >= 1, "the probe reached the database address");
      // A query started now fails after the probe's (same connection timeout, started later).
      await assert.rejects(storage.orm.em.fork().getConnection().execute("select 1"));
      await new Promise((r) => setImmediate(r));
      assert.deepEqual(unhandled, []);
    });
  });
});
