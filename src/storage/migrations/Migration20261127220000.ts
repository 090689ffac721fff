import { Migration } from '@mikro-orm/migrations';

/** Prayer points and active prayers on the character (docs/combat.md#prayers); a character's points start full. */
export class Migration20261127220000 extends Migration {

  override name = 'Migration20261127220000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "characters" add column "prayer_points" double precision not null default 1, add column "active_prayers" varchar(255) not null default '';`);
    this.addSql(`update "characters" set "prayer_points" = "prayer_level";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "characters" drop column "prayer_points", drop column "active_prayers";`);
  }

}
