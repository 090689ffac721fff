/**
 * The handlers of the non-trade client events, one module per feature under `actions/`. Each
 * validates against server-side state (payload shapes are already checked by the event table), then
 * changes the world or answers with a system `chat:message` saying why nothing happened.
 */
import type { ClientEventName, ClientEventPayload } from "../events.js";
import { handleDeposit, handleWithdraw } from "./actions/bank.js";
import { handleChat } from "./actions/chat.js";
import { handleInventoryUse } from "./actions/inventory.js";
import { handleAction, handleMove } from "./actions/player-action.js";
import type { Player } from "./player.js";
import type { World } from "./world.js";

export { INTERACT_RANGE } from "./actions/guards.js";
export { handleAction, handleChat, handleDeposit, handleInventoryUse, handleMove, handleWithdraw };

type Handler<E extends ClientEventName> = (w: World, p: Player, payload: ClientEventPayload<E>) => unknown;

/** The handler of each world event (trade events go to the trade service). */
export const WORLD_EVENT_HANDLERS: { [E in ClientEventName]?: Handler<E> } = {
  "player:move": handleMove,
  "player:action": handleAction,
  "player:chat": handleChat,
  "inventory:use": handleInventoryUse,
  "bank:deposit": handleDeposit,
  "bank:withdraw": handleWithdraw,
};
