/**
 * The statements a join runs on characters, each sent for concurrent joins together
 * (src/storage/batches.ts, docs/persistence.md "Joins together"): the account's first character,
 * the load, the login.
 */
import type { LoadedRecord } from "../../world/ports/character-store.js";
import { batchedInFlight } from "../batches.js";
import { executeNative } from "../native.js";
import type { Orm } from "../orm.js";
import { loadCharacters, type LoadedCharacter } from "./load.js";
import { openLogins, type NewLogin } from "./logins.js";

/** Each account's oldest character (`listByAccount`'s first): one indexed row each, no entity built. */
const FIRST_OF_ACCOUNTS_SQL = `select distinct on (account_id) account_id, id from characters
  where account_id = any(?::text[]) order by account_id, created_at asc, id asc`;

export class JoinStatements {
  /**
   * A character's record (`loadCharacters`), or null when there is no such character. `loadedAt`
   * is when the statement that read it was sent (a record is never older than it says).
   */
  readonly load: (id: string) => Promise<(LoadedCharacter & Pick<LoadedRecord, "loadedAt">) | null>;
  /** The account's oldest character, if it has any. */
  readonly firstOfAccount: (accountId: string) => Promise<string | undefined>;
  /** Open a login (`openLogins`); its id. */
  readonly openLogin: (login: NewLogin) => Promise<string>;

  constructor(orm: Orm) {
    this.load = batchedInFlight(async (ids) => {
      const loadedAt = performance.now();
      const records = await loadCharacters(orm.em.fork(), ids);
      return records.map((r) => (r === null || r instanceof Error ? r : { ...r, loadedAt }));
    });
    this.firstOfAccount = batchedInFlight(async (accounts) => {
      const rows = await executeNative<{ account_id: string; id: string }>(orm.em, FIRST_OF_ACCOUNTS_SQL, [[...new Set(accounts)]]);
      const first = new Map(rows.map((r) => [r.account_id, r.id]));
      return accounts.map((a) => first.get(a));
    });
    this.openLogin = batchedInFlight((logins) => openLogins(orm, logins));
  }
}
