/**
 * Authentication attempts on the WebSocket paths (docs/protocol.md#authentication-attempts): an invalid token on
 * matchmaking or on /ws counts against the same 10-per-minute authentication limit as HTTP, and so
 * does every anonymous identity a tokenless join creates. Past the limit the address is blocked:
 * matchmaking answers 429, /ws closes with 4029, HTTP answers 429. Each test gets its own server,
 * since the block covers the test's address (127.0.0.1).
 */
import assert from "node:assert/strict";
import { CLOSE_CODES } from "../../../src/events.js";
import type { GameServer } from "../../../src/server/server.js";
import { closeAll, lastSync, RawPlayer, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { startTestServer, TEST_ENV } from "../../helpers/server.js";

/** Status of a matchmaking request as the SDK would make it. */
async function matchmake(server: GameServer, token: string | undefined): Promise<number> {
  const res = await fetch(`${server.url}/ws/matchmake/join/world`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: "{}",
  });
  await res.arrayBuffer();
  return res.status;
}

/** Close code of a /ws connection that is refused (or "joined" when it gets player:sync). */
async function adapterOutcome(server: GameServer, token: string): Promise<number | "joined"> {
  const p = await RawPlayer.connect(server, { token, noWait: true });
  const outcome = await Promise.race([p.log.waitFor("player:sync").then(() => "joined" as const), p.log.waitClose().then((c) => c.code)]);
  await p.close();
  return outcome;
}

describe("WebSocket authentication attempts", function () {
  this.timeout(40_000);
  let server: GameServer;
  let players: (SdkPlayer | RawPlayer)[] = [];
  beforeEach(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    await closeAll(players);
    players = [];
    await server?.close();
  });

  it("invalid tokens on matchmaking count: 10 a minute are answered 401, then the address is blocked (429 everywhere)", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 11; i++) statuses.push(await matchmake(server, `bad-token-${i}`));
    // The 10th attempt reaches the limit and blocks the address, as on HTTP: the 11th is refused.
    assert.deepEqual(statuses, [...Array(10).fill(401), 429]);
    const good = tokenFor();
    assert.equal(await matchmake(server, good.token), 429, "the address is blocked for valid tokens too");
    assert.equal(await adapterOutcome(server, good.token), CLOSE_CODES.FLOOD);
    const http = await fetch(`${server.url}/api/v1/player`, { headers: { authorization: `Bearer ${good.token}` } });
    assert.equal(http.status, 429);
    assert.ok(Number(http.headers.get("retry-after")) > 0);
  });

  it("HTTP, matchmaking and /ws share one counter", async () => {
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${server.url}/api/v1/player`, { headers: { authorization: "Bearer nope" } });
      assert.equal(r.status, 401);
    }
    for (let i = 0; i < 4; i++) assert.equal(await matchmake(server, "nope"), 401);
    for (let i = 0; i < 2; i++) assert.equal(await adapterOutcome(server, "nope"), CLOSE_CODES.BAD_TOKEN);
    // The 10th attempt (of three kinds) reached the limit: blocked.
    const good = tokenFor();
    assert.equal(await adapterOutcome(server, good.token), CLOSE_CODES.FLOOD);
    await assert.rejects(SdkPlayer.join(server, { token: good.token, accountId: good.accountId }), (e: any) => e.code === 429);
  });

  it("valid tokens are not counted", async () => {
    for (let i = 0; i < 12; i++) assert.equal(await matchmake(server, tokenFor().token), 200);
    assert.equal(await adapterOutcome(server, tokenFor().token), "joined");
  });

  it("anonymous joins create at most 10 identities a minute per address; the 11th is refused and creates nothing", async () => {
    const accounts = async () =>
      Number((await server.storage.orm.em.fork().getConnection().execute<{ n: string }[]>("select count(*) as n from accounts where anonymous"))[0]!.n);
    const before = await accounts();
    for (let i = 0; i < 5; i++) assert.equal(await matchmake(server, undefined), 200);
    for (let i = 0; i < 5; i++) assert.equal(await adapterOutcome(server, ""), "joined");
    assert.equal(await accounts(), before + 10);
    assert.equal(await adapterOutcome(server, ""), CLOSE_CODES.FLOOD);
    assert.equal(await matchmake(server, undefined), 429);
    assert.equal(await accounts(), before + 10, "no identity created past the limit");
  });

  it("wrong in-game admin codes count too: after 10 the address is blocked and even the right code is refused", async () => {
    const good = tokenFor();
    const p = await SdkPlayer.join(server, { token: good.token, accountId: good.accountId });
    players.push(p);
    const admin = async (code: string) => {
      const m = p.log.mark();
      p.send("player:chat", { text: `/admin ${code}` });
      return (await p.log.system(/admin|wrong codes/i, m)).text;
    };
    for (let i = 0; i < 10; i++) assert.equal(await admin(`guess-${i}`), "Wrong admin code.");
    assert.equal(await admin(TEST_ENV.ADMIN_CODE!), "Too many wrong codes; try again later.");
    assert.equal(lastSync(p).admin ?? false, false);
    const http = await fetch(`${server.url}/api/v1/player`, { headers: { authorization: `Bearer ${good.token}` } });
    assert.equal(http.status, 429, "the address is blocked for HTTP too");
    assert.equal(await matchmake(server, tokenFor().token), 429);
  });

  it("the right in-game admin code is not counted", async () => {
    const good = tokenFor();
    const p = await SdkPlayer.join(server, { token: good.token, accountId: good.accountId });
    players.push(p);
    for (let i = 0; i < 12; i++) {
      const m = p.log.mark();
      p.send("player:chat", { text: `/admin ${TEST_ENV.ADMIN_CODE}` });
      await p.log.system(/Admin mode enabled/, m);
    }
    assert.equal(await matchmake(server, tokenFor().token), 200);
  });
});
