/**
 * `tsx scripts/pg-ping.ts <postgres-url>`: exit 0 when that PostgreSQL database answers `select 1`
 * within 3 s, 1 otherwise (one line on stderr says why). Used by `.ci/run` to decide whether the
 * tests also run against PostgreSQL; it goes through the server's own storage layer, so it needs
 * no PostgreSQL client tools on the machine.
 */
import { openStorage } from "../src/storage/orm.js";

const url = process.argv[2];
if (!url) {
  console.error("usage: tsx scripts/pg-ping.ts <postgres-url>");
  process.exit(2);
}
const storage = await openStorage({ url, migrate: false, poolMax: 1, connectTimeoutMs: 3_000 });
const ok = await storage.ping(3_000);
if (!ok) console.error("pg-ping: no answer from PostgreSQL");
await Promise.race([storage.close().catch(() => undefined), new Promise((r) => setTimeout(r, 1_000).unref())]);
process.exit(ok ? 0 : 1);
