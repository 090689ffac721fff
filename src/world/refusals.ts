/**
 * World refusals: every system `chat:message` that says why an event changed nothing carries a stable
 * `code` from this table next to its text (docs/protocol.md "Refusal codes"). The text here is the default;
 * a call site may say more (which skill, which store), never something else. Informational system
 * lines (what happened, goal completion, replies to /help) carry no code. The domain's error codes
 * of movement, inventory, cooking and firemaking are refusal codes too, with the domain's message.
 */
import type { DomainError } from "../domain/errors.js";
import type { FiremakingErrorCode } from "../domain/firemaking.js";
import type { CookingErrorCode } from "../domain/cooking.js";
import type { InventoryErrorCode } from "../domain/inventory.js";
import type { MoveErrorCode } from "../domain/movement.js";
import type { PrayerErrorCode } from "../domain/prayer.js";
import type { RangedErrorCode } from "../domain/ranged.js";
import { chatMessage } from "./messages.js";
import type { Player } from "./player.js";

export const REFUSALS = {
  // The player's state
  /** Dead until its death is written and it respawns: every event is refused. */
  PLAYER_DEAD: "You are dead.",
  /** Fighting, gathering, picking up, items, bank and stores are refused while trading. */
  TRADING: "You can't do that while trading.",
  /** Its items are being committed or held by a trade settlement. */
  ITEMS_LOCKED: "Please wait a moment.",
  /** An immediate item transaction failed to commit. */
  TRANSACTION_FAILED: "That didn't work; nothing changed. Please try again.",

  // Where things are
  INVALID_TARGET: "Movement targets are whole tile coordinates.",
  OUT_OF_BOUNDS: "That tile is outside the world.",
  /** The target is too far: beyond a move's reach, out of view, or not near enough to use. */
  TOO_FAR: "That is too far away.",
  BLOCKED: "You can't stand there.",
  /** No path leads there (another walkable region, or the search gave up). */
  NO_PATH: "You can't reach that.",

  // What the event names
  /** No such NPC, player, resource, ground item, store or person to talk to (or it is gone). */
  NO_SUCH_TARGET: "There is nothing like that.",
  UNKNOWN_ITEM: "Unknown item.",
  CANNOT_ATTACK: "You can't attack that.",
  NOT_IN_PVP_AREA: "You can only fight other players in a PvP area.",
  DEPLETED: "There is nothing left to gather here.",
  /** The item does nothing used that way, or on that. */
  NOTHING_HAPPENS: "Nothing interesting happens.",
  CANNOT_LIGHT_HERE: "You can't light a fire here.",
  /** No recipe takes that item at that fire or station. */
  NO_RECIPE: "You can't make anything from that here.",

  // Ranged combat and prayers (docs/combat.md)
  /** No ammunition in the ammo slot (or it ran out mid-fight). */
  OUT_OF_AMMO: "You have no ammunition left.",
  /** The worn ammunition is not fired by the wielded launcher (ammunition.json). */
  WRONG_AMMO: "You can't fire that ammunition with this weapon.",
  /** The target is farther than the launcher's range. */
  OUT_OF_RANGE: "Your target is out of range.",
  /** A building or station stands between the shooter and the target (fences do not cut sight). */
  NO_LINE_OF_SIGHT: "You can't see your target from here.",
  UNKNOWN_PRAYER: "There is no such prayer.",
  /** Prayer points are at zero: recharge them at an altar. */
  NO_PRAYER_POINTS: "You have no prayer points left; recharge them at an altar.",

  // Requirements
  LEVEL_TOO_LOW: "Your level is too low for that.",
  TOOL_REQUIRED: "You need a tool for that.",
  /** A smithing recipe needs materials, tools or a level the player lacks. */
  REQUIREMENTS_NOT_MET: "You don't have what that needs, or the level.",

  // Items, coins and stores
  EMPTY_SLOT: "That slot is empty.",
  INVALID_SLOT: "There is no such slot.",
  INVALID_QUANTITY: "That is not a valid quantity.",
  INVALID_INVENTORY: "That inventory is not valid.",
  ITEM_MISMATCH: "That slot no longer holds that item.",
  INSUFFICIENT_QUANTITY: "You don't have enough of that.",
  INVENTORY_FULL: "You don't have enough inventory space.",
  /** A stack, the bank or the coins would pass the cap (MAX_STACK). */
  STACK_OVERFLOW: "You can't hold that many.",
  NOT_ENOUGH_COINS: "You don't have enough coins for that.",
  NOT_SOLD_HERE: "The store doesn't sell that.",
  STORE_WONT_BUY: "The store won't buy that.",

  // Chat and commands
  PLAYER_OFFLINE: "That player is not online.",
  NOT_FRIENDS: "You can only message your friends.",
  UNKNOWN_COMMAND: "Unknown command. Try /help.",
  /** A command's arguments are missing or wrong (the text gives its usage). */
  INVALID_COMMAND: "That command's arguments are not right. Try /help.",
  ADMIN_ONLY: "You need admin access for that.",
  WRONG_ADMIN_CODE: "Wrong admin code.",
  /** Too many wrong admin codes from the address. */
  ADMIN_BLOCKED: "Too many wrong codes; try again later.",

  // The message itself (the room, before any handler)
  UNKNOWN_EVENT: "Unknown event.",
  /** The payload failed the event's schema (the text names the field). */
  INVALID_PAYLOAD: "Invalid payload.",
  /** A `/ws` frame that is not a JSON `{ event, data }` object. */
  INVALID_MESSAGE: 'Messages must be JSON {"event": ..., "data": {...}}.',
} as const;

export type RefusalCode = keyof typeof REFUSALS;

/** Every refusal code, as `as const`-style constants (`REFUSAL.PLAYER_DEAD`). */
export const REFUSAL = Object.freeze(Object.fromEntries(Object.keys(REFUSALS).map((k) => [k, k]))) as { readonly [K in RefusalCode]: K };

// The domain's codes that reach players are refusal codes (checked by the compiler).
// eslint-disable-next-line @typescript-eslint/no-duplicate-type-constituents -- firemaking's one code is also cooking's today; listed so that a new one is checked too
type DomainCodes = MoveErrorCode | InventoryErrorCode | CookingErrorCode | FiremakingErrorCode | RangedErrorCode | PrayerErrorCode;
const domainCodesAreRefusals: DomainCodes extends RefusalCode ? true : never = true;
void domainCodesAreRefusals;

/** A refusal as a value (what an item-transaction plan returns instead of a change). */
export interface Refusal {
  readonly code: RefusalCode;
  readonly text: string;
}

/** A refusal with its default text, or a more specific one. */
export function refusal(code: RefusalCode, text: string = REFUSALS[code]): Refusal {
  return { code, text };
}

/** A domain error as a refusal (its code is a refusal code; its message the text). */
export function fromDomain(e: DomainError<DomainCodes>): Refusal {
  return { code: e.code, text: e.message };
}

/** Tell the player why nothing happened: a system `chat:message` with the refusal's `code`. */
export function refuse(p: Player, code: RefusalCode, text: string = REFUSALS[code]): void {
  p.send("chat:message", { ...chatMessage("system", text), code });
}

/** `refuse` for a refusal value. */
export function refuseWith(p: Player, r: Refusal): void {
  refuse(p, r.code, r.text);
}
