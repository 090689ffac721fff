/** Hostile input now and then: bad payloads on both transports and bad REST bodies (any 5xx is a failure of the run). */
import { pick } from "./options.js";
import type { SoakBot } from "./bots.js";
import { countFailure, countStatus, stats } from "./stats.js";

/** Hostile payloads: wrong types, huge numbers, deep nesting, prototype keys, unicode, unknown events. */
export function hostilePayload(): [string, unknown] {
  let deep: any = {};
  for (let i = 0; i < 200; i++) deep = { a: deep };
  const event = pick([
    "player:move",
    "player:action",
    "player:chat",
    "inventory:use",
    "bank:deposit",
    "bank:withdraw",
    "tradeRequest",
    "tradeAddItem",
    "tradeAccept",
    "no:such:event",
    "__proto__",
  ]);
  const data = pick<unknown>([
    { x: 1e308, z: -1e308 },
    { x: "1", z: null },
    { x: Number.MAX_SAFE_INTEGER + 2, z: 0.5 },
    JSON.parse('{"__proto__": {"admin": true}, "constructor": {"prototype": {"x": 1}}}'),
    deep,
    { text: "\u0000\uFFFF\uD800 ".repeat(100) },
    { text: "x".repeat(100_000) },
    { slot: -1, quantity: -5 },
    { slot: 27, quantity: 2_147_483_648 },
    { itemId: "coins", quantity: 1e9 },
    { action: "attack", targetId: { $ne: null } },
    { tradeId: "", inventorySlot: [1, 2], quantity: "all", coins: -1 },
    [1, 2, 3],
    "string payload",
    null,
    12345,
  ]);
  return [event, data];
}

export async function hostileRest(b: SoakBot, url: string) {
  const bodies: [string, string, string | undefined, string][] = [
    ["POST", "/api/v1/player", '{"name": 12345}', "application/json"],
    ["POST", "/api/v1/player", '{"name": "', "application/json"],
    ["POST", "/api/character", '{"__proto__": {"admin": true}, "name": "\u0000\u202e"}', "application/json"],
    ["POST", "/api/character", JSON.stringify({ name: "a".repeat(5_000), templateId: { x: 1 } }), "application/json"],
    ["PATCH", `/api/character/${encodeURIComponent(b.bot.id)}`, '{"name": ["x"]}', "application/json"],
    ["PATCH", "/api/character/%00%ff", '{"name": "Zed"}', "application/json"],
    ["POST", `/api/character/${encodeURIComponent(b.bot.id)}/agent`, '{"isAgent": "yes"}', "application/json"],
    ["POST", "/api/v1/player", "name=x", "application/x-www-form-urlencoded"],
    ["POST", "/ws/matchmake/create/world", "{}", "application/json"],
    ["POST", "/ws/matchmake/joinOrCreate/trade", '{"session": {"id": "forged"}}', "application/json"],
    ["GET", "/api/v1/player", undefined, "application/json"],
  ];
  const [method, path, body, type] = pick(bodies);
  try {
    const r = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${b.token}`, "content-type": type },
      body,
      signal: AbortSignal.timeout(20_000),
    });
    await r.arrayBuffer();
    countStatus(r.status, `${method} ${path}`);
    stats.hostile.rest++;
  } catch (e) {
    countFailure(e, `${method} ${path}`);
  }
}
