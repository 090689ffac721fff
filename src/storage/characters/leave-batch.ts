/**
 * The save of characters that leave together — a leave group (docs/persistence.md "Leaving") or a
 * batch of the shutdown save ("Shutdown"): the whole state of up to `LEAVE_BATCH_MAX`
 * characters that leave — progress, coins, inventory, equipment and bank, and the close of their
 * logins — in one transaction of a few statements, instead of a transaction of about ten round
 * trips per character. Every row is written as the per-player save (`CharacterRepository.save`)
 * would write it: the same properties (`progressStatements`), the same item rows.
 *
 * The transaction is a sequence of named steps (`holdLeases`, `lockCharacters`, `writeProgress`,
 * `replaceItems`, `closeLogins`). `holdLeases` is the lease fence (docs/cluster.md "The fence"): a
 * character whose lease changed hands is left out, nothing of it written.
 */
import type { SqlEntityManager } from "@mikro-orm/sql";
import type { LeaveBatchResult, LeaveSave, ProgressSnapshot } from "../../world/ports/character-store.js";
import { executeNative } from "../native.js";
import type { Orm } from "../orm.js";
import { progressStatements } from "./progress.js";

export type { LeaveBatchResult, LeaveSave };

/** Characters one leave batch writes at most (the item rows of 250 characters: a few thousand). */
export const LEAVE_BATCH_MAX = 250;

type Tx = SqlEntityManager;

function run<T extends object[] = object[]>(em: Tx, sql: string, params: unknown[]): Promise<T> {
  return executeNative(em, sql, params, em.getTransactionContext()) as Promise<T>;
}

/** A PostgreSQL array literal of text values (one parameter, whatever the number of values). */
export function textArray(values: readonly string[]): string {
  return `{${values.map((v) => `"${v.replace(/[\\"]/g, (c) => `\\${c}`)}"`).join(",")}}`;
}

/** A PostgreSQL array literal of integers. */
function intArray(values: readonly number[]): string {
  return `{${values.map((v) => String(Math.trunc(v))).join(",")}}`;
}

/**
 * The fence of every save that carries one: its lease row still this owner and epoch, locked
 * `FOR SHARE` (in id order) until commit. @returns the ids of the saves the fence refused.
 */
async function holdLeases(em: Tx, saves: readonly ProgressSnapshot[]): Promise<Set<string>> {
  const fenced = saves.filter((s) => s.fence);
  if (fenced.length === 0) return new Set();
  const rows = await run<{ character_id: string }[]>(
    em,
    `select l.character_id from character_leases l
       join unnest(?::text[], ?::text[], ?::bigint[]) as v(id, owner, epoch) on l.character_id = v.id and l.owner = v.owner and l.epoch = v.epoch
     order by l.character_id for share of l`,
    [textArray(fenced.map((s) => s.characterId)), textArray(fenced.map((s) => s.fence!.owner)), `{${fenced.map((s) => s.fence!.epoch).join(",")}}`],
  );
  const held = new Set(rows.map((r) => r.character_id));
  return new Set(fenced.filter((s) => !held.has(s.characterId)).map((s) => s.characterId));
}

/**
 * Lock the characters' rows, in id order (as every other character write), before writing them,
 * skipping rows another transaction holds (a settlement waiting on a lock): one such row must not
 * keep the whole batch from saving. @returns the ids locked (the others: gone, or to save alone).
 */
async function lockCharacters(em: Tx, ids: readonly string[]): Promise<Set<string>> {
  const rows = await run<{ id: string }[]>(em, `select id from characters where id = any(?::text[]) order by id for update skip locked`, [textArray(ids)]);
  return new Set(rows.map((r) => r.id));
}

/** Progress and coins of every character: one `UPDATE … FROM json_to_recordset(…)` per set of properties. */
async function writeProgress(orm: Orm, em: Tx, saves: readonly ProgressSnapshot[]): Promise<void> {
  const rows = saves.map(({ items: _items, ...progress }) => progress);
  for (const { sql, params } of progressStatements(orm, rows)) await run(em, sql, params);
}

/** Replace the item rows of the characters whose items are written: a delete per table, an insert per table from arrays. */
async function replaceItems(em: Tx, saves: readonly ProgressSnapshot[]): Promise<void> {
  const withItems = saves.filter((s) => s.items);
  if (withItems.length === 0) return;
  const ids = textArray(withItems.map((s) => s.characterId));
  await run(em, `delete from inventory_items where character_id = any(?::text[])`, [ids]);
  await run(em, `delete from equipment_items where character_id = any(?::text[])`, [ids]);
  const withBank = withItems.filter((s) => s.items!.bank);
  if (withBank.length) await run(em, `delete from bank_items where character_id = any(?::text[])`, [textArray(withBank.map((s) => s.characterId))]);
  const inv = withItems.flatMap((s) => s.items!.inventory.map((r) => ({ id: s.characterId, ...r })));
  if (inv.length)
    await run(em, `insert into inventory_items (character_id, slot, item_id, quantity) select * from unnest(?::text[], ?::int[], ?::text[], ?::int[])`, [
      textArray(inv.map((r) => r.id)),
      intArray(inv.map((r) => r.slot)),
      textArray(inv.map((r) => r.itemId)),
      intArray(inv.map((r) => r.quantity)),
    ]);
  const eq = withItems.flatMap((s) => Object.entries(s.items!.equipment).map(([slotType, r]) => ({ id: s.characterId, slotType, ...r })));
  if (eq.length)
    await run(em, `insert into equipment_items (character_id, slot_type, item_id, quantity) select * from unnest(?::text[], ?::text[], ?::text[], ?::int[])`, [
      textArray(eq.map((r) => r.id)),
      textArray(eq.map((r) => r.slotType)),
      textArray(eq.map((r) => r.itemId)),
      intArray(eq.map((r) => r.quantity)),
    ]);
  const bank = withBank.flatMap((s) => s.items!.bank!.map((r) => ({ id: s.characterId, ...r })));
  if (bank.length)
    await run(em, `insert into bank_items (character_id, item_id, quantity) select * from unnest(?::text[], ?::text[], ?::int[])`, [
      textArray(bank.map((r) => r.id)),
      textArray(bank.map((r) => r.itemId)),
      intArray(bank.map((r) => r.quantity)),
    ]);
}

/** Close the logins (once: a closed login stays as it is). */
async function closeLogins(em: Tx, loginIds: readonly string[], reason: string): Promise<void> {
  if (loginIds.length === 0) return;
  await run(em, `update player_logins set ended_at = now(), end_reason = ? where id = any(?::text[]) and ended_at is null`, [reason, textArray(loginIds)]);
}

/**
 * Write the whole state of characters that leave, and close their logins with `reason`, in one
 * transaction: all of them or none (the caller then saves them one at a time). A character that no
 * longer exists is skipped; one whose lease changed hands (`holdLeases`) is left out and named in
 * `fenced`, its login left as it is; one whose row another transaction holds is named in `busy`.
 */
export async function writeLeaveBatch(orm: Orm, saves: readonly LeaveSave[], reason: string): Promise<LeaveBatchResult> {
  if (saves.length === 0) return { written: 0, fenced: [], busy: [] };
  if (saves.length > LEAVE_BATCH_MAX) throw new RangeError(`a leave batch writes at most ${LEAVE_BATCH_MAX} characters, not ${saves.length}`);
  return orm.em.fork().transactional(async (tx) => {
    const em = tx as Tx;
    const lost = await holdLeases(
      em,
      saves.map((s) => s.snapshot),
    );
    const mine = saves.filter((s) => !lost.has(s.snapshot.characterId));
    const present = await lockCharacters(
      em,
      mine.map((s) => s.snapshot.characterId),
    );
    const locked = mine.filter((s) => present.has(s.snapshot.characterId));
    const snapshots = locked.map((s) => s.snapshot);
    await writeProgress(orm, em, snapshots);
    await replaceItems(em, snapshots);
    await closeLogins(
      em,
      locked.flatMap((s) => (s.loginId ? [s.loginId] : [])),
      reason,
    );
    const busy = mine.filter((s) => !present.has(s.snapshot.characterId)).map((s) => s.snapshot.characterId);
    return { written: snapshots.length, fenced: [...lost], busy };
  });
}
