/** The SQL of the social graph (its rules: src/services/social.ts): reads and writes on one entity manager, no rules. */
import { LockMode } from "@mikro-orm/core";
import { AccountEntity } from "../../entities/account.js";
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

/** A character by id or by name (case-insensitive): `id`, `name`, `account_id` (inside the transaction of `em`). */
export async function characterRows(em: Em, ref: { id: string } | { name: string }): Promise<Row[]> {
  const [where, value] = "id" in ref ? ["id = ?", ref.id] : ["lower(name) = lower(?)", ref.name];
  return em.getConnection().execute(`select id, name, account_id from characters where ${where}`, [value], "all", em.getTransactionContext());
}

/** A character's friends, by name: `id`, `name`, `created_at`. */
export async function friendRows(em: Em, characterId: string): Promise<Row[]> {
  return em.getConnection().execute(
    `select c.id, c.name, f.created_at from friendships f
       join characters c on c.id = case when f.character_a = ? then f.character_b else f.character_a end
      where f.character_a = ? or f.character_b = ?
      order by lower(c.name)`,
    [characterId, characterId, characterId],
  );
}

/** Friend requests to (`to_character`) or from (`from_character`) a character, after request id `after`, by id, at most `limit`. */
export async function friendRequestRows(em: Em, characterId: string, column: "to_character" | "from_character", after: number, limit: number): Promise<Row[]> {
  return em.getConnection().execute(
    `select r.id, r.created_at, r.from_character, cf.name as from_name, r.to_character, ct.name as to_name
       from friend_requests r
       join characters cf on cf.id = r.from_character
       join characters ct on ct.id = r.to_character
      where r.${column} = ? and r.id > ?
      order by r.id
      limit ?`,
    [characterId, after, limit],
  );
}

/** The characters an account ignores, by name: `id`, `name`, `created_at`. */
export async function ignoreRows(em: Em, accountId: string): Promise<Row[]> {
  return em.getConnection().execute(
    `select c.id, c.name, i.created_at from ignore_entries i join characters c on c.id = i.ignored_character_id
      where i.account_id = ? order by lower(c.name)`,
    [accountId],
  );
}

/** Lock an account's row (inside the transaction of `em`): changes to its ignore list run one at a time. */
export async function lockAccount(em: Em, accountId: string): Promise<void> {
  await em.findOne(AccountEntity, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}
