/** The SQL of agent mappings (their rules: src/services/agents.ts). */
import type { Em } from "./orm.js";

/**
 * One agent mapping (`{ id }`) or an account's (`{ accountId }`), oldest first, with its
 * character's name: `id`, `character_id`, `account_id`, `created_at`, `revoked_at`, `name`.
 */
export async function agentMappingRows(em: Em, where: { id: string } | { accountId: string }): Promise<Record<string, unknown>[]> {
  const byId = "id" in where;
  return em.getConnection().execute(
    `select m.id, m.character_id, m.account_id, m.created_at, m.revoked_at, c.name
       from agent_mappings m join characters c on c.id = m.character_id
      where ${byId ? "m.id = ?" : "m.account_id = ?"}
      order by m.created_at, m.id`,
    [byId ? where.id : where.accountId],
  );
}
