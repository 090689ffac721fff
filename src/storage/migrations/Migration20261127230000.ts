import { Migration } from '@mikro-orm/migrations';

/** World state: `ground_piles` (one row per pile) and a world number on `world_chunks` (docs/persistence.md "World state"). */
export class Migration20261127230000 extends Migration {

  override name = 'Migration20261127230000';

  override up(): void | Promise<void> {
    this.addSql(`create table "ground_piles" ("id" varchar(255) not null, "world" int not null, "item_id" varchar(255) not null, "quantity" int not null, "x" int not null, "z" int not null, "owner_id" varchar(255) null, "public_at" timestamptz not null, "expires_at" timestamptz not null, primary key ("id"));`);
    this.addSql(`create index "ground_piles_world_index" on "ground_piles" ("world");`);
    this.addSql(`alter table "ground_piles" add constraint "ground_piles_quantity_check" check (quantity >= 1);`);

    this.addSql(`alter table "world_chunks" drop constraint "world_chunks_xz_unique";`);
    this.addSql(`alter table "world_chunks" add "world" int not null default 1;`);
    this.addSql(`alter table "world_chunks" add constraint "world_chunks_world_xz_unique" unique ("world", "chunk_x", "chunk_z");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`drop table if exists "ground_piles" cascade;`);
    this.addSql(`alter table "world_chunks" drop constraint "world_chunks_world_xz_unique";`);
    this.addSql(`alter table "world_chunks" drop column "world";`);
    this.addSql(`alter table "world_chunks" add constraint "world_chunks_xz_unique" unique ("chunk_x", "chunk_z");`);
  }

}
