/** Storage: the social graph (friendships, friend requests, ignore lists). */
import { defineEntity, p, type InferEntity } from "@mikro-orm/core";
import { AccountEntity } from "./account.js";
import { CharacterEntity } from "./character.js";

/** A bidirectional friendship, stored once with `characterA < characterB`. */
export const FriendshipEntity = defineEntity({
  name: "Friendship",
  tableName: "friendships",
  properties: {
    id: p.integer().primary().autoincrement(),
    characterA: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_a").deleteRule("cascade"),
    characterB: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("character_b").deleteRule("cascade").index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ name: "friendships_pair_unique", properties: ["characterA", "characterB"] }],
  checks: [{ name: "friendships_order_check", expression: "character_a < character_b" }],
});
export type Friendship = InferEntity<typeof FriendshipEntity>;

export const FriendRequestEntity = defineEntity({
  name: "FriendRequest",
  tableName: "friend_requests",
  properties: {
    id: p.integer().primary().autoincrement(),
    fromCharacter: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("from_character").deleteRule("cascade"),
    toCharacter: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("to_character").deleteRule("cascade").index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ name: "friend_requests_pair_unique", properties: ["fromCharacter", "toCharacter"] }],
  checks: [{ name: "friend_requests_not_self_check", expression: "from_character <> to_character" }],
});
export type FriendRequest = InferEntity<typeof FriendRequestEntity>;

/** Players an account blocks (ignore list per account; docs/rest.md#social-graph-deaths-and-kills-apiplayer). */
export const IgnoreEntryEntity = defineEntity({
  name: "IgnoreEntry",
  tableName: "ignore_entries",
  properties: {
    id: p.integer().primary().autoincrement(),
    accountId: () => p.manyToOne(AccountEntity).mapToPk().joinColumn("account_id").deleteRule("cascade"),
    ignoredCharacterId: () => p.manyToOne(CharacterEntity).mapToPk().joinColumn("ignored_character_id").deleteRule("cascade").index(),
    createdAt: p.datetime().onCreate(() => new Date()),
  },
  uniques: [{ name: "ignore_entries_pair_unique", properties: ["accountId", "ignoredCharacterId"] }],
});
export type IgnoreEntry = InferEntity<typeof IgnoreEntryEntity>;
