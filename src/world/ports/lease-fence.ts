/**
 * The lease fence as the world sees it (docs/cluster.md "The fence"): every write of a character's
 * items, coins or progress carries the lease it was loaded under, and storage commits it only while
 * the character's lease is still that one. Storage checks it (src/storage/fence.ts); the world only
 * carries the fence and reacts to a refusal.
 */

/** The lease a character was loaded under: the writer's proof that it may still write it. */
export interface LeaseFence {
  /** The process holding the lease (`LeaseStore.owner`). */
  readonly owner: string;
  /** The lease's epoch (a PostgreSQL bigint, as text). */
  readonly epoch: string;
  /**
   * Until when (epoch ms, this process's clock) the lease is surely still held, as its grant said:
   * the time the grant was asked for plus the lease's length, less a margin (`LeaseStore.termMs`).
   * Past it, the holder does not act for the character until a renewal says it still holds it
   * (docs/cluster.md "The holder's own clock"). Renewals move it on `Player.leaseValidUntil`.
   */
  readonly validUntil?: number;
}

/**
 * A write was refused by the fence: the character's lease is no longer `fence` (taken over after it
 * expired, or released). Nothing was written. Final for the player in memory: it is dropped
 * without another write (`World.dropLost`).
 */
export class LeaseLostError extends Error {
  constructor(
    readonly characterIds: readonly string[],
    readonly epochs: readonly (string | undefined)[] = [],
    why = "its lease changed hands",
  ) {
    super(`lease fence: ${characterIds.join(", ")} not written (${why})`);
    this.name = "LeaseLostError";
  }
}

/** Whether `e` is a refusal of the fence. */
export function isLeaseLost(e: unknown): e is LeaseLostError {
  return e instanceof LeaseLostError;
}
