/**
 * What chaos bots do (docs/chaos.md "What it runs"), each as fast as the protocol allows and each bounded
 * in time: a two-screen trade of one item for one coin, a bank deposit or withdrawal, and a drop
 * picked up at once. Every function resolves with an outcome name for the report; an outcome that
 * ends in `timeout` makes the economy check that the server still answers.
 */
import { POST, type ChaosBot } from "./bot.js";
import type { Rng } from "../lib/random.js";

interface Offer {
  slot?: number;
  coins?: number;
}

/** What `giver` offers: one unit of a random inventory slot; `payer` one coin, else one unit of an item. */
function offers(giver: ChaosBot, payer: ChaosBot, rng: Rng): [Offer, Offer] | undefined {
  const g = rng.pick(giver.inventory);
  if (!g) return undefined;
  if (payer.coins > 0) return [{ slot: g.slot }, { coins: 1 }];
  const p = rng.pick(payer.inventory);
  return p ? [{ slot: g.slot }, { slot: p.slot }] : undefined;
}

/**
 * A asks B, both accept, each puts its offer up, both accept the offer screen (naming the revision
 * they saw with their own offer in place) and the confirmation screen. Resolves `completed` (either
 * side saw `tradeCompleted`), `cancelled:<reason>`, `refused:<code>` or `timeout`.
 */
export function trade(a: ChaosBot, b: ChaosBot, rng: Rng, timeoutMs = 8_000): Promise<string> {
  const plan = offers(a, b, rng);
  if (!plan) return Promise.resolve("skipped");
  const want = new Map<ChaosBot, Offer>([
    [a, plan[0]],
    [b, plan[1]],
  ]);
  return new Promise((resolve) => {
    let tradeId: string | undefined;
    let finished = false;
    const offs: (() => void)[] = [];
    const accepted = new Map<ChaosBot, number>();
    const finish = (outcome: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const off of offs) off();
      resolve(outcome);
    };
    const mine = (d: any) => tradeId !== undefined && d?.tradeId === tradeId;
    const inPlace = (o: any, w: Offer) =>
      w.coins !== undefined ? o.coins === w.coins && o.items.length === 0 : o.coins === 0 && o.items.length === 1 && o.items[0].inventorySlot === w.slot;
    offs.push(
      a.on("tradeError", (d) => {
        if (tradeId === undefined && d?.tradeId === undefined) finish(`refused:${d?.code}`);
      }),
      b.on("tradeIncoming", (d) => {
        if (tradeId !== undefined || d?.fromPlayerId !== a.id) return;
        tradeId = String(d.tradeId);
        b.send("tradeRequestRespond", { tradeId, accept: true });
      }),
    );
    for (const me of [a, b]) {
      offs.push(
        me.on("tradeStarted", (d) => {
          if (!mine(d)) return;
          const w = want.get(me)!;
          if (w.coins !== undefined) me.send("tradeAddItem", { tradeId, coins: w.coins });
          else me.send("tradeAddItem", { tradeId, inventorySlot: w.slot, quantity: 1 });
        }),
        me.on("tradeUpdated", (d) => {
          if (!mine(d) || d.myOffer.accepted || !inPlace(d.myOffer, want.get(me)!)) return;
          if ((accepted.get(me) ?? -1) >= d.revision) return;
          accepted.set(me, d.revision as number);
          me.send("tradeAccept", { tradeId, revision: d.revision });
        }),
        me.on("tradeConfirmScreen", (d) => {
          if (mine(d)) me.send("tradeAccept", { tradeId, revision: d.revision });
        }),
        me.on("tradeError", (d) => {
          if (mine(d) && ["INVENTORY_FULL", "INVALID_ITEM", "INVALID_QUANTITY", "INVALID_SLOT"].includes(d.code)) me.send("tradeCancel", { tradeId });
        }),
        me.on("tradeCompleted", (d) => {
          if (mine(d)) finish("completed");
        }),
        me.on("tradeCancelled", (d) => {
          if (mine(d)) finish(`cancelled:${d.reason}`);
        }),
      );
    }
    const timer = setTimeout(() => {
      if (tradeId) for (const me of [a, b]) me.send("tradeCancel", { tradeId });
      finish("timeout");
    }, timeoutMs);
    a.send("tradeRequest", { targetPlayerId: b.id });
  });
}

/** The bot's next item change (`player:sync`), or a system refusal: `ok`, `refused:<code>` or `timeout`. */
async function itemChange(bot: ChaosBot, act: () => void, timeoutMs: number): Promise<string> {
  let refusal: string | undefined;
  const offRefusal = bot.on("chat:message", (d) => {
    if (d?.type === "system" && d.code) refusal = String(d.code);
  });
  const synced = bot.wait("player:sync", () => true, timeoutMs);
  const refused = bot.wait("chat:message", (d) => d?.type === "system" && !!d.code, timeoutMs);
  act();
  const first = await Promise.race([synced.then((s) => (s ? "ok" : "timeout")), refused.then((r) => (r ? "refused" : "timeout"))]);
  offRefusal();
  return first === "refused" ? `refused:${refusal}` : first;
}

/** Deposit a random inventory slot whole, or withdraw a random bank item whole (half the time each, when both can). */
export async function bank(bot: ChaosBot, rng: Rng): Promise<string> {
  const deposit = bot.bank.length === 0 || (bot.inventory.length > 0 && rng.next() < 0.5);
  if (deposit) {
    const s = rng.pick(bot.inventory);
    if (!s) return "skipped";
    return `deposit:${await itemChange(bot, () => bot.send("bank:deposit", { slot: s.slot }), 5_000)}`;
  }
  const b = rng.pick(bot.bank)!;
  return `withdraw:${await itemChange(bot, () => bot.send("bank:withdraw", { itemId: b.itemId, quantity: b.quantity }), 5_000)}`;
}

const atPost = (g: { x: number; z: number }) => g.x === POST.x && g.z === POST.z;

/** Pick up pile `id` (retrying while the items are locked): `ok`, `refused:<code>` or `timeout`. */
async function pickUp(bot: ChaosBot, id: string): Promise<string> {
  let r = "timeout";
  for (let i = 0; i < 5 && bot.ground.has(id); i++) {
    r = await itemChange(bot, () => bot.send("player:action", { action: "pickup", targetId: id }), 10_000);
    if (r !== "refused:ITEMS_LOCKED") return r;
    await new Promise((ok) => setTimeout(ok, 300));
  }
  return r;
}

/**
 * Drop a random inventory slot on the bot's tile and pick the pile up at once. A pile not taken
 * back is remembered as a leftover (the bot looks for it when it is in that world again, see
 * `recoverLeftovers`); the conservation check counts whatever the server kept.
 */
export async function dropAndPickUp(bot: ChaosBot, rng: Rng): Promise<string> {
  const s = rng.pick(bot.inventory);
  const inst = bot.instance;
  if (!s || !inst) return "skipped";
  const known = new Set(bot.ground.keys());
  const isNew = () => [...bot.ground].find(([id, g]) => !known.has(id) && g.itemId === s.itemId && atPost(g))?.[0];
  const pile = bot.wait("world:update", () => isNew() !== undefined, 5_000);
  const dropped = await itemChange(bot, () => bot.send("inventory:use", { slot: s.slot, targetId: "drop" }), 15_000);
  const leftover = { instance: inst.name, itemId: s.itemId, quantity: s.quantity, at: Date.now() };
  if (dropped === "timeout") bot.leftovers.push(leftover);
  if (dropped !== "ok") return `drop:${dropped}`;
  await pile;
  const id = isNew();
  const r = id ? await pickUp(bot, id) : "timeout";
  if (r !== "ok") bot.leftovers.push(leftover);
  return `pickup:${r}`;
}

/** Pick up, in the bot's current world, piles at the post of the items it left there. Resolves with how many it got back. */
export async function recoverLeftovers(bot: ChaosBot): Promise<number> {
  let got = 0;
  for (const l of [...bot.leftovers]) {
    if (l.instance !== bot.instance?.name) continue;
    const id = [...bot.ground].find(([, g]) => g.itemId === l.itemId && g.quantity === l.quantity && atPost(g))?.[0];
    if (!id || (await pickUp(bot, id)) !== "ok") continue;
    bot.leftovers.splice(bot.leftovers.indexOf(l), 1);
    got++;
  }
  return got;
}
