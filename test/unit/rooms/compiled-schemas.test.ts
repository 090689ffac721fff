/**
 * rooms/world/event-table.ts: a row whose payloads are parsed by its schema compiled by zod
 * (`compiledSchema`, `player:move`) accepts exactly the payloads the protocol's schema accepts and
 * yields the same parsed data (a fresh object: extra keys stripped, an optional key given as
 * `undefined` kept); a payload it refuses gets the schema's own issues, so the refusal's text is
 * the same (docs/protocol.md#refusals). Payloads: valid ones, valid ones with one field made
 * hostile, fields of every type (floats, NaN, huge numbers, strings, null, arrays, objects), extra
 * and prototype keys (`__proto__` as an own key), missing fields, and values that are no object.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { z } from "zod";
import { EVENT_TABLE, type EventEntry } from "../../../rooms/world/event-table.js";
import { schemaRefusal, type ClientEventName } from "../../../src/events.js";
import { almostValid, check, hostileNumber, hostileString, hostileValue, msgpackOnlyNumber, objectWithKeys, PROTO_KEYS, validFor } from "../../helpers/fuzz.js";

type Schema = z.ZodType;

/** Field values of every kind, for the schema's own keys. */
const anyField: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.oneof(hostileNumber, msgpackOnlyNumber, fc.integer({ min: -1_000_002, max: 1_000_002 })) },
  { weight: 1, arbitrary: fc.constantFrom(undefined, null, true, false, "1", "", 1n, [], [1], {}, Object(1)) },
  { weight: 1, arbitrary: hostileString },
  { weight: 1, arbitrary: hostileValue(msgpackOnlyNumber) },
);

/** An object with some of the schema's keys (any value, or absent) and maybe extra ones, prototype keys included. */
function fieldsOf(schema: Schema): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys((schema as unknown as { shape: Record<string, unknown> }).shape);
  return fc
    .tuple(
      fc.record(Object.fromEntries(keys.map((k) => [k, anyField])), { requiredKeys: [] }),
      objectWithKeys(fc.oneof(fc.constantFrom(...PROTO_KEYS), hostileString), anyField, 3),
      fc.boolean(),
    )
    .map(([own, extra, extraFirst]) => {
      const o: Record<string, unknown> = {};
      // Own properties, `__proto__` too (as JSON.parse and msgpack make it), in either order.
      for (const part of extraFirst ? [extra, own] : [own, extra])
        for (const [k, v] of Object.entries(part)) Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
      return o;
    });
}

/** Payloads for one schema: valid, almost valid, any fields, no object at all, and odd objects made from valid ones. */
function payloads(schema: Schema): fc.Arbitrary<unknown> {
  const valid = validFor(schema);
  const odd = valid.chain((v) =>
    fc.constantFrom<unknown>(
      Object.assign(Object.create(null) as object, v), // no prototype
      Object.create(v as object) as unknown, // its fields inherited, none own
      Object.assign([], v), // an array carrying the fields
      Object.freeze({ ...(v as object) }),
      new Map(Object.entries(v as object)),
    ),
  );
  return fc.oneof(
    { weight: 3, arbitrary: valid },
    { weight: 3, arbitrary: almostValid(schema, anyField) },
    { weight: 4, arbitrary: fieldsOf(schema) },
    { weight: 1, arbitrary: odd },
    { weight: 1, arbitrary: hostileValue(msgpackOnlyNumber) },
    { weight: 1, arbitrary: fc.constantFrom(undefined, null, 0, "", "{}", [], true) },
  );
}

/** The compiled schema answers `payload` as the protocol's schema does (as the router parses: `payload ?? {}`). */
function answersAlike(event: ClientEventName, schema: Schema, compiledSchema: Schema, payload: unknown): void {
  const input = payload ?? {};
  const want = schema.safeParse(input);
  const got = compiledSchema.safeParse(input);
  assert.equal(got.success, want.success, "accepted by one, refused by the other");
  if (want.success) {
    // Strict: -0 is not 0, an own key set to undefined is not an absent key, the prototype is compared.
    assert.deepStrictEqual(got.data, want.data);
    assert.notEqual(got.data, input, "the parsed data is a new object");
  } else {
    assert.deepStrictEqual(got.error!.issues, want.error.issues);
    assert.deepStrictEqual(schemaRefusal(event, got.error!), schemaRefusal(event, want.error));
  }
}

const compiledRows = (Object.entries(EVENT_TABLE) as [ClientEventName, EventEntry<ClientEventName>][]).filter(([, e]) => e.compiledSchema);

describe("rooms/world/event-table: schemas compiled by zod answer as the protocol's", () => {
  it("player:move is parsed by its compiled schema (z.compile took it)", () => {
    const entry = EVENT_TABLE["player:move"];
    assert.ok(entry.compiledSchema, "player:move has a compiled schema");
    assert.notEqual(entry.compiledSchema, entry.schema, "z.compile returns the schema itself when it cannot compile it");
  });

  for (const [event, entry] of compiledRows) {
    it(`${event}: the same payloads accepted, the same data, the same refusals`, async () => {
      await check(
        fc.asyncProperty(payloads(entry.schema), async (payload) => answersAlike(event, entry.schema, entry.compiledSchema!, payload)),
        3_000,
      );
    });
  }

  it("the property tells apart a schema that accepts a little more (fractional coordinates)", async () => {
    const protocol = EVENT_TABLE["player:move"].schema;
    const looser = z.compile(
      z.object({ x: z.number().min(-1_000_000).max(1_000_000), z: z.int().min(-1_000_000).max(1_000_000), run: z.boolean().optional() }),
    );
    await assert.rejects(
      check(
        fc.asyncProperty(payloads(protocol), async (payload) => answersAlike("player:move", protocol, looser, payload)),
        3_000,
      ),
      /fuzz property failed/,
    );
  });
});
