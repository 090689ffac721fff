/**
 * Readable texts for refusal codes (docs/protocol.md "Refusal codes", docs/trading.md "Error codes"). The
 * server's line already says why; a client that shows its own wording per code uses this table, and
 * an unknown future code still shows the server's text.
 */
const HINTS: Readonly<Record<string, string>> = {
  PLAYER_DEAD: "You are dead.",
  TRADING: "Finish or cancel the trade first.",
  ITEMS_LOCKED: "Please wait a moment.",
  TRANSACTION_FAILED: "That didn't work; nothing changed.",
  INVALID_TARGET: "That is not a tile.",
  OUT_OF_BOUNDS: "That is outside the world.",
  TOO_FAR: "That is too far away.",
  BLOCKED: "You can't stand there.",
  NO_PATH: "You can't reach that.",
  NO_SUCH_TARGET: "There is nothing like that there.",
  UNKNOWN_ITEM: "Unknown item.",
  CANNOT_ATTACK: "You can't attack that.",
  NOT_IN_PVP_AREA: "You can only fight players in a PvP area.",
  DEPLETED: "There is nothing left here.",
  NOTHING_HAPPENS: "Nothing interesting happens.",
  CANNOT_LIGHT_HERE: "You can't light a fire here.",
  NO_RECIPE: "You can't make anything from that here.",
  LEVEL_TOO_LOW: "Your level is too low.",
  TOOL_REQUIRED: "You need a tool for that.",
  REQUIREMENTS_NOT_MET: "You don't have what that needs.",
  EMPTY_SLOT: "That slot is empty.",
  INVALID_SLOT: "No such slot.",
  INVALID_QUANTITY: "That is not a valid quantity.",
  INVALID_INVENTORY: "Your inventory is not valid.",
  ITEM_MISMATCH: "That slot changed.",
  INSUFFICIENT_QUANTITY: "You don't have enough of that.",
  INVENTORY_FULL: "Your inventory is full.",
  STACK_OVERFLOW: "You can't hold that many.",
  NOT_ENOUGH_COINS: "You don't have enough coins.",
  OUT_OF_AMMO: "You have no ammunition left.",
  WRONG_AMMO: "Your weapon can't fire that ammunition.",
  OUT_OF_RANGE: "Your target is out of range.",
  NO_LINE_OF_SIGHT: "You can't see your target from here.",
  UNKNOWN_PRAYER: "There is no such prayer.",
  NO_PRAYER_POINTS: "You have no prayer points left; recharge them at an altar.",
  NOT_SOLD_HERE: "The store doesn't sell that.",
  STORE_WONT_BUY: "The store won't buy that.",
  PLAYER_OFFLINE: "That player is not online.",
  NOT_FRIENDS: "You can only message your friends.",
  UNKNOWN_COMMAND: "Unknown command. Try /help.",
  INVALID_COMMAND: "Wrong command arguments. Try /help.",
  ADMIN_ONLY: "You need admin access for that.",
  WRONG_ADMIN_CODE: "Wrong admin code.",
  ADMIN_BLOCKED: "Too many wrong codes; try later.",
  UNKNOWN_EVENT: "The server does not know that request.",
  INVALID_PAYLOAD: "The request was malformed.",
  INVALID_MESSAGE: "The request was malformed.",
  // Trade error codes (docs/trading.md#error-codes) not already above.
  INVALID_REQUEST: "The trade request was malformed.",
  SELF_TRADE: "You can't trade with your own characters.",
  ALREADY_IN_TRADE: "You are already trading.",
  PLAYER_BUSY: "That player is busy.",
  RATE_LIMITED: "Wait a few seconds before asking again.",
  INVALID_TRADE: "That trade is over.",
  NOT_IN_TRADE: "You are not in that trade.",
  INVALID_ITEM: "That item can't be offered.",
  UNTRADEABLE_ITEM: "That item can't be traded.",
  STALE_OFFER: "The offer changed: check it again.",
  OFFER_FROZEN: "Offers can't change on the confirmation screen.",
  TRADE_FAILED: "The trade failed; nothing changed.",
};

/**
 * The text to show for a refusal: the server's own text (it may name the skill or item), or the
 * table's when the server sent none; always prefixed by nothing, so the player reads a sentence.
 */
export function refusalText(code: string, serverText: string | undefined): string {
  const text = serverText?.trim();
  if (text) return text;
  return HINTS[code] ?? `Refused (${code}).`;
}

/** Whether the client has its own text for this code. */
export function knownRefusal(code: string): boolean {
  return Object.hasOwn(HINTS, code);
}
