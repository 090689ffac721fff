/** Storage: logins, death locks and NPC kill statistics. */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import type { DeathItems } from "../src/domain/death.js";
import { CharacterEntity } from "./character.js";

export type { DeathItems };

/**
 * One login: a character's stay in the world, from its join to its leave (reconnections within the
 * linger included), with the transport and why it ended.
 */
export const PlayerLoginEntity = defineEntity({
  name: "PlayerLogin",
  tableName: "player_logins",
  properties: {
    id: p.string().primary(),
    characterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_id").deleteRule("cascade").index(),
    accountId: p.string(),
    transport: p.string().default("sdk"),
    startedAt: p.datetime().onCreate(() => new Date()),
    endedAt: p.datetime().nullable(),
    endReason: p.string().nullable(),
  },
});
export type PlayerLogin = InferEntity<typeof PlayerLoginEntity>;

/**
 * The death lock. At most one unresolved death per character (partial unique index), taken before
 * anything moves, so a second death while one is open changes nothing.
 */
export const PlayerDeathEntity = defineEntity({
  name: "PlayerDeath",
  tableName: "player_deaths",
  properties: {
    id: p.string().primary(),
    characterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_id").deleteRule("cascade").index(),
    positionX: p.double().$type<number>(),
    positionZ: p.double().$type<number>(),
    killedBy: p.string().nullable(),
    items: p.json<DeathItems>().nullable(),
    createdAt: p.datetime().onCreate(() => new Date()),
    resolvedAt: p.datetime().nullable(),
    /** Who closed the lock: `ground` (the world dropped the items) or `bank` (`recoverOpenDeath`). */
    resolution: p.string().nullable(),
  },
  indexes: [
    {
      name: "player_deaths_one_open_per_character",
      expression: "create unique index player_deaths_one_open_per_character on player_deaths (character_id) where resolved_at is null",
    },
  ],
});
export type PlayerDeath = InferEntity<typeof PlayerDeathEntity>;

export const NpcKillEntity = defineEntity({
  name: "NpcKill",
  tableName: "npc_kills",
  properties: {
    id: p.integer().primary().autoincrement(),
    characterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_id").deleteRule("cascade"),
    npcId: p.string(),
    count: p.integer().default(0),
    lastKillAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ name: "npc_kills_character_npc_unique", properties: ["characterId", "npcId"] }],
  checks: [{ name: "npc_kills_count_check", expression: "count >= 0" }],
});
export type NpcKill = InferEntity<typeof NpcKillEntity>;
