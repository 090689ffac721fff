/**
 * The per-account character cap (docs/rest.md#characters-apicharacter): checked inside the creating transaction with
 * the account row locked, so creations racing for one account never pass it. On PostgreSQL the
 * creations really run in parallel (PGlite serialises everything, so it only shows the rule).
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { MAX_CHARACTERS_PER_ACCOUNT, CharacterService } from "../../../src/services/characters.js";
import type { Storage } from "../../../src/storage/orm.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

for (const kind of storageKinds()) {
  describe(`character cap per account on ${kind.name}`, function () {
    this.timeout(120_000);
    let storage: Storage;
    let content: GameContent;
    let service: CharacterService;
    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
      service = new CharacterService(storage, content);
    });
    beforeEach(async () => resetStorage(storage));

    const owned = async (accountId: string) =>
      Number(
        (await storage.orm.em.fork().getConnection().execute<{ n: string }[]>("select count(*) as n from characters where account_id = ?", [accountId]))[0]!.n,
      );

    it(`${3 * MAX_CHARACTERS_PER_ACCOUNT} concurrent creations for one account: exactly ${MAX_CHARACTERS_PER_ACCOUNT} succeed, the rest are refused CONFLICT`, async () => {
      for (let round = 0; round < 3; round++) {
        const accountId = randomUUID();
        const results = await Promise.allSettled(Array.from({ length: 3 * MAX_CHARACTERS_PER_ACCOUNT }, () => service.createCharacter(accountId, {})));
        const ok = results.filter((r) => r.status === "fulfilled").length;
        const refused = results.filter((r) => r.status === "rejected");
        for (const r of refused) assert.equal((r as PromiseRejectedResult).reason?.code, "CONFLICT", String((r as PromiseRejectedResult).reason));
        assert.equal(ok, MAX_CHARACTERS_PER_ACCOUNT, `round ${round}`);
        assert.equal(await owned(accountId), MAX_CHARACTERS_PER_ACCOUNT, `round ${round}: stored`);
      }
    });
  });
}
