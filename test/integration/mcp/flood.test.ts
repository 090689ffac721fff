/**
 * The flood limit governs an MCP session exactly as a `/ws` socket (its own server: the block it
 * causes covers the test's address): past 60 events a second the excess is dropped, and a session
 * that keeps flooding for 3 seconds is closed with 4029 and its account blocked, so a new session
 * for the account is refused (429) while the block lasts.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { eventually, tokenFor } from "../../helpers/clients.js";
import { McpAgent } from "../../helpers/mcp.js";
import { startTestServer } from "../../helpers/server.js";

describe("MCP and the flood limit", function () {
  this.timeout(60_000);
  let server: GameServer;
  let a: McpAgent | undefined;

  before(async function () {
    this.timeout(300_000); // start-up on a busy machine
    server = await startTestServer({ RATE_LIMIT_BLOCK_SECONDS: "30" });
  });
  after(async () => {
    await a?.close();
    await server?.close();
  });

  it("closes a flooding session with 4029 and blocks its account", async () => {
    const t = tokenFor();
    a = await McpAgent.connect(server.url, { token: t.token });
    const floods = server.metrics.floodDrops;
    const dropped0 = (await floods.get()).values.reduce((n, v) => n + v.value, 0);
    const id = [...server.world.players.keys()][0]!;
    let closed: unknown;
    // 300 events a second offered (five times the limit) until the world closes the session; once
    // the account and address are blocked, HTTP answers 429 RATE_LIMITED to every request.
    const pending: Promise<unknown>[] = [];
    const until = performance.now() + 10_000;
    while (!closed && performance.now() < until) {
      for (let i = 0; i < 30; i++) {
        pending.push(
          a.call("chat", { text: `flood ${i}` }).then(
            (r) => (r.code === "DISCONNECTED" ? (closed = r.detail) : undefined),
            (e: Error) => (/RATE_LIMITED/.test(e.message) ? (closed = e.message) : undefined),
          ),
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    await Promise.all(pending);
    const dropped = (await floods.get()).values.reduce((n, v) => n + v.value, 0) - dropped0;
    assert.ok(closed, `the session was closed (${dropped} dropped, ${pending.length} calls)`);
    assert.ok(dropped > 0, "the excess was dropped");
    assert.equal(server.world.players.get(id)?.connection, undefined, "the world let go of the connection");
    const again = await McpAgent.connect(server.url, { token: t.token }).then(
      () => "joined",
      (e: Error) => e.message,
    );
    assert.match(again, /RATE_LIMITED|429/);
    await eventually(() => server.gate.blockedFor(t.accountId) > 0, "the account is blocked");
  });
});
