import assert from "node:assert/strict";
import { unwrap, type Result } from "../../../src/domain/errors.js";
import { countItem, emptyInventory, freeSlots, inventoryToSlots, type Inventory } from "../../../src/domain/inventory.js";
import { DEFAULT_TRADE_PARAMS, viewFor, type TradeContext, type TradeHoldings, type Trade, type TradeStep } from "../../../src/domain/trade/trade.js";
import {
  acceptTrade,
  applyTradeAction,
  cancelTrade,
  completeTrade,
  createTrade,
  failSettlement,
  removeOfferItem,
  respondToRequest,
  setOfferCoins,
  setOfferItem,
  tickTrade,
} from "../../../src/domain/trade/transitions.js";
import { planSettlement } from "../../../src/domain/trade/settlement-plan.js";
import { checkTradeRequest, type TradeRequestCheck } from "../../../src/domain/trade/request.js";
import { computeValues } from "../../../src/domain/trade/offer.js";
import { SETTLEMENT_ERROR, TRADE_CANCEL_REASON, TRADE_ERROR } from "../../../src/domain/trade/codes.js";
import { MAX_STACK } from "../../../src/domain/types.js";
import { FakeClock, fullExcept, inv, lookup, valueOf } from "./fixtures.js";

const A = { playerId: "char-a", name: "Alice", level: 3 };
const B = { playerId: "char-b", name: "Bob", level: 7 };
const STRANGER = "char-z";

/** Holdings the test can change between actions, as the world would. */
class World implements TradeContext {
  readonly holdings = new Map<string, TradeHoldings>();
  constructor(invA: Inventory, invB: Inventory, coinsA = 0, coinsB = 0) {
    this.holdings.set(A.playerId, { inventory: invA, coins: coinsA });
    this.holdings.set(B.playerId, { inventory: invB, coins: coinsB });
  }
  readonly items = lookup;
  readonly holdingsOf = (id: string): TradeHoldings => this.holdings.get(id) ?? { inventory: emptyInventory(), coins: 0 };
}

function codeOf<T>(r: Result<T, string>): string | undefined {
  return r.ok ? undefined : r.error.code;
}

function stepOf(r: Result<TradeStep, string>): TradeStep {
  return unwrap(r);
}

function pending(clock: FakeClock): Trade {
  return unwrap(createTrade({ id: "trade-1", a: A, b: B, now: clock.now }));
}

function offerScreen(clock: FakeClock): Trade {
  return stepOf(respondToRequest(pending(clock), { playerId: B.playerId, accept: true }, clock.now)).trade;
}

/** Both accept on the offer screen; asserts the move to confirm. */
function confirmScreen(trade: Trade, world: World, clock: FakeClock): Trade {
  const one = stepOf(acceptTrade(trade, { playerId: A.playerId }, clock.now, world)).trade;
  const two = stepOf(acceptTrade(one, { playerId: B.playerId }, clock.now, world));
  assert.equal(two.effect.kind, "confirmScreen");
  return two.trade;
}

function standardWorld(): World {
  return new World(
    inv([0, "bronze_axe", 1], [1, "feather", 50], [2, "quest_token", 1], [3, "mystery", 1]),
    inv([0, "logs", 1], [5, "air_rune", 100]),
    1_000,
    20,
  );
}

describe("domain/trade", () => {
  describe("TRADE_ERROR", () => {
    it("lists the documented codes exactly", () => {
      assert.deepEqual(Object.values(TRADE_ERROR), [
        "INVALID_REQUEST",
        "PLAYER_OFFLINE",
        "SELF_TRADE",
        "TOO_FAR",
        "ALREADY_IN_TRADE",
        "PLAYER_BUSY",
        "RATE_LIMITED",
        "INVALID_TRADE",
        "NOT_IN_TRADE",
        "INVALID_SLOT",
        "INVALID_ITEM",
        "INVALID_QUANTITY",
        "UNTRADEABLE_ITEM",
        "STALE_OFFER",
        "OFFER_FROZEN",
        "INVENTORY_FULL",
        "PLAYER_DEAD",
        "TRADE_FAILED",
      ]);
      assert.deepEqual(Object.values(TRADE_CANCEL_REASON), [
        "declined",
        "cancelled",
        "timeout",
        "disconnected",
        "player_died",
        "moved_away",
        "invalid_items",
        "server_error",
      ]);
    });
  });

  describe("checkTradeRequest", () => {
    const base: TradeRequestCheck = {
      requesterId: A.playerId,
      targetId: B.playerId,
      targetOnline: true,
      requesterTile: { x: 0, z: 0 },
      targetTile: { x: 2, z: -2 },
      requesterInTrade: false,
      targetInTrade: false,
      requesterDead: false,
      targetDead: false,
      now: 10_000,
    };
    const cases: [string, Partial<TradeRequestCheck>, string | undefined][] = [
      ["2 tiles apart", {}, undefined],
      ["oneself", { targetId: A.playerId }, TRADE_ERROR.SELF_TRADE],
      ["target offline", { targetOnline: false }, TRADE_ERROR.PLAYER_OFFLINE],
      ["requester dead", { requesterDead: true }, TRADE_ERROR.PLAYER_DEAD],
      ["target dead", { targetDead: true }, TRADE_ERROR.PLAYER_DEAD],
      ["requester already trading", { requesterInTrade: true }, TRADE_ERROR.ALREADY_IN_TRADE],
      ["target trading", { targetInTrade: true }, TRADE_ERROR.PLAYER_BUSY],
      ["target busy or ignoring", { targetBusy: true }, TRADE_ERROR.PLAYER_BUSY],
      ["3 tiles apart", { targetTile: { x: 3, z: 0 } }, TRADE_ERROR.TOO_FAR],
      ["same pair 2.999 s ago", { lastPairRequestAt: 10_000 - 2_999 }, TRADE_ERROR.RATE_LIMITED],
      ["same pair 3 s ago", { lastPairRequestAt: 10_000 - 3_000 }, undefined],
    ];
    for (const [name, change, expected] of cases) {
      it(`${name} → ${expected ?? "ok"}`, () => assert.equal(codeOf(checkTradeRequest({ ...base, ...change })), expected));
    }
  });

  describe("createTrade and respondToRequest", () => {
    it("creates a pending trade with empty offers", () => {
      const clock = new FakeClock();
      const s = pending(clock);
      assert.equal(s.state, "pending");
      assert.equal(s.revision, 0);
      assert.equal(s.createdAt, clock.now);
      assert.deepEqual(viewFor(s, A.playerId), {
        myOffer: { items: [], coins: 0, accepted: false },
        theirOffer: { items: [], coins: 0, accepted: false },
      });
    });
    it("refuses a trade with oneself", () => {
      assert.equal(codeOf(createTrade({ id: "t", a: A, b: A, now: 0 })), TRADE_ERROR.SELF_TRADE);
    });
    it("accept by the target opens the offer screen", () => {
      const clock = new FakeClock();
      const s = pending(clock);
      const step = stepOf(respondToRequest(s, { playerId: B.playerId, accept: true }, clock.advance(1_000)));
      assert.equal(step.effect.kind, "started");
      assert.equal(step.trade.state, "offer");
      assert.equal(step.trade.startedAt, clock.now);
      assert.equal(step.trade.lastActivityAt, clock.now);
    });
    it("decline by the target cancels with reason declined", () => {
      const clock = new FakeClock();
      const step = stepOf(respondToRequest(pending(clock), { playerId: B.playerId, accept: false }, clock.now));
      assert.deepEqual(step.effect, { kind: "cancelled", reason: "declined" });
      assert.equal(step.trade.state, "cancelled");
      assert.equal(step.trade.cancelledBy, B.playerId);
      assert.equal(step.trade.endedAt, clock.now);
    });
    const refusals: [string, (c: FakeClock) => Trade, string, string][] = [
      ["the requester answering", pending, A.playerId, TRADE_ERROR.INVALID_TRADE],
      ["a stranger answering", pending, STRANGER, TRADE_ERROR.NOT_IN_TRADE],
      ["answering twice", offerScreen, B.playerId, TRADE_ERROR.INVALID_TRADE],
    ];
    for (const [name, make, who, expected] of refusals) {
      it(`refuses ${name} with ${expected}`, () => {
        const clock = new FakeClock();
        assert.equal(codeOf(respondToRequest(make(clock), { playerId: who, accept: true }, clock.now)), expected);
      });
    }
  });

  describe("setOfferItem", () => {
    it("offers a slot, recording its item, bumping the revision", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const step = stepOf(setOfferItem(offerScreen(clock), { playerId: A.playerId, slot: 1, quantity: 20 }, clock.advance(500), world));
      assert.equal(step.effect.kind, "updated");
      assert.equal(step.trade.revision, 1);
      assert.equal(step.trade.lastActivityAt, clock.now);
      assert.deepEqual(viewFor(step.trade, A.playerId).myOffer, { items: [{ inventorySlot: 1, itemId: "feather", quantity: 20 }], coins: 0, accepted: false });
      assert.deepEqual(viewFor(step.trade, B.playerId).theirOffer.items, [{ inventorySlot: 1, itemId: "feather", quantity: 20 }]);
    });
    it("setting a slot again replaces its quantity; lines stay sorted by slot", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = offerScreen(clock);
      s = stepOf(setOfferItem(s, { playerId: A.playerId, slot: 1, quantity: 20 }, clock.now, world)).trade;
      s = stepOf(setOfferItem(s, { playerId: A.playerId, slot: 0, quantity: 1 }, clock.now, world)).trade;
      s = stepOf(setOfferItem(s, { playerId: A.playerId, slot: 1, quantity: 50 }, clock.now, world)).trade;
      assert.equal(s.revision, 3);
      assert.deepEqual(s.offers[A.playerId]!.items, [
        { inventorySlot: 0, itemId: "bronze_axe", quantity: 1 },
        { inventorySlot: 1, itemId: "feather", quantity: 50 },
      ]);
    });
    it("setting the same quantity again changes nothing", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const s = stepOf(setOfferItem(offerScreen(clock), { playerId: A.playerId, slot: 1, quantity: 5 }, clock.now, world)).trade;
      const again = stepOf(setOfferItem(s, { playerId: A.playerId, slot: 1, quantity: 5 }, clock.now, world));
      assert.equal(again.effect.kind, "none");
      assert.equal(again.trade, s);
    });
    const refusals: [string, string, number, number, string][] = [
      ["slot 28", A.playerId, 28, 1, TRADE_ERROR.INVALID_SLOT],
      ["slot -1", A.playerId, -1, 1, TRADE_ERROR.INVALID_SLOT],
      ["slot 1.5", A.playerId, 1.5, 1, TRADE_ERROR.INVALID_SLOT],
      ["an empty slot", A.playerId, 9, 1, TRADE_ERROR.INVALID_SLOT],
      ["an untradeable item", A.playerId, 2, 1, TRADE_ERROR.UNTRADEABLE_ITEM],
      ["an unknown item", A.playerId, 3, 1, TRADE_ERROR.INVALID_ITEM],
      ["quantity 0", A.playerId, 1, 0, TRADE_ERROR.INVALID_QUANTITY],
      ["more than the slot holds", A.playerId, 1, 51, TRADE_ERROR.INVALID_QUANTITY],
      ["a fractional quantity", A.playerId, 1, 2.5, TRADE_ERROR.INVALID_QUANTITY],
      ["two of a non-stackable slot", A.playerId, 0, 2, TRADE_ERROR.INVALID_QUANTITY],
      ["a stranger", STRANGER, 1, 1, TRADE_ERROR.NOT_IN_TRADE],
    ];
    for (const [name, who, slot, quantity, expected] of refusals) {
      it(`refuses ${name} with ${expected}`, () => {
        const clock = new FakeClock();
        const s = offerScreen(clock);
        assert.equal(codeOf(setOfferItem(s, { playerId: who, slot, quantity }, clock.now, standardWorld())), expected);
      });
    }
    it("refuses while pending (INVALID_TRADE), on confirm (OFFER_FROZEN) and after the end (INVALID_TRADE)", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const action = { playerId: A.playerId, slot: 1, quantity: 1 };
      assert.equal(codeOf(setOfferItem(pending(clock), action, clock.now, world)), TRADE_ERROR.INVALID_TRADE);
      const confirm = confirmScreen(offerScreen(clock), world, clock);
      assert.equal(codeOf(setOfferItem(confirm, action, clock.now, world)), TRADE_ERROR.OFFER_FROZEN);
      const ended = stepOf(cancelTrade(offerScreen(clock), { playerId: A.playerId, reason: "cancelled" }, clock.now)).trade;
      assert.equal(codeOf(setOfferItem(ended, action, clock.now, world)), TRADE_ERROR.INVALID_TRADE);
    });
  });

  describe("setOfferCoins and removeOfferItem", () => {
    it("sets, replaces and removes coins", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = offerScreen(clock);
      s = stepOf(setOfferCoins(s, { playerId: A.playerId, coins: 400 }, clock.now, world)).trade;
      s = stepOf(setOfferCoins(s, { playerId: A.playerId, coins: 1_000 }, clock.now, world)).trade;
      assert.equal(s.offers[A.playerId]!.coins, 1_000);
      assert.equal(stepOf(setOfferCoins(s, { playerId: A.playerId, coins: 1_000 }, clock.now, world)).effect.kind, "none");
      s = stepOf(setOfferCoins(s, { playerId: A.playerId, coins: 0 }, clock.now, world)).trade;
      assert.equal(s.offers[A.playerId]!.coins, 0);
      assert.equal(s.revision, 3);
    });
    for (const [name, coins] of [
      ["more than held", 1_001],
      ["negative", -1],
      ["fractional", 1.5],
      ["NaN", NaN],
    ] as const) {
      it(`refuses ${name} coins with INVALID_QUANTITY`, () => {
        const clock = new FakeClock();
        assert.equal(codeOf(setOfferCoins(offerScreen(clock), { playerId: A.playerId, coins }, clock.now, standardWorld())), TRADE_ERROR.INVALID_QUANTITY);
      });
    }
    it("refuses coins on the confirmation screen with OFFER_FROZEN", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const confirm = confirmScreen(offerScreen(clock), world, clock);
      assert.equal(codeOf(setOfferCoins(confirm, { playerId: A.playerId, coins: 1 }, clock.now, world)), TRADE_ERROR.OFFER_FROZEN);
    });
    it("removes an offered slot", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const s = stepOf(setOfferItem(offerScreen(clock), { playerId: B.playerId, slot: 5, quantity: 10 }, clock.now, world)).trade;
      const step = stepOf(removeOfferItem(s, { playerId: B.playerId, slot: 5 }, clock.now));
      assert.equal(step.effect.kind, "updated");
      assert.deepEqual(step.trade.offers[B.playerId]!.items, []);
      assert.equal(step.trade.revision, 2);
    });
    it("refuses removing a slot not in the offer, a bad slot, a stranger, and on confirm", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const s = offerScreen(clock);
      assert.equal(codeOf(removeOfferItem(s, { playerId: A.playerId, slot: 1 }, clock.now)), TRADE_ERROR.INVALID_SLOT);
      assert.equal(codeOf(removeOfferItem(s, { playerId: A.playerId, slot: 30 }, clock.now)), TRADE_ERROR.INVALID_SLOT);
      assert.equal(codeOf(removeOfferItem(s, { playerId: STRANGER, slot: 1 }, clock.now)), TRADE_ERROR.NOT_IN_TRADE);
      const confirm = confirmScreen(s, world, clock);
      assert.equal(codeOf(removeOfferItem(confirm, { playerId: A.playerId, slot: 1 }, clock.now)), TRADE_ERROR.OFFER_FROZEN);
    });
  });

  describe("acceptTrade", () => {
    it("one acceptance is an update; a repeat changes nothing", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const one = stepOf(acceptTrade(offerScreen(clock), { playerId: A.playerId }, clock.now, world));
      assert.equal(one.effect.kind, "updated");
      assert.equal(one.trade.offers[A.playerId]!.accepted, true);
      assert.equal(one.trade.offers[B.playerId]!.accepted, false);
      assert.equal(one.trade.revision, 0, "acceptance is not an offer change");
      assert.equal(stepOf(acceptTrade(one.trade, { playerId: A.playerId }, clock.now, world)).effect.kind, "none");
    });
    it("any offer change clears both acceptances and bumps the revision", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = offerScreen(clock);
      s = stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).trade;
      const changes: ((t: Trade) => Trade)[] = [
        (t) => stepOf(setOfferItem(t, { playerId: B.playerId, slot: 0, quantity: 1 }, clock.now, world)).trade,
        (t) => stepOf(setOfferCoins(t, { playerId: B.playerId, coins: 5 }, clock.now, world)).trade,
        (t) => stepOf(removeOfferItem(t, { playerId: B.playerId, slot: 0 }, clock.now)).trade,
      ];
      for (const change of changes) {
        const before = s.revision;
        s = stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).trade;
        assert.equal(s.offers[A.playerId]!.accepted, true);
        s = change(s);
        assert.equal(s.revision, before + 1);
        assert.equal(s.offers[A.playerId]!.accepted, false);
        assert.equal(s.offers[B.playerId]!.accepted, false);
      }
    });
    it("refuses a stale revision and takes the current one", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      const s = stepOf(setOfferItem(offerScreen(clock), { playerId: A.playerId, slot: 1, quantity: 5 }, clock.now, world)).trade;
      assert.equal(codeOf(acceptTrade(s, { playerId: B.playerId, revision: 0 }, clock.now, world)), TRADE_ERROR.STALE_OFFER);
      assert.equal(stepOf(acceptTrade(s, { playerId: B.playerId, revision: 1 }, clock.now, world)).effect.kind, "updated");
    });
    it("both accepting on the offer screen moves to confirm with acceptances reset", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = offerScreen(clock);
      s = stepOf(setOfferItem(s, { playerId: A.playerId, slot: 0, quantity: 1 }, clock.now, world)).trade;
      s = confirmScreen(s, world, clock);
      assert.equal(s.state, "confirm");
      assert.equal(s.revision, 2, "entering the confirmation screen is a new revision");
      assert.equal(s.offers[A.playerId]!.accepted, false);
      assert.equal(s.offers[B.playerId]!.accepted, false);
    });
    it("both accepting on confirm moves to settling; further accepts and cancels wait for the outcome", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = confirmScreen(offerScreen(clock), world, clock);
      const one = stepOf(acceptTrade(s, { playerId: B.playerId, revision: 1 }, clock.now, world));
      assert.equal(one.effect.kind, "updated");
      const two = stepOf(acceptTrade(one.trade, { playerId: A.playerId }, clock.now, world));
      assert.equal(two.effect.kind, "settle");
      s = two.trade;
      assert.equal(s.state, "settling");
      assert.equal(stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).effect.kind, "none");
      assert.equal(stepOf(acceptTrade(s, { playerId: B.playerId, revision: 99 }, clock.now, world)).effect.kind, "none");
      assert.equal(codeOf(cancelTrade(s, { playerId: A.playerId, reason: "cancelled" }, clock.now)), TRADE_ERROR.INVALID_TRADE);
      assert.equal(tickTrade(s, clock.advance(DEFAULT_TRADE_PARAMS.inactivityTimeoutMs * 2)).effect.kind, "none");
    });
    it("accepts quoting the offer screen's revision are STALE_OFFER on the confirmation screen: duplicates never settle", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = stepOf(setOfferItem(offerScreen(clock), { playerId: A.playerId, slot: 0, quantity: 1 }, clock.now, world)).trade;
      const offerRevision = s.revision;
      // Each player sends two accepts while looking at the offer screen; they arrive interleaved.
      const kinds: (string | undefined)[] = [];
      for (const playerId of [A.playerId, B.playerId, A.playerId, B.playerId]) {
        const r = acceptTrade(s, { playerId, revision: offerRevision }, clock.now, world);
        if (r.ok) s = r.value.trade;
        kinds.push(r.ok ? r.value.effect.kind : r.error.code);
      }
      assert.deepEqual(kinds, ["updated", "confirmScreen", TRADE_ERROR.STALE_OFFER, TRADE_ERROR.STALE_OFFER]);
      assert.equal(s.state, "confirm");
      assert.equal(s.revision, offerRevision + 1);
      assert.equal(s.offers[A.playerId]!.accepted, false);
      assert.equal(s.offers[B.playerId]!.accepted, false);
      // Accepts quoting the confirmation screen's revision settle it.
      s = stepOf(acceptTrade(s, { playerId: A.playerId, revision: s.revision }, clock.now, world)).trade;
      assert.equal(stepOf(acceptTrade(s, { playerId: B.playerId, revision: s.revision }, clock.now, world)).effect.kind, "settle");
    });
    it("an accept without a revision accepts whatever is current (documented: only quoted revisions protect the sender)", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = offerScreen(clock);
      const kinds: string[] = [];
      for (const playerId of [A.playerId, B.playerId, A.playerId, B.playerId]) {
        const step = stepOf(acceptTrade(s, { playerId }, clock.now, world));
        s = step.trade;
        kinds.push(step.effect.kind);
      }
      assert.deepEqual(kinds, ["updated", "confirmScreen", "updated", "settle"]);
    });
    it("INVENTORY_FULL: both acceptances cleared, stays on offer", () => {
      const clock = new FakeClock();
      // A offers two axes; B has one free slot.
      const world = new World(inv([0, "bronze_axe", 1], [1, "bronze_axe", 1]), fullExcept(27));
      let s = offerScreen(clock);
      s = stepOf(setOfferItem(s, { playerId: A.playerId, slot: 0, quantity: 1 }, clock.now, world)).trade;
      s = stepOf(setOfferItem(s, { playerId: A.playerId, slot: 1, quantity: 1 }, clock.now, world)).trade;
      s = stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).trade;
      const step = stepOf(acceptTrade(s, { playerId: B.playerId }, clock.now, world));
      assert.equal(step.effect.kind, "refused");
      assert.equal(step.effect.kind === "refused" && step.effect.error.code, TRADE_ERROR.INVENTORY_FULL);
      assert.equal(step.trade.state, "offer");
      assert.equal(step.trade.offers[A.playerId]!.accepted, false);
      assert.equal(step.trade.offers[B.playerId]!.accepted, false);
      // Offering one of B's own slots frees a slot: now the two axes fit.
      s = stepOf(setOfferItem(step.trade, { playerId: B.playerId, slot: 0, quantity: 1 }, clock.now, world)).trade;
      assert.equal(confirmScreen(s, world, clock).state, "confirm");
    });
    it("INVENTORY_FULL when a received stack would pass the cap", () => {
      const clock = new FakeClock();
      const world = new World(inv([0, "feather", 10]), inv([0, "feather", MAX_STACK - 5]));
      let s = stepOf(setOfferItem(offerScreen(clock), { playerId: A.playerId, slot: 0, quantity: 6 }, clock.now, world)).trade;
      s = stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).trade;
      const step = stepOf(acceptTrade(s, { playerId: B.playerId }, clock.now, world));
      assert.equal(step.effect.kind === "refused" && step.effect.error.code, TRADE_ERROR.INVENTORY_FULL);
    });
    it("INVENTORY_FULL when received coins would pass the cap", () => {
      const clock = new FakeClock();
      const world = new World(emptyInventory(), emptyInventory(), 100, MAX_STACK - 50);
      let s = stepOf(setOfferCoins(offerScreen(clock), { playerId: A.playerId, coins: 51 }, clock.now, world)).trade;
      s = stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).trade;
      const step = stepOf(acceptTrade(s, { playerId: B.playerId }, clock.now, world));
      assert.equal(step.effect.kind === "refused" && step.effect.error.code, TRADE_ERROR.INVENTORY_FULL);
    });
    it("INVALID_ITEM when an offered slot changed since it was offered", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = stepOf(setOfferItem(offerScreen(clock), { playerId: A.playerId, slot: 1, quantity: 50 }, clock.now, world)).trade;
      world.holdings.set(A.playerId, { inventory: inv([1, "feather", 49]), coins: 0 });
      s = stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).trade;
      const step = stepOf(acceptTrade(s, { playerId: B.playerId }, clock.now, world));
      assert.equal(step.effect.kind === "refused" && step.effect.error.code, TRADE_ERROR.INVALID_ITEM);
      assert.equal(step.trade.state, "offer");
    });
    it("refuses while pending, for a stranger and after the end", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      assert.equal(codeOf(acceptTrade(pending(clock), { playerId: B.playerId }, clock.now, world)), TRADE_ERROR.INVALID_TRADE);
      assert.equal(codeOf(acceptTrade(offerScreen(clock), { playerId: STRANGER }, clock.now, world)), TRADE_ERROR.NOT_IN_TRADE);
      const ended = stepOf(cancelTrade(offerScreen(clock), { reason: "server_error" }, clock.now)).trade;
      assert.equal(codeOf(acceptTrade(ended, { playerId: A.playerId }, clock.now, world)), TRADE_ERROR.INVALID_TRADE);
    });
  });

  describe("cancelTrade", () => {
    const states: [string, (c: FakeClock, w: World) => Trade][] = [
      ["pending", (c) => pending(c)],
      ["offer", (c) => offerScreen(c)],
      ["confirm", (c, w) => confirmScreen(offerScreen(c), w, c)],
    ];
    for (const [name, make] of states) {
      it(`cancels from ${name}`, () => {
        const clock = new FakeClock();
        const step = stepOf(cancelTrade(make(clock, standardWorld()), { playerId: B.playerId, reason: "cancelled" }, clock.now));
        assert.deepEqual(step.effect, { kind: "cancelled", reason: "cancelled" });
        assert.equal(step.trade.state, "cancelled");
        assert.equal(step.trade.cancelReason, "cancelled");
        assert.equal(step.trade.cancelledBy, B.playerId);
      });
    }
    it("takes a system reason without a player", () => {
      const clock = new FakeClock();
      const step = stepOf(cancelTrade(offerScreen(clock), { reason: "moved_away" }, clock.now));
      assert.equal(step.trade.cancelReason, "moved_away");
      assert.equal(step.trade.cancelledBy, undefined);
    });
    it("refuses a stranger and an ended trade", () => {
      const clock = new FakeClock();
      assert.equal(codeOf(cancelTrade(offerScreen(clock), { playerId: STRANGER, reason: "cancelled" }, clock.now)), TRADE_ERROR.NOT_IN_TRADE);
      const ended = stepOf(cancelTrade(offerScreen(clock), { reason: "disconnected" }, clock.now)).trade;
      assert.equal(codeOf(cancelTrade(ended, { reason: "disconnected" }, clock.now)), TRADE_ERROR.INVALID_TRADE);
      assert.equal(codeOf(cancelTrade(ended, { playerId: A.playerId, reason: "cancelled" }, clock.now)), TRADE_ERROR.INVALID_TRADE);
    });
  });

  describe("tickTrade (injected clock)", () => {
    it("a pending request expires after 30 s, not before", () => {
      const clock = new FakeClock();
      const s = pending(clock);
      assert.equal(tickTrade(s, clock.advance(29_999)).effect.kind, "none");
      const step = tickTrade(s, clock.advance(1));
      assert.deepEqual(step.effect, { kind: "cancelled", reason: "timeout" });
      assert.equal(step.trade.state, "cancelled");
      assert.equal(step.trade.endedAt, clock.now);
    });
    it("an open trade expires after 5 minutes without activity, counted from the last action", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = offerScreen(clock);
      clock.advance(4 * 60_000);
      s = stepOf(setOfferCoins(s, { playerId: A.playerId, coins: 5 }, clock.now, world)).trade;
      assert.equal(tickTrade(s, clock.advance(4 * 60_000)).effect.kind, "none");
      s = stepOf(acceptTrade(s, { playerId: B.playerId }, clock.now, world)).trade;
      assert.equal(tickTrade(s, clock.advance(5 * 60_000 - 1)).effect.kind, "none");
      assert.deepEqual(tickTrade(s, clock.advance(1)).effect, { kind: "cancelled", reason: "timeout" });
    });
    it("the confirmation screen times out too, with configurable limits", () => {
      const clock = new FakeClock();
      const params = { pendingTimeoutMs: 10, inactivityTimeoutMs: 50 };
      const s = confirmScreen(offerScreen(clock), standardWorld(), clock);
      assert.equal(tickTrade(s, clock.advance(49), params).effect.kind, "none");
      assert.equal(tickTrade(s, clock.advance(1), params).effect.kind, "cancelled");
    });
    it("an ended trade does not time out again", () => {
      const clock = new FakeClock();
      const ended = stepOf(cancelTrade(pending(clock), { reason: "cancelled" }, clock.now)).trade;
      assert.equal(tickTrade(ended, clock.advance(60_000)).effect.kind, "none");
    });
  });

  describe("completeTrade and failSettlement", () => {
    function settling(clock: FakeClock): Trade {
      const world = standardWorld();
      let s = confirmScreen(offerScreen(clock), world, clock);
      s = stepOf(acceptTrade(s, { playerId: A.playerId }, clock.now, world)).trade;
      return stepOf(acceptTrade(s, { playerId: B.playerId }, clock.now, world)).trade;
    }
    it("settling → completed", () => {
      const clock = new FakeClock();
      const step = stepOf(completeTrade(settling(clock), clock.advance(20)));
      assert.equal(step.effect.kind, "completed");
      assert.equal(step.trade.state, "completed");
      assert.equal(step.trade.endedAt, clock.now);
    });
    it("settling → cancelled with the failure reason", () => {
      const clock = new FakeClock();
      const step = stepOf(failSettlement(settling(clock), "invalid_items", clock.now));
      assert.deepEqual(step.effect, { kind: "cancelled", reason: "invalid_items" });
    });
    it("refuses both outside settling", () => {
      const clock = new FakeClock();
      assert.equal(codeOf(completeTrade(offerScreen(clock), clock.now)), TRADE_ERROR.INVALID_TRADE);
      assert.equal(codeOf(failSettlement(offerScreen(clock), "server_error", clock.now)), TRADE_ERROR.INVALID_TRADE);
    });
  });

  describe("applyTradeAction", () => {
    it("runs a whole trade through the dispatcher", () => {
      const clock = new FakeClock();
      const world = standardWorld();
      let s = pending(clock);
      const kinds: string[] = [];
      for (const action of [
        { type: "respond", playerId: B.playerId, accept: true },
        { type: "setItem", playerId: A.playerId, slot: 0, quantity: 1 },
        { type: "setCoins", playerId: A.playerId, coins: 100 },
        { type: "setItem", playerId: B.playerId, slot: 5, quantity: 40 },
        { type: "removeItem", playerId: A.playerId, slot: 0 },
        { type: "accept", playerId: A.playerId, revision: 4 },
        { type: "accept", playerId: B.playerId },
        { type: "accept", playerId: B.playerId, revision: 5 },
        { type: "accept", playerId: A.playerId },
      ] as const) {
        const step = stepOf(applyTradeAction(s, action, clock.advance(100), world));
        kinds.push(step.effect.kind);
        s = step.trade;
      }
      assert.deepEqual(kinds, ["started", "updated", "updated", "updated", "updated", "updated", "confirmScreen", "updated", "settle"]);
      const cancelled = stepOf(applyTradeAction(pending(clock), { type: "cancel", playerId: A.playerId, reason: "cancelled" }, clock.now, world));
      assert.equal(cancelled.trade.state, "cancelled");
    });
  });

  describe("computeValues", () => {
    it("values items by manifest value × quantity and coins at 1, from each side", () => {
      const mine = {
        items: [
          { inventorySlot: 0, itemId: "bronze_axe", quantity: 1 },
          { inventorySlot: 1, itemId: "feather", quantity: 10 },
        ],
        coins: 5,
      };
      const theirs = { items: [{ inventorySlot: 4, itemId: "air_rune", quantity: 3 }], coins: 100 };
      assert.deepEqual(computeValues(mine, theirs, valueOf), { myOfferValue: 41, theirOfferValue: 130, wealthTransfer: 89 });
      assert.deepEqual(computeValues(theirs, mine, valueOf), { myOfferValue: 130, theirOfferValue: 41, wealthTransfer: -89 });
    });
  });

  describe("planSettlement", () => {
    const line = (inventorySlot: number, itemId: string, quantity: number) => ({ inventorySlot, itemId, quantity });

    it("moves both offers: removals first, stackables merge, others take the lowest free slots", () => {
      const a = {
        offer: { items: [line(0, "bronze_axe", 1), line(1, "feather", 30)], coins: 100 },
        inventory: inv([0, "bronze_axe", 1], [1, "feather", 50], [2, "logs", 1]),
        coins: 150,
      };
      const b = {
        offer: { items: [line(3, "logs", 1), line(4, "logs", 1), line(6, "air_rune", 7)], coins: 0 },
        inventory: inv([1, "feather", 5], [3, "logs", 1], [4, "logs", 1], [6, "air_rune", 10]),
        coins: 9,
      };
      const plan = unwrap(planSettlement(a, b, lookup));
      assert.deepEqual(inventoryToSlots(plan.a.inventory), [
        { slot: 0, itemId: "logs", quantity: 1 },
        { slot: 1, itemId: "feather", quantity: 20 },
        { slot: 2, itemId: "logs", quantity: 1 },
        { slot: 3, itemId: "logs", quantity: 1 },
        { slot: 4, itemId: "air_rune", quantity: 7 },
      ]);
      assert.deepEqual(inventoryToSlots(plan.b.inventory), [
        { slot: 0, itemId: "bronze_axe", quantity: 1 },
        { slot: 1, itemId: "feather", quantity: 35 },
        { slot: 6, itemId: "air_rune", quantity: 3 },
      ]);
      assert.equal(plan.a.coins, 50);
      assert.equal(plan.b.coins, 109);
      assert.deepEqual(plan.a.receivedItems, [
        { itemId: "logs", quantity: 2 },
        { itemId: "air_rune", quantity: 7 },
      ]);
      assert.deepEqual(plan.b.receivedItems, [
        { itemId: "bronze_axe", quantity: 1 },
        { itemId: "feather", quantity: 30 },
        { itemId: "coins", quantity: 100 },
      ]);
    });

    it("counts the slots a side's own offer empties", () => {
      const a = { offer: { items: [line(0, "logs", 1), line(1, "logs", 1)], coins: 0 }, inventory: fullExcept(), coins: 0 };
      const two = {
        offer: { items: [line(0, "bronze_axe", 1), line(1, "bronze_axe", 1)], coins: 0 },
        inventory: inv([0, "bronze_axe", 1], [1, "bronze_axe", 1], [2, "bronze_axe", 1]),
        coins: 0,
      };
      const plan = unwrap(planSettlement(a, two, lookup));
      assert.equal(freeSlots(plan.a.inventory), 0);
      assert.equal(countItem(plan.a.inventory, "bronze_axe"), 2);
      const three = { ...two, offer: { items: [line(0, "bronze_axe", 1), line(1, "bronze_axe", 1), line(2, "bronze_axe", 1)], coins: 0 } };
      assert.equal(codeOf(planSettlement(a, three, lookup)), SETTLEMENT_ERROR.INVENTORY_FULL);
    });

    const invalid: [string, Partial<{ invA: Inventory; offerA: { items: ReturnType<typeof line>[]; coins: number }; coinsA: number }>][] = [
      ["a swapped slot (other item now)", { invA: inv([0, "logs", 1], [1, "bronze_axe", 1]) }],
      ["a slot now emptied", { invA: inv([1, "feather", 50]) }],
      ["a smaller stack than offered", { invA: inv([0, "bronze_axe", 1], [1, "feather", 29]) }],
      ["coins no longer held", { coinsA: 99 }],
      ["an untradeable item", { invA: inv([0, "quest_token", 1], [1, "feather", 50]), offerA: { items: [line(0, "quest_token", 1)], coins: 0 } }],
      ["an unknown item", { invA: inv([0, "mystery", 1]), offerA: { items: [line(0, "mystery", 1)], coins: 0 } }],
      ["the same slot twice", { offerA: { items: [line(1, "feather", 10), line(1, "feather", 10)], coins: 0 } }],
    ];
    for (const [name, change] of invalid) {
      it(`INVALID_ITEMS for ${name}`, () => {
        const a = {
          offer: change.offerA ?? { items: [line(0, "bronze_axe", 1), line(1, "feather", 30)], coins: 100 },
          inventory: change.invA ?? inv([0, "bronze_axe", 1], [1, "feather", 50]),
          coins: change.coinsA ?? 100,
        };
        const b = { offer: { items: [], coins: 0 }, inventory: emptyInventory(), coins: 0 };
        assert.equal(codeOf(planSettlement(a, b, lookup)), SETTLEMENT_ERROR.INVALID_ITEMS);
        assert.equal(codeOf(planSettlement(b, a, lookup)), SETTLEMENT_ERROR.INVALID_ITEMS);
      });
    }

    it("INVENTORY_FULL at the stack cap and the coin cap", () => {
      const a = { offer: { items: [line(0, "feather", 2)], coins: 0 }, inventory: inv([0, "feather", 2]), coins: 5 };
      const b = { offer: { items: [], coins: 0 }, inventory: inv([9, "feather", MAX_STACK - 1]), coins: 0 };
      assert.equal(codeOf(planSettlement(a, b, lookup)), SETTLEMENT_ERROR.INVENTORY_FULL);
      const coinsA = { offer: { items: [], coins: 5 }, inventory: emptyInventory(), coins: 5 };
      const coinsB = { offer: { items: [], coins: 0 }, inventory: emptyInventory(), coins: MAX_STACK - 4 };
      assert.equal(codeOf(planSettlement(coinsA, coinsB, lookup)), SETTLEMENT_ERROR.INVENTORY_FULL);
      assert.equal(unwrap(planSettlement(coinsA, { ...coinsB, coins: MAX_STACK - 5 }, lookup)).b.coins, MAX_STACK);
    });

    it("conserves every item and coin over many random trades (invariant)", () => {
      let seed = 42;
      const rand = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      const ids = ["bronze_axe", "logs", "feather", "air_rune"];
      const randomSide = () => {
        const entries: [number, string, number][] = [];
        for (let s = 0; s < 28; s++) {
          if (rand() < 0.5) continue;
          const id = ids[Math.floor(rand() * ids.length)]!;
          const stackable = lookup(id)!.stackable;
          if (stackable && entries.some((e) => e[1] === id)) continue;
          entries.push([s, id, stackable ? 1 + Math.floor(rand() * 1000) : 1]);
        }
        const inventory = inv(...entries);
        const items = entries.filter(() => rand() < 0.4).map(([s, id, q]) => line(s, id, Math.max(1, Math.floor(q * rand()))));
        const coins = Math.floor(rand() * 500);
        return { offer: { items, coins: Math.floor(coins * rand()) }, inventory, coins };
      };
      const total = (x: { inventory: Inventory; coins: number }, y: { inventory: Inventory; coins: number }) => {
        const t: Record<string, number> = { coins: x.coins + y.coins };
        for (const id of ids) t[id] = countItem(x.inventory, id) + countItem(y.inventory, id);
        return t;
      };
      let completed = 0;
      for (let i = 0; i < 300; i++) {
        const a = randomSide();
        const b = randomSide();
        const r = planSettlement(a, b, lookup);
        if (!r.ok) {
          assert.equal(r.error.code, SETTLEMENT_ERROR.INVENTORY_FULL);
          continue;
        }
        completed++;
        assert.deepEqual(total(r.value.a, r.value.b), total(a, b));
        assert.equal(r.value.a.inventory.length, 28);
        assert.equal(r.value.b.inventory.length, 28);
      }
      assert.ok(completed > 50, `only ${completed} trades fitted`);
    });
  });
});
