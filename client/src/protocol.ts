/**
 * The protocol's types, taken from the server's own contract (`src/events.ts`, docs/protocol.md)
 * as type-only imports: nothing of the server is bundled, and a change of a payload there fails
 * this client's type check.
 */
export type {
  PlayerSync,
  ClientEventName,
  ClientEventPayload,
  ServerEventName,
  ServerEventPayload,
  ChatMessage,
  CombatHit,
  SkillXp,
} from "../../src/events.js";
export type { PlayerPublic, NpcPublic, ResourcePublic, GroundItemPublic } from "../../src/protocol/player.js";

import type { ServerEventPayload } from "../../src/events.js";

export type TradeOffer = ServerEventPayload<"tradeUpdated">["myOffer"];
export type TradeValues = ServerEventPayload<"tradeConfirmScreen">["values"];

/** Close codes after which the server gives no reconnection seat (docs/protocol.md#close-codes). */
export const FINAL_CLOSE_CODES: Readonly<Record<number, string>> = {
  4001: "Your session token is no longer valid. Log in again.",
  4002: "The connection sent something the server could not read.",
  4003: "This agent's token was revoked.",
  4009: "This character was opened somewhere else.",
  4012: "Your character must be reloaded after a trade. Log in again.",
  4029: "Too many messages: you are blocked for a minute.",
};
