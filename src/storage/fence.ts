/**
 * The lease fence (docs/cluster.md "The fence"): every write of a character's items, coins or
 * progress carries the lease it was loaded under — this process (`owner`) and the lease's `epoch`,
 * a number drawn from the `character_lease_epochs` sequence each time the lease changes hands — and
 * commits only if, in the same transaction, the character's lease row still names that owner and
 * epoch. The row is locked `FOR SHARE` until the write commits, so a takeover (which updates the
 * row) waits for the write, and the process taking over reads the character only after it; or the
 * takeover came first, the write sees another epoch and rolls back.
 */

import { LeaseLostError, isLeaseLost, type LeaseFence } from "../world/ports/lease-fence.js";

/** The fence's types and refusal are the world's (its port, src/world/ports/lease-fence.ts); storage checks it. */
export { LeaseLostError, isLeaseLost, type LeaseFence };

/**
 * The statement that checks and holds one character's lease inside a transaction: a row back means
 * the lease is still `fence`, locked `FOR SHARE` until commit. Parameters: character id, owner, epoch.
 */
export const HOLD_LEASE_SQL = `select 1 from character_leases where character_id = ? and owner = ? and epoch = ?::bigint for share`;
