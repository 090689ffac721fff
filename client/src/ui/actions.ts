/** Turns an intent (a tile option, a key) into the events it sends (docs/protocol.md "Client events"). */
import { approach, type Intent } from "../state/intent.js";
import { addSystemLine, self } from "../state/store.js";
import { requested } from "../state/trade.js";
import type { Ui } from "./context.js";

/** Walk (or run with `run`) to a tile; the server finds the path on its next tick. */
export function walk(u: Ui, x: number, z: number, run = false): void {
  u.session.send("player:move", { x, z, run });
  u.store.update((s) => ({ ...s, destination: { x, z } }));
}

/** Do what an intent says. */
export function perform(u: Ui, intent: Intent): void {
  const me = self(u.store.state);
  switch (intent.kind) {
    case "move":
      return walk(u, intent.x, intent.z);
    case "attack":
    case "talk":
    case "gather":
    case "pickup":
      u.session.send("player:action", { action: intent.kind, targetId: intent.targetId });
      return;
    case "trade":
      u.session.send("tradeRequest", { targetPlayerId: intent.targetId });
      u.store.update((s) => addSystemLine({ ...s, trade: requested(s.trade, intent.targetId) }, "Sending trade request…"));
      return;
    case "whisper": {
      const to = document.getElementById("chat-to") as HTMLSelectElement | null;
      if (to) {
        if (![...to.options].some((o) => o.value === intent.targetId)) to.add(new Option(`To ${intent.name}`, intent.targetId));
        to.value = intent.targetId;
      }
      document.getElementById("chat-input")?.focus();
      return;
    }
    case "friend":
      void socialCall(u, () => u.api.addFriend(u.store.state.me?.id ?? "me", intent.name), `Friend request sent to ${intent.name}.`);
      return;
    case "ignore":
      void socialCall(u, () => u.api.ignore(intent.name), `${intent.name} is ignored.`);
      return;
    case "useOn":
      u.session.send("inventory:use", { slot: intent.slot, targetId: intent.targetId });
      u.ui.selectedSlot = undefined;
      u.refresh();
      return;
    case "bank":
    case "store": {
      const far = !me || Math.max(Math.abs(me.x - intent.x), Math.abs(me.z - intent.z)) > 2;
      if (me && far) {
        const t = approach(intent, me, u.content);
        if (t) walk(u, t.x, t.z);
      }
      if (intent.kind === "store") {
        u.ui.storeId = intent.storeId;
        // The shopkeeper's greeting only when near (from afar the server refuses with TOO_FAR).
        if (!far) u.session.send("player:action", { action: "talk", targetId: intent.storeId });
        u.showTab("store");
      } else u.showTab("bank");
      return;
    }
  }
}

/** A REST call of the social graph, its outcome in the chat. */
export async function socialCall(u: Ui, call: () => Promise<unknown>, done: string): Promise<void> {
  try {
    await call();
    u.store.update((s) => addSystemLine(s, done));
  } catch (e) {
    u.store.update((s) => addSystemLine(s, (e as Error).message));
  }
  u.refresh();
}
