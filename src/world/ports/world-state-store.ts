/**
 * `WorldStateStore`: what the world needs stored of one world's modifications (docs/persistence.md
 * "World state"): ground piles, written and deleted inside the transactions of the item moves that
 * make and take them (`putPiles`, `takePile` make steps of those transactions), and the batched
 * state of resource nodes and fires, one row per chunk. `WorldRepository`
 * (src/storage/world-state.ts) implements it, scoped to one world number.
 */
import type { TransactionStep } from "./character-store.js";

/** A stored ground pile. */
export interface PileRow {
  id: string;
  itemId: string;
  quantity: number;
  x: number;
  z: number;
  /** Only this character sees the pile before `publicAt`. */
  ownerId?: string;
  publicAt: Date;
  expiresAt: Date;
}

/** What a chunk stores: nodes that differ from their spawned state, and burning fires (times in epoch ms). */
export interface ChunkData {
  /** A depleted node (`respawnAt`) or one with fewer successes left than a fresh one (`remaining`). */
  nodes?: { id: string; respawnAt?: number; remaining?: number }[];
  fires?: { x: number; z: number; expiresAt: number }[];
}

export interface ChunkRow {
  chunkX: number;
  chunkZ: number;
  data: ChunkData;
}

/** Thrown inside a pickup's transaction when its pile is no longer stored: the transaction rolls back. */
export class PileGoneError extends Error {
  constructor(readonly pileId: string) {
    super(`ground pile ${pileId} is no longer stored`);
  }
}

/** Stored piles, nodes and fires of one world. */
export interface WorldStateStore {
  /** A transaction step that stores new piles (the drop, the resolved death, the recovery that made them). */
  putPiles(piles: readonly PileRow[]): TransactionStep;
  /** A transaction step that deletes the pile a pickup takes; throws `PileGoneError` (rolling back) when it is not stored. */
  takePile(id: string): TransactionStep;
  /** Which of these piles are stored (a drop's or pickup's outcome read back). */
  storedPiles(ids: readonly string[]): Promise<Set<string>>;
  /** Store piles in a transaction of their own (new items that were in nobody's storage: an NPC's loot). */
  insertPiles(piles: readonly PileRow[]): Promise<void>;
  /** Delete piles that despawned. */
  deletePiles(ids: readonly string[]): Promise<void>;
  /** The piles still alive at `now`; the expired ones are deleted. */
  loadPiles(now: Date): Promise<PileRow[]>;
  /** Write chunks in one transaction: each non-empty one stored, each empty one deleted. */
  saveChunks(chunks: readonly ChunkRow[]): Promise<void>;
  /** Every stored chunk. */
  loadChunks(): Promise<ChunkRow[]>;
}
