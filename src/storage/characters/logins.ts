/**
 * Characters' logins opened at join (`CharacterRepository.recordLogin`, docs/persistence.md
 * "Loading a character"): one statement, where an update and a flush (begin, insert, commit) took
 * four; the logins of concurrent joins go together (src/storage/batches.ts).
 */
import { randomUUID } from "node:crypto";
import { uniqueRounds } from "../batches.js";
import { executeNative } from "../native.js";
import type { Orm } from "../orm.js";

/**
 * The new logins inserted and their characters' open ones closed. A character plays in one world at
 * a time (its lease): a login still open is one a killed process left (its lease expired and this
 * join took it over). The update in the `with` runs whether or not the insert reads it, on the
 * statement's snapshot, so it never sees (never closes) the rows the insert adds.
 * Parameters: ended and started at; the characters whose logins close; the new logins' ids,
 * character ids, account ids and transports.
 */
const OPEN_LOGINS_SQL = `with closed as (
  update player_logins set ended_at = ?, end_reason = 'server_restart' where character_id = any(?::text[]) and ended_at is null
)
insert into player_logins (id, character_id, account_id, transport, started_at)
select v.id, v.character_id, v.account_id, v.transport, ?::timestamptz from unnest(?::text[], ?::text[], ?::text[], ?::text[]) as v(id, character_id, account_id, transport)`;

/** A login to open: of `characterId`, by `accountId`, over `transport`. */
export interface NewLogin {
  characterId: string;
  accountId: string;
  transport: string;
}

/**
 * Open each login, closing those its character still has open. A character twice among them has
 * its logins opened one statement after the other, in the order given (the later closes the
 * earlier). @returns the logins' ids, in the order given.
 */
export async function openLogins(orm: Orm, logins: readonly NewLogin[]): Promise<string[]> {
  const ids = logins.map(() => randomUUID());
  for (const round of uniqueRounds(logins, (l) => l.characterId)) {
    const now = new Date();
    const characters = round.map((i) => logins[i]!.characterId);
    await executeNative(orm.em, OPEN_LOGINS_SQL, [
      now,
      characters,
      now,
      round.map((i) => ids[i]),
      characters,
      round.map((i) => logins[i]!.accountId),
      round.map((i) => logins[i]!.transport),
    ]);
  }
  return ids;
}
