import { Migration } from '@mikro-orm/migrations';

export class Migration20261122010855 extends Migration {

  override name = 'Migration20261122010855';

  override up(): void | Promise<void> {
    this.addSql(`create table "accounts" ("id" varchar(255) not null, "idp_subject" varchar(255) null, "social_ids" jsonb null, "display_name" varchar(255) null, "anonymous" boolean not null default false, "roles" jsonb not null default '[]', "created_at" timestamptz not null, "last_login_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "accounts" add constraint "accounts_idp_subject_unique" unique ("idp_subject");`);

    this.addSql(`create table "characters" ("id" varchar(255) not null, "account_id" varchar(255) not null, "name" varchar(12) not null, "combat_level" int not null default 3, "attack_level" int not null default 1, "attack_xp" int not null default 0, "strength_level" int not null default 1, "strength_xp" int not null default 0, "defense_level" int not null default 1, "defense_xp" int not null default 0, "constitution_level" int not null default 10, "constitution_xp" int not null default 1154, "ranged_level" int not null default 1, "ranged_xp" int not null default 0, "prayer_level" int not null default 1, "prayer_xp" int not null default 0, "woodcutting_level" int not null default 1, "woodcutting_xp" int not null default 0, "fishing_level" int not null default 1, "fishing_xp" int not null default 0, "mining_level" int not null default 1, "mining_xp" int not null default 0, "firemaking_level" int not null default 1, "firemaking_xp" int not null default 0, "cooking_level" int not null default 1, "cooking_xp" int not null default 0, "smithing_level" int not null default 1, "smithing_xp" int not null default 0, "health" int not null default 100, "coins" int not null default 0, "position_x" double precision not null default 0, "position_y" double precision not null default 10, "position_z" double precision not null default 0, "is_agent" boolean not null default false, "goal" jsonb null, "goals_paused" boolean not null default false, "created_at" timestamptz not null, "updated_at" timestamptz not null, "last_seen_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "characters_account_id_index" on "characters" ("account_id");`);
    this.addSql(`create unique index characters_name_lower_unique on characters (lower(name));`);

    this.addSql(`create table "bank_items" ("id" serial primary key, "character_id" varchar(255) not null, "item_id" varchar(255) not null, "quantity" int not null);`);
    this.addSql(`alter table "bank_items" add constraint "bank_items_character_item_unique" unique ("character_id", "item_id");`);

    this.addSql(`create table "agent_mappings" ("id" varchar(255) not null, "character_id" varchar(255) not null, "account_id" varchar(255) not null, "token_id" varchar(255) not null, "created_at" timestamptz not null, "revoked_at" timestamptz null, primary key ("id"));`);
    this.addSql(`alter table "agent_mappings" add constraint "agent_mappings_character_id_unique" unique ("character_id");`);
    this.addSql(`create index "agent_mappings_account_id_index" on "agent_mappings" ("account_id");`);

    this.addSql(`create table "equipment_items" ("id" serial primary key, "character_id" varchar(255) not null, "slot_type" varchar(255) not null, "item_id" varchar(255) not null, "quantity" int not null default 1);`);
    this.addSql(`alter table "equipment_items" add constraint "equipment_items_character_slot_unique" unique ("character_id", "slot_type");`);

    this.addSql(`create table "friend_requests" ("id" serial primary key, "from_character" varchar(255) not null, "to_character" varchar(255) not null, "created_at" timestamptz not null);`);
    this.addSql(`create index "friend_requests_to_character_index" on "friend_requests" ("to_character");`);
    this.addSql(`alter table "friend_requests" add constraint "friend_requests_pair_unique" unique ("from_character", "to_character");`);

    this.addSql(`create table "friendships" ("id" serial primary key, "character_a" varchar(255) not null, "character_b" varchar(255) not null, "created_at" timestamptz not null);`);
    this.addSql(`create index "friendships_character_b_index" on "friendships" ("character_b");`);
    this.addSql(`alter table "friendships" add constraint "friendships_pair_unique" unique ("character_a", "character_b");`);

    this.addSql(`create table "ignore_entries" ("id" serial primary key, "account_id" varchar(255) not null, "ignored_character_id" varchar(255) not null, "created_at" timestamptz not null);`);
    this.addSql(`create index "ignore_entries_ignored_character_id_index" on "ignore_entries" ("ignored_character_id");`);
    this.addSql(`alter table "ignore_entries" add constraint "ignore_entries_pair_unique" unique ("account_id", "ignored_character_id");`);

    this.addSql(`create table "inventory_items" ("id" serial primary key, "character_id" varchar(255) not null, "slot" int not null, "item_id" varchar(255) not null, "quantity" int not null);`);
    this.addSql(`alter table "inventory_items" add constraint "inventory_items_character_slot_unique" unique ("character_id", "slot");`);

    this.addSql(`create table "item_definitions" ("id" varchar(255) not null, "name" varchar(255) not null, "value" int not null default 0, "stackable" boolean not null default false, "tradeable" boolean not null default true, "equip_slot" varchar(255) null, "data" jsonb not null, "updated_at" timestamptz not null, primary key ("id"));`);

    this.addSql(`create table "npc_kills" ("id" serial primary key, "character_id" varchar(255) not null, "npc_id" varchar(255) not null, "count" int not null default 0, "last_kill_at" timestamptz not null);`);
    this.addSql(`alter table "npc_kills" add constraint "npc_kills_character_npc_unique" unique ("character_id", "npc_id");`);

    this.addSql(`create table "player_deaths" ("id" varchar(255) not null, "character_id" varchar(255) not null, "position_x" double precision not null, "position_z" double precision not null, "killed_by" varchar(255) null, "items" jsonb null, "created_at" timestamptz not null, "resolved_at" timestamptz null, primary key ("id"));`);
    this.addSql(`create index "player_deaths_character_id_index" on "player_deaths" ("character_id");`);
    this.addSql(`create unique index player_deaths_one_open_per_character on player_deaths (character_id) where resolved_at is null;`);

    this.addSql(`create table "player_sessions" ("id" varchar(255) not null, "character_id" varchar(255) not null, "account_id" varchar(255) not null, "transport" varchar(255) not null default 'sdk', "started_at" timestamptz not null, "ended_at" timestamptz null, "end_reason" varchar(255) null, primary key ("id"));`);
    this.addSql(`create index "player_sessions_character_id_index" on "player_sessions" ("character_id");`);

    this.addSql(`create table "trade_audits" ("id" varchar(255) not null, "character_a" varchar(255) not null, "character_b" varchar(255) not null, "offer_a" jsonb not null, "offer_b" jsonb not null, "outcome" varchar(255) not null, "reason" varchar(255) null, "started_at" timestamptz not null, "ended_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "trade_audits_character_a_index" on "trade_audits" ("character_a");`);
    this.addSql(`create index "trade_audits_character_b_index" on "trade_audits" ("character_b");`);

    this.addSql(`create table "world_chunks" ("id" serial primary key, "chunk_x" int not null, "chunk_z" int not null, "data" jsonb not null, "updated_at" timestamptz not null);`);
    this.addSql(`alter table "world_chunks" add constraint "world_chunks_xz_unique" unique ("chunk_x", "chunk_z");`);

    this.addSql(`alter table "characters" add constraint "characters_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "characters" add constraint "characters_coins_check" check (coins >= 0);`);
    this.addSql(`alter table "characters" add constraint "characters_health_check" check (health >= 0);`);

    this.addSql(`alter table "bank_items" add constraint "bank_items_character_id_foreign" foreign key ("character_id") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "bank_items" add constraint "bank_items_quantity_check" check (quantity >= 1);`);

    this.addSql(`alter table "agent_mappings" add constraint "agent_mappings_character_id_foreign" foreign key ("character_id") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "agent_mappings" add constraint "agent_mappings_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);

    this.addSql(`alter table "equipment_items" add constraint "equipment_items_character_id_foreign" foreign key ("character_id") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "equipment_items" add constraint "equipment_items_quantity_check" check (quantity >= 1);`);

    this.addSql(`alter table "friend_requests" add constraint "friend_requests_from_character_foreign" foreign key ("from_character") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "friend_requests" add constraint "friend_requests_to_character_foreign" foreign key ("to_character") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "friend_requests" add constraint "friend_requests_not_self_check" check (from_character <> to_character);`);

    this.addSql(`alter table "friendships" add constraint "friendships_character_a_foreign" foreign key ("character_a") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "friendships" add constraint "friendships_character_b_foreign" foreign key ("character_b") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "friendships" add constraint "friendships_order_check" check (character_a < character_b);`);

    this.addSql(`alter table "ignore_entries" add constraint "ignore_entries_account_id_foreign" foreign key ("account_id") references "accounts" ("id") on delete cascade;`);
    this.addSql(`alter table "ignore_entries" add constraint "ignore_entries_ignored_character_id_foreign" foreign key ("ignored_character_id") references "characters" ("id") on delete cascade;`);

    this.addSql(`alter table "inventory_items" add constraint "inventory_items_character_id_foreign" foreign key ("character_id") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "inventory_items" add constraint "inventory_items_slot_check" check (slot >= 0 and slot <= 27);`);
    this.addSql(`alter table "inventory_items" add constraint "inventory_items_quantity_check" check (quantity >= 1);`);

    this.addSql(`alter table "item_definitions" add constraint "item_definitions_value_check" check (value >= 0);`);

    this.addSql(`alter table "npc_kills" add constraint "npc_kills_character_id_foreign" foreign key ("character_id") references "characters" ("id") on delete cascade;`);
    this.addSql(`alter table "npc_kills" add constraint "npc_kills_count_check" check (count >= 0);`);

    this.addSql(`alter table "player_deaths" add constraint "player_deaths_character_id_foreign" foreign key ("character_id") references "characters" ("id") on delete cascade;`);

    this.addSql(`alter table "player_sessions" add constraint "player_sessions_character_id_foreign" foreign key ("character_id") references "characters" ("id") on delete cascade;`);

    this.addSql(`alter table "trade_audits" add constraint "trade_audits_outcome_check" check (outcome in ('completed', 'cancelled'));`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "characters" drop constraint "characters_account_id_foreign";`);
    this.addSql(`alter table "agent_mappings" drop constraint "agent_mappings_account_id_foreign";`);
    this.addSql(`alter table "ignore_entries" drop constraint "ignore_entries_account_id_foreign";`);
    this.addSql(`alter table "bank_items" drop constraint "bank_items_character_id_foreign";`);
    this.addSql(`alter table "agent_mappings" drop constraint "agent_mappings_character_id_foreign";`);
    this.addSql(`alter table "equipment_items" drop constraint "equipment_items_character_id_foreign";`);
    this.addSql(`alter table "friend_requests" drop constraint "friend_requests_from_character_foreign";`);
    this.addSql(`alter table "friend_requests" drop constraint "friend_requests_to_character_foreign";`);
    this.addSql(`alter table "friendships" drop constraint "friendships_character_a_foreign";`);
    this.addSql(`alter table "friendships" drop constraint "friendships_character_b_foreign";`);
    this.addSql(`alter table "ignore_entries" drop constraint "ignore_entries_ignored_character_id_foreign";`);
    this.addSql(`alter table "inventory_items" drop constraint "inventory_items_character_id_foreign";`);
    this.addSql(`alter table "npc_kills" drop constraint "npc_kills_character_id_foreign";`);
    this.addSql(`alter table "player_deaths" drop constraint "player_deaths_character_id_foreign";`);
    this.addSql(`alter table "player_sessions" drop constraint "player_sessions_character_id_foreign";`);

    this.addSql(`drop table if exists "accounts" cascade;`);
    this.addSql(`drop table if exists "characters" cascade;`);
    this.addSql(`drop table if exists "bank_items" cascade;`);
    this.addSql(`drop table if exists "agent_mappings" cascade;`);
    this.addSql(`drop table if exists "equipment_items" cascade;`);
    this.addSql(`drop table if exists "friend_requests" cascade;`);
    this.addSql(`drop table if exists "friendships" cascade;`);
    this.addSql(`drop table if exists "ignore_entries" cascade;`);
    this.addSql(`drop table if exists "inventory_items" cascade;`);
    this.addSql(`drop table if exists "item_definitions" cascade;`);
    this.addSql(`drop table if exists "npc_kills" cascade;`);
    this.addSql(`drop table if exists "player_deaths" cascade;`);
    this.addSql(`drop table if exists "player_sessions" cascade;`);
    this.addSql(`drop table if exists "trade_audits" cascade;`);
    this.addSql(`drop table if exists "world_chunks" cascade;`);
  }

}
