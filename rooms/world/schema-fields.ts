/**
 * What a schema class declares, read from its metadata: the interest encoder (interest-encoder.ts)
 * checks the state it encodes against what it can write.
 */
import type { Schema } from "@colyseus/schema";

export type SchemaClass = { readonly name: string; readonly prototype: Schema };

const PRIMITIVES = new Set([
  "string",
  "number",
  "boolean",
  "int8",
  "uint8",
  "int16",
  "uint16",
  "int32",
  "uint32",
  "int64",
  "uint64",
  "float32",
  "float64",
  "bigint64",
  "biguint64",
  "varint",
  "varuint",
]);

/** One field: its index and name, whether a primitive, whether view-filtered (tagged), and for a map, the type of its values. */
export interface SchemaField {
  index: number;
  name: string;
  primitive: boolean;
  tagged: boolean;
  map?: unknown;
}

/** A schema class's fields in index order; undefined for a class without schema metadata. */
export function fieldsOf(type: SchemaClass): SchemaField[] | undefined {
  const metadata = (type as unknown as { [Symbol.metadata]?: Record<string, { name?: string; type?: unknown; tag?: number }> })[Symbol.metadata];
  if (!metadata) return undefined;
  return Object.entries(metadata)
    .filter(([key]) => /^\d+$/.test(key))
    .map(([key, field]) => ({
      index: Number(key),
      name: field.name!,
      primitive: typeof field.type === "string" && PRIMITIVES.has(field.type),
      tagged: field.tag !== undefined,
      map: typeof field.type === "object" && field.type !== null && "map" in field.type ? (field.type as { map: unknown }).map : undefined,
    }));
}
