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
import { JsonText, jsonKey, type JsonKey } from "../json-text.js";
import { executeNative } from "../native.js";
import type { Orm } from "../orm.js";

export { PROGRESS_BATCH_MAX, type CharacterProgress, type ItemRows, type ProgressBatchResult, type ProgressSnapshot, type SkillColumns };

/** A row of a progress save: a character's progress, and its coins in the shutdown's save. */
type ProgressRow = CharacterProgress & { coins?: number };

/** A property a progress save sets: its name, and its value for a row (`now`: its `lastSeenAt`). */
interface ProgressField {
  readonly name: string;
  readonly read: (s: ProgressRow, now: Date) => unknown;
}

/** The optional parts a row sets (`RowShape.flags`). */
const HAS_GOAL = 1;
const HAS_GOALS_PAUSED = 2;
const HAS_PRAYER = 4;
const HAS_COINS = 8;

/**
 * The properties a save sets for rows with the same optional parts and the same skills (in the same
 * order): `progressData`'s, in its order. Made once per shape (`rowShapeOf`): a row's shape is found
 * by comparing its skill names with a shape's, nothing made per row (docs/persistence.md "Batched saves").
 */
interface RowShape {
  readonly flags: number;
  readonly skills: readonly string[];
  readonly fields: readonly ProgressField[];
}

/** Every shape met so far (rows of the world's players have one or two: with and without a goal). */
const rowShapes: RowShape[] = [];

function rowShapeOf(s: ProgressRow): RowShape {
  const flags =
    (s.goal !== undefined ? HAS_GOAL : 0) |
    (s.goalsPaused !== undefined ? HAS_GOALS_PAUSED : 0) |
    (s.prayer !== undefined ? HAS_PRAYER : 0) |
    (s.coins !== undefined ? HAS_COINS : 0);
  const skills = s.skills as SkillColumns | null | undefined;
  if (skills === null || skills === undefined) throw new TypeError(`the progress of character ${s.characterId} has no skills`);
  for (const shape of rowShapes) if (shape.flags === flags && sameKeys(shape.skills, skills)) return shape;
  const names = Object.keys(skills);
  const shape: RowShape = { flags, skills: names, fields: progressFields(flags, names) };
  rowShapes.push(shape);
  return shape;
}

/** Are `o`'s own enumerable keys `names`, in that order (`Object.keys`, without making its array)? */
function sameKeys(names: readonly string[], o: object): boolean {
  let i = 0;
  for (const k in o) {
    if (!Object.hasOwn(o, k)) continue;
    if (names[i++] !== k) return false;
  }
  return i === names.length;
}

/**
 * What a save of a row of this shape sets, by property name, in order: position, health, combat
 * level, `lastSeenAt`, each skill's level and XP, then goal, its pause and prayer when the row has
 * them. A name set twice keeps its first place and its last value (as assigning an object's
 * property does).
 */
function progressFields(flags: number, skills: readonly string[]): ProgressField[] {
  const fields = new Map<string, ProgressField["read"]>();
  const set = (name: string, read: ProgressField["read"]) => fields.set(name, read);
  set("positionX", (s) => s.x);
  set("positionY", (s) => s.y);
  set("positionZ", (s) => s.z);
  set("health", (s) => s.health);
  set("combatLevel", (s) => s.combatLevel);
  set("lastSeenAt", (_s, now) => now);
  for (const skill of skills) {
    set(`${skill}Level`, (s) => s.skills[skill].level);
    set(`${skill}Xp`, (s) => s.skills[skill].xp);
  }
  if (flags & HAS_GOAL) set("goal", (s) => s.goal);
  if (flags & HAS_GOALS_PAUSED) set("goalsPaused", (s) => s.goalsPaused);
  if (flags & HAS_PRAYER) {
    set("prayerPoints", (s) => s.prayer!.points);
    set("activePrayers", (s) => s.prayer!.active.join(","));
  }
  return [...fields].map(([name, read]) => ({ name, read }));
}

/** The character row's properties a save of `s` sets (by property name), `lastSeenAt` being `now`. */
export function progressData(s: CharacterProgress, now: Date): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const f of rowShapeOf(s).fields) data[f.name] = f.read(s, now);
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
type TallyRow = { updated: number | string; fenced: string[] | string };

/**
 * Adds up what `progressStatements` answered (each statement one row: `updated`, and `fenced`, the
 * characters of its rows with a fence whose lease it did not find still theirs); `result` names the
 * fenced rows among `rows`, in their order.
 */
export function newTally() {
  const fenced = new Set<string>();
  let updated = 0;
  return {
    add(res: TallyRow[]) {
      updated += Number(res[0]?.updated ?? 0);
      for (const id of parseArray(res[0]?.fenced)) fenced.add(id);
    },
    result(rows: readonly CharacterProgress[]): ProgressBatchResult {
      return { updated, fenced: fenced.size === 0 ? [] : rows.filter((r) => r.fence && fenced.has(r.characterId)).map((r) => r.characterId) };
    },
  };
}

/**
 * The `UPDATE … FROM json_to_recordset(…)` statements that write `rows` as the per-player save
 * would (one per set of properties), `coins` included where a row has it (the shutdown save,
 * `src/storage/characters/leave-batch.ts`). Throws on a character twice.
 *
 * Each statement's rows are written straight into its JSON text, row by row, by its shape's fields
 * (`BatchShape`): no object, key list or copy per row (docs/persistence.md "Batched saves"). The
 * `onUpdate` properties (`updatedAt`) take one value for the whole batch, as `lastSeenAt` does.
 */
export function progressStatements(orm: Orm, rows: readonly ProgressRow[]): { sql: string; params: unknown[] }[] {
  const plan = batchPlanOf(orm);
  const now = new Date();
  const onUpdate = plan.onUpdate.map((p): unknown => p.onUpdate!({} as never, orm.em));
  const seen = new Set<string>();
  // Rows that set the same properties share a statement (its record has one shape), in the order met.
  const shapeOfRow = new Array<BatchShape>(rows.length);
  const shapes: BatchShape[] = [];
  for (let i = 0; i < rows.length; i++) {
    const s = rows[i]!;
    if (seen.has(s.characterId)) throw new Error(`character ${s.characterId} is twice in one progress batch`);
    seen.add(s.characterId);
    const shape = batchShapeOf(orm, plan, rowShapeOf(s));
    shapeOfRow[i] = shape;
    if (!shapes.includes(shape)) shapes.push(shape);
  }
  return shapes.map((shape) => {
    // The rows as one JSON array, each row with its fence (none: nulls), the values as the save assigns them.
    const memos = shape.fields.map(() => ({ value: undefined as unknown, text: "" }));
    json.begin();
    json.punct("[");
    let first = true;
    for (let i = 0; i < rows.length; i++) {
      if (shapeOfRow[i] !== shape) continue;
      const s = rows[i]!;
      if (!first) json.punct(",");
      first = false;
      json.punct("{");
      const fields = shape.fields;
      for (let f = 0; f < fields.length; f++) json.field(fields[f]!.key, fields[f]!.read(s, now, onUpdate), memos[f]);
      json.punct("}");
    }
    json.punct("]");
    return { sql: shape.sql, params: [json.text()] };
  });
}

/** The batch's JSON text, written by one statement at a time (`progressStatements` never yields). */
const json = new JsonText();

/** The fence's fields of a row in the statement's JSON (names no property has). */
const FENCE_OWNER = "fence owner";
const FENCE_EPOCH = "fence epoch";

/** What the batch takes from the character entity's metadata (once per ORM). */
interface BatchPlan {
  readonly meta: EntityMetadata;
  readonly pk: string;
  readonly onUpdate: readonly EntityProperty[];
  /** The statement of each row shape, with or without coins (made once per shape). */
  readonly shapes: Map<RowShape, BatchShape>;
}

/**
 * A statement's row: the primary key, the save's properties (`RowShape.fields`), coins when the
 * rows have them, the `onUpdate` properties (the batch's value where the row gives none, as `??=`
 * would), then the fence's owner and epoch, each field's name as JSON encoded once.
 */
interface BatchShape {
  readonly fields: readonly { key: JsonKey; read: (s: ProgressRow, now: Date, onUpdate: readonly unknown[]) => unknown }[];
  readonly sql: string;
}

const batchPlans = new WeakMap<Orm, BatchPlan>();

function batchPlanOf(orm: Orm): BatchPlan {
  let plan = batchPlans.get(orm);
  if (!plan) {
    const meta = orm.getMetadata().get(CharacterEntity);
    plan = { meta, pk: meta.primaryKeys[0]!, onUpdate: meta.props.filter((p) => p.onUpdate), shapes: new Map() };
    batchPlans.set(orm, plan);
  }
  return plan;
}

function batchShapeOf(orm: Orm, plan: BatchPlan, row: RowShape): BatchShape {
  const made = plan.shapes.get(row);
  if (made) return made;
  type Read = BatchShape["fields"][number]["read"];
  const reads = new Map<string, Read>([[plan.pk, (s) => s.characterId]]);
  for (const f of row.fields) reads.set(f.name, f.read);
  if (row.flags & HAS_COINS) reads.set("coins", (s) => s.coins);
  plan.onUpdate.forEach((p, i) => {
    const own = reads.get(p.name);
    reads.set(p.name, own ? (s, now, onUpdate) => own(s, now, onUpdate) ?? onUpdate[i] : (_s, _now, onUpdate) => onUpdate[i]);
  });
  const props = [...reads.keys()].map((n) => columnOf(plan.meta, n));
  reads.set(FENCE_OWNER, (s) => s.fence?.owner ?? null);
  reads.set(FENCE_EPOCH, (s) => s.fence?.epoch ?? null);
  const shape: BatchShape = { fields: [...reads].map(([name, read]) => ({ key: jsonKey(name), read })), sql: progressSql(orm, plan.meta, props) };
  plan.shapes.set(row, shape);
  return shape;
}

/**
 * The statement writing `props` of each row, the rows one JSON array (`json_to_recordset`, each
 * row's fields by property name, typed as their columns): its text does not grow with the rows, and
 * is made once per set of properties. The fence, per row: its lease row still this owner and epoch,
 * locked until the statement commits. It answers the rows written and the fenced rows it refused
 * (usually none: the driver has no array of every row to parse back).
 */
function progressSql(orm: Orm, meta: EntityMetadata, props: EntityProperty[]): string {
  const platform = orm.em.getPlatform();
  const q = (name: string) => platform.quoteIdentifier(name);
  const col = (p: EntityProperty) => q(p.fieldNames[0]!);
  const pk = columnOf(meta, meta.primaryKeys[0]!);
  const fields = [...props.map((p) => `${q(p.name)} ${p.columnTypes[0]}`), `${q(FENCE_OWNER)} text`, `${q(FENCE_EPOCH)} bigint`].join(", ");
  return `with v as (select * from json_to_recordset(?::json) as r(${fields})),
      held as (select l.character_id from character_leases l join v on l.character_id = v.${q(pk.name)} and l.owner = v.${q(FENCE_OWNER)} and l.epoch = v.${q(FENCE_EPOCH)}
               order by l.character_id for share of l),
      u as (update ${q(meta.tableName)} as c set ${props
        .filter((p) => p.name !== pk.name)
        .map((p) => `${col(p)} = v.${q(p.name)}`)
        .join(
          ", ",
        )} from v where c.${col(pk)} = v.${q(pk.name)} and (v.${q(FENCE_EPOCH)} is null or c.${col(pk)} in (select character_id from held)) returning c.${col(pk)})
      select (select count(*) from u)::int as updated,
        coalesce((select array_agg(v.${q(pk.name)}) from v where (v.${q(FENCE_OWNER)} is not null or v.${q(FENCE_EPOCH)} is not null)
                    and v.${q(pk.name)} not in (select character_id from held)), '{}') as fenced`;
}

/** A text[] as the driver returns it: an array (pg), or PostgreSQL's literal `{a,b}` (some drivers). */
function parseArray(v: string[] | string | undefined): string[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  const inner = v.replace(/^\{|\}$/g, "");
  return inner ? inner.split(",").map((x) => x.replace(/^"|"$/g, "")) : [];
}
