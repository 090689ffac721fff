/**
 * `CharacterStore`: what the world needs of stored characters (docs/persistence.md "The world's
 * storage port") — a character's record read at join, its saves (one player, a batch of progress,
 * the shutdown batch), its death lock, kills and logouts — with the record types it reads and
 * writes. The world declares it; `CharacterRepository` (src/storage/characters/repository.ts)
 * implements it on PostgreSQL, and the tests' `FakeCharacterStore` (test/helpers/fake-store.ts) in
 * memory. Every write of a character carries its lease fence and is refused (`LeaseLostError`,
 * nothing written) once the lease changed hands.
 */
import type { DeathItems } from "../../domain/death.js";
import type { StoredGoal } from "../../domain/goal-progress.js";
import type { LeaseFence } from "./lease-fence.js";

export type { DeathItems, StoredGoal };

/** Skill columns as stored: `<skill>Level` and `<skill>Xp`. */
export type SkillColumns = Record<string, { level: number; xp: number }>;

/** The stored character row the world builds a player from (its `<skill>Xp` columns too). */
export interface StoredCharacter {
  id: string;
  accountId: string;
  name: string;
  isAgent: boolean;
  positionX: number;
  positionY: number;
  positionZ: number;
  health: number;
  coins: number;
  goal?: StoredGoal | null;
  goalsPaused: boolean;
}

/** The stored item rows of one character. */
export interface ItemRows {
  inventory: { slot: number; itemId: string; quantity: number }[];
  equipment: Record<string, { itemId: string; quantity: number }>;
  bank: { itemId: string; quantity: number }[];
}

/** A character with its inventory, equipment and bank, as a join reads it. */
export interface CharacterRecord extends ItemRows {
  character: StoredCharacter;
  /**
   * `performance.now()` when `load` began reading, so the world can refuse a join built from a
   * record read before an out-of-world change (rename, delete) finished.
   */
  loadedAt?: number;
  /** The lease it was loaded under (set by the claim): every write of the player checks it (docs/cluster.md "The fence"). */
  fence?: LeaseFence;
}

/**
 * A record as `load` reads it: also whether a death lock of the character is still open, read in
 * the same statement. A join runs the transactional recovery (`recoverOpenDeath`) only when it is
 * (src/world/character-resolver.ts says why that read is enough).
 */
export interface LoadedRecord extends CharacterRecord {
  openDeath: boolean;
}

/** The progress of a character: what a save always writes (items and coins aside). */
export interface CharacterProgress {
  characterId: string;
  x: number;
  y: number;
  z: number;
  health: number;
  combatLevel: number;
  skills: SkillColumns;
  /** Absent: left as stored. */
  goal?: StoredGoal | null;
  /** Absent: left as stored. */
  goalsPaused?: boolean;
  /** Prayer points and active prayer ids (docs/combat.md#prayers). Absent: left as stored. */
  prayer?: { points: number; active: readonly string[] };
  /**
   * The lease the player was loaded under: the write commits only while the character's lease is
   * still this one (docs/cluster.md "The fence"). Absent: no lease to check (a world without claims).
   */
  fence?: LeaseFence;
}

/** What a save writes: progress, and items and coins only when present. */
export interface ProgressSnapshot extends CharacterProgress {
  coins?: number;
  items?: Omit<ItemRows, "bank"> & { bank?: ItemRows["bank"] };
}

/** What a batched progress save did: rows written, and characters refused by the fence (nothing written for them). */
export interface ProgressBatchResult {
  updated: number;
  fenced: string[];
}

/**
 * Characters one batched progress save writes at most (`Saving.saveDirty` cuts its batch into
 * chunks of this size). About 35 values a character: a statement of some 9,000 values, short enough
 * to hold its row locks only briefly and to leave the other background slots to other saves.
 */
export const PROGRESS_BATCH_MAX = 250;

/** What a leave group or the shutdown save writes for one character. */
export interface LeaveSave {
  snapshot: ProgressSnapshot;
  /** The login to close, if any. */
  loginId?: string;
}

/**
 * What a leave batch (a leave group, a shutdown batch) did: characters written, those the fence refused (nothing written for
 * them), and those whose row another transaction held (not written: the caller saves them alone).
 */
export interface LeaveBatchResult {
  written: number;
  fenced: string[];
  busy: string[];
}

/** A death to record: where, by whom, and the items it moved. */
export interface NewDeath {
  /** Chosen by the caller so a lost COMMIT answer can be checked (`deathRecorded`); generated when absent. */
  id?: string;
  characterId: string;
  x: number;
  z: number;
  killedBy?: string;
  items: DeathItems;
}

/** What `recoverOpenDeath` did: stacks restored, and what the bank could not hold (it stays owed). */
export interface DeathRecovery {
  restored: number;
  /** Items past the bank's stack cap, for the caller to put on the ground at `at` (docs/persistence.md "Deaths"). */
  overflow: { itemId: string; quantity: number }[];
  at: { x: number; z: number };
}

/** An open transaction of storage's own: the world passes it along and never looks inside. */
export type StoreTransaction = object;

/**
 * Work one store runs inside another store's transaction: the ground piles a drop stores or a
 * pickup takes (docs/persistence.md "Ground piles"). Made by the `WorldStateStore`, run by the
 * `CharacterStore` in the item write's transaction; the world only passes it along.
 */
export type TransactionStep = (tx: StoreTransaction) => Promise<void>;

/** Stored characters, as the world uses them. */
export interface CharacterStore {
  /** A character with its items and whether a death lock of it is open, or null when it does not exist. */
  load(id: string): Promise<LoadedRecord | null>;
  /** The id of an account's oldest character (what a join without one plays), if it has any. */
  firstOfAccount(accountId: string): Promise<string | undefined>;
  /**
   * Save one player's progress (and its items and coins when present) in one transaction under its
   * fence; `groundStep` runs in the same transaction (a drop's or pickup's piles). When it throws,
   * nothing is written.
   */
  save(s: ProgressSnapshot, groundStep?: TransactionStep): Promise<void>;
  /** Save the progress of up to `PROGRESS_BATCH_MAX` players (no items, no coins) together; the fenced ones are named. */
  saveProgress(rows: readonly CharacterProgress[]): Promise<ProgressBatchResult>;
  /** Save the whole state of players that leave (a leave group, a shutdown batch) and close their logins, in one transaction. */
  saveLeaving(saves: readonly LeaveSave[], reason: string): Promise<LeaveBatchResult>;
  /** Count an NPC kill. */
  recordKill(characterId: string, npcId: string): Promise<void>;
  /** Record that the character of a login left the world, and why (once). */
  recordLogout(loginId: string, reason: string): Promise<void>;
  /** Take the death lock and write the post-death state atomically; null (nothing changed) when a death is already open. */
  recordDeath(death: NewDeath, after: ProgressSnapshot): Promise<string | null>;
  /** Whether the death `deathId` was recorded (for a `recordDeath` whose COMMIT's answer was lost). */
  deathRecorded(deathId: string, characterId: string): Promise<boolean>;
  /**
   * Close an open death lock for the ground (its dropped items' piles stored by `groundStep` in the
   * same transaction). @returns true when closed for the ground, false when `recoverOpenDeath` closed it.
   */
  resolveDeath(deathId: string, fence?: { characterId: string } & LeaseFence, groundStep?: TransactionStep): Promise<boolean>;
  /** Give the dropped items of a death still open to the bank (what it can't hold comes back as overflow, stored by `overflowStep`). */
  recoverOpenDeath(characterId: string, fence?: LeaseFence, overflowStep?: (r: DeathRecovery) => TransactionStep | undefined): Promise<DeathRecovery>;
  /** Whether `e` says storage can't answer now (down, overloaded, timed out) rather than that the write is wrong: logged once per burst. */
  isUnavailable(e: unknown): boolean;
  /** Whether a failed write is worth trying again: storage unavailable, or a serialization failure or deadlock. */
  isTransient(e: unknown): boolean;
}
