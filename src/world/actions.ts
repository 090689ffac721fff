/**
 * The handlers of the non-trade client events, one module per feature under `actions/`; the event
 * table (rooms/world/event-table.ts) puts each beside its payload schema. Each validates against
 * server-side state (payload shapes are already checked by the table), then changes the world or
 * answers with a refusal (a system `chat:message` with a stable code) saying why nothing happened.
 */
import { handleDeposit, handleWithdraw } from "./actions/bank.js";
import { handleChat } from "./actions/chat.js";
import { handleInventoryUse } from "./actions/inventory.js";
import { handleAction, handleMove } from "./actions/player-action.js";

export { INTERACT_RANGE } from "./actions/guards.js";
export { handleAction, handleChat, handleDeposit, handleInventoryUse, handleMove, handleWithdraw };
