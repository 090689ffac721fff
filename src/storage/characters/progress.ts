/**
 * A character's progress as a save writes it, and the batched progress save (docs/persistence.md
 * "Batched saves"): the progress of up to `PROGRESS_BATCH_MAX` characters in one
 * `UPDATE characters … FROM json_to_recordset(…)` statement, the rows one JSON parameter.
 * `progressData` is what the per-player save (`CharacterRepository.writeSnapshot`) assigns too; the
 * batch maps exactly those properties to their columns through the entity metadata, so a new skill
 * or progress column is written by both save paths or by neither.
 */
import type { EntityMetadata, EntityProperty } from "@mikro-orm/core";
import { CharacterEntity } from "../../../entities/character.js";
import {
  PROGRESS_BATCH_MAX,
  type CharacterProgress,
  type ItemRows,
  type ProgressBatchResult,
  type ProgressSnapshot,
  type SkillColumns,
} from "../../world/ports/character-store.js";
import type { LeaseFence } from "../fence.js";
import { executeNative } from "../native.js";
import type { Orm } from "../orm.js";

export { PROGRESS_BATCH_MAX, type CharacterProgress, type ItemRows, type ProgressBatchResult, type ProgressSnapshot, type SkillColumns };

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
  if (s.prayer !== undefined) {
    data.prayerPoints = s.prayer.points;
    data.activePrayers = s.prayer.active.join(",");
  }
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
 * A row with a `fence` is written only while the character's lease is still that one, checked per
 * row in the same statement (its lease row locked `FOR SHARE`, in id order); the others are
 * reported in `fenced`. A character that no longer exists is skipped. Refuses (throws, writing
 * nothing) rows with items or coins (those take the per-player transaction), a character twice,
 * and more than `PROGRESS_BATCH_MAX` rows.
 */
export async function writeProgressBatch(orm: Orm, rows: readonly CharacterProgress[]): Promise<ProgressBatchResult> {
  if (rows.length === 0) return { updated: 0, fenced: [] };
  if (rows.length > PROGRESS_BATCH_MAX) throw new RangeError(`a progress batch writes at most ${PROGRESS_BATCH_MAX} characters, not ${rows.length}`);
  for (const s of rows) {
    const extra = s as { items?: unknown; coins?: unknown };
    if (extra.items !== undefined || extra.coins !== undefined) throw new Error("a progress batch writes no items or coins");
  }
  const statements = progressStatements(orm, rows);
  const em = orm.em.fork();
  const tally = newTally();
  if (statements.length === 1) {
    const { sql, params } = statements[0]!;
    tally.add(await executeNative<TallyRow>(em, sql, params));
  } else {
    await em.transactional(async (tx) => {
      for (const { sql, params } of statements) tally.add(await executeNative<TallyRow>(tx, sql, params, tx.getTransactionContext()));
    });
  }
  return tally.result(rows);
}

/** What a progress statement answers. */
type TallyRow = { updated: number | string; held: string[] | string };

/**
 * Adds up what `progressStatements` answered (each statement one row: `updated`, and `held`, the
 * characters whose lease it found still theirs); `result` names the fenced rows among `rows`.
 */
export function newTally() {
  const held = new Set<string>();
  let updated = 0;
  return {
    add(res: TallyRow[]) {
      updated += Number(res[0]?.updated ?? 0);
      for (const h of parseArray(res[0]?.held)) held.add(h);
    },
    result(rows: readonly CharacterProgress[]): ProgressBatchResult {
      return { updated, fenced: rows.filter((r) => r.fence && !held.has(r.characterId)).map((r) => r.characterId) };
    },
  };
}

/**
 * The `UPDATE … FROM json_to_recordset(…)` statements that write `rows` as the per-player save
 * would (one per set of properties), `coins` included where a row has it (the shutdown save,
 * `src/storage/characters/leave-batch.ts`). Throws on a character twice.
 */
export function progressStatements(orm: Orm, rows: readonly (CharacterProgress & { coins?: number })[]): { sql: string; params: unknown[] }[] {
  const meta = orm.getMetadata().get(CharacterEntity);
  const pk = meta.primaryKeys[0]!;
  const onUpdate = meta.props.filter((p) => p.onUpdate);
  const now = new Date();
  const seen = new Set<string>();
  const fences = new Map<string, LeaseFence>();
  // Rows that set the same properties share a statement (its record has one shape).
  const groups = new Map<string, Record<string, unknown>[]>();
  for (const s of rows) {
    if (seen.has(s.characterId)) throw new Error(`character ${s.characterId} is twice in one progress batch`);
    seen.add(s.characterId);
    if (s.fence) fences.set(s.characterId, s.fence);
    const data: Record<string, unknown> = { [pk]: s.characterId, ...progressData(s, now) };
    if (s.coins !== undefined) data.coins = s.coins;
    for (const p of onUpdate) data[p.name] ??= p.onUpdate!(data as never, orm.em);
    const shape = Object.keys(data).join(",");
    const group = groups.get(shape);
    if (group) group.push(data);
    else groups.set(shape, [data]);
  }
  return [...groups.values()].map((group) => {
    const props = Object.keys(group[0]!).map((n) => columnOf(meta, n));
    // The rows as one JSON array, each row with its fence (none: nulls), the values as the save assigns them.
    const json = JSON.stringify(
      group.map((data) => {
        const fence = fences.get(data[pk] as string);
        return { ...data, [FENCE_OWNER]: fence?.owner ?? null, [FENCE_EPOCH]: fence?.epoch ?? null };
      }),
    );
    return { sql: progressSql(orm, meta, props, Object.keys(group[0]!).join(",")), params: [json] };
  });
}

/** The fence's fields of a row in the statement's JSON (names no property has). */
const FENCE_OWNER = "fence owner";
const FENCE_EPOCH = "fence epoch";

/** The progress statement of one set of properties, by their names joined (made once per set). */
const progressSqls = new WeakMap<Orm, Map<string, string>>();

/**
 * The statement writing `props` of each row, the rows one JSON array (`json_to_recordset`, each
 * row's fields by property name, typed as their columns): its text does not grow with the rows, and
 * is made once per set of properties. The fence, per row: its lease row still this owner and epoch,
 * locked until the statement commits.
 */
function progressSql(orm: Orm, meta: EntityMetadata, props: EntityProperty[], shape: string): string {
  let byShape = progressSqls.get(orm);
  if (!byShape) progressSqls.set(orm, (byShape = new Map<string, string>()));
  const made = byShape.get(shape);
  if (made) return made;
  const platform = orm.em.getPlatform();
  const q = (name: string) => platform.quoteIdentifier(name);
  const col = (p: EntityProperty) => q(p.fieldNames[0]!);
  const pk = columnOf(meta, meta.primaryKeys[0]!);
  const fields = [...props.map((p) => `${q(p.name)} ${p.columnTypes[0]}`), `${q(FENCE_OWNER)} text`, `${q(FENCE_EPOCH)} bigint`].join(", ");
  const sql = `with v as (select * from json_to_recordset(?::json) as r(${fields})),
      held as (select l.character_id from character_leases l join v on l.character_id = v.${q(pk.name)} and l.owner = v.${q(FENCE_OWNER)} and l.epoch = v.${q(FENCE_EPOCH)}
               order by l.character_id for share of l),
      u as (update ${q(meta.tableName)} as c set ${props
        .filter((p) => p.name !== pk.name)
        .map((p) => `${col(p)} = v.${q(p.name)}`)
        .join(
          ", ",
        )} from v where c.${col(pk)} = v.${q(pk.name)} and (v.${q(FENCE_EPOCH)} is null or c.${col(pk)} in (select character_id from held)) returning c.${col(pk)})
      select (select count(*) from u)::int as updated, coalesce((select array_agg(character_id) from held), '{}') as held`;
  byShape.set(shape, sql);
  return sql;
}

/** A text[] as the driver returns it: an array (pg), or PostgreSQL's literal `{a,b}` (some drivers). */
function parseArray(v: string[] | string | undefined): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  const inner = v.replace(/^\{|\}$/g, "");
  return inner ? inner.split(",").map((x) => x.replace(/^"|"$/g, "")) : [];
}
