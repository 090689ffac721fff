/** Production serving of a built client (CLIENT_DIST) beside the API, manifests and sockets. */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GameServer } from "../../../src/server/server.js";
import { startTestServer } from "../../helpers/server.js";

const INDEX = "<!doctype html><title>Realm client</title><div id=app></div>";
const APP_JS = "console.log('realm client');";

describe("built client in production", function () {
  let server: GameServer;
  let dist: string;

  before(async () => {
    dist = mkdtempSync(join(tmpdir(), "client-dist-"));
    writeFileSync(join(dist, "index.html"), INDEX);
    mkdirSync(join(dist, "assets"));
    writeFileSync(join(dist, "assets", "app.js"), APP_JS);
    server = await startTestServer({
      NODE_ENV: "production",
      // Storage is the shared test storage (injected); production still requires the setting.
      DATABASE_URL: "postgres://unused@127.0.0.1:1/unused",
      JWT_SECRET: "production-like-secret-0123456789-abcdefghij",
      ADMIN_CODE: "production-like-admin-code-42",
      CLIENT_DIST: dist,
    });
  });
  after(async () => {
    await server?.close();
    rmSync(dist, { recursive: true, force: true });
  });

  const get = (path: string) => fetch(server.url + path);
  const expectJson404 = async (path: string) => {
    const r = await get(path);
    assert.equal(r.status, 404, path);
    assert.match(r.headers.get("content-type") ?? "", /application\/json/, path);
    assert.equal((await r.json()).error.code, "NOT_FOUND", path);
  };

  it("serves index.html at / (revalidated on every load)", async () => {
    const r = await get("/");
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /text\/html/);
    assert.equal(await r.text(), INDEX);
    assert.equal(r.headers.get("cache-control"), "no-cache");
  });

  it("serves the client's files", async () => {
    const r = await get("/assets/app.js");
    assert.equal(r.status, 200);
    assert.match(r.headers.get("content-type") ?? "", /javascript/);
    assert.equal(await r.text(), APP_JS);
  });

  it("falls back to index.html for unknown client routes", async () => {
    for (const path of ["/play", "/characters/abc/inventory", "/wsx", "/apis"]) {
      const r = await get(path);
      assert.equal(r.status, 200, path);
      assert.equal(await r.text(), INDEX, path);
    }
  });

  it("keeps the JSON 404 for the API (with or without a trailing path), manifests, /ws paths and missing files", async () => {
    for (const path of ["/api/unknown", "/api", "/api/", "/manifests/nope.json", "/ws", "/ws/", "/ws/some/thing", "/missing.js", "/assets/gone.css"]) {
      await expectJson404(path);
    }
  });

  it("still answers the API, health, env.js and manifests", async () => {
    assert.equal((await get("/health")).status, 200);
    assert.equal((await (await get("/status")).json()).storage, "ok");
    assert.match(await (await get("/env.js")).text(), /window\.__ENV__/);
    assert.equal((await get("/manifests/npcs.json")).status, 200);
    assert.equal((await get("/api/openapi.json")).status, 200);
    const r = await fetch(`${server.url}/api/auth/session`);
    assert.equal(r.status, 401);
  });
});
