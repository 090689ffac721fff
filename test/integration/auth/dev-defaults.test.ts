/**
 * A development server has no well-known secret (docs/http.md "Authentication"): without JWT_SECRET it
 * signs with a random secret drawn at start (a token signed with the development secret of earlier
 * versions is refused), and without ADMIN_CODE the development code `dev` is accepted only from a
 * loopback address, in game (`/admin dev`) and as `X-Admin-Code`.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { signServerToken } from "../../../src/auth/tokens.js";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, RawPlayer, SdkPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";

/** The development secret earlier versions signed with when JWT_SECRET was not set. */
const OLD_DEV_SECRET = "dev-secret-do-not-use-in-production-000000";
/** A documentation address (RFC 5737): a client that is not this machine, as a trusted proxy reports it. */
const REMOTE = "203.0.113.7";
const DEV_ENV = { NODE_ENV: "development", JWT_SECRET: undefined, ADMIN_CODE: undefined, TRUST_PROXY: "true" };

describe("development defaults: no well-known secret", function () {
  this.timeout(180_000);
  let server: GameServer;
  let players: (RawPlayer | SdkPlayer)[] = [];
  before(async () => {
    server = await startTestServer(DEV_ENV);
  });
  afterEach(async () => {
    await closeAll(players);
    players = [];
  });
  after(async () => {
    await server?.close();
  });

  const tokenOf = (secret: string) => signServerToken(secret, { sub: randomUUID() }).token;
  const get = (path: string, headers: Record<string, string>) =>
    fetch(`${server.url}${path}`, { headers }).then(async (r) => (await r.arrayBuffer(), r.status));

  it("signs with a random secret, not the old development one: its tokens are refused on HTTP and /ws", async () => {
    assert.equal(server.config.jwtSecretGenerated, true);
    assert.notEqual(server.config.jwtSecret, OLD_DEV_SECRET);
    // (404: a fresh account has no character yet; past authentication all the same.)
    assert.equal(await get("/api/v1/player", { authorization: `Bearer ${tokenOf(server.config.jwtSecret)}` }), 404, "the server's own tokens work");
    assert.equal(await get("/api/v1/player", { authorization: `Bearer ${tokenOf(OLD_DEV_SECRET)}` }), 401);
    const p = await RawPlayer.connect(server, { token: tokenOf(OLD_DEV_SECRET), noWait: true });
    players.push(p);
    assert.equal((await p.log.waitClose()).code, 4001);
  });

  it("X-Admin-Code `dev` works from a loopback address and is refused from any other", async () => {
    assert.equal(await get("/api/admin/trades", { "x-admin-code": "dev" }), 200, "from 127.0.0.1");
    assert.equal(await get("/api/admin/trades", { "x-admin-code": "dev", "x-forwarded-for": "127.0.0.1" }), 200, "loopback through the proxy");
    assert.equal(await get("/api/admin/trades", { "x-admin-code": "dev", "x-forwarded-for": REMOTE }), 403);
    assert.equal(await get("/api/admin/trades", { "x-admin-code": "dev", "x-forwarded-for": `::ffff:${REMOTE}` }), 403);
  });

  it("in-game `/admin dev` works from a loopback address (plain socket and SDK) and is refused from any other", async () => {
    const local = await RawPlayer.connect(server, { token: tokenOf(server.config.jwtSecret) });
    const sdk = await SdkPlayer.join(server, { token: tokenOf(server.config.jwtSecret) });
    const remote = await RawPlayer.connect(server, { token: tokenOf(server.config.jwtSecret), headers: { "x-forwarded-for": REMOTE } });
    players.push(local, sdk, remote);
    for (const [p, answer] of [
      [local, /Admin mode enabled/],
      [sdk, /Admin mode enabled/],
      [remote, /Wrong admin code/],
    ] as const) {
      const m = p.log.mark();
      p.send("player:chat", { text: "/admin dev" });
      await p.log.system(answer, m);
    }
    assert.equal(server.world.player(remote.id)!.admin, false);
    assert.equal(server.world.player(local.id)!.admin, true);
  });
});
