/** Storage: item definitions (synchronised from the manifests) and persistent world modifications. */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

export const ItemDefinitionEntity = defineEntity({
  name: "ItemDefinition",
  tableName: "item_definitions",
  properties: {
    id: p.string().primary(),
    name: p.string(),
    value: p.integer().default(0),
    stackable: p.boolean().default(false),
    tradeable: p.boolean().default(true),
    equipSlot: p.string().nullable(),
    /** The full manifest entry (bonuses, requirements, effects). */
    data: p.json<Record<string, unknown>>(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  checks: [{ name: "item_definitions_value_check", expression: "value >= 0" }],
});
export type ItemDefinition = InferEntity<typeof ItemDefinitionEntity>;

export const WorldChunkEntity = defineEntity({
  name: "WorldChunk",
  tableName: "world_chunks",
  properties: {
    id: p.integer().primary().autoincrement(),
    chunkX: p.integer(),
    chunkZ: p.integer(),
    /** Modifications inside the chunk (placed objects, removed scenery, fires, ...). */
    data: p.json<Record<string, unknown>>(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ name: "world_chunks_xz_unique", properties: ["chunkX", "chunkZ"] }],
});
export type WorldChunk = InferEntity<typeof WorldChunkEntity>;
