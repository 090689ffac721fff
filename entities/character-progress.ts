/**
 * A character's progress as a save writes it, and the batched progress save (docs/persistence.md
 * "Batched saves"): the progress of up to `PROGRESS_BATCH_MAX` characters in one
 * `UPDATE characters … FROM (VALUES …)` statement. `progressData` is what the per-player save
 * (`CharacterRepository.writeSnapshot`) assigns too; the batch maps exactly those properties to
 * their columns through the entity metadata, so a new skill or progress column is written by both
 * save paths or by neither.
 */
import type { EntityMetadata, EntityProperty } from "@mikro-orm/core";
import type { Orm } from "../src/storage/orm.js";
import { CharacterEntity, type StoredGoal } from "./character.js";

/** Skill columns as stored: `<skill>Level` and `<skill>Xp`. */
export type SkillColumns = Record<string, { level: number; xp: number }>;

/** The progress of a character: what a save always writes (items and coins aside). */
export interface CharacterProgress {
  characterId: string;
  x: number;
  y: number;
  z: number;
  health: number;
  combatLevel: number;
  skills: SkillColumns;
  /** Absent: left as stored. */
  goal?: StoredGoal | null;
  /** Absent: left as stored. */
  goalsPaused?: boolean;
}

/** The stored item rows of one character. */
export interface ItemRows {
  inventory: { slot: number; itemId: string; quantity: number }[];
  equipment: Record<string, { itemId: string; quantity: number }>;
  bank: { itemId: string; quantity: number }[];
}

/** What a save writes: progress, and items and coins only when present. */
export interface ProgressSnapshot extends CharacterProgress {
  coins?: number;
  items?: Omit<ItemRows, "bank"> & { bank?: ItemRows["bank"] };
}

/**
 * Characters one batched statement writes at most (`Saving.saveDirty` cuts its batch into chunks of
 * this size). About 35 values a character: a statement of some 9,000 values, short enough to hold
 * its row locks only briefly and to leave the other background slots to other saves.
 */
export const PROGRESS_BATCH_MAX = 250;

/** The character row's properties a save of `s` sets (by property name), `lastSeenAt` being `now`. */
export function progressData(s: CharacterProgress, now: Date): Record<string, unknown> {
  const data: Record<string, unknown> = {
    positionX: s.x,
    positionY: s.y,
    positionZ: s.z,
    health: s.health,
    combatLevel: s.combatLevel,
    lastSeenAt: now,
  };
  for (const [skill, v] of Object.entries(s.skills)) {
    data[`${skill}Level`] = v.level;
    data[`${skill}Xp`] = v.xp;
  }
  if (s.goal !== undefined) data.goal = s.goal;
  if (s.goalsPaused !== undefined) data.goalsPaused = s.goalsPaused;
  return data;
}

/** A property of the character entity that has a column, or a clear error. */
function columnOf(meta: EntityMetadata, name: string): EntityProperty {
  const prop = (meta.properties as Record<string, EntityProperty | undefined>)[name];
  if (!prop?.fieldNames?.[0] || !prop.columnTypes?.[0]) throw new Error(`the character entity has no column for "${name}"`);
  return prop;
}

/**
 * Write the progress of several characters, each row as the per-player save would (same columns,
 * `updatedAt` and every other `onUpdate` property included), in one statement — one per set of
 * properties when some rows leave `goal` or `goalsPaused` as stored, then in one transaction.
 * A character that no longer exists is skipped. Refuses (throws, writing nothing) rows with items
 * or coins (those take the per-player transaction), a character twice, and more than
 * `PROGRESS_BATCH_MAX` rows. @returns the number of rows updated.
 */
export async function writeProgressBatch(orm: Orm, rows: readonly CharacterProgress[]): Promise<number> {
  if (rows.length === 0) return 0;
  if (rows.length > PROGRESS_BATCH_MAX) throw new RangeError(`a progress batch writes at most ${PROGRESS_BATCH_MAX} characters, not ${rows.length}`);
  for (const s of rows) {
    const extra = s as { items?: unknown; coins?: unknown };
    if (extra.items !== undefined || extra.coins !== undefined) throw new Error("a progress batch writes no items or coins");
  }
  const statements = progressStatements(orm, rows);
  const em = orm.em.fork();
  if (statements.length === 1) {
    const { sql, params } = statements[0]!;
    return (await em.getConnection().execute<{ affectedRows: number }>(sql, params, "run")).affectedRows;
  }
  return em.transactional(async (tx) => {
    let updated = 0;
    for (const { sql, params } of statements) {
      updated += (await tx.getConnection().execute<{ affectedRows: number }>(sql, params, "run", tx.getTransactionContext())).affectedRows;
    }
    return updated;
  });
}

/**
 * The `UPDATE … FROM (VALUES …)` statements that write `rows` as the per-player save would (one per
 * set of properties), `coins` included where a row has it (the shutdown save,
 * `entities/character-batch.ts`). Throws on a character twice.
 */
export function progressStatements(orm: Orm, rows: readonly (CharacterProgress & { coins?: number })[]): { sql: string; params: unknown[] }[] {
  const meta = orm.getMetadata().get(CharacterEntity);
  const platform = orm.em.getPlatform();
  const pk = meta.primaryKeys[0]!;
  const onUpdate = meta.props.filter((p) => p.onUpdate);
  const now = new Date();
  const seen = new Set<string>();
  // Rows that set the same properties share a statement (VALUES has one shape).
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const s of rows) {
    if (seen.has(s.characterId)) throw new Error(`character ${s.characterId} is twice in one progress batch`);
    seen.add(s.characterId);
    const data: Record<string, unknown> = { [pk]: s.characterId, ...progressData(s, now) };
    if (s.coins !== undefined) data.coins = s.coins;
    for (const p of onUpdate) data[p.name] ??= p.onUpdate!(data as never, orm.em);
    const shape = Object.keys(data).join(",");
    const group = groups.get(shape);
    if (group) group.push(data);
    else groups.set(shape, [data]);
  }
  return [...groups.values()].map((group) => {
    const names = Object.keys(group[0]!);
    const props = names.map((n) => columnOf(meta, n));
    const col = (p: EntityProperty) => platform.quoteIdentifier(p.fieldNames[0]!);
    const tuple = `(${props.map((p) => `?::${p.columnTypes[0]}`).join(", ")})`;
    const params: unknown[] = [];
    for (const data of group) {
      for (const p of props) {
        const v = data[p.name];
        params.push(p.customType && v != null ? p.customType.convertToDatabaseValue(v, platform, { mode: "query" }) : v);
      }
    }
    const id = col(columnOf(meta, pk));
    const sql =
      `update ${platform.quoteIdentifier(meta.tableName)} as c set ${props
        .filter((p) => p.name !== pk)
        .map((p) => `${col(p)} = v.${col(p)}`)
        .join(", ")} ` + `from (values ${group.map(() => tuple).join(", ")}) as v(${props.map(col).join(", ")}) where c.${id} = v.${id}`;
    return { sql, params };
  });
}
