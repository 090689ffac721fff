/**
 * What the world tells the objects around it, as typed events the world owns: the trade service
 * and the room subscribe when they are built (`world.events.on(...)`), instead of setting hooks on
 * the world afterwards.
 */

/** Why a player's open trade ends. */
export type InterruptReason = "moved_away" | "player_died" | "disconnected";

export interface WorldEventMap {
  /** A player in a trade moved, died or left: its open trade ends with this reason. */
  tradeInterrupted: [playerId: string, reason: InterruptReason];
  /** A player left the world: its public state goes from every view. */
  playerRemoved: [playerId: string];
  /** A player that left has been saved (its storage queue has the leave's save behind it). */
  playerLeft: [playerId: string];
}

/** What the trade system wants to hear from the world (its `tradeInterrupted` listener). */
export interface TradeHooks {
  playerInterrupted(playerId: string, reason: InterruptReason): void;
}

type Listener<K extends keyof WorldEventMap> = (...args: WorldEventMap[K]) => void;

export class WorldEvents {
  private readonly listeners: { [K in keyof WorldEventMap]?: Set<Listener<K>> } = {};

  /** Listen to an event; returns the function that stops listening. */
  on<K extends keyof WorldEventMap>(event: K, listener: Listener<K>): () => void {
    const set = (this.listeners[event] ??= new Set<Listener<K>>() as never) as Set<Listener<K>>;
    set.add(listener);
    return () => set.delete(listener);
  }

  emit<K extends keyof WorldEventMap>(event: K, ...args: WorldEventMap[K]): void {
    for (const l of (this.listeners[event] ?? []) as Set<Listener<K>>) l(...args);
  }
}

/** Tell whoever listens that a player in a trade moved, died or left (`tradeInterrupted`). */
export type Interrupt = (playerId: string, reason: InterruptReason) => void;
