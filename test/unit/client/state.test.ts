/** The web client's state and UI logic (client/src/state, client/src/content.ts), in Node. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { buildContent, centredTiles, tileKey, type Manifests } from "../../../client/src/content.js";
import { approach, optionsAt } from "../../../client/src/state/intent.js";
import { knownRefusal, refusalText } from "../../../client/src/state/refusals.js";
import { addChat, applyHit, applyWorld, applyXp, expire, initialState, type GameState, type WorldView } from "../../../client/src/state/store.js";
import { applyTradeEvent, wealthIndicator, type TradeState } from "../../../client/src/state/trade.js";
import { levelProgress, XP_FOR_LEVEL } from "../../../client/src/state/xp.js";
import { snapshot } from "../../../client/src/net/session.js";
import { xpForLevel } from "../../../src/domain/xp.js";
import { REFUSALS } from "../../../src/world/refusals.js";
import { TRADE_ERROR } from "../../../src/domain/trade/codes.js";

const read = (f: string) => JSON.parse(readFileSync(`world/manifests/${f}`, "utf8"));
const manifests = (): Manifests => ({
  worldAreas: read("world-areas.json"),
  biomes: read("biomes.json"),
  buildings: read("buildings.json"),
  stations: read("stations.json"),
  stores: read("stores.json"),
  npcs: read("npcs.json"),
  items: (read("items.json").files as string[]).flatMap((f) => read(f)),
  modelBounds: read("model-bounds.json"),
});
const content = buildContent(manifests());

const me = {
  id: "me",
  name: "Me",
  skills: { woodcutting: { level: 1, xp: 0 } },
  inventory: [{ slot: 0, itemId: "logs", quantity: 1 }],
} as unknown as GameState["me"];
function world(parts: Partial<{ [K in keyof WorldView]: WorldView[K] }>, tick = 1): WorldView {
  return { tick, players: new Map(), npcs: new Map(), resources: new Map(), groundItems: new Map(), ...parts } as WorldView;
}

describe("client: content from the manifests", () => {
  it("blocks building footprints from their minimum corner and station footprints centred", () => {
    const bank = content.buildings.find((b) => b.id === "lumbrook_bank")!;
    assert.ok(content.blocked.has(tileKey(bank.x, bank.z)));
    assert.ok(content.blocked.has(tileKey(bank.x + bank.footprint.width - 1, bank.z + bank.footprint.depth - 1)));
    assert.ok(!content.blocked.has(tileKey(bank.x + bank.footprint.width, bank.z)));
    assert.deepEqual(centredTiles(6, 7, { width: 2, depth: 1 }), [
      { x: 6, z: 7 },
      { x: 7, z: 7 },
    ]);
    assert.equal(content.itemName("bronze_axe"), "Bronze axe");
    assert.equal(content.itemName("coins"), "Coins");
    assert.equal(content.areaAt(0, 0)?.id, "lumbrook");
  });
});

describe("client: fences from world-areas.json", () => {
  it("blocks fence tiles, not gates, and draws each along its fence", () => {
    const fence = content.fenceTiles.filter((t) => !t.gate);
    const gates = content.fenceTiles.filter((t) => t.gate);
    assert.ok(fence.length > 0 && gates.length > 0, "the chicken pen");
    for (const t of fence) assert.ok(content.blocked.has(tileKey(t.x, t.z)), `${t.x},${t.z}`);
    for (const t of gates) assert.ok(!content.blocked.has(tileKey(t.x, t.z)), `gate ${t.x},${t.z}`);
    const s: GameState = { ...initialState(), me };
    assert.ok(!optionsAt(fence[0]!, s, content).some((o) => o.intent.kind === "move"), "no walking onto a fence");
    assert.ok(
      optionsAt(gates[0]!, s, content).some((o) => o.intent.kind === "move"),
      "walking onto a gate",
    );
    const rows = buildContent({
      ...manifests(),
      worldAreas: {
        ...manifests().worldAreas,
        areas: [{ ...manifests().worldAreas.areas[0]!, fences: [{ from: { x: 1, z: 2 }, to: { x: 3, z: 2 }, gates: [{ x: 2, z: 2 }] }] }],
      },
    }).fenceTiles;
    assert.deepEqual(rows, [
      { x: 1, z: 2, alongX: true, gate: false },
      { x: 2, z: 2, alongX: true, gate: true },
      { x: 3, z: 2, alongX: true, gate: false },
    ]);
  });
});

describe("client: what a click does", () => {
  it("chops a tree, attacks an NPC, takes an item, walks on grass, and offers a menu on a player", () => {
    let s: GameState = { ...initialState(), me };
    s = applyWorld(
      s,
      world({
        resources: new Map([["t1", { id: "t1", type: "tree", skill: "woodcutting", x: 5, z: 5, depleted: false }]]),
        npcs: new Map([["n1", { id: "n1", npcId: "goblin", name: "Goblin", x: 6, z: 5, health: 5, maxHealth: 5, combatLevel: 2, targetId: "" }]]),
        groundItems: new Map([["g1", { id: "g1", itemId: "bones", quantity: 1, x: 7, z: 5 }]]),
        players: new Map([["p2", { id: "p2", name: "Bob", x: 8, z: 5 } as never]]),
      }),
    );
    assert.deepEqual(optionsAt({ x: 5, z: 5 }, s, content)[0]!.intent, { kind: "gather", targetId: "t1" });
    assert.deepEqual(optionsAt({ x: 6, z: 5 }, s, content)[0]!.intent, { kind: "attack", targetId: "n1" });
    assert.deepEqual(optionsAt({ x: 7, z: 5 }, s, content)[0]!.intent, { kind: "pickup", targetId: "g1" });
    assert.deepEqual(optionsAt({ x: 8, z: 5 }, s, content)[0]!.intent, { kind: "trade", targetId: "p2" });
    assert.deepEqual(optionsAt({ x: 0, z: 3 }, s, content).at(-1)!.intent, { kind: "move", x: 0, z: 3 });
    const bank = content.buildings.find((b) => b.id === "lumbrook_bank")!;
    assert.ok(!optionsAt({ x: bank.x, z: bank.z }, s, content).some((o) => o.intent.kind === "move"), "no walking into a building");
  });

  it("uses a selected item on a station; walks next to a bank booth, never onto it", () => {
    const s: GameState = { ...initialState(), me };
    const range = content.stations.find((st) => st.type === "range")!;
    assert.deepEqual(optionsAt(range, s, content, 0)[0]!.intent, { kind: "useOn", slot: 0, targetId: range.id });
    const booth = content.stations.find((st) => st.type === "bank")!;
    const t = approach(booth, { x: 0, z: 0 }, content)!;
    assert.ok(!content.blocked.has(tileKey(t.x, t.z)));
    assert.ok(Math.max(Math.abs(t.x - booth.x), Math.abs(t.z - booth.z)) <= 3);
  });
});

describe("client: state from server events", () => {
  it("keeps the last 200 chat lines and shows refusals with their code", () => {
    let s = initialState();
    for (let i = 0; i < 205; i++) s = addChat(s, { id: String(i), type: "public", fromName: "A", text: `t${i}`, timestamp: "" });
    assert.equal(s.chat.length, 200);
    assert.equal(s.chat[0]!.text, "t5");
    s = addChat(s, { id: "r", type: "system", text: "", code: "TOO_FAR", timestamp: "" });
    assert.equal(s.chat.at(-1)!.text, "That is too far away.");
    assert.equal(s.chat.at(-1)!.code, "TOO_FAR");
  });

  it("has a readable text for every refusal code and trade error code of the server", () => {
    for (const code of [...Object.keys(REFUSALS), ...Object.values(TRADE_ERROR)]) assert.ok(knownRefusal(code), code);
    assert.equal(refusalText("SOMETHING_NEW", undefined), "Refused (SOMETHING_NEW).");
    assert.equal(refusalText("TOO_FAR", "The bank is too far away."), "The bank is too far away.");
  });

  it("turns skill:xp into the skill's new XP and a toast that expires", () => {
    let s: GameState = { ...initialState(), me };
    s = applyXp(s, { skill: "woodcutting", gained: 25, xp: 25, level: 1, leveledUp: false }, 1000);
    assert.equal(s.me!.skills.woodcutting.xp, 25);
    assert.equal(s.toasts[0]!.text, "+25 Woodcutting XP");
    s = applyXp(s, { skill: "woodcutting", gained: 60, xp: 85, level: 2, leveledUp: true }, 1100);
    assert.equal(s.toasts[1]!.text, "Woodcutting level 2! (+60 XP)");
    s = applyHit(s, { attackerId: "n", targetId: "me", damage: 3, targetHealth: 97, targetMaxHealth: 100 }, 1100);
    assert.equal(s.splats.length, 1);
    assert.equal(expire(s, 100_000).toasts.length, 0);
    assert.equal(expire(s, 100_000).splats.length, 0);
  });

  it("drops the walk marker once the player stands on it", () => {
    let s: GameState = { ...initialState(), me, destination: { x: 3, z: 0 } };
    s = applyWorld(s, world({ players: new Map([["me", { id: "me", x: 1, z: 0, moving: true, activity: "walking" } as never]]) }, 1));
    assert.deepEqual(s.destination, { x: 3, z: 0 });
    s = applyWorld(s, world({ players: new Map([["me", { id: "me", x: 3, z: 0, moving: false, activity: "idle" } as never]]) }, 2));
    assert.equal(s.destination, undefined);
  });

  it("follows a trade through both screens to its end", () => {
    const offer = (coins: number, accepted = false) => ({ items: [], coins, accepted });
    let t: TradeState = { phase: "none", incoming: [] };
    t = applyTradeEvent(t, { event: "tradeIncoming", data: { tradeId: "T", fromPlayerId: "b", fromPlayerName: "Bob", fromPlayerLevel: 3 } });
    assert.equal(t.incoming.length, 1);
    t = applyTradeEvent(t, {
      event: "tradeStarted",
      data: { tradeId: "T", partnerId: "b", partnerName: "Bob", partnerLevel: 3, partnerFreeSlots: 20, roomId: "r" },
    });
    assert.equal(t.phase, "open");
    assert.equal(t.incoming.length, 0);
    t = applyTradeEvent(t, { event: "tradeUpdated", data: { tradeId: "T", revision: 1, myOffer: offer(5), theirOffer: offer(0), partnerFreeSlots: 20 } });
    t = applyTradeEvent(t, { event: "tradeUpdated", data: { tradeId: "OTHER", revision: 9, myOffer: offer(99), theirOffer: offer(0), partnerFreeSlots: 1 } });
    assert.ok(t.phase === "open" && t.revision === 1 && t.myOffer.coins === 5);
    const values = { myOfferValue: 5, theirOfferValue: 0, wealthTransfer: -5 };
    t = applyTradeEvent(t, { event: "tradeConfirmScreen", data: { tradeId: "T", revision: 3, myOffer: offer(5), theirOffer: offer(0), values } });
    assert.ok(t.phase === "open" && t.screen === "confirm" && t.revision === 3);
    t = applyTradeEvent(t, { event: "tradeCompleted", data: { tradeId: "T", receivedItems: [] } });
    assert.equal(t.phase, "none");
    assert.match(t.last!, /completed/);
  });

  it("says who gains in the wealth-transfer line and warns about something for nothing", () => {
    assert.deepEqual(wealthIndicator({ myOfferValue: 5, theirOfferValue: 0, wealthTransfer: -5 }).level, "loss");
    assert.equal(wealthIndicator({ myOfferValue: 5, theirOfferValue: 0, wealthTransfer: -5 }).warning, true);
    assert.equal(wealthIndicator({ myOfferValue: 10, theirOfferValue: 30, wealthTransfer: 20 }).level, "gain");
    assert.equal(wealthIndicator({ myOfferValue: 10, theirOfferValue: 10, wealthTransfer: 0 }).level, "even");
  });

  it("draws XP bars on the server's XP curve", () => {
    for (const level of [1, 2, 10, 50, 99]) assert.equal(XP_FOR_LEVEL[level], xpForLevel(level), `level ${level}`);
    assert.deepEqual(levelProgress(1, 0), { fraction: 0, toNext: 83 });
    assert.equal(levelProgress(99, 13_034_431).fraction, 1);
  });

  it("copies the schema state's four maps into plain entities with the documented fields", () => {
    const map = <T>(entries: [string, T][]) => ({ forEach: (cb: (v: T, k: string) => void) => entries.forEach(([k, v]) => cb(v, k)) });
    const player = {
      id: "p",
      name: "P",
      x: 1,
      z: 2,
      health: 9,
      maxHealth: 10,
      combatLevel: 3,
      moving: false,
      running: false,
      isAgent: false,
      activity: "idle",
      targetId: "",
      weapon: "",
      $changes: {},
    };
    const v = snapshot({
      tick: 7,
      players: map([["p", player]]),
      npcs: map([]),
      resources: map([]),
      groundItems: map([["g", { id: "g", itemId: "logs", quantity: 2, x: 0, z: 0 }]]),
    } as unknown as Parameters<typeof snapshot>[0]);
    assert.equal(v.tick, 7);
    const { $changes: _, ...fields } = player;
    assert.deepEqual(v.players.get("p"), fields);
    assert.deepEqual(v.groundItems.get("g"), { id: "g", itemId: "logs", quantity: 2, x: 0, z: 0 });
    assert.equal(v.npcs.size, 0);
  });
});
