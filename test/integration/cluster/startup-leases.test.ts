/**
 * Start-up deletes only expired character leases (docs/cluster.md "Start-up", issue 28 point 13):
 * a process started without REDIS_URL on a database another process uses must not free that
 * process's characters (it would let them be played twice); a lease nobody renews any more goes,
 * with or without REDIS_URL.
 */
import assert from "node:assert/strict";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { requireClusterDatabase, startClusterProcess, stopCluster, type ClusterProcess } from "../../helpers/cluster.js";
import { useTestRedis } from "../../helpers/redis.js";
import { postgresStorage, resetStorage } from "../../helpers/storage.js";

describe("cluster: leases at start-up", function () {
  this.timeout(180_000);
  requireClusterDatabase(this);
  const redisUrl = useTestRedis(this, 10);
  const procs: ClusterProcess[] = [];
  afterEach(async () => stopCluster(procs.splice(0)));

  for (const withRedis of [false, true]) {
    it(`${withRedis ? "with" : "without"} REDIS_URL: another process's live lease stays, an expired one goes`, async () => {
      const storage = await postgresStorage();
      await resetStorage(storage);
      const repo = new CharacterRepository(storage.orm);
      const live = (await repo.create({ accountId: "acc-live", coins: 0, inventory: [] })).id;
      const expired = (await repo.create({ accountId: "acc-expired", coins: 0, inventory: [] })).id;
      const sql = (q: string, p: unknown[] = []) => storage.orm.em.fork().getConnection().execute<{ character_id: string }[]>(q, p);
      await sql(
        `insert into character_leases (character_id, owner, world, expires_at, epoch) values
           (?, 'another-live-process', 1, now() + interval '10 minutes', nextval('character_lease_epochs')),
           (?, 'a-killed-process', 1, now() - interval '1 second', nextval('character_lease_epochs'))`,
        [live, expired],
      );
      procs.push(await startClusterProcess(redisUrl, withRedis ? {} : { REDIS_URL: "" }));
      const left = (await sql(`select character_id from character_leases order by character_id`)).map((r) => r.character_id);
      assert.deepEqual(left, [live]);
    });
  }
});
