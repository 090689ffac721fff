/** `chat:message` lines the world sends to one player. */
import { randomUUID } from "node:crypto";
import type { ChatMessage } from "../events.js";
import type { Player } from "./player.js";

/** Build a `chat:message`. */
export function chatMessage(type: ChatMessage["type"], text: string, fromId?: string, fromName?: string): ChatMessage {
  return { id: randomUUID(), type, ...(fromId ? { fromId } : {}), ...(fromName ? { fromName } : {}), text, timestamp: new Date().toISOString() };
}

/** A system chat line for one player. */
export function system(p: Player, text: string): void {
  p.send("chat:message", chatMessage("system", text));
}
