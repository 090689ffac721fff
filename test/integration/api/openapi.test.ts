/**
 * The OpenAPI document and the Express app agree: every `/api` route the full server's app serves
 * (REST families, auth, admin, voice, the content routes and the document itself) is described in
 * `/api/openapi.json` with the same method and path, and every `/api` path the document describes is
 * served.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { startTestServer } from "../../helpers/server.js";

/** A layer of Express 5's router (the fields this walk reads). */
interface Layer {
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
  rawPath?: unknown;
  slash?: boolean;
}

/** `METHOD /path` of every route in a router stack, mounted routers included. */
function routesOf(stack: Layer[], prefix = ""): string[] {
  const out: string[] = [];
  for (const layer of stack) {
    if (layer.route) {
      for (const [method, on] of Object.entries(layer.route.methods)) {
        if (on && method !== "_all") out.push(`${method.toUpperCase()} ${prefix}${layer.route.path}`);
      }
    } else if (layer.handle?.stack) {
      assert.equal(typeof layer.rawPath, "string", "mounted routers have string paths");
      out.push(...routesOf(layer.handle.stack, layer.slash ? prefix : `${prefix}${layer.rawPath as string}`));
    }
  }
  return out;
}

describe("OpenAPI document vs the routes the server serves", function () {
  this.timeout(60_000);
  let server: GameServer;
  before(async () => {
    server = await startTestServer({
      DISABLE_RATE_LIMIT: "true",
      VOICE_API_KEY: "key",
      VOICE_API_SECRET: "secret-secret-secret-secret-secret",
      VOICE_URL: "wss://voice.example.test",
    });
  });
  after(async () => server?.close());

  it("every /api route is in the document and every documented /api path is served (method and path)", async () => {
    const app = server.httpServer.listeners("request")[0] as unknown as { router: { stack: Layer[] } };
    const served = routesOf(app.router.stack)
      .filter((r) => r.split(" ")[1]!.startsWith("/api/"))
      .map((r) => r.replace(/:(\w+)/g, "{$1}"));
    const doc = (await (await fetch(`${server.url}/api/openapi.json`)).json()) as { paths: Record<string, Record<string, unknown>> };
    const documented = Object.entries(doc.paths)
      .filter(([path]) => path.startsWith("/api/"))
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`));

    assert.equal(new Set(served).size, served.length, "no route is registered twice");
    const missing = served.filter((r) => !documented.includes(r));
    const phantom = documented.filter((r) => !served.includes(r));
    assert.deepEqual(missing, [], "served but not documented");
    assert.deepEqual(phantom, [], "documented but not served");
    for (const r of [
      "GET /api/v1/world/areas",
      "GET /api/data/skill-unlocks",
      "POST /api/auth/anonymous",
      "GET /api/admin/trades",
      "POST /api/voice/token",
      "GET /api/agents/{agentId}/quick-actions",
    ]) {
      assert.ok(served.includes(r), `${r} is served`);
    }
    assert.ok(served.length >= 40, `${served.length} routes`);
  });
});
