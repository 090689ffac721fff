import { Migration } from '@mikro-orm/migrations';

/** `player_sessions` becomes `player_logins` (one login: a character's stay in the world, from join to leave). */
export class Migration20261124140000 extends Migration {

  override name = 'Migration20261124140000';

  override up(): void | Promise<void> {
    this.addSql(`alter table "player_sessions" rename to "player_logins";`);
    this.addSql(`alter table "player_logins" rename constraint "player_sessions_pkey" to "player_logins_pkey";`);
    this.addSql(`alter table "player_logins" rename constraint "player_sessions_character_id_foreign" to "player_logins_character_id_foreign";`);
    this.addSql(`alter index "player_sessions_character_id_index" rename to "player_logins_character_id_index";`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter index "player_logins_character_id_index" rename to "player_sessions_character_id_index";`);
    this.addSql(`alter table "player_logins" rename constraint "player_logins_character_id_foreign" to "player_sessions_character_id_foreign";`);
    this.addSql(`alter table "player_logins" rename constraint "player_logins_pkey" to "player_sessions_pkey";`);
    this.addSql(`alter table "player_logins" rename to "player_sessions";`);
  }

}
