/** The SQL of accounts (their rules: src/auth/service.ts). */
import { AccountEntity } from "../../entities/account.js";
import type { Em } from "./orm.js";

/**
 * Insert an account unless one with the same `unique` column (its id, or its identity provider's
 * subject) exists: concurrent first requests of one account insert it once.
 */
export async function insertAccount(
  em: Em,
  row: { id: string; anonymous: boolean; displayName: string | null; idpSubject?: string },
  unique: "id" | "idpSubject",
): Promise<void> {
  await em
    .createQueryBuilder(AccountEntity)
    .insert({ ...row, roles: [], createdAt: new Date() })
    .onConflict(unique)
    .ignore()
    .execute();
}
