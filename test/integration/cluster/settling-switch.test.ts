/**
 * A trader switching worlds while its trade settles (issue 28 point 6, docs/cluster.md "Races"):
 * two worlds of one process, their claims and join paths (the real `CharacterClaims`, `World` and
 * `CharacterResolver` on real storage). A and B trade in world 1; the settlement holds both
 * characters' items and waits for A's storage queue (busy with an earlier job). B's join of world 2
 * meanwhile is refused (409 CHARACTER_BUSY) instead of loading B's pre-trade rows there; once the
 * settlement has committed, the join goes through and reads the committed rows. And a settlement
 * whose trader did move on (its lease now under another epoch) writes nothing.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import type { Principal } from "../../../src/auth/service.js";
import { CharacterClaims } from "../../../src/cluster/claims.js";
import { LeaseStore } from "../../../src/cluster/leases.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import type { ItemLookup } from "../../../src/domain/inventory.js";
import { createLogger } from "../../../src/logger.js";
import type { Storage } from "../../../src/storage/orm.js";
import { settleTrade } from "../../../src/trade/settlement.js";
import { CharacterResolver } from "../../../src/world/character-resolver.js";
import { WorldError } from "../../../src/world/errors.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { STARTER } from "../../helpers/records.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";
import { holdings, settlingTrade } from "../../helpers/trade.js";

for (const kind of storageKinds()) {
  describe(`a trader switching worlds during its settlement on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let content: GameContent;
    let items: ItemLookup;
    let repo: CharacterRepository;
    let worlds: Map<number, { world: World; resolver: CharacterResolver }>;

    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
      items = (id) => content.items.get(id);
    });
    beforeEach(async () => {
      await resetStorage(storage);
      repo = new CharacterRepository(storage.orm);
      const logger = createLogger("silent");
      worlds = new Map();
      const claims = new CharacterClaims({
        leases: new LeaseStore(storage.orm, "proc-1"),
        worlds: () => [...worlds].map(([number, w]) => ({ number, world: w.world })),
        replacedCode: 4009,
        logger,
      });
      for (const n of [1, 2]) {
        const world = new World({ content, characters: repo, logger, saveIntervalSeconds: 3600, checkAdminCode: () => "wrong", worldNumber: n });
        const resolver = new CharacterResolver({
          world,
          characters: repo,
          createCharacter: () => Promise.reject(new Error("no new characters here")),
          claim: (id, join) => claims.claim(id, n, join),
        });
        worlds.set(n, { world, resolver });
      }
    });

    const connection = (): Connection => ({ id: randomUUID(), kind: "sdk", send() {}, close() {} });
    /** Join character `id` into world `n` as the rooms do: claim, read in its queue, enter. */
    const join = (n: number, id: string, accountId: string): Promise<Player> => {
      const { world, resolver } = worlds.get(n)!;
      const principal: Principal = { accountId, roles: [], anonymous: false, via: "server", characterId: id };
      return resolver.resolveCharacter(principal, id, (record) => world.join(record, connection(), 4009).player);
    };
    const axes = async (id: string) => (await repo.load(id))!.inventory.filter((s) => s.itemId === "bronze_axe").length;

    it("B's join of world 2 waits out the settlement in world 1 (refused meanwhile), then reads the committed rows", async () => {
      const accountId = randomUUID();
      // Ids in this order so the settlement takes A's queue first, as `runMany` does (sorted).
      const [idA, idB] = [
        (await repo.create({ accountId, coins: 10, inventory: STARTER })).id,
        (await repo.create({ accountId, coins: 10, inventory: STARTER })).id,
      ].sort();
      const a = await join(1, idA!, accountId);
      const b = await join(1, idB!, accountId);
      const w1 = worlds.get(1)!.world;

      // A's queue is busy (an earlier save, say) until `go`.
      let go!: () => void;
      const busy = new Promise<void>((r) => (go = r));
      void w1.queues.run(a.id, () => busy);
      // The settlement, as the trade service runs it: items held, in both queues, under both fences.
      const release = w1.holdItems([a.id, b.id]);
      const trade = settlingTrade(
        randomUUID(),
        { id: b.id, holdings: holdings(10, STARTER), items: [{ slot: 0, quantity: 1 }] },
        { id: a.id, holdings: holdings(10, STARTER), coins: 1 },
        items,
      );
      const settled = w1.queues
        .runMany([a.id, b.id], async () => {
          const r = await settleTrade(storage.orm, trade, items, undefined, { [a.id]: a.fence, [b.id]: b.fence });
          // Memory follows what was committed (`TradeService.settle`).
          if (r.ok) for (const p of [a, b]) Object.assign(p, r.holdings[p.id]);
          return r;
        })
        .finally(release);

      // B asks for world 2 while the settlement waits for A's queue.
      await assert.rejects(join(2, b.id, accountId), (e) => e instanceof WorldError && e.code === "CHARACTER_BUSY");
      assert.equal(w1.player(b.id), b, "B still plays in world 1");

      go();
      const result = await settled;
      assert.ok(result.ok, JSON.stringify(result));
      const b2 = await join(2, b.id, accountId);
      assert.equal(b2.inventory.filter((s) => s?.itemId === "bronze_axe").length, 0, "world 2 reads B after the trade");
      await worlds.get(2)!.world.leave(b.id, "logout");
      await w1.leave(a.id, "logout");
      assert.deepEqual([await axes(a.id), await axes(b.id)], [2, 0], "two axes, as before the trade");
    });

    it("a settlement whose trader moved to another world (a new epoch) writes nothing", async () => {
      const accountId = randomUUID();
      const a = await join(1, (await repo.create({ accountId, coins: 10, inventory: STARTER })).id, accountId);
      const b = await join(1, (await repo.create({ accountId, coins: 10, inventory: STARTER })).id, accountId);
      const fences = { [a.id]: a.fence, [b.id]: b.fence };
      await join(2, b.id, accountId);
      const trade = settlingTrade(
        randomUUID(),
        { id: b.id, holdings: holdings(10, STARTER), items: [{ slot: 0, quantity: 1 }] },
        { id: a.id, holdings: holdings(10, STARTER), coins: 1 },
        items,
      );
      const r = await settleTrade(storage.orm, trade, items, undefined, fences);
      assert.ok(!r.ok && r.failure === "lease_lost" && r.lost?.[0] === b.id, JSON.stringify(r));
      assert.deepEqual([await axes(a.id), await axes(b.id)], [1, 1]);
    });
  });
}
