/**
 * Developer tool: diff the entities against a database migrated with the committed migrations and
 * write a new migration file into src/storage/migrations. Usage: `npm run migration:create`.
 * Remember to add the new class to src/storage/migrations/index.ts.
 */
import { openStorage } from "../src/storage/orm.js";

const storage = await openStorage({ pgliteDir: "memory://", migrate: true });
try {
  const result = await storage.orm.migrator.create("src/storage/migrations");
  if (!result.fileName) console.log("No changes: entities and migrations agree.");
  else console.log(`Created ${result.fileName}`);
} finally {
  await storage.close();
}
