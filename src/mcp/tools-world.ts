/**
 * Tools that move, fight, gather and use items (docs/agents.md#tools). Each sends one client event
 * of the event table through the session's link and watches what follows until it can say how the
 * action ended.
 */
import { z } from "zod";
import { CLIENT_EVENTS } from "../events.js";
import { EQUIP_SLOTS } from "../domain/types.js";
import type { Check, Outcome } from "./outcome.js";
import { str } from "./session.js";
import { act, held, instantCheck, notices, refused, slotOf, tool, WAIT_FIELDS, type ToolContext, type ToolDef } from "./tools.js";

const move = CLIENT_EVENTS["player:move"].shape;
const action = CLIENT_EVENTS["player:action"].shape;
const use = CLIENT_EVENTS["inventory:use"].shape;
const targetId = action.targetId.unwrap();
/** Tiles within which a bank, store or station can be used (src/world/actions/guards.ts INTERACT_RANGE). */
const STATION_RANGE = 3;

const chebyshev = (a: { x: number; z: number }, b: { x: number; z: number }) => Math.max(Math.abs(a.x - b.x), Math.abs(a.z - b.z));

/** Anything with an id the player can walk to: an entity in view, a station or a store. */
function locate(ctx: ToolContext, id: string): { x: number; z: number; range: number; kind: string } | undefined {
  for (const kind of ["players", "npcs", "resources", "groundItems"] as const) {
    const e = ctx.session.view[kind].get(id);
    if (e) return { x: e.x, z: e.z, range: kind === "groundItems" ? 0 : 1, kind };
  }
  const st = ctx.content.stations.find((s) => s.id === id) ?? ctx.content.stores.get(id);
  return st ? { x: st.x, z: st.z, range: STATION_RANGE, kind: "station" } : undefined;
}

/** The free tile nearest the player within `range` of a place (the place itself when free). */
function standingTile(ctx: ToolContext, at: { x: number; z: number }, range: number): { x: number; z: number } {
  const from = ctx.session.tile();
  let best: { x: number; z: number } | undefined;
  for (let dx = -range; dx <= range; dx++) {
    for (let dz = -range; dz <= range; dz++) {
      const t = { x: at.x + dx, z: at.z + dz };
      if (!ctx.content.inBounds(t.x, t.z) || ctx.content.isBlocked(t.x, t.z)) continue;
      if (!best || chebyshev(from, t) < chebyshev(from, best) || (chebyshev(from, t) === chebyshev(from, best) && chebyshev(at, t) < chebyshev(at, best)))
        best = t;
    }
  }
  return best ?? at;
}

/** How a walk ends: at the tile (or near enough to `near`), stopped short, or never moving. */
function walkCheck(ctx: ToolContext, to: { x: number; z: number }, near?: { x: number; z: number; range: number }): Check {
  const tick0 = ctx.session.tick;
  const t0 = performance.now();
  let moved = false;
  return ({ session }) => {
    const at = session.tile();
    const self = session.self();
    if (at.x === to.x && at.z === to.z) return { outcome: "reached", detail: `at (${at.x}, ${at.z})` };
    if (self?.moving) {
      moved = true;
      return undefined;
    }
    const stopped = moved || session.tick >= tick0 + 4 || performance.now() - t0 > 6 * ctx.tickMs + 200;
    if (!stopped) return undefined;
    if (near && chebyshev(at, near) <= near.range) return { outcome: "reached", detail: `at (${at.x}, ${at.z}), within ${near.range} of the target` };
    return { outcome: "blocked", detail: `stopped at (${at.x}, ${at.z}), ${chebyshev(at, to)} tiles from (${to.x}, ${to.z})` };
  };
}

const walk = tool({
  name: "walk",
  title: "Walk to a tile",
  description: "Walk (or run) to the tile (x, z), at most 200 tiles away. Ends reached, blocked (stopped short), refused, interrupted or timed_out.",
  input: z.object({ x: move.x, z: move.z, run: move.run, ...WAIT_FIELDS }),
  event: "player:move",
  passes: ["x", "z", "run"],
  acts: true,
  run: (ctx, a) =>
    act(ctx, "walk", () => ctx.session.send("player:move", { x: a.x, z: a.z, run: a.run }), walkCheck(ctx, a), { ...a, replaces: true, recheck: true }),
});

const walkTo = tool({
  name: "walk_to",
  title: "Walk to something",
  description: "Walk next to a player, NPC, resource, ground item (by id from observe), or a station or store (bank booth, range…). Ends reached or blocked.",
  input: z.object({ targetId, run: move.run, ...WAIT_FIELDS }),
  event: "player:move",
  passes: ["run"],
  acts: true,
  run: async (ctx, a) => {
    const place = locate(ctx, a.targetId);
    if (!place) return refused("NO_SUCH_TARGET", `nothing with id ${a.targetId} in view`);
    const to = standingTile(ctx, place, place.range);
    return act(ctx, "walk_to", () => ctx.session.send("player:move", { x: to.x, z: to.z, run: a.run }), walkCheck(ctx, to, { ...place }), {
      ...a,
      replaces: true,
      recheck: true,
    });
  },
});

const attack = tool({
  name: "attack",
  title: "Attack",
  description: "Attack an NPC (or a player, both in a PvP area) until it dies. Ends target_gone (died or left view), refused, interrupted or timed_out.",
  input: z.object({ targetId, ...WAIT_FIELDS }),
  event: "player:action",
  passes: ["targetId"],
  acts: true,
  run: (ctx, a) => {
    let fighting = false;
    const check: Check = ({ session }) => {
      const t = session.view.npcs.get(a.targetId) ?? session.view.players.get(a.targetId);
      const died = session.lastHealth.get(a.targetId) === 0 || t?.health === 0;
      if (died) return { outcome: "target_gone", detail: "it died" };
      if (!t) return { outcome: "target_gone", detail: "it left your view" };
      if (session.self()?.activity === "attack") fighting = true;
      else if (fighting) return { outcome: "interrupted", by: "the fight stopped", detail: `target at hp ${str(t.health)}/${str(t.maxHealth)}` };
      return undefined;
    };
    return act(ctx, "attack", () => ctx.session.send("player:action", { action: "attack", targetId: a.targetId }), check, { ...a, replaces: true });
  },
});

const gather = tool({
  name: "gather",
  title: "Gather",
  description:
    "Chop, fish or mine a resource node (id from observe), walking next to it, until `count` items are gathered (then stop) or, without count, until the inventory is full or the node is depleted.",
  input: z.object({ targetId, count: z.int().min(1).max(28).optional().describe("stop after this many items"), ...WAIT_FIELDS }),
  event: "player:action",
  passes: ["targetId"],
  acts: true,
  run: (ctx, a) => {
    const res = ctx.session.view.resources.get(a.targetId);
    const yields = res ? ctx.content.gatheringNodes.get(String(res.type))?.yields : undefined;
    const before = yields ? held(ctx.session, yields) : 0;
    let gathering = false;
    const check: Check = ({ session }) => {
      const gained = yields ? held(session, yields) - before : 0;
      if (a.count !== undefined && gained >= a.count) {
        session.send("player:move", session.tile()); // stop gathering where it stands
        return { outcome: "completed", gained, item: yields };
      }
      const r = session.view.resources.get(a.targetId);
      if (!r) return { outcome: "target_gone", detail: "the node left your view", gained };
      if (r.depleted) return { outcome: "target_gone", detail: "the node is depleted", gained };
      if ((session.me?.inventory.length ?? 0) >= 28) return { outcome: "inventory_full", gained, item: yields };
      if (session.self()?.activity === "gather") gathering = true;
      else if (gathering) return { outcome: "interrupted", by: "gathering stopped", gained };
      return undefined;
    };
    return act(ctx, "gather", () => ctx.session.send("player:action", { action: "gather", targetId: a.targetId }), check, {
      ...a,
      replaces: true,
      refusalOutcomes: { INVENTORY_FULL: "inventory_full", DEPLETED: "target_gone" },
    });
  },
});

const pickup = tool({
  name: "pickup",
  title: "Pick up",
  description: "Walk to a ground item (id from observe) and pick it up. Ends completed, target_gone, inventory_full or refused.",
  input: z.object({ targetId, ...WAIT_FIELDS }),
  event: "player:action",
  passes: ["targetId"],
  acts: true,
  run: (ctx, a) => {
    const g = ctx.session.view.groundItems.get(a.targetId);
    const itemId = str(g?.itemId);
    const before = itemId === "coins" ? (ctx.session.me?.coins ?? 0) : held(ctx.session, itemId);
    const check: Check = ({ session }) => {
      const now = itemId === "coins" ? (session.me?.coins ?? 0) : held(session, itemId);
      if (now > before) return { outcome: "completed", item: itemId, quantity: now - before };
      if (!session.view.groundItems.has(a.targetId)) return { outcome: "target_gone", detail: "the item is gone" };
      return undefined;
    };
    return act(ctx, "pickup", () => ctx.session.send("player:action", { action: "pickup", targetId: a.targetId }), check, {
      ...a,
      replaces: true,
      refusalOutcomes: { INVENTORY_FULL: "inventory_full" },
    });
  },
});

/** A tool that sends one `player:action` and ends at once (talk, buy, sell, unequip). */
const instantAction = (
  name: string,
  title: string,
  description: string,
  input: z.ZodObject,
  payload: (a: Record<string, unknown>) => Record<string, unknown>,
  passes: string[],
) =>
  tool({
    name,
    title,
    description,
    input,
    event: "player:action",
    passes,
    acts: name !== "talk",
    run: (ctx, a) => act(ctx, name, () => ctx.session.send("player:action", payload(a)), instantCheck),
  });

const storeInput = z.object({ targetId, itemId: action.itemId.unwrap(), quantity: action.quantity });
const talk = instantAction(
  "talk",
  "Talk",
  "Talk to an NPC or a store (within 3 tiles): its answer comes back in messages.",
  z.object({ targetId }),
  (a) => ({ action: "talk", targetId: a.targetId }),
  ["targetId"],
);
const buy = instantAction(
  "buy",
  "Buy",
  "Buy from a store (targetId: the store id from observe) within 3 tiles.",
  storeInput,
  (a) => ({ action: "buy", ...a }),
  ["targetId", "itemId", "quantity"],
);
const sell = instantAction(
  "sell",
  "Sell",
  "Sell to a store (targetId: the store id from observe) within 3 tiles.",
  storeInput,
  (a) => ({ action: "sell", ...a }),
  ["targetId", "itemId", "quantity"],
);
const unequip = instantAction(
  "unequip",
  "Take off",
  "Take off what is worn in an equipment slot (back to the inventory).",
  z.object({ slot: z.enum(EQUIP_SLOTS) }),
  (a) => ({ action: "unequip", targetId: a.slot }),
  [],
);

/** A tool that sends one `inventory:use` and ends at once. */
const useTool = (
  name: string,
  title: string,
  description: string,
  input: z.ZodObject,
  payload: (ctx: ToolContext, a: Record<string, unknown>) => Record<string, unknown> | Outcome,
  passes: string[],
  check: Check = instantCheck,
) =>
  tool({
    name,
    title,
    description,
    input,
    event: "inventory:use",
    passes,
    acts: true,
    run: async (ctx, a) => {
      const p = payload(ctx, a);
      if ("outcome" in p) return p as Outcome;
      return act(ctx, name, () => ctx.session.send("inventory:use", p), check);
    },
  });

const useItem = useTool(
  "use_item",
  "Use an item",
  "Use the item of an inventory slot: eat, wield, wear, bury; on another slot (targetSlot) or on a fire, range, furnace or anvil (targetId).",
  CLIENT_EVENTS["inventory:use"],
  (_ctx, a) => a,
  ["slot", "targetSlot", "targetId"],
);
const equip = useTool("equip", "Equip", "Wield or wear the item of an inventory slot.", z.object({ slot: use.slot }), (_ctx, a) => ({ slot: a.slot }), [
  "slot",
]);
const drop = useTool(
  "drop",
  "Drop",
  "Drop the whole stack of an inventory slot where you stand.",
  z.object({ slot: use.slot }),
  (_ctx, a) => ({ slot: a.slot, targetId: "drop" }),
  ["slot"],
);
const lightFire = useTool(
  "light_fire",
  "Light a fire",
  "Light logs where you stand with your tinderbox (slot: the logs; default the first logs). Answers the fire's id (for cook).",
  z.object({ slot: use.slot.optional() }),
  (ctx, a) => {
    const logs = (a.slot as number | undefined) ?? slotOf(ctx.session, (id) => ctx.content.items.get(id)?.firemaking !== undefined);
    const tinderbox = slotOf(ctx.session, (id) => id === "tinderbox");
    if (logs === undefined) return refused("EMPTY_SLOT", "you have no logs");
    if (tinderbox === undefined) return refused("TOOL_REQUIRED", "you have no tinderbox");
    return { slot: logs, targetSlot: tinderbox };
  },
  ["slot"],
  // Done when the fire stands in view (its id is what cook takes), a tick after the logs went.
  ({ session, events }) => {
    const here = session.tile();
    const fire = [...session.view.resources.values()].find((r) => r.type === "fire" && r.x === here.x && r.z === here.z);
    return fire && events.some((e) => e.event === "player:sync") ? { outcome: "completed", fireId: fire.id, messages: notices(events) } : undefined;
  },
);
const cook = useTool(
  "cook",
  "Cook",
  "Cook the raw food of a slot (default the first raw food) on a fire or range within 3 tiles (targetId from observe).",
  z.object({ slot: use.slot.optional(), targetId: use.targetId.unwrap() }),
  (ctx, a) => {
    const raw = (a.slot as number | undefined) ?? slotOf(ctx.session, (id) => ctx.content.recipes.cooking.some((r) => r.input === id));
    if (raw === undefined) return refused("EMPTY_SLOT", "you have no raw food");
    return { slot: raw, targetId: a.targetId };
  },
  ["slot", "targetId"],
);

const deposit = tool({
  name: "bank_deposit",
  title: "Deposit",
  description: "Deposit an inventory slot (or a quantity of its item, across slots) within 3 tiles of a bank booth.",
  input: CLIENT_EVENTS["bank:deposit"],
  event: "bank:deposit",
  passes: ["slot", "quantity"],
  acts: true,
  run: (ctx, a) => act(ctx, "bank_deposit", () => ctx.session.send("bank:deposit", a), instantCheck),
});
const withdraw = tool({
  name: "bank_withdraw",
  title: "Withdraw",
  description: "Withdraw an item from the bank within 3 tiles of a bank booth.",
  input: CLIENT_EVENTS["bank:withdraw"],
  event: "bank:withdraw",
  passes: ["itemId", "quantity"],
  acts: true,
  run: (ctx, a) => act(ctx, "bank_withdraw", () => ctx.session.send("bank:withdraw", a), instantCheck),
});

const chat = tool({
  name: "chat",
  title: "Chat",
  description: "Say something in public chat, or privately to a friend (to: their player id). Text starting with / is a command (/help).",
  input: CLIENT_EVENTS["player:chat"],
  event: "player:chat",
  passes: ["text", "to"],
  acts: false,
  run: (ctx, a) => {
    const check: Check = ({ session, events }) => {
      const echo = events.find((e) => e.event === "chat:message" && e.data.fromId === session.me?.id && e.data.text === a.text.trim());
      if (echo) return { outcome: "completed", detail: `${String(echo.data.type)} message sent` };
      const said = notices(events);
      return said.length ? { outcome: "completed", messages: said } : undefined;
    };
    return act(ctx, "chat", () => ctx.session.send("player:chat", a), check);
  },
});

/** The world tools, in the order tools/list shows them. */
export const WORLD_TOOLS: ToolDef[] = [
  walk,
  walkTo,
  attack,
  gather,
  pickup,
  talk,
  useItem,
  equip,
  unequip,
  drop,
  lightFire,
  cook,
  deposit,
  withdraw,
  buy,
  sell,
  chat,
];
