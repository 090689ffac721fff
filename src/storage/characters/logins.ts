/**
 * A character's login opened at join (`CharacterRepository.recordLogin`, docs/persistence.md
 * "Loading a character"): one statement, where an update and a flush (begin, insert, commit) took four.
 */
import { randomUUID } from "node:crypto";
import { executeNative } from "../native.js";
import type { Orm } from "../orm.js";

/**
 * The new login inserted and the character's open ones closed. A character plays in one world at a
 * time (its lease): a login still open is one a killed process left (its lease expired and this
 * join took it over). The update in the `with` runs whether or not the insert reads it, on the
 * statement's snapshot, so it never sees (never closes) the row the insert adds.
 * Parameters: ended at, character id; the new login's id, character id, account id, transport, started at.
 */
const OPEN_LOGIN_SQL = `with closed as (
  update player_logins set ended_at = ?, end_reason = 'server_restart' where character_id = ? and ended_at is null
)
insert into player_logins (id, character_id, account_id, transport, started_at) values (?, ?, ?, ?, ?)`;

/** Open a login of `characterId` over `transport`, closing those it still has open. @returns the login's id. */
export async function openLogin(orm: Orm, characterId: string, accountId: string, transport: string): Promise<string> {
  const id = randomUUID();
  const now = new Date();
  await executeNative(orm.em, OPEN_LOGIN_SQL, [now, characterId, id, characterId, accountId, transport, now]);
  return id;
}
