/**
 * Statements with their parameters sent apart from their text (PostgreSQL's extended protocol; PGlite
 * alike), for the statements the server runs most or builds largest (docs/persistence.md "Batched
 * saves"). MikroORM's `Connection.execute` formats every parameter into the statement's text
 * (`Platform.formatQuery`) and sends it as a simple query: a progress save of 250 characters is a
 * statement of about 9,500 parameters, and formatting them was 5 % of what the world process
 * allocated in a wandering crowd of 2,000 (`npm run bench:world -- --wander … --cpu-prof-window … --heap-prof-window`).
 * Here the driver sends each value as it stands (dates as instants, `timestamptz` columns only).
 * The ORM's query log (`debug`) does not list these statements.
 */
import type { SqlEntityManager } from "@mikro-orm/sql";
import { CompiledQuery, type Kysely } from "kysely";

/**
 * `sql` with its `?` placeholders numbered (`$1`, `$2`, … in order), as PostgreSQL takes them. Every
 * `?` is a parameter: a statement passed here holds none of its own (in a literal, or an operator).
 * Throws when the count differs from `params`.
 */
export function numbered(sql: string, params: number): string {
  let n = 0;
  const text = sql.replace(/\?/g, () => `$${++n}`);
  if (n !== params) throw new Error(`a statement with ${n} placeholders was given ${params} parameters`);
  return text;
}

/**
 * Run `sql` (`?` placeholders) with `params` on `em`'s connection, in the transaction `ctx` if given
 * (`em.getTransactionContext()`, as `Connection.execute` takes it), and return its rows.
 */
export async function executeNative<T extends object = Record<string, unknown>>(
  em: SqlEntityManager,
  sql: string,
  params: readonly unknown[],
  ctx?: unknown,
): Promise<T[]> {
  const client = (ctx ?? em.getConnection().getClient()) as Kysely<unknown>;
  const { rows } = await client.executeQuery<T>(CompiledQuery.raw(numbered(sql, params.length), [...params]));
  return rows;
}
