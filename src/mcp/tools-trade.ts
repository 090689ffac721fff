/**
 * The whole trade as tools (docs/trading.md, docs/agents.md#tools): request, answer, offer, remove,
 * accept on each screen, cancel. Each takes its trade event's schema as it is (`CLIENT_EVENTS`);
 * `trade_accept` quotes the revision of the screen the session last saw when none is given, so an
 * accept can never apply to an offer the agent has not observed.
 */
import { CLIENT_EVENTS } from "../events.js";
import type { Check } from "./outcome.js";
import { act, refused, tool, WAIT_FIELDS, type ToolDef } from "./tools.js";

const since = (events: { event: string; data: Record<string, unknown> }[], event: string, tradeId?: string) =>
  events.find((e) => e.event === event && (tradeId === undefined || e.data.tradeId === tradeId));

/** Ends on the trade's end (completed or cancelled), whichever tool is waiting. */
const ended = (events: Parameters<Check>[0]["events"], tradeId?: string) => {
  const done = since(events, "tradeCompleted", tradeId);
  if (done) return { outcome: "completed" as const, detail: "trade completed", receivedItems: done.data.receivedItems };
  const cancelled = since(events, "tradeCancelled", tradeId);
  if (cancelled) return { outcome: "cancelled" as const, code: String(cancelled.data.reason), detail: String(cancelled.data.message) };
  return undefined;
};

const request = tool({
  name: "trade_request",
  title: "Ask to trade",
  description:
    "Ask a player within 2 tiles to trade. Ends completed when they accept (offer screen open), cancelled when they decline or it expires (30 s), or refused.",
  input: CLIENT_EVENTS.tradeRequest.extend(WAIT_FIELDS),
  event: "tradeRequest",
  passes: ["targetPlayerId"],
  acts: true,
  run: (ctx, a) => {
    const check: Check = ({ events }) => {
      const started = events.find((e) => e.event === "tradeStarted" && e.data.partnerId === a.targetPlayerId);
      if (started) return { outcome: "completed", detail: "trade open: offer screen", tradeId: started.data.tradeId };
      return ended(events);
    };
    return act(ctx, "trade_request", () => ctx.session.send("tradeRequest", { targetPlayerId: a.targetPlayerId }), check, {
      ...a,
      timeout: a.timeout ?? 35_000,
    });
  },
});

const respond = tool({
  name: "trade_respond",
  title: "Answer a trade request",
  description: "Accept or decline a trade request (its tradeId is in your status and observe).",
  input: CLIENT_EVENTS.tradeRequestRespond,
  event: "tradeRequestRespond",
  passes: ["tradeId", "accept"],
  acts: true,
  run: (ctx, a) => {
    const check: Check = ({ events }) => {
      if (since(events, "tradeStarted", a.tradeId)) return { outcome: "completed", detail: "trade open: offer screen", tradeId: a.tradeId };
      return ended(events, a.tradeId);
    };
    return act(ctx, "trade_respond", () => ctx.session.send("tradeRequestRespond", a), check);
  },
});

/** An offer change: ends at the `tradeUpdated` it causes. */
const offerCheck =
  (tradeId: string): Check =>
  ({ events, session }) => {
    const updated = since(events, "tradeUpdated", tradeId);
    if (updated)
      return {
        outcome: "completed",
        revision: updated.data.revision,
        myOffer: updated.data.myOffer,
        theirOffer: updated.data.theirOffer,
        screen: session.trade?.screen,
      };
    return ended(events, tradeId);
  };

const offer = tool({
  name: "trade_offer",
  title: "Offer items or coins",
  description: "Offer a quantity of an inventory slot (inventorySlot, quantity), or set the offered coins (coins; 0 removes them). Clears both acceptances.",
  input: CLIENT_EVENTS.tradeAddItem,
  event: "tradeAddItem",
  passes: ["tradeId", "inventorySlot", "quantity", "coins"],
  acts: true,
  run: (ctx, a) => act(ctx, "trade_offer", () => ctx.session.send("tradeAddItem", a), offerCheck(a.tradeId)),
});

const remove = tool({
  name: "trade_remove",
  title: "Take back an offered slot",
  description: "Take an inventory slot out of your offer.",
  input: CLIENT_EVENTS.tradeRemoveItem,
  event: "tradeRemoveItem",
  passes: ["tradeId", "inventorySlot"],
  acts: true,
  run: (ctx, a) => act(ctx, "trade_remove", () => ctx.session.send("tradeRemoveItem", a), offerCheck(a.tradeId)),
});

const accept = tool({
  name: "trade_accept",
  title: "Accept the trade screen",
  description:
    "Accept the current screen (the revision you last saw unless given). On the offer screen it ends when both accepted (confirmation screen: check values, accept again); on the confirmation screen when the items moved.",
  input: CLIENT_EVENTS.tradeAccept.extend({ wait: WAIT_FIELDS.wait }),
  event: "tradeAccept",
  passes: ["tradeId", "revision"],
  acts: true,
  run: async (ctx, a) => {
    const t = ctx.session.trade;
    if (!t || t.tradeId !== a.tradeId) return refused("NOT_IN_TRADE", "no open trade with that id");
    const revision = a.revision ?? t.revision;
    const screen = t.screen;
    const check: Check = ({ events }) => {
      const end = ended(events, a.tradeId);
      if (end) return end;
      const confirm = since(events, "tradeConfirmScreen", a.tradeId);
      if (screen === "offer" && confirm)
        return {
          outcome: "completed",
          detail: "both accepted: confirmation screen; check values, then trade_accept again",
          revision: confirm.data.revision,
          values: confirm.data.values,
        };
      const changed = events.find((e) => e.event === "tradeUpdated" && e.data.tradeId === a.tradeId && Number(e.data.revision) !== revision);
      if (changed)
        return {
          outcome: "interrupted",
          by: "the offers changed",
          revision: changed.data.revision,
          detail: "acceptances were cleared: observe the offers, then accept again",
        };
      return undefined;
    };
    return act(ctx, "trade_accept", () => ctx.session.send("tradeAccept", { tradeId: a.tradeId, revision }), check, {
      wait: a.wait ?? 10_000,
      timeout: 300_000,
    });
  },
});

const cancel = tool({
  name: "trade_cancel",
  title: "Cancel the trade",
  description: "Cancel the trade (or a request you sent or received).",
  input: CLIENT_EVENTS.tradeCancel,
  event: "tradeCancel",
  passes: ["tradeId"],
  acts: false,
  run: (ctx, a) =>
    act(
      ctx,
      "trade_cancel",
      () => ctx.session.send("tradeCancel", a),
      ({ events }) => ended(events, a.tradeId),
    ),
});

export const TRADE_TOOLS: ToolDef[] = [request, respond, offer, remove, accept, cancel];
