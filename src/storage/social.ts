/** The SQL of the social graph (src/services/social.ts): reads and writes on one entity manager, no rules. */
import { LockMode } from "@mikro-orm/core";
import { CharacterEntity } from "../../entities/character.js";
import { FriendshipEntity } from "../../entities/social.js";
import type { Em } from "./orm.js";

type Row = Record<string, unknown>;

/** The characters the account owning `targetCharacterId` ignores. */
export async function loadIgnoredBy(em: Em, targetCharacterId: string): Promise<Set<string>> {
  const rows: Row[] = await em
    .getConnection()
    .execute(`select i.ignored_character_id from ignore_entries i join characters c on c.account_id = i.account_id where c.id = ?`, [targetCharacterId]);
  return new Set(rows.map((r) => r.ignored_character_id as string));
}

/** A character's friends. */
export async function loadFriendIds(em: Em, characterId: string): Promise<Set<string>> {
  const rows: Row[] = await em.getConnection().execute(
    `select case when character_a = ? then character_b else character_a end as id
         from friendships where character_a = ? or character_b = ?`,
    [characterId, characterId, characterId],
  );
  return new Set(rows.map((r) => r.id as string));
}

/** Whether the account owning `targetCharacterId` ignores `senderCharacterId` (inside the transaction of `em`). */
export async function ignores(em: Em, targetCharacterId: string, senderCharacterId: string): Promise<boolean> {
  const rows: Row[] = await em.getConnection().execute(
    `select 1 from ignore_entries i join characters c on c.account_id = i.account_id
        where c.id = ? and i.ignored_character_id = ? limit 1`,
    [targetCharacterId, senderCharacterId],
    "all",
    em.getTransactionContext(),
  );
  return rows.length > 0;
}

/** Whether the two characters are friends. */
export async function pairExists(em: Em, a: string, b: string): Promise<boolean> {
  const n = await em.count(FriendshipEntity, {
    $or: [
      { characterA: a, characterB: b },
      { characterA: b, characterB: a },
    ],
  });
  return n > 0;
}

/** How many friends a character has. */
export async function countFriends(em: Em, characterId: string): Promise<number> {
  return em.count(FriendshipEntity, { $or: [{ characterA: characterId }, { characterB: characterId }] });
}

/** Insert the pair ordered by the database's own comparison, matching its check constraint. */
export async function insertPair(em: Em, a: string, b: string): Promise<void> {
  await em.getConnection().execute(
    `insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())
       on conflict do nothing`,
    [a, b, a, b],
    "run",
    em.getTransactionContext(),
  );
}

/** Ids of an account's characters. */
export async function accountCharacterIds(em: Em, accountId: string): Promise<string[]> {
  const rows = await em.find(CharacterEntity, { accountId }, { fields: ["id"] });
  return rows.map((r) => r.id);
}

/** Lock character rows in id order (deadlock-free with every other locker that sorts). */
export async function lockCharacters(em: Em, ids: string[]): Promise<void> {
  const sorted = [...new Set(ids)].sort();
  for (const id of sorted) await em.findOne(CharacterEntity, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}
