/** What the world needs from the rest of the server, given when it is built (`new World(deps)`). */
import type { GameContent } from "../content/load.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { CharacterStore } from "./ports/character-store.js";
import type { WorldStateStore } from "./ports/world-state-store.js";

/** Social relations the world consults for chat and trade requests. */
export interface SocialRelations {
  /** Does the account owning `targetCharacterId` ignore `senderCharacterId`? */
  isIgnoring(targetCharacterId: string, senderCharacterId: string): Promise<boolean>;
  areFriends(a: string, b: string): Promise<boolean>;
  invalidate?(characterIds: string[]): void;
}

/** The answer to an in-game admin code. */
export type AdminCodeCheck = "ok" | "wrong" | "blocked";

/** The other worlds a player may reach from this one (private chat to a friend playing there). */
export interface OtherWorlds {
  isOnline(characterId: string): Promise<boolean>;
  /** Deliver a private message to a character online in any world; false when it is not. */
  deliverPrivateMessage(characterId: string, from: { id?: string; name: string }, text: string): Promise<boolean>;
}

export interface WorldDeps {
  content: GameContent;
  /** Stored characters (the port `CharacterStore`, docs/persistence.md "The world's storage port"). */
  characters: CharacterStore;
  logger: Logger;
  saveIntervalSeconds: number;
  social?: SocialRelations;
  /**
   * Check an in-game `/admin <code>` from a client address: `wrong` codes count as authentication
   * attempts of the address, and an address past the limit gets `blocked` without a check.
   */
  checkAdminCode: (code: string, address: string | undefined) => AdminCodeCheck | Promise<AdminCodeCheck>;
  rng?: () => number;
  now?: () => number;
  /** Prometheus metrics (docs/operations.md "Metrics"). */
  metrics?: Metrics;
  /**
   * Runs a batched save as background database work (src/storage/limiter.ts: bounded by
   * SAVE_CONCURRENCY, behind joins and creations). Without it saves run as soon as queued.
   */
  backgroundWork?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Storage of this world's piles, depleted nodes and fires (docs/persistence.md "World state"); without it nothing of them persists. */
  worldStore?: WorldStateStore;
  /** Milliseconds per tick (600 by default): stored times of piles, nodes and fires are wall-clock instants. */
  tickMs?: number;
  /** Ticks a ground pile lives (GROUND_ITEM_LIFETIME_TICKS by default). */
  groundItemLifetimeTicks?: number;
  /** Every world of the server, for private chat beyond this world (docs/operations.md "Worlds"); without it only this world's players are reachable. */
  otherWorlds?: () => OtherWorlds;
  /**
   * Called when the tick finds players whose lease is in doubt (docs/cluster.md "The holder's own
   * clock"): the claims renew at once instead of at their next round.
   */
  leaseInDoubt?: () => void;
  /** This world's number (logged when a player's lease is lost, docs/cluster.md); default 1. */
  worldNumber?: number;
}
