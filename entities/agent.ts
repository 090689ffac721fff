/** Storage: agent-to-character mappings and their credentials' revocation state. */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { AccountEntity } from "./account.js";
import { CharacterEntity } from "./character.js";

export const AgentMappingEntity = defineEntity({
  name: "AgentMapping",
  tableName: "agent_mappings",
  properties: {
    /** The agent id used in `/api/agents/:agentId/...`. */
    id: p.string().primary(),
    characterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_id").deleteRule("cascade").unique(),
    accountId: () => p.manyToOne(AccountEntity).mapToPk().joinColumn("account_id").deleteRule("cascade").index(),
    /** `jti` of the issued agent token; a token whose jti does not match is rejected. */
    tokenId: p.string(),
    createdAt: p.datetime().onCreate(() => new Date()),
    revokedAt: p.datetime().nullable(),
  },
});
export type AgentMapping = InferEntity<typeof AgentMappingEntity>;
