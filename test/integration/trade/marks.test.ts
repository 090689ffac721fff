/**
 * A player's "in a trade" mark never outlives its trade (docs/trading.md "Cancellation"): a pending
 * request ends the moment either player leaves the world, so a requester who comes straight back
 * (the chaos run's bots switching worlds or reconnecting) is not refused ALREADY_IN_TRADE by a
 * request that only the next check would have found dead.
 */
import assert from "node:assert/strict";
import type { GameServer } from "../../../src/server/server.js";
import { sdkPlayer, type TestPlayer } from "../../helpers/clients.js";
import { startTestServer } from "../../helpers/server.js";
import { pgliteStorage, resetStorage } from "../../helpers/storage.js";
import { requestTrade } from "../../helpers/trade.js";

describe("trade: marks end with their trade", function () {
  this.timeout(30_000);
  let server: GameServer;
  const players: TestPlayer[] = [];

  before(async () => {
    await resetStorage(await pgliteStorage());
    server = await startTestServer({ DISABLE_RATE_LIMIT: "true" });
  });
  after(async () => {
    await Promise.all(players.map((p) => p.close()));
    await server?.close();
  });

  const join = async (opts: Parameters<typeof sdkPlayer>[1] = {}) => {
    const p = await sdkPlayer(server, opts);
    players.push(p);
    return p;
  };

  it("a requester who leaves is free at once: its request ends with it, and it may trade as soon as it is back", async () => {
    const a = await join();
    const b = await join();
    const c = await join();
    const pending = await requestTrade(a, b);
    assert.equal(server.trades.tradeOf(a.id), pending);
    const mb = b.mark();
    // The player is removed synchronously; its leave save goes on in the background.
    const left = server.world.leave(a.id, "test", undefined, true);
    assert.equal(server.trades.tradeOf(a.id), undefined, "the request ended when its requester left");
    const cancelled = await b.next("tradeCancelled", (d) => d.tradeId === pending, { after: mb });
    assert.equal(cancelled.reason, "disconnected");
    await left;

    const back = await join({ accountId: a.accountId, token: a.token, characterId: a.id });
    assert.equal(back.id, a.id);
    const fresh = await requestTrade(back, c);
    assert.notEqual(fresh, pending);
  });

  it("a target who leaves ends the request it received at once", async () => {
    const a = await join();
    const b = await join();
    const pending = await requestTrade(a, b);
    const ma = a.mark();
    const left = server.world.leave(b.id, "test", undefined, true);
    assert.equal(server.trades.tradeOf(a.id), undefined, "the requester is free");
    await a.next("tradeCancelled", (d) => d.tradeId === pending, { after: ma });
    await left;
  });
});
