/** `player:chat`: public lines to players in view that track the speaker, private lines to friends, and chat commands. */
import { addItem } from "../../domain/inventory.js";
import { MAX_STACK } from "../../domain/types.js";
import type { ClientEventPayload } from "../../events.js";
import { chatMessage, system } from "../messages.js";
import { refusal, refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { World } from "../world.js";

/** `player:chat`: public to players in view, private to a friend, or a command. */
export async function handleChat(w: World, p: Player, c: ClientEventPayload<"player:chat">) {
  const text = c.text.trim();
  if (!text) return;
  if (text.startsWith("/")) return command(w, p, text);
  const social = w.deps.social;
  if (c.to) {
    // Who may learn the target is online comes first (docs/protocol.md#private-messages): to a
    // non-friend (or an unknown id) the answer is NOT_FRIENDS whether the target is online or not;
    // a friend who ignores the sender answers as an offline one. Both checks read cached relations.
    if (social && !(await social.areFriends(p.id, c.to))) return refuse(p, "NOT_FRIENDS");
    if (social && (await social.isIgnoring(c.to, p.id))) return refuse(p, "PLAYER_OFFLINE");
    const target = w.players.get(c.to);
    if (!target?.connection) return privateElsewhere(w, p, c.to, text);
    const msg = chatMessage("private", text, p.id, p.name);
    target.send("chat:message", msg);
    p.send("chat:message", msg);
    // Each keeps the other in view a while (interest management).
    target.chattedWith.set(p.id, w.now());
    p.chattedWith.set(target.id, w.now());
    return;
  }
  const msg = chatMessage("public", text, p.id, p.name);
  // To the speaker and the clients within view that track it (docs/interest.md "In a crowd").
  for (const viewer of w.visibility.viewersOf(p.x, p.z)) {
    if (viewer.id !== p.id && !w.visibility.tracks(viewer, "players", p.id)) continue;
    if (viewer.id !== p.id && social && (await social.isIgnoring(viewer.id, p.id))) continue;
    viewer.send("chat:message", msg);
  }
}

/**
 * A private line to a friend who is not in this world: delivered in whichever world it plays
 * (docs/operations.md "Worlds"), in one call that answers whether it was (no presence lookup before it).
 */
async function privateElsewhere(w: World, p: Player, to: string, text: string) {
  const others = w.deps.otherWorlds?.();
  if (!others || to === p.id || !(await others.deliverPrivateMessage(to, { id: p.id, name: p.name }, text))) return refuse(p, "PLAYER_OFFLINE");
  p.send("chat:message", chatMessage("private", text, p.id, p.name));
}

/** Chat commands. Admin commands need `/admin <ADMIN_CODE>` first. */
async function command(w: World, p: Player, text: string) {
  const [cmd, ...args] = text.slice(1).split(/\s+/);
  switch (cmd) {
    case "admin": {
      if (!args[0]) return refuse(p, "INVALID_COMMAND", "Usage: /admin <code>");
      const check = await w.deps.checkAdminCode(args[0], p.connection?.remoteAddress);
      if (check === "ok") {
        p.admin = true;
        system(p, "Admin mode enabled for this session.");
        p.sync();
      } else if (check === "blocked") refuse(p, "ADMIN_BLOCKED");
      else refuse(p, "WRONG_ADMIN_CODE");
      return;
    }
    case "style": {
      const s = args[0];
      if (s === "attack" || s === "strength" || s === "defense") {
        p.style = s;
        system(p, `Combat style set to ${s}.`);
        p.sync();
      } else refuse(p, "INVALID_COMMAND", "Usage: /style attack|strength|defense");
      return;
    }
    case "help":
      system(p, "Commands: /style attack|strength|defense, /admin <code>; admins: /give <itemId> [qty], /tp <x> <z>, /coins <amount>");
      return;
    case "give":
    case "tp":
    case "coins":
      if (!p.admin) return refuse(p, "ADMIN_ONLY");
      return adminCommand(w, p, cmd, args);
    default:
      refuse(p, "UNKNOWN_COMMAND", `Unknown command /${cmd}. Try /help.`);
  }
}

/** `/give <itemId> [qty]`, `/coins <amount>` (immediate item transactions) and `/tp <x> <z>`. */
async function adminCommand(w: World, p: Player, cmd: string, args: string[]) {
  if (p.tradeId) return refuse(p, "TRADING", "Not while trading.");
  if (cmd === "give") {
    const item = w.content.items.get(args[0] ?? "");
    const qty = args[1] === undefined ? 1 : Number(args[1]);
    if (!item) return refuse(p, "UNKNOWN_ITEM", "Unknown item id.");
    if (!Number.isInteger(qty) || qty < 1 || qty > MAX_STACK) return refuse(p, "INVALID_COMMAND", "Quantity must be a whole number from 1.");
    await w.saving.commitItems(
      p,
      () => {
        const r = addItem(p.inventory, item, qty);
        return r.ok ? { inventory: r.value } : refusal("INVENTORY_FULL", "Not enough inventory space.");
      },
      () => system(p, `Gave ${qty} × ${item.name}.`),
    );
    return;
  }
  if (cmd === "coins") {
    const amount = Number(args[0]);
    if (!Number.isInteger(amount) || amount < 0 || amount > MAX_STACK)
      return refuse(p, "INVALID_COMMAND", `Coins must be a whole number from 0 to ${MAX_STACK}.`);
    await w.saving.commitItems(
      p,
      () => ({ coins: amount }),
      () => system(p, `Coins set to ${amount}.`),
    );
    return;
  }
  if (cmd === "tp") {
    const x = Number(args[0]);
    const z = Number(args[1]);
    if (!Number.isInteger(x) || !Number.isInteger(z) || !w.content.inBounds(x, z) || w.content.isBlocked(x, z))
      return refuse(p, "INVALID_COMMAND", "Usage: /tp <x> <z> with a free tile inside the world.");
    w.movement.teleport(p, x, z);
    system(p, `Teleported to ${x}, ${z}.`);
  }
}
