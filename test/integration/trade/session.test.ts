/**
 * A trade's one owner on its own (docs/trading.md "How a trade flows"): a `TradeSession` over a
 * real world without Colyseus, a room or a timer — its room is a stand-in that records what it is
 * shown, its time is the clock it is given, and the audit goes to the per-process PGlite storage.
 */
import assert from "node:assert/strict";
import type { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import type { Trade, TradeParams } from "../../../src/domain/trade/trade.js";
import { createTrade, respondToRequest } from "../../../src/domain/trade/transitions.js";
import { createLogger } from "../../../src/logger.js";
import { TradeSession, type TradeWatchRoom } from "../../../src/trade/session.js";
import { Traders } from "../../../src/trade/traders.js";
import type { Connection } from "../../../src/world/player.js";
import type { World } from "../../../src/world/world.js";
import { characterRecord } from "../../helpers/records.js";
import { pgliteStorage, resetStorage } from "../../helpers/storage.js";
import { audits } from "../../helpers/trade.js";
import { OPEN_SPOT, worldWithoutStorage } from "../../helpers/world.js";
import type { Storage } from "../../../src/storage/orm.js";

type Sent = { event: string; data: any };

describe("trade: a session owns its trade (no room, no timer)", function () {
  this.timeout(120_000);
  let content: GameContent;
  let storage: Storage;
  const params: TradeParams = { pendingTimeoutMs: 30_000, inactivityTimeoutMs: 60_000 };

  before(async () => {
    content = await loadContent("world/manifests");
    storage = await pgliteStorage();
    await resetStorage(storage);
  });

  /** Two players side by side, an accepted request between them, and a session over it whose time is `t`. */
  function open() {
    const clock = { t: 1_000_000 };
    const world: World = worldWithoutStorage(content, { now: () => clock.t });
    const sent = new Map<string, Sent[]>();
    const conn = (id: string): Connection => {
      sent.set(id, []);
      return { id, kind: "json", send: (event, data) => sent.get(id)!.push({ event, data }), close: () => undefined };
    };
    const a = world.join(characterRecord("a", { at: OPEN_SPOT }), conn("a"), 4009).player;
    const b = world.join(characterRecord("b", { at: { x: OPEN_SPOT.x + 1, z: OPEN_SPOT.z } }), conn("b"), 4009).player;
    a.coins = 100;
    const created = createTrade({
      id: `t-${Math.random()}`,
      a: { playerId: "a", name: "a", level: 3 },
      b: { playerId: "b", name: "b", level: 3 },
      now: clock.t,
    });
    assert.ok(created.ok);
    const accepted = respondToRequest(created.value, { playerId: "b", accept: true }, clock.t);
    assert.ok(accepted.ok);
    const trade: Trade = accepted.value.trade;
    const logger = createLogger("silent");
    const session = new TradeSession(trade, {
      world,
      orm: storage.orm,
      characters: {} as CharacterRepository, // asked only for watchers, and none asks here
      items: (id) => content.items.get(id),
      logger,
      traders: new Traders(world, logger),
      params,
      now: () => clock.t,
    });
    const room = { roomId: "room-1", shown: [] as string[], closed: 0 };
    const window: TradeWatchRoom = {
      roomId: room.roomId,
      show: (t) => room.shown.push(t.state),
      close: () => room.closed++,
    };
    const events = (id: string, event: string) =>
      sent
        .get(id)!
        .filter((s) => s.event === event)
        .map((s) => s.data);
    return { clock, world, a, b, trade, session, room, window, events };
  }

  it("marks both players as trading, and sends tradeStarted with its room's id only once the room is attached", () => {
    const { a, b, trade, session, window, events } = open();
    assert.equal(a.tradeId, trade.id);
    assert.equal(b.tradeId, trade.id);
    assert.deepEqual(events("a", "tradeStarted"), []);
    session.act("a", { type: "setCoins", playerId: "a", coins: 5 });
    assert.equal(events("a", "tradeError")[0].message, "The trade has not started yet.");
    assert.equal(session.attach(window), true);
    assert.equal(session.attach(window), false, "a trade has one room");
    for (const [me, partner] of [
      ["a", "b"],
      ["b", "a"],
    ] as const) {
      const [started] = events(me, "tradeStarted");
      assert.equal(started.roomId, "room-1");
      assert.equal(started.partnerId, partner);
    }
  });

  it("applies each action and shows every change to its room; a respond in an open trade is refused", () => {
    const { session, room, window, events } = open();
    session.attach(window);
    session.act("a", { type: "setCoins", playerId: "a", coins: 7 });
    const [update] = events("b", "tradeUpdated");
    assert.equal(update.theirOffer.coins, 7);
    assert.equal(events("a", "tradeUpdated")[0].myOffer.coins, 7);
    assert.deepEqual(room.shown, ["offer", "offer"], "attached, then one change");
    session.act("b", { type: "respond", playerId: "b", accept: true });
    assert.deepEqual(
      events("b", "tradeError").map((e) => [e.code, e.message]),
      [["INVALID_TRADE", "That request is not valid in an open trade."]],
    );
    session.act("c", { type: "cancel", playerId: "c", reason: "cancelled" });
    assert.equal(session.over, false, "a stranger's cancel changes nothing");
  });

  it("times out by the clock it is given: nothing before TRADE_INACTIVITY_TIMEOUT_MS, then one tradeCancelled each, both freed, audited, its room closed", async () => {
    const { clock, a, b, trade, session, room, window, events } = open();
    session.attach(window);
    session.tick(clock.t + params.inactivityTimeoutMs - 1);
    assert.equal(session.over, false);
    clock.t += params.inactivityTimeoutMs;
    session.tick(clock.t);
    session.tick(clock.t); // a second tick after the end changes nothing
    assert.equal(session.over, true);
    for (const id of ["a", "b"])
      assert.deepEqual(
        events(id, "tradeCancelled").map((c) => c.reason),
        ["timeout"],
      );
    await session.ended; // resolves once the audit record is written
    assert.equal(room.closed, 1);
    assert.equal(a.tradeId, undefined);
    assert.equal(b.tradeId, undefined);
    assert.deepEqual(
      (await audits(storage.orm, [trade.id])).map((r) => [r.outcome, r.reason]),
      [["cancelled", "timeout"]],
    );
  });

  it("a trade whose room never came ends as a request that never opened: tradeCancelled server_error each, both freed, no audit", async () => {
    const { a, trade, session, events } = open();
    session.failToOpen();
    await session.ended;
    for (const id of ["a", "b"])
      assert.deepEqual(
        events(id, "tradeCancelled").map((c) => c.reason),
        ["server_error"],
      );
    assert.equal(a.tradeId, undefined);
    assert.deepEqual(await audits(storage.orm, [trade.id]), []);
  });
});
