/**
 * Property-based fuzzing helpers (fast-check): the seed and run budget, hostile JSON values,
 * "almost valid" payloads built from the event table's zod schemas, a logger that records every
 * error the server logs, and process-level crash listeners. Used by `test/integration/fuzz/*.test.ts`.
 */
import fc from "fast-check";
import { pino, type Logger } from "pino";
import type { z } from "zod";
import type { Storage } from "../../src/storage/orm.js";

/** The seed every fuzz property uses: `FUZZ_SEED` when set, else a fixed one (CI is reproducible). */
export const FUZZ_SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : 20_261_124;
if (!Number.isSafeInteger(FUZZ_SEED)) throw new Error(`FUZZ_SEED must be an integer, got ${process.env.FUZZ_SEED}`);
/** Multiplies every property's run count (`FUZZ_RUNS=10` for a longer local hunt). */
const FUZZ_SCALE = process.env.FUZZ_RUNS ? Number(process.env.FUZZ_RUNS) : 1;
if (!(FUZZ_SCALE > 0)) throw new Error(`FUZZ_RUNS must be a positive number, got ${process.env.FUZZ_RUNS}`);

/** Run count for a property: `base` scaled by `FUZZ_RUNS`. */
export const runs = (base: number) => Math.max(1, Math.round(base * FUZZ_SCALE));

/**
 * Check a property with the suite's seed. A failure names the seed and the counterexample path
 * so the exact run can be replayed (`FUZZ_SEED=<seed>`).
 */
export async function check<T>(prop: fc.IAsyncPropertyWithHooks<T> | fc.IAsyncProperty<T>, numRuns: number, seedOffset = 0): Promise<void> {
  const seed = FUZZ_SEED + seedOffset;
  try {
    await fc.assert(prop, { seed, numRuns: runs(numRuns), endOnFailure: true });
  } catch (e) {
    (e as Error).message = `fuzz property failed (FUZZ_SEED=${FUZZ_SEED}, property seed ${seed}):\n${(e as Error).message}`;
    throw e;
  }
}

// ------------------------------------------------------------------ hostile JSON values

/** Keys that reach prototype machinery or look like one. */
export const PROTO_KEYS = ["__proto__", "constructor", "prototype", "toString", "valueOf", "hasOwnProperty", "__defineGetter__", "then", "toJSON"] as const;

/** A lone UTF-16 surrogate (JSON escapes it as \udxxx; msgpack carries it as it can). */
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

/** Short strings of every kind: ASCII controls, any code point, graphemes, lone surrogates, prototype keys. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: "binary-ascii", maxLength: 24 }),
  fc.string({ unit: "binary", maxLength: 24 }),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.string({ unit: fc.oneof(loneSurrogate, fc.constantFrom("\u0000", "\u202e", "\ufeff", "\ud83d\ude00", "'", '"', "\\", "%s", "${x}")), maxLength: 12 }),
  fc.constantFrom(...PROTO_KEYS, "", " ", "null", "undefined", "NaN", "-1", "1e308", "0x10", "drop", "coins", "attack"),
  fc.integer({ min: 200, max: 1_500 }).map((n) => "x".repeat(n)),
);

/** Numbers JSON can carry that break naive code: huge, tiny, negative, fractional, -0, the int32 edges. */
export const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(
    0,
    -0,
    -1,
    1,
    27,
    28,
    0.5,
    -0.5,
    1e308,
    -1e308,
    5e-324,
    2 ** 31 - 1,
    2 ** 31,
    -(2 ** 31),
    2 ** 53,
    2 ** 53 + 2,
    -(2 ** 53),
    Number.MAX_VALUE,
    1_000_001,
    -1_000_001,
  ),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

/** Extra numbers a msgpack frame (SDK) can carry but JSON cannot. */
export const msgpackOnlyNumber: fc.Arbitrary<number> = fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY);

/** An array nested `depth` deep, or an object nested `depth` deep under a prototype-ish key. */
export const deepNesting: fc.Arbitrary<unknown> = fc
  .record({ depth: fc.integer({ min: 20, max: 500 }), key: fc.constantFrom("a", "__proto__", "constructor", "x"), array: fc.boolean() })
  .map(({ depth, key, array }) => {
    let v: unknown = 1;
    for (let i = 0; i < depth; i++) v = array ? [v] : { [key]: v };
    return v;
  });

/**
 * Any hostile JSON value: primitives of every type, strings and numbers above, nested arrays and
 * objects with prototype keys, deep nesting. Plain JSON data only (what `JSON.parse` could return).
 */
export function hostileValue(extraNumbers?: fc.Arbitrary<number>): fc.Arbitrary<unknown> {
  const numbers = extraNumbers ? fc.oneof(hostileNumber, extraNumbers) : hostileNumber;
  const leaf = fc.oneof(numbers, hostileString, fc.boolean(), fc.constant(null));
  const key = fc.oneof({ weight: 1, arbitrary: fc.constantFrom(...PROTO_KEYS) }, { weight: 2, arbitrary: hostileString });
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 4, arbitrary: leaf },
      { weight: 1, arbitrary: fc.array(tie("value"), { maxLength: 4 }) },
      { weight: 1, arbitrary: objectWithKeys(key, tie("value")) },
      { weight: 1, arbitrary: deepNesting },
    ),
  }));
  return value;
}

/**
 * An object whose keys come from `key`, set as own properties (so `__proto__` is a real own key,
 * as `JSON.parse` makes it, not a prototype change).
 */
export function objectWithKeys(key: fc.Arbitrary<string>, value: fc.Arbitrary<unknown>, maxKeys = 4): fc.Arbitrary<Record<string, unknown>> {
  return fc.array(fc.tuple(key, value), { maxLength: maxKeys }).map((entries) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of entries) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
    return o;
  });
}

// ------------------------------------------------------------------ payloads from zod schemas

type Zod = z.ZodType & { _zod: { def: Record<string, unknown> } };

/**
 * Valid values for a schema of the event table (objects, bounded integers and strings, booleans,
 * enums, optionals; `unknown` fields get a small integer). New events get arbitraries without
 * changes here as long as they use these building blocks.
 */
export function validFor(schema: z.ZodType): fc.Arbitrary<unknown> {
  const s = schema as Zod & Record<string, unknown>;
  const def = s._zod.def as { type: string; shape?: Record<string, z.ZodType>; innerType?: z.ZodType; entries?: Record<string, string> };
  switch (def.type) {
    case "object": {
      const shape = def.shape!;
      const optional = Object.keys(shape).filter((k) => (shape[k] as Zod)._zod.def.type === "optional");
      return fc.record(Object.fromEntries(Object.entries(shape).map(([k, v]) => [k, validFor(v)])), {
        requiredKeys: Object.keys(shape).filter((k) => !optional.includes(k)),
      });
    }
    case "optional":
      return validFor(def.innerType!);
    case "number": {
      const min = Number.isFinite(s.minValue as number) ? (s.minValue as number) : -1e6;
      const max = Number.isFinite(s.maxValue as number) ? (s.maxValue as number) : 1e6;
      return s.isInt ? fc.oneof(fc.integer({ min, max }), fc.constantFrom(min, max)) : fc.double({ min, max, noNaN: true });
    }
    case "string":
      return fc.string({ unit: "grapheme", minLength: (s.minLength as number | null) ?? 0, maxLength: Math.min((s.maxLength as number | null) ?? 64, 64) });
    case "boolean":
      return fc.boolean();
    case "enum":
      return fc.constantFrom(...Object.values(def.entries!));
    case "unknown":
      return fc.integer({ min: 0, max: 30 });
    default:
      throw new Error(`fuzz: no valid-value arbitrary for zod type ${def.type}; extend validFor`);
  }
}

/** A valid payload with one field replaced by a hostile value, removed, or an extra key added. */
export function almostValid(schema: z.ZodType, hostile: fc.Arbitrary<unknown>): fc.Arbitrary<unknown> {
  const keys = Object.keys((schema as unknown as { shape?: Record<string, unknown> }).shape ?? {});
  return fc.tuple(validFor(schema), fc.constantFrom(...keys, ...PROTO_KEYS), hostile, fc.constantFrom("replace", "delete")).map(([valid, key, value, how]) => {
    const o: Record<string, unknown> = { ...(valid as Record<string, unknown>) };
    if (how === "delete") delete o[key];
    else Object.defineProperty(o, key, { value, enumerable: true, writable: true, configurable: true });
    return o;
  });
}

/** Whether the server's check (`schema.safeParse(payload ?? {})`, as the event router runs it) accepts it. */
export function accepted(schema: z.ZodType, payload: unknown): boolean {
  return schema.safeParse(payload ?? {}).success;
}

// ------------------------------------------------------------------ crash detection

/** A logger that records every entry at `error` or above, for asserting the server logged none. */
export function recordingLogger(): { logger: Logger; errors: Record<string, unknown>[] } {
  const errors: Record<string, unknown>[] = [];
  const logger = pino(
    { level: "error", base: undefined },
    {
      write(line: string) {
        errors.push(JSON.parse(line) as Record<string, unknown>);
      },
    },
  );
  return { logger, errors };
}

/**
 * Listen for uncaught exceptions and unhandled rejections while the fuzz suite runs (they would
 * end a real server: src/lifecycle.ts). `stop()` removes the listeners.
 */
export function processFaults(): { faults: string[]; stop(): void } {
  const faults: string[] = [];
  const onError = (e: unknown) => faults.push(`uncaughtException: ${(e as Error)?.stack ?? String(e)}`);
  const onRejection = (e: unknown) => faults.push(`unhandledRejection: ${(e as Error)?.stack ?? String(e)}`);
  process.on("uncaughtException", onError);
  process.on("unhandledRejection", onRejection);
  return {
    faults,
    stop() {
      process.off("uncaughtException", onError);
      process.off("unhandledRejection", onRejection);
    },
  };
}

/** JSON text of a value as the test compares snapshots (Dates as ISO strings, undefined dropped). */
export const plain = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)));

// ------------------------------------------------------------------ stored state

type StorageLike = Pick<Storage, "orm">;

/**
 * A character's stored state in one query (one round trip on the shared connection): its row,
 * inventory, equipment and bank rows with every column, in a fixed order.
 */
export async function storedCharacter(storage: StorageLike, characterId: string): Promise<unknown> {
  const rows = await storage.orm.em
    .fork()
    .getConnection()
    .execute<{ s: unknown }[]>(
      `select json_build_object(
       'character', (select to_jsonb(c) from characters c where c.id = ?),
       'inventory', (select coalesce(jsonb_agg(to_jsonb(i) order by i.slot), '[]') from inventory_items i where i.character_id = ?),
       'equipment', (select coalesce(jsonb_agg(to_jsonb(e) order by e.slot_type), '[]') from equipment_items e where e.character_id = ?),
       'bank', (select coalesce(jsonb_agg(to_jsonb(b) order by b.item_id), '[]') from bank_items b where b.character_id = ?)
     ) as s`,
      [characterId, characterId, characterId, characterId],
    );
  return rows[0]!.s;
}

/** Every row of every table in one query (for "this request changed nothing anywhere"). */
export async function storedEverything(storage: StorageLike): Promise<unknown> {
  const tables = [...new Set([...storage.orm.getMetadata().getAll().values()].map((m) => m.tableName).filter(Boolean))].sort() as string[];
  const parts = tables.map((t) => `'${t}', (select coalesce(jsonb_agg(to_jsonb(x) order by to_jsonb(x)::text), '[]') from "${t}" x)`);
  const rows = await storage.orm.em
    .fork()
    .getConnection()
    .execute<{ s: unknown }[]>(`select json_build_object(${parts.join(", ")}) as s`);
  return rows[0]!.s;
}
