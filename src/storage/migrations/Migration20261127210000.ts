import { Migration } from '@mikro-orm/migrations';

/**
 * The lease fence (docs/cluster.md "The fence"): `character_leases.epoch`, drawn from the sequence
 * `character_lease_epochs` each time a lease changes hands; `player_deaths.resolution`, who closed
 * a death lock (`ground` or `bank`), so a resolve whose answer was lost can read its outcome back.
 */
export class Migration20261127210000 extends Migration {

  override name = 'Migration20261127210000';

  override up(): void | Promise<void> {
    this.addSql(`create sequence if not exists "character_lease_epochs";`);
    // Leases held while this runs get epochs of their own, as does any lease written without one.
    this.addSql(`alter table "character_leases" add column "epoch" bigint not null default nextval('character_lease_epochs');`);
    this.addSql(`alter table "player_deaths" add column "resolution" varchar(255) null;`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "player_deaths" drop column "resolution";`);
    this.addSql(`alter table "character_leases" drop column "epoch";`);
    this.addSql(`drop sequence if exists "character_lease_epochs";`);
  }

}
