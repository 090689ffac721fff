/**
 * The holder's own clock (docs/cluster.md "The holder's own clock"): a lease's grant and each
 * renewal assure it for a term (its length less a margin) counted from when they were asked for.
 * A process stalled past that term (SIGSTOP, a long pause) wakes up with the lease in doubt: until
 * a renewal answers it neither acts for the character (its events are dropped, it does not walk)
 * nor tells its client anything, and asks for a renewal at once; a renewal that still holds the
 * lease lets it go on, one that finds the lease taken over drops the player without a write. Real `CharacterClaims`, `LeaseStore`,
 * `World` and event router on real storage; the stall is the lease's term having passed.
 */
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { CharacterRepository } from "../../../src/storage/characters/repository.js";
import { EventRouter } from "../../../rooms/world/event-table.js";
import type { Principal } from "../../../src/auth/service.js";
import { CharacterClaims } from "../../../src/cluster/claims.js";
import { LeaseStore } from "../../../src/cluster/leases.js";
import { loadContent, type GameContent } from "../../../src/content/load.js";
import { createLogger } from "../../../src/logger.js";
import type { Storage } from "../../../src/storage/orm.js";
import { CharacterResolver } from "../../../src/world/character-resolver.js";
import type { Connection, Player } from "../../../src/world/player.js";
import { World } from "../../../src/world/world.js";
import { STARTER } from "../../helpers/records.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";
import { until } from "../../helpers/trade.js";

const TTL_SECONDS = 2;

for (const kind of storageKinds()) {
  describe(`a lease's term on the holder's own clock on ${kind.name}`, function () {
    this.timeout(60_000);
    let storage: Storage;
    let content: GameContent;
    let repo: CharacterRepository;
    let leases: LeaseStore;
    let claims: CharacterClaims;
    let world: World;
    let resolver: CharacterResolver;
    let router: EventRouter;

    before(async () => {
      storage = await kind.get();
      content = await loadContent("world/manifests");
    });
    beforeEach(async () => {
      await resetStorage(storage);
      repo = new CharacterRepository(storage.orm);
      const logger = createLogger("silent");
      leases = new LeaseStore(storage.orm, "proc-1", TTL_SECONDS);
      world = new World({
        content,
        characters: repo,
        logger,
        saveIntervalSeconds: 3600,
        checkAdminCode: () => "wrong",
        worldNumber: 1,
        leaseInDoubt: () => claims.renewNow(),
      });
      claims = new CharacterClaims({ leases, worlds: () => [{ number: 1, world }], replacedCode: 4009, logger });
      resolver = new CharacterResolver({
        world,
        characters: repo,
        createCharacter: () => Promise.reject(new Error("no new characters here")),
        claim: (id, join) => claims.claim(id, 1, join),
      });
      const none = () => undefined;
      const trades = { tradeRequest: none, tradeRequestRespond: none, tradeAddItem: none, tradeRemoveItem: none, tradeAccept: none, tradeCancel: none };
      router = new EventRouter({ world, trades }, logger);
      claims.start();
    });
    afterEach(() => claims.stop());

    /** Join a new character with a connection that records what it is sent and how it was closed. */
    const joinNew = async () => {
      const accountId = randomUUID();
      const { id } = await repo.create({ accountId, coins: 10, inventory: STARTER });
      const sent: string[] = [];
      const closed: number[] = [];
      const connection: Connection = { id: randomUUID(), kind: "sdk", send: (event) => void sent.push(event), close: (code) => void closed.push(code ?? 0) };
      const principal: Principal = { accountId, roles: [], anonymous: false, via: "server", characterId: id };
      const asked = Date.now();
      const p = await resolver.resolveCharacter(principal, id, (record) => world.join(record, connection, 4009).player);
      return { p, sent, closed, asked };
    };
    /** What a stall past the term leaves behind: the term over on this process's clock. */
    const stallPastTerm = (p: Player) => (p.leaseValidUntil = Date.now() - 1);

    it("the grant assures the lease for its length less a margin, counted from when it was asked for", async () => {
      const { p, asked } = await joinNew();
      assert.equal(leases.termMs, TTL_SECONDS * 1000 - 200);
      assert.ok(p.leaseValidUntil! >= asked + leases.termMs && p.leaseValidUntil! <= Date.now() + leases.termMs, `valid until ${p.leaseValidUntil}`);
      assert.equal(p.leaseInDoubt(), false);
    });

    it("in doubt, the player neither acts nor hears anything; a renewal that still holds the lease lets it go on", async () => {
      const { p, sent } = await joinNew();
      const start = { x: p.x, z: p.z };
      const stalledAt = Date.now();
      stallPastTerm(p);
      assert.equal(p.leaseInDoubt(), true);
      sent.length = 0;
      router.route(p, "player:move", { x: start.x + 3, z: start.z });
      router.route(p, "player:chat", { text: "/help" });
      for (let i = 0; i < 5; i++) world.step();
      p.sync();
      assert.deepEqual({ x: p.x, z: p.z }, start, "no walk while in doubt");
      assert.equal(sent.length, 0, `nothing told while in doubt (got ${sent.join(", ")})`);

      // The tick that found the lease in doubt asked for a renewal at once (not at the next round, 10 s on).
      await until(() => !p.leaseInDoubt(), "the renewal the tick asked for");
      assert.ok(p.leaseValidUntil! >= stalledAt + leases.termMs, "the renewal moved the term on");
      assert.equal(world.player(p.id), p, "still in the world");
      router.route(p, "player:move", { x: start.x + 3, z: start.z });
      for (let i = 0; i < 10; i++) world.step();
      assert.notDeepEqual({ x: p.x, z: p.z }, start, "walks again");
      p.sync();
      assert.ok(sent.includes("player:sync"), "told again");
    });

    it("in doubt while another process took the lease over: dropped at the renewal without a word or a write", async () => {
      const { p, sent, closed } = await joinNew();
      const coinsBefore = (await repo.load(p.id))!.character.coins;
      stallPastTerm(p);
      // The stalled holder's lease expires in storage and another process takes it.
      const other = new LeaseStore(storage.orm, "proc-2", TTL_SECONDS);
      await until(async () => (await leases.holder(p.id)) === undefined, "the lease expired in storage");
      const taken = await other.take(p.id, 2);
      assert.equal(taken.ok, true);
      sent.length = 0;
      p.coins += 1_000;
      p.sync();
      router.route(p, "bank:deposit", { slot: 0 });
      await claims.renew();
      assert.equal(world.player(p.id), undefined, "dropped");
      assert.deepEqual(closed, [4009]);
      assert.deepEqual(
        sent.filter((e) => e !== "chat:message"),
        [],
        "nothing but the drop's notice",
      );
      assert.equal((await repo.load(p.id))!.character.coins, coinsBefore, "nothing written");
    });
  });
}
