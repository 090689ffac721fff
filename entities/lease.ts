/** Storage: which world plays each character now (docs/operations.md "Worlds": one character, one world). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { CharacterEntity } from "./character.js";

/**
 * The lease of a character to the world that plays it: the process (`owner`) and world number, until
 * `expiresAt` (renewed while the character is in that world, released when it leaves). An expired
 * lease is free: a process that died frees its characters within the lease's lifetime.
 */
export const CharacterLeaseEntity = defineEntity({
  name: "CharacterLease",
  tableName: "character_leases",
  properties: {
    characterId: () => p.oneToOne(CharacterEntity).primary().mapToPk().joinColumn("character_id").deleteRule("cascade"),
    owner: p.string().index(),
    world: p.integer(),
    expiresAt: p.datetime(),
    /** The fencing token (docs/cluster.md "The fence"): a new one from `character_lease_epochs` each time the lease changes hands (the column default draws one too, hence `autoincrement`). */
    epoch: p.bigint().$type<string>().autoincrement(),
  },
});
export type CharacterLease = InferEntity<typeof CharacterLeaseEntity>;
