/**
 * The bank side of a death recovered after its lock stayed open (`CharacterRepository.recoverOpenDeath`,
 * docs/persistence.md "Deaths"): the dropped items go to the character's bank, a bank row never past the stack cap.
 */
import type { SqlEntityManager } from "@mikro-orm/sql";
import type { DeathRecovery, DeathItems } from "../../world/ports/character-store.js";

/** Largest quantity of one item in one stack (a bank row included): PostgreSQL's int4. */
export const STACK_CAP = 2_147_483_647;

/**
 * Add `dropped` to the character's bank inside the open transaction of `em`, each row locked first.
 * @returns what the bank could not take (past the stack cap): nothing is dropped silently.
 */
export async function bankDropped(em: SqlEntityManager, characterId: string, dropped: DeathItems["dropped"]): Promise<DeathRecovery["overflow"]> {
  const overflow: DeathRecovery["overflow"] = [];
  const run = (sql: string, params: unknown[]) => em.getConnection().execute<{ quantity: number }[]>(sql, params, "all", em.getTransactionContext());
  for (const d of dropped) {
    const [row] = await run(`select quantity from bank_items where character_id = ? and item_id = ? for update`, [characterId, d.itemId]);
    const room = STACK_CAP - Number(row?.quantity ?? 0);
    const put = Math.max(0, Math.min(room, d.quantity));
    if (put > 0) {
      await run(
        `insert into bank_items (character_id, item_id, quantity) values (?, ?, ?)
         on conflict (character_id, item_id) do update set quantity = bank_items.quantity + excluded.quantity`,
        [characterId, d.itemId, put],
      );
    }
    if (d.quantity > put) overflow.push({ itemId: d.itemId, quantity: d.quantity - put });
  }
  return overflow;
}
