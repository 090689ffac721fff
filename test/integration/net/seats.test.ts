/**
 * Seats reserved and never taken (docs/rooms.md#seats-and-full-worlds): an account holds one pending
 * seat (a new reservation replaces the older one, whose client is refused with SEAT_REPLACED), a
 * world is full by its players plus a bounded number of fresh seats, never by reservations alone,
 * and `/ws/matchmake` is rate limited per account and per address (429 RATE_LIMITED, Retry-After).
 */
import assert from "node:assert/strict";
import { matchMaker } from "@colyseus/core";
import { Client } from "@colyseus/sdk";
import type { GameServer } from "../../../src/server/server.js";
import { startTestServer } from "../../helpers/server.js";
import { sdkPlayer, tokenFor, type TestPlayer } from "../../helpers/clients.js";
import { until } from "../../helpers/trade.js";

type Answer = { status: number; body: any; retryAfter: string | null };

async function join(server: GameServer, token: string): Promise<Answer> {
  const r = await fetch(`${server.url}/ws/matchmake/join/world`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: "{}",
  });
  const text = await r.text();
  return { status: r.status, body: text ? JSON.parse(text) : undefined, retryAfter: r.headers.get("retry-after") };
}

async function worldsListing(server: GameServer) {
  const r = await fetch(`${server.url}/api/v1/worlds`);
  assert.equal(r.status, 200);
  return ((await r.json()) as { worlds: { world: number; players: number; full: boolean }[] }).worlds[0]!;
}

describe("seats: one pending seat per account, worlds full by players", function () {
  this.timeout(60_000);
  let server: GameServer;
  const players: TestPlayer[] = [];

  before(async function () {
    this.timeout(180_000);
    server = await startTestServer({ WORLD_MAX_PLAYERS: "20", MATCHMAKE_PER_ACCOUNT_PER_MINUTE: "1000", MATCHMAKE_PER_MINUTE: "1000" });
  });
  after(async () => {
    await Promise.all(players.map((p) => p.close()));
    await server?.close();
  });

  it("one account's 40 reservations never taken: the world is not full and another player joins", async () => {
    const { token } = tokenFor();
    for (let i = 0; i < 40; i++) {
      const a = await join(server, token);
      assert.equal(a.status, 200, `request ${i + 1}: ${JSON.stringify(a.body)}`);
    }
    const listing = await worldsListing(server);
    assert.equal(listing.players, 0);
    assert.equal(listing.full, false, "GET /api/v1/worlds: not full with nobody in it");
    const other = await sdkPlayer(server);
    players.push(other);
    assert.ok(other.id, "another player joined with the SDK");
    assert.equal((await matchMaker.query({ name: "world" }))[0]!.locked, false, "the listing is not locked");
  });

  it("a new reservation replaces the older one: the old seat's client is refused with SEAT_REPLACED, the new one enters", async () => {
    const { token } = tokenFor();
    const first = await join(server, token);
    const second = await join(server, token);
    assert.equal(first.status, 200);
    assert.equal(second.status, 200);
    const client = new Client(`${server.url}/ws`);
    await assert.rejects(client.consumeSeatReservation(first.body), (e: any) => {
      assert.match(String(e.message), /SEAT_REPLACED/);
      return true;
    });
    const room = await client.consumeSeatReservation(second.body);
    try {
      const sync = await new Promise<any>((resolve) => room.onMessage("player:sync", resolve));
      assert.equal(typeof sync.id, "string");
    } finally {
      await room.leave();
    }
  });

  it("fresh seats of many accounts count only up to a tenth of the world: reservations alone never fill it", async () => {
    const answers = [];
    for (let i = 0; i < 25; i++) answers.push(await join(server, tokenFor().token));
    assert.deepEqual(
      answers.map((a) => a.status),
      answers.map(() => 200),
    );
    await until(async () => ((await matchMaker.query({ name: "world" }))[0]!.metadata as { seats?: number }).seats! >= 25, "the seats published");
    assert.equal((await worldsListing(server)).full, false, "20 slots, 1 player, 25 fresh seats: counted 2");
  });
});

describe("seats: /ws/matchmake rate limits", function () {
  this.timeout(60_000);
  let server: GameServer;

  before(async function () {
    this.timeout(180_000);
    server = await startTestServer({ MATCHMAKE_PER_ACCOUNT_PER_MINUTE: "3", MATCHMAKE_PER_MINUTE: "8" });
  });
  after(async () => {
    await server?.close();
  });

  it("per account (3 a minute) and per address (8 a minute): 429 RATE_LIMITED with Retry-After", async () => {
    const a = tokenFor().token;
    for (let i = 0; i < 3; i++) assert.equal((await join(server, a)).status, 200, `a ${i + 1}`);
    const overAccount = await join(server, a);
    assert.equal(overAccount.status, 429, JSON.stringify(overAccount.body));
    assert.equal(overAccount.body.error.code, "RATE_LIMITED");
    assert.ok(Number(overAccount.retryAfter) >= 1 && Number(overAccount.retryAfter) <= 60, `Retry-After ${overAccount.retryAfter}`);
    // Another account from the same address is not limited by a's count (4 requests of the address so far).
    const b = tokenFor().token;
    for (let i = 0; i < 3; i++) assert.equal((await join(server, b)).status, 200, `b ${i + 1}`);
    assert.equal((await join(server, tokenFor().token)).status, 200, "the address's 8th");
    const overAddress = await join(server, tokenFor().token);
    assert.equal(overAddress.status, 429, JSON.stringify(overAddress.body));
    assert.equal(overAddress.body.error.code, "RATE_LIMITED");
    assert.ok(Number(overAddress.retryAfter) >= 1 && Number(overAddress.retryAfter) <= 60, `Retry-After ${overAddress.retryAfter}`);
    // Refused, not blocked: the REST API still answers the address.
    assert.equal((await fetch(`${server.url}/api/v1/worlds`)).status, 200);
  });
});
