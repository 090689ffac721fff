/** The trade window (offer screen, confirmation screen with the wealth-transfer line) and incoming requests. */
import type { TradeOffer } from "../protocol.js";
import { wealthIndicator } from "../state/trade.js";
import { button, byId, h, type Ui } from "./context.js";

function offerList(u: Ui, o: TradeOffer, mine: boolean, tradeId: string, canEdit: boolean): HTMLElement {
  const items = o.items.map((i) =>
    h(
      "div",
      { class: "row", "data-offer-item": i.itemId },
      `${u.content.itemName(i.itemId)} × ${i.quantity}`,
      ...(mine && canEdit ? [button("Remove", () => u.session.send("tradeRemoveItem", { tradeId, inventorySlot: i.inventorySlot }))] : []),
    ),
  );
  if (o.coins > 0) items.push(h("div", { class: "row", "data-offer-item": "coins" }, `Coins × ${o.coins}`));
  if (!items.length) items.push(h("div", {}, "Nothing offered."));
  if (o.accepted) items.push(h("div", { class: "accepted" }, "Accepted"));
  return h("div", { class: "side", "data-side": mine ? "mine" : "theirs" }, ...items);
}

/** Renders the trade window and the list of incoming requests from the state. */
export function renderTrade(u: Ui): void {
  const t = u.store.state.trade;
  const box = byId("trade");
  const requests = byId("requests");
  requests.replaceChildren(
    ...t.incoming.map((r) =>
      h(
        "div",
        { class: "request", "data-trade-request": r.tradeId },
        `${r.fromPlayerName} (level ${r.fromPlayerLevel}) wants to trade. `,
        button("Accept", () => u.session.send("tradeRequestRespond", { tradeId: r.tradeId, accept: true })),
        button("Decline", () => u.session.send("tradeRequestRespond", { tradeId: r.tradeId, accept: false })),
      ),
    ),
  );
  if (t.phase !== "open") {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  const confirm = t.screen === "confirm";
  const coins = h("input", { type: "number", min: "0", placeholder: "coins", style: "width:90px", id: "trade-coins" }) as HTMLInputElement;
  const parts: (HTMLElement | string)[] = [
    h("h3", { id: "trade-title" }, confirm ? `Confirm trade with ${t.partnerName}` : `Trading with ${t.partnerName} (level ${t.partnerLevel})`),
    h(
      "div",
      { class: "sides" },
      h("div", {}, h("b", {}, "You offer"), offerList(u, t.myOffer, true, t.tradeId, !confirm)),
      h("div", {}, h("b", {}, `${t.partnerName} offers`), offerList(u, t.theirOffer, false, t.tradeId, false)),
    ),
  ];
  if (!confirm) {
    parts.push(h("p", {}, `Click items in your inventory to offer them. ${t.partnerName} has ${t.partnerFreeSlots} free slots.`));
    parts.push(
      h(
        "div",
        { class: "row" },
        coins,
        button("Offer coins", () => u.session.send("tradeAddItem", { tradeId: t.tradeId, coins: Math.max(0, Math.floor(Number(coins.value) || 0)) })),
      ),
    );
  } else if (t.values) {
    const w = wealthIndicator(t.values);
    parts.push(h("p", { class: `${w.level}${w.warning ? " warning" : ""}`, id: "trade-wealth" }, `${w.warning ? "⚠ " : ""}${w.text}`));
  }
  parts.push(
    h(
      "div",
      { class: "row" },
      button(confirm ? "Confirm" : "Accept", () => u.session.send("tradeAccept", { tradeId: t.tradeId, revision: t.revision }), { id: "trade-accept" }),
      button("Cancel", () => u.session.send("tradeCancel", { tradeId: t.tradeId }), { id: "trade-cancel" }),
    ),
  );
  box.replaceChildren(...parts);
}
