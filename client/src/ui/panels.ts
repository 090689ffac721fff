/** The side panels: inventory, worn items, skills with XP bars, bank, store and friends. */
import type { Friend } from "../net/api.js";
import type { PlayerSync } from "../protocol.js";
import { levelProgress } from "../state/xp.js";
import { socialCall } from "./actions.js";
import { button, byId, h, type Ui } from "./context.js";
import { openMenu } from "./menu.js";

/** Re-renders every panel from the state. */
export function renderPanels(u: Ui): void {
  const me = u.store.state.me;
  if (!me) return;
  renderInventory(u, me);
  renderEquipment(u, me);
  renderSkills(me);
  renderBank(u, me);
  renderStore(u);
}

/** What a left click on an inventory slot does, by what is open. */
function slotClick(u: Ui, slot: number, itemId: string, quantity: number): void {
  const t = u.store.state.trade;
  if (t.phase === "open" && t.screen === "offer") {
    u.session.send("tradeAddItem", { tradeId: t.tradeId, inventorySlot: slot, quantity });
    return;
  }
  if (u.ui.tab === "bank") return u.session.send("bank:deposit", { slot });
  if (u.ui.tab === "store" && u.ui.storeId) return u.session.send("player:action", { action: "sell", targetId: u.ui.storeId, itemId, quantity: 1 });
  if (u.ui.selectedSlot !== undefined && u.ui.selectedSlot !== slot) {
    u.session.send("inventory:use", { slot: u.ui.selectedSlot, targetSlot: slot });
    u.ui.selectedSlot = undefined;
    return u.refresh();
  }
  u.session.send("inventory:use", { slot });
}

function renderInventory(u: Ui, me: PlayerSync): void {
  const t = u.store.state.trade;
  const offered = new Set(t.phase === "open" ? t.myOffer.items.map((i) => i.inventorySlot) : []);
  const cells: HTMLElement[] = [];
  for (let slot = 0; slot < 28; slot++) {
    const it = me.inventory.find((i) => i.slot === slot);
    if (!it) {
      cells.push(h("div", { class: "slot empty", "data-slot": String(slot) }));
      continue;
    }
    const name = u.content.itemName(it.itemId);
    const cls = `slot${u.ui.selectedSlot === slot ? " selected" : ""}${offered.has(slot) ? " offered" : ""}`;
    const el = h("div", { class: cls, "data-slot": String(slot), "data-item": it.itemId, title: u.content.items.get(it.itemId)?.examine ?? name }, name);
    if (it.quantity > 1) el.append(h("span", { class: "qty" }, String(it.quantity)));
    el.addEventListener("click", () => slotClick(u, slot, it.itemId, it.quantity));
    el.addEventListener("contextmenu", (e) => {
      e.preventDefault();
      openMenu(e.clientX, e.clientY, [
        { label: `Use ${name}`, run: () => u.session.send("inventory:use", { slot }) },
        {
          label: `Use ${name} with…`,
          run: () => {
            u.ui.selectedSlot = slot;
            u.refresh();
          },
        },
        { label: `Drop ${name}`, run: () => u.session.send("inventory:use", { slot, targetId: "drop" }) },
        { label: `Deposit ${name}`, run: () => u.session.send("bank:deposit", { slot }) },
        ...(u.ui.storeId
          ? [{ label: `Sell ${name}`, run: () => u.session.send("player:action", { action: "sell", targetId: u.ui.storeId!, itemId: it.itemId, quantity: 1 }) }]
          : []),
      ]);
    });
    cells.push(el);
  }
  const hint =
    u.ui.selectedSlot !== undefined
      ? h(
          "p",
          {},
          "Click a slot, a fire or a station to use the selected item on it. ",
          button("Cancel", () => ((u.ui.selectedSlot = undefined), u.refresh())),
        )
      : "";
  byId("tab-inventory").replaceChildren(
    h("div", { class: "slots", id: "inventory" }, ...cells),
    h("div", { class: "coins", id: "coins" }, `Coins: ${me.coins}`),
    hint,
  );
}

function renderEquipment(u: Ui, me: PlayerSync): void {
  const rows = Object.entries(me.equipment).map(([slot, it]) =>
    h(
      "div",
      { class: "row" },
      `${slot}: ${u.content.itemName(it.itemId)}`,
      button("Remove", () => u.session.send("player:action", { action: "unequip", targetId: slot })),
    ),
  );
  byId("tab-equipment").replaceChildren(
    h("p", {}, `Combat level ${me.combatLevel} · style ${me.style}`),
    ...(rows.length ? rows : [h("p", {}, "Nothing worn. Click a weapon or armour in the inventory to wear it.")]),
  );
}

function renderSkills(me: PlayerSync): void {
  const rows = Object.entries(me.skills).map(([skill, { level, xp }]) => {
    const p = levelProgress(level, xp);
    return h(
      "div",
      { class: "skill", "data-skill": skill },
      h("div", { class: "row" }, h("span", {}, skill), h("span", { class: "skill-level" }, `${level}`), h("span", { class: "skill-xp" }, `${xp} XP`)),
      h("div", { class: "xpbar", title: `${p.toNext} XP to the next level` }, h("div", { style: `width:${Math.round(p.fraction * 100)}%` })),
    );
  });
  byId("tab-skills").replaceChildren(...rows);
}

function renderBank(u: Ui, me: PlayerSync): void {
  const rows = me.bank.map((b) =>
    h(
      "div",
      { class: "row", "data-bank-item": b.itemId },
      `${u.content.itemName(b.itemId)} × ${b.quantity}`,
      button("1", () => u.session.send("bank:withdraw", { itemId: b.itemId, quantity: 1 })),
      button("All", () => u.session.send("bank:withdraw", { itemId: b.itemId, quantity: b.quantity })),
    ),
  );
  byId("tab-bank").replaceChildren(
    h("p", {}, "Stand next to a bank booth. Click an inventory item to deposit it."),
    ...(rows.length ? rows : [h("p", {}, "Your bank is empty.")]),
  );
}

function renderStore(u: Ui): void {
  const store = u.content.stores.find((s) => s.id === u.ui.storeId);
  if (!store) {
    byId("tab-store").replaceChildren(h("p", {}, "Click a shopkeeper (yellow circle) to trade with a store."));
    return;
  }
  const rows = store.stock.map((st) => {
    // The store's prices (docs/protocol.md "Client events": buy at ceil(value × buyMultiplier)).
    const price = Math.ceil((u.content.items.get(st.itemId)?.value ?? 0) * store.buyMultiplier);
    return h(
      "div",
      { class: "row", "data-store-item": st.itemId },
      `${u.content.itemName(st.itemId)} (${price} gp)`,
      button("Buy 1", () => u.session.send("player:action", { action: "buy", targetId: store.id, itemId: st.itemId, quantity: 1 })),
    );
  });
  byId("tab-store").replaceChildren(h("h3", {}, store.name), h("p", {}, "Click an inventory item to sell one."), ...rows);
}

let friends: Friend[] = [];
let ignores: { id: string; name: string }[] = [];
let incoming: { id: number; name: string }[] = [];

/** Reloads the friends panel from REST (docs/rest.md#social-graph-deaths-and-kills-apiplayer). */
export async function loadFriends(u: Ui): Promise<void> {
  const me = u.store.state.me;
  if (!me) return;
  try {
    [friends, ignores] = await Promise.all([u.api.friends(me.id), u.api.ignores()]);
    incoming = (await u.api.friendRequests(me.id)).incoming.map((r) => ({ id: r.id, name: r.from.name }));
  } catch {
    // Shown as it was; the next open retries.
  }
  renderFriends(u);
}

function renderFriends(u: Ui): void {
  const me = u.store.state.me;
  if (!me) return;
  const name = h("input", { placeholder: "Name", maxlength: "12", id: "friend-name" }) as HTMLInputElement;
  const reload = () => void loadFriends(u);
  byId("tab-friends").replaceChildren(
    h("h3", {}, "Friends"),
    ...friends.map((f) =>
      h(
        "div",
        { class: "row" },
        `${f.name} ${f.online ? "●" : "○"}`,
        button("Message", () => {
          const to = byId<HTMLSelectElement>("chat-to");
          if (![...to.options].some((o) => o.value === f.id)) to.add(new Option(`To ${f.name}`, f.id));
          to.value = f.id;
          byId("chat-input").focus();
        }),
        button("Remove", () => void socialCall(u, () => u.api.removeFriend(me.id, f.id), `${f.name} removed.`).then(reload)),
      ),
    ),
    ...incoming.map((r) =>
      h(
        "div",
        { class: "row" },
        `${r.name} wants to be friends`,
        button("Accept", () => void socialCall(u, () => u.api.acceptFriend(me.id, r.id), `You and ${r.name} are friends.`).then(reload)),
      ),
    ),
    h(
      "div",
      { class: "row" },
      name,
      button("Add", () => void socialCall(u, () => u.api.addFriend(me.id, name.value), `Friend request sent to ${name.value}.`).then(reload)),
      button("Ignore", () => void socialCall(u, () => u.api.ignore(name.value), `${name.value} is ignored.`).then(reload)),
    ),
    h("h3", {}, "Ignored"),
    ...ignores.map((i) =>
      h(
        "div",
        { class: "row" },
        i.name,
        button("Unignore", () => void socialCall(u, () => u.api.unignore(i.id), `${i.name} is no longer ignored.`).then(reload)),
      ),
    ),
  );
}
