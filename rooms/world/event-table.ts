/**
 * The event table: every client event's payload schema (from the protocol, `src/events.ts`) beside
 * the handler that runs it and the way its refusals are told. Both transports are routed by it:
 * the world room hands every SDK message and every `/ws` frame to `EventRouter.route`.
 *
 * Outline of one event: known name? → schema → dead players refused (`PLAYER_DEAD`) → handler.
 * A bad payload changes nothing and never disconnects; the sender is told why (docs/protocol.md#refusals).
 */
import { z } from "zod";
import { CLIENT_EVENTS, schemaRefusal, type ClientEventName, type ClientEventPayload, type TradeEventName } from "../../src/events.js";
import type { Logger } from "../../src/logger.js";
import { handleAction, handleChat, handleDeposit, handleInventoryUse, handleMove, handleWithdraw } from "../../src/world/actions.js";
import type { Player } from "../../src/world/player.js";
import { REFUSAL, refuse } from "../../src/world/refusals.js";
import type { TradeEventHandler } from "../../src/trade/service.js";
import type { World } from "../../src/world/world.js";

/** What handlers act on. */
export interface EventContext {
  world: World;
  trades: TradeEventHandler;
}

/** How a refusal of an event is told: a system `chat:message`, or a `tradeError` (docs/trading.md#error-codes). */
export type RefusalChannel = "system" | "trade";

/** One row of the table: the event's schema, how its refusals are told, and its handler. */
export interface EventEntry<E extends ClientEventName> {
  /** The protocol's schema (src/events.ts), which the documents describe. */
  schema: (typeof CLIENT_EVENTS)[E];
  /** The same schema compiled by zod, when set: the router parses with it (see `compiled`). */
  compiledSchema?: (typeof CLIENT_EVENTS)[E];
  refusals: RefusalChannel;
  handle(ctx: EventContext, player: Player, payload: ClientEventPayload<E>): Promise<void> | void;
}

export type EventTable = { readonly [E in ClientEventName]: EventEntry<E> };

/** A world event: its schema and handler. */
const world = <E extends ClientEventName>(event: E, handle: (w: World, p: Player, d: ClientEventPayload<E>) => Promise<void> | void): EventEntry<E> => ({
  schema: CLIENT_EVENTS[event],
  refusals: "system",
  handle: (ctx, p, d) => handle(ctx.world, p, d),
});

/**
 * The same row, its payloads parsed by the schema compiled by zod (`z.compile`): a function generated
 * from the schema answers the payloads it accepts, with the same parsed data, and hands every other
 * payload to the schema's own parse, so refusals and their texts stay zod's. Only for an event every
 * client sends all the time (`player:move`, about once a second): the runtime parse of one payload
 * made about a kilobyte of garbage (issue lists, contexts, results), most of what a message cost.
 * test/unit/rooms/compiled-schemas.test.ts checks that it accepts exactly what the schema accepts.
 */
const compiled = <E extends ClientEventName>(entry: EventEntry<E>): EventEntry<E> => ({ ...entry, compiledSchema: z.compile(entry.schema) });

/** A trade event: its schema and the trade service's handler. */
const trade = <E extends TradeEventName>(
  event: E,
  handle: (t: TradeEventHandler, p: Player, d: ClientEventPayload<E>) => Promise<void> | void,
): EventEntry<E> => ({
  schema: CLIENT_EVENTS[event],
  refusals: "trade",
  handle: (ctx, p, d) => handle(ctx.trades, p, d),
});

export const EVENT_TABLE: EventTable = {
  "player:move": compiled(world("player:move", handleMove)),
  "player:action": world("player:action", handleAction),
  "player:chat": world("player:chat", handleChat),
  "inventory:use": world("inventory:use", handleInventoryUse),
  "bank:deposit": world("bank:deposit", handleDeposit),
  "bank:withdraw": world("bank:withdraw", handleWithdraw),
  tradeRequest: trade("tradeRequest", (t, p, d) => t.tradeRequest(p, d)),
  tradeRequestRespond: trade("tradeRequestRespond", (t, p, d) => t.tradeRequestRespond(p, d)),
  tradeAddItem: trade("tradeAddItem", (t, p, d) => t.tradeAddItem(p, d)),
  tradeRemoveItem: trade("tradeRemoveItem", (t, p, d) => t.tradeRemoveItem(p, d)),
  tradeAccept: trade("tradeAccept", (t, p, d) => t.tradeAccept(p, d)),
  tradeCancel: trade("tradeCancel", (t, p, d) => t.tradeCancel(p, d)),
};

/** Routes client events from either transport through the table. */
export class EventRouter {
  /** The table's rows by name: a client-chosen name finds only these ("constructor" finds nothing), in one lookup. */
  private readonly rows: ReadonlyMap<string, EventEntry<ClientEventName>>;

  constructor(
    private readonly ctx: EventContext,
    private readonly logger: Logger,
    private readonly table: EventTable = EVENT_TABLE,
  ) {
    this.rows = new Map(Object.entries(table) as [string, EventEntry<ClientEventName>][]);
  }

  /** The table's entry for a client-chosen name (own keys only: "constructor" finds nothing). */
  entry(event: string): EventEntry<ClientEventName> | undefined {
    return this.rows.get(event);
  }

  /** Validate an event from a live player and run it; unknown events and bad payloads are refused. */
  route(player: Player, event: string, payload: unknown): void {
    // Its lease is in doubt: nothing is done for it, as if the server had not answered yet (docs/cluster.md "The holder's own clock").
    if (player.leaseInDoubt()) return;
    const entry = this.entry(event);
    if (!entry) return refuse(player, REFUSAL.UNKNOWN_EVENT, `Unknown event "${event.slice(0, 40)}".`);
    const parsed = (entry.compiledSchema ?? entry.schema).safeParse(payload ?? {});
    if (!parsed.success) {
      const refusal = schemaRefusal(event as ClientEventName, parsed.error);
      if (entry.refusals === "system") return refuse(player, REFUSAL.INVALID_PAYLOAD, refusal.message);
      const tradeId = (payload as { tradeId?: unknown })?.tradeId;
      return player.send("tradeError", { ...(typeof tradeId === "string" ? { tradeId } : {}), ...refusal });
    }
    // Most handlers are synchronous (a move, an action): no promise is made for them.
    let running: Promise<void> | void;
    try {
      running = this.run(entry, player, parsed.data);
    } catch (e) {
      return this.failed(e, event, player);
    }
    if (running) running.catch((e: unknown) => this.failed(e, event, player));
  }

  private failed(e: unknown, event: string, player: Player): void {
    this.logger.error({ err: e, event, playerId: player.id }, "event handler failed");
  }

  /**
   * Run a validated event. A dead player (its death is being written) does nothing: every event is
   * refused with the code `PLAYER_DEAD` — a system `chat:message`, or a `tradeError` for trade
   * events — and changes nothing (docs/protocol.md#refusals).
   */
  handle<E extends ClientEventName>(player: Player, event: E, payload: ClientEventPayload<E>): Promise<void> | void {
    return this.run(this.table[event] as EventEntry<E>, player, payload);
  }

  /** `handle` with the event's row already found (`route` found it). */
  private run<E extends ClientEventName>(entry: EventEntry<E>, player: Player, payload: ClientEventPayload<E>): Promise<void> | void {
    if (player.dead) {
      if (entry.refusals === "trade") return player.send("tradeError", { code: REFUSAL.PLAYER_DEAD, message: "You are dead." });
      return refuse(player, REFUSAL.PLAYER_DEAD);
    }
    return entry.handle(this.ctx, player, payload);
  }
}
