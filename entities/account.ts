/** Storage: accounts (authentication identity, linked to identity-provider and social identifiers). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";

export const AccountEntity = defineEntity({
  name: "Account",
  tableName: "accounts",
  properties: {
    id: p.string().primary(),
    /** Identity-provider subject (`sub` of a provider token), unique when present. */
    idpSubject: p.string().nullable().unique(),
    /** Linked social identifiers (provider name to external id). */
    socialIds: p.json<Record<string, string>>().nullable(),
    displayName: p.string().nullable(),
    anonymous: p.boolean().default(false),
    roles: p.json<string[]>().default("[]" as never),
    createdAt: p.datetime().onCreate(() => new Date()),
    lastLoginAt: p.datetime().nullable(),
  },
});
export type Account = InferEntity<typeof AccountEntity>;
