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

/**
 * Batched world state of one chunk (`CHUNK_TILES` square) of one world: depleted resource nodes
 * with their respawn time and burning fires (`ChunkData`, docs/persistence.md "World state").
 */
export const WorldChunkEntity = defineEntity({
  name: "WorldChunk",
  tableName: "world_chunks",
  properties: {
    id: p.integer().primary().autoincrement(),
    /** The world number (several worlds share one database). */
    world: p.integer().default(1),
    chunkX: p.integer(),
    chunkZ: p.integer(),
    /** Modifications inside the chunk (`ChunkData`: depleted nodes, fires). */
    data: p.json<Record<string, unknown>>(),
    updatedAt: p
      .datetime()
      .onCreate(() => new Date())
      .onUpdate(() => new Date()),
  },
  uniques: [{ name: "world_chunks_world_xz_unique", properties: ["world", "chunkX", "chunkZ"] }],
});
export type WorldChunk = InferEntity<typeof WorldChunkEntity>;

/**
 * A pile of items lying on the ground of a world. Written in the same transaction as the drop that
 * made it and deleted in the same transaction as the pickup that takes it (docs/persistence.md
 * "Ground piles"), so an item is never both on the ground and in a stored inventory, nor in neither.
 */
export const GroundPileEntity = defineEntity({
  name: "GroundPile",
  tableName: "ground_piles",
  properties: {
    id: p.string().primary(),
    world: p.integer().index(),
    itemId: p.string(),
    quantity: p.integer(),
    x: p.integer(),
    z: p.integer(),
    /** Only this character sees and may take the pile before `publicAt`; null: everyone. */
    ownerId: p.string().nullable(),
    publicAt: p.datetime(),
    expiresAt: p.datetime(),
  },
  checks: [{ name: "ground_piles_quantity_check", expression: "quantity >= 1" }],
});
export type GroundPile = InferEntity<typeof GroundPileEntity>;
