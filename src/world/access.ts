/**
 * What the rest of the server (REST routes, agents) may ask of the live worlds. `LocalWorldAccess` is
 * one world of this process, synchronous (each `World` implements it, `world.access`); `WorldAccess` is
 * what routes and services get: every world, asynchronous because the world that holds a character
 * may later be in another process (src/cluster/world-access.ts). Routes depend only on `WorldAccess`.
 */
import type { StoredGoal } from "../domain/goal-progress.js";
import type { PlayerSync } from "../events.js";

export interface LivePlayerSummary {
  id: string;
  accountId: string;
  name: string;
  isAgent: boolean;
  position: { x: number; y: number; z: number };
  combatLevel: number;
  health: number;
  maxHealth: number;
}

export interface WorldSnapshot {
  tick: number;
  serverTime: string;
  playersOnline: number;
  players: { id: string; name: string; position: { x: number; y: number; z: number }; combatLevel: number; isAgent: boolean }[];
  npcCount: number;
  resourceCount: number;
  groundItemCount: number;
}

/** Every player and NPC of one world, for the admin world map (docs/client.md "Admin world map"). */
export interface WorldMap {
  tick: number;
  players: { id: string; name: string; x: number; z: number; health: number; maxHealth: number; isAgent: boolean; online: boolean }[];
  npcs: { id: string; npcId: string; name: string; x: number; z: number; health: number; maxHealth: number; alive: boolean }[];
}

/** Things near a character, for agents' quick actions. */
export interface Surroundings {
  stations: { id: string; type: string; name: string; x: number; z: number; distance: number }[];
  resources: { id: string; type: string; skill: string; x: number; z: number; depleted: boolean; distance: number }[];
  npcs: { id: string; npcId: string; name: string; x: number; z: number; combatLevel: number; health: number; distance: number }[];
  groundItems: { id: string; itemId: string; quantity: number; x: number; z: number; distance: number }[];
}

export interface LocalWorldAccess {
  /** Number of players connected. */
  playersOnline(): number;
  /** Has the character a live connection? */
  isOnline(characterId: string): boolean;
  /** Is the character in the world: connected, or dropped and awaiting reconnection? */
  isInWorld(characterId: string): boolean;
  /**
   * Run `work`, a change of the stored character that needs it out of the world (rename, delete),
   * in the character's storage queue, where joins read the character: no join of it can complete
   * while `work` runs or is queued, and a join that read it before `work` ended is refused.
   * Resolves `{ ok: false }` without running `work` when the character is in the world.
   */
  whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }>;
  /**
   * Set the agent flag of a character in the world (its `player:sync` and public state). Call it
   * after the stored flag is written: it applies after whatever is queued for the character, so a
   * join that read the old flag still ends up with the new one.
   */
  setAgentFlag(characterId: string, isAgent: boolean): void;
  /** The live summary of an online character. */
  livePlayer(characterId: string): LivePlayerSummary | undefined;
  /** The full private state of a character in the world, connected or lingering (the `player:sync` payload). */
  livePlayerSync(characterId: string): PlayerSync | undefined;
  snapshot(): WorldSnapshot;
  /** Every player (connected or lingering) and NPC (alive or waiting to respawn) of the world. */
  map(): WorldMap;
  /** What is around an online character (radius in tiles). */
  surroundings(characterId: string, radius: number): Surroundings | undefined;
  /**
   * Apply a goal change to an online character: set goal and pause flag, cancel the movement path
   * when pausing, and send `player:sync`. Returns false when the character is offline (callers then
   * write storage directly).
   */
  applyGoal(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): boolean;
  /** Deliver a private chat message to an online character. Returns false when offline. */
  deliverPrivateMessage(characterId: string, from: { id?: string; name: string }, text: string): boolean;
  /**
   * Disconnect a character's live connection (for example a revoked agent token) and remove it, or,
   * while it is in combat, once the fight is over (docs/protocol.md "Leaving in combat").
   */
  disconnect(characterId: string, code: number, reason: string): void;
  /** Tell the world that social relations involving these characters changed. */
  socialChanged(characterIds: string[]): void;
  /** Save an online character now (before REST reads or writes its stored row). */
  flush(characterId: string): Promise<void>;
}

/** Promise-returning versions of the methods that may need to ask another world. */
type Async<T> = { [K in keyof T]: T[K] extends (...args: infer A) => infer R ? (...args: A) => Promise<Awaited<R>> : T[K] };

/**
 * Every world a character may be in, as routes and services see them. `playersOnline` counts this
 * process's worlds; `snapshot(world)` is one world's (the default world without a number).
 */
export interface WorldAccess extends Async<Omit<LocalWorldAccess, "playersOnline" | "snapshot" | "map" | "socialChanged" | "whileOutOfWorld">> {
  playersOnline(): number;
  /** One world's snapshot; `world` defaults to the default world. Undefined for a world not hosted. */
  snapshot(world?: number): Promise<(WorldSnapshot & { world: number }) | undefined>;
  /** One world's map (admin); `world` defaults to the default world. Undefined for a world not hosted here. */
  map(world?: number): Promise<(WorldMap & { world: number }) | undefined>;
  socialChanged(characterIds: string[]): void;
  whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }>;
}
