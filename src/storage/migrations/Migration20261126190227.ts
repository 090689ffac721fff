import { Migration } from '@mikro-orm/migrations';

/** `character_leases`: which process and world plays each character, until when (docs/operations.md "Worlds"). */
export class Migration20261126190227 extends Migration {

  override name = 'Migration20261126190227';

  override up(): void | Promise<void> {
    this.addSql(`create table "character_leases" ("character_id" varchar(255) not null, "owner" varchar(255) not null, "world" int not null, "expires_at" timestamptz not null, primary key ("character_id"));`);
    this.addSql(`create index "character_leases_owner_index" on "character_leases" ("owner");`);

    this.addSql(`alter table "character_leases" add constraint "character_leases_character_id_foreign" foreign key ("character_id") references "characters" ("id") on update cascade on delete cascade;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "character_leases" cascade;`);
  }

}
