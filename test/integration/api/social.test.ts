import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { AccountEntity, CharacterEntity, IgnoreEntryEntity, PlayerDeathEntity } from "../../../entities/index.js";
import { MAX_FRIENDS, MAX_IGNORES, MAX_INCOMING_REQUESTS, MAX_PENDING_REQUESTS, SocialService } from "../../../src/services/social.js";
import { code, startApiHarness, type ApiHarness } from "../../helpers/api.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

for (const kind of storageKinds()) {
  describe(`REST social graph, deaths and kills (${kind.name})`, function () {
    let h: ApiHarness;
    beforeEach(async () => {
      const storage = await kind.get();
      await resetStorage(storage);
      h = await startApiHarness(storage);
    });
    afterEach(async () => h.close());

    /** `n` characters of one throwaway account, straight into storage. */
    async function bulkCharacters(n: number): Promise<string[]> {
      const em = h.storage.orm.em.fork();
      const accountId = `bulk-${randomUUID()}`;
      em.create(AccountEntity, { id: accountId, anonymous: false, roles: [] });
      const ids: string[] = [];
      for (let i = 0; i < n; i++) {
        const id = randomUUID();
        em.create(CharacterEntity, { id, accountId, name: `b${randomUUID().slice(0, 10)}` });
        ids.push(id);
      }
      await em.flush();
      return ids;
    }

    async function befriendAll(characterId: string, others: string[]) {
      const conn = h.storage.orm.em.fork().getConnection();
      for (const o of others) {
        await conn.execute("insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())", [
          characterId,
          o,
          characterId,
          o,
        ]);
      }
      h.social.invalidate([characterId, ...others]);
    }

    const send = (token: string, body: unknown, as = "me") => h.request("POST", `/api/player/${as}/friend-requests`, { token, body });
    const requests = async (token: string) => (await h.request("GET", "/api/player/me/friend-requests", { token })).body;
    const friends = async (token: string) => (await h.request("GET", "/api/player/me/friends", { token })).body;

    it("a request by name is pending, listed on both sides, and the world is told", async () => {
      const a = await h.player();
      const b = await h.player();
      const r = await send(a.token, { name: b.name.toLowerCase() });
      assert.equal(r.status, 201);
      assert.deepEqual(r.body, { status: "pending", character: { id: b.characterId, name: b.name } });
      const mine = await requests(a.token);
      assert.equal(mine.outgoing.length, 1);
      assert.deepEqual(mine.outgoing[0].to, { id: b.characterId, name: b.name });
      assert.deepEqual(mine.incoming, []);
      const theirs = await requests(b.token);
      assert.equal(theirs.incoming[0].from.id, a.characterId);
      const [ids] = h.world.callsOf("socialChanged").at(-1) as [string[]];
      assert.deepEqual([...ids].sort(), [a.characterId, b.characterId].sort());
      // Sending again changes nothing.
      assert.equal((await send(a.token, { characterId: b.characterId })).body.status, "pending");
      assert.equal((await requests(b.token)).incoming.length, 1);
    });

    it("asking someone who already asked you makes you friends at once", async () => {
      const a = await h.player();
      const b = await h.player();
      await send(b.token, { characterId: a.characterId });
      const r = await send(a.token, { characterId: b.characterId });
      assert.equal(r.status, 201);
      assert.equal(r.body.status, "friends");
      assert.deepEqual(
        (await friends(a.token)).map((f: { id: string }) => f.id),
        [b.characterId],
      );
      assert.deepEqual(
        (await friends(b.token)).map((f: { id: string }) => f.id),
        [a.characterId],
      );
      assert.deepEqual(await requests(a.token), { incoming: [], outgoing: [] });
      assert.equal(await h.social.areFriends(a.characterId, b.characterId), true);
    });

    it("accept makes friends with online status; decline and withdraw remove the request", async () => {
      const a = await h.player();
      const b = await h.player();
      const c = await h.player();
      await send(a.token, { characterId: b.characterId });
      await send(c.token, { characterId: b.characterId });
      const incoming = (await requests(b.token)).incoming as { id: number; from: { id: string } }[];
      const fromA = incoming.find((r) => r.from.id === a.characterId)!;
      const fromC = incoming.find((r) => r.from.id === c.characterId)!;

      const accepted = await h.request("POST", `/api/player/me/friend-requests/${fromA.id}/accept`, { token: b.token });
      assert.equal(accepted.status, 200);
      assert.deepEqual(accepted.body, { friend: { id: a.characterId, name: a.name } });
      h.world.setOnline(a.characterId);
      const list = await friends(b.token);
      assert.deepEqual(
        list.map((f: { id: string; online: boolean }) => [f.id, f.online]),
        [[a.characterId, true]],
      );
      assert.ok(!Number.isNaN(Date.parse(list[0].since)));

      // A request can be accepted only by its addressee.
      assert.equal((await h.request("POST", `/api/player/me/friend-requests/${fromC.id}/accept`, { token: c.token })).status, 404);
      const declined = await h.request("POST", `/api/player/me/friend-requests/${fromC.id}/decline`, { token: b.token });
      assert.equal(declined.status, 204);
      assert.deepEqual((await requests(c.token)).outgoing, []);

      await send(c.token, { characterId: a.characterId });
      const out = (await requests(c.token)).outgoing[0];
      assert.equal((await h.request("POST", `/api/player/me/friend-requests/${out.id}/decline`, { token: c.token })).status, 204);
      assert.deepEqual((await requests(a.token)).incoming, []);
      assert.equal((await h.request("POST", `/api/player/me/friend-requests/${out.id}/decline`, { token: c.token })).status, 404);
    });

    it("a request to someone who ignores you is silently dropped", async () => {
      const a = await h.player();
      const b = await h.player();
      const ignored = await h.request("POST", "/api/player/ignores", { token: b.token, body: { name: a.name } });
      assert.equal(ignored.status, 201);
      h.world.calls.length = 0;
      const r = await send(a.token, { characterId: b.characterId });
      assert.equal(r.status, 201);
      assert.deepEqual(r.body, { status: "pending", character: { id: b.characterId, name: b.name } });
      assert.deepEqual((await requests(b.token)).incoming, []);
      assert.deepEqual((await requests(a.token)).outgoing, []);
      assert.deepEqual(h.world.callsOf("socialChanged"), []);
    });

    it("removing a friend removes it for both sides", async () => {
      const a = await h.player();
      const b = await h.player();
      await send(a.token, { characterId: b.characterId });
      await send(b.token, { characterId: a.characterId });
      assert.equal(await h.social.areFriends(b.characterId, a.characterId), true);
      const r = await h.request("DELETE", `/api/player/me/friends/${b.characterId}`, { token: a.token });
      assert.equal(r.status, 204);
      assert.deepEqual(await friends(a.token), []);
      assert.deepEqual(await friends(b.token), []);
      assert.equal(await h.social.areFriends(b.characterId, a.characterId), false);
      assert.equal((await h.request("DELETE", `/api/player/me/friends/${b.characterId}`, { token: a.token })).status, 404);
      const [ids] = h.world.callsOf("socialChanged").at(-1) as [string[]];
      assert.deepEqual([...ids].sort(), [a.characterId, b.characterId].sort());
    });

    it("already friends is 409", async () => {
      const a = await h.player();
      const b = await h.player();
      await send(a.token, { characterId: b.characterId });
      await send(b.token, { characterId: a.characterId });
      const r = await send(a.token, { name: b.name });
      assert.equal(r.status, 409);
      assert.equal(code(r), "CONFLICT");
    });

    it("caps friends at 99: sending and accepting with a full list are 409", async () => {
      const full = await h.player();
      await befriendAll(full.characterId, await bulkCharacters(MAX_FRIENDS));
      assert.equal((await friends(full.token)).length, MAX_FRIENDS);
      const x = await h.player();
      const tooMany = await send(full.token, { characterId: x.characterId });
      assert.equal(tooMany.status, 409);

      // x asks the full player, which cannot accept; nor can x become friends by asking back.
      await send(x.token, { characterId: full.characterId });
      const req = (await requests(full.token)).incoming[0];
      const accept = await h.request("POST", `/api/player/me/friend-requests/${req.id}/accept`, { token: full.token });
      assert.equal(accept.status, 409);
      assert.equal((await friends(x.token)).length, 0);
    });

    it("ignore list: add by id or name, list, remove; dropping pending requests; the cache follows", async () => {
      const a = await h.player();
      const b = await h.player();
      await send(b.token, { characterId: a.characterId });
      assert.equal(await h.social.isIgnoring(a.characterId, b.characterId), false);

      const added = await h.request("POST", "/api/player/ignores", { token: a.token, body: { characterId: b.characterId } });
      assert.equal(added.status, 201);
      assert.deepEqual(added.body, { id: b.characterId, name: b.name });
      assert.equal(await h.social.isIgnoring(a.characterId, b.characterId), true);
      assert.equal(await h.social.isIgnoring(b.characterId, a.characterId), false);
      assert.deepEqual((await requests(a.token)).incoming, []);
      const [ids] = h.world.callsOf("socialChanged").at(-1) as [string[]];
      assert.ok(ids.includes(a.characterId) && ids.includes(b.characterId));

      const again = await h.request("POST", "/api/player/ignores", { token: a.token, body: { name: b.name } });
      assert.equal(again.status, 201);
      const list = await h.request("GET", "/api/player/ignores", { token: a.token });
      assert.deepEqual(
        list.body.map((e: { id: string }) => e.id),
        [b.characterId],
      );

      const removed = await h.request("DELETE", `/api/player/ignores/${b.characterId}`, { token: a.token });
      assert.equal(removed.status, 204);
      assert.equal(await h.social.isIgnoring(a.characterId, b.characterId), false);
      assert.equal((await h.request("DELETE", `/api/player/ignores/${b.characterId}`, { token: a.token })).status, 404);
    });

    it("ignores are per account: every character of the account ignores the player", async () => {
      const a = await h.player();
      const second = await h.request("POST", "/api/character", { token: a.token, body: {} });
      const b = await h.player();
      await h.request("POST", "/api/player/ignores", { token: a.token, body: { characterId: b.characterId } });
      assert.equal(await h.social.isIgnoring(second.body.id, b.characterId), true);
      assert.equal((await send(b.token, { characterId: second.body.id })).body.status, "pending");
      assert.deepEqual((await h.request("GET", `/api/player/${second.body.id}/friend-requests`, { token: a.token })).body.incoming, []);
    });

    it("the cache is invalidated by changes made through another service instance only on invalidate()", async () => {
      const a = await h.player();
      const b = await h.player();
      const other = new SocialService(h.storage);
      assert.equal(await h.social.isIgnoring(a.characterId, b.characterId), false);
      await other.addIgnore(a.accountId, { id: b.characterId });
      assert.equal(await h.social.isIgnoring(a.characterId, b.characterId), false, "served from the cache");
      h.social.invalidate([a.characterId]);
      assert.equal(await h.social.isIgnoring(a.characterId, b.characterId), true);
    });

    it("caps pending outgoing friend requests at 99 (409); an answer frees a place", async () => {
      const a = await h.player();
      const targets = await bulkCharacters(MAX_PENDING_REQUESTS);
      const conn = h.storage.orm.em.fork().getConnection();
      for (const t of targets) {
        await conn.execute("insert into friend_requests (from_character, to_character, created_at) values (?, ?, now())", [a.characterId, t]);
      }
      assert.equal((await requests(a.token)).outgoing.length, MAX_PENDING_REQUESTS);
      const b = await h.player();
      const r = await send(a.token, { characterId: b.characterId });
      assert.equal(r.status, 409);
      assert.equal(code(r), "CONFLICT");
      assert.deepEqual((await requests(b.token)).incoming, []);
      const first = (await requests(a.token)).outgoing[0];
      assert.equal((await h.request("POST", `/api/player/me/friend-requests/${first.id}/decline`, { token: a.token })).status, 204);
      assert.equal((await send(a.token, { characterId: b.characterId })).status, 201);
    });

    it("caps pending incoming friend requests at 100 (409 FRIEND_REQUESTS_FULL) and pages both lists by cursor", async () => {
      const b = await h.player();
      const senders = await bulkCharacters(MAX_INCOMING_REQUESTS);
      const conn = h.storage.orm.em.fork().getConnection();
      for (const s of senders) {
        await conn.execute("insert into friend_requests (from_character, to_character, created_at) values (?, ?, now())", [s, b.characterId]);
      }
      const a = await h.player();
      const r = await send(a.token, { characterId: b.characterId });
      assert.equal(r.status, 409);
      assert.equal(code(r), "FRIEND_REQUESTS_FULL");
      // Pages of 30: every request once, in order, the cursor absent on the last page.
      const seen: string[] = [];
      let after = 0;
      for (let pages = 0; ; pages++) {
        assert.ok(pages < 10, "ends");
        const page = await h.request("GET", `/api/player/me/friend-requests?limit=30&incomingAfter=${after}`, { token: b.token });
        assert.equal(page.status, 200);
        assert.ok(page.body.incoming.length <= 30);
        seen.push(...page.body.incoming.map((x: { from: { id: string } }) => x.from.id));
        if (page.body.incomingNext === undefined) break;
        after = page.body.incomingNext;
      }
      assert.deepEqual(seen, senders, "every sender once, oldest first");
      assert.equal((await h.request("GET", "/api/player/me/friend-requests?limit=101", { token: b.token })).status, 400);
      // An answer frees a place.
      const first = (await requests(b.token)).incoming[0];
      assert.equal((await h.request("POST", `/api/player/me/friend-requests/${first.id}/decline`, { token: b.token })).status, 204);
      assert.equal((await send(a.token, { characterId: b.characterId })).status, 201);
    });

    it("an agent (character-bound) token cannot change the account's ignore list (403) but can read it", async () => {
      const a = await h.player();
      const b = await h.player();
      const c = await h.player();
      const bound = h.token({ sub: a.accountId, characterId: a.characterId });
      await h.request("POST", "/api/player/ignores", { token: a.token, body: { characterId: b.characterId } });
      const add = await h.request("POST", "/api/player/ignores", { token: bound, body: { characterId: c.characterId } });
      assert.equal(add.status, 403);
      assert.equal(code(add), "FORBIDDEN");
      const remove = await h.request("DELETE", `/api/player/ignores/${b.characterId}`, { token: bound });
      assert.equal(remove.status, 403);
      const list = await h.request("GET", "/api/player/ignores", { token: bound });
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.map((i: { id: string }) => i.id),
        [b.characterId],
        "nothing changed",
      );
    });

    it("caps ignores at 99 (409)", async () => {
      const a = await h.player();
      const em = h.storage.orm.em.fork();
      for (const id of await bulkCharacters(MAX_IGNORES)) em.create(IgnoreEntryEntity, { accountId: a.accountId, ignoredCharacterId: id });
      await em.flush();
      const b = await h.player();
      const r = await h.request("POST", "/api/player/ignores", { token: a.token, body: { characterId: b.characterId } });
      assert.equal(r.status, 409);
      assert.equal(code(r), "CONFLICT");
    });

    it("answers 400 for bad bodies, self-targets and bad request ids", async () => {
      const a = await h.player();
      const b = await h.player();
      for (const body of [{}, { name: b.name, characterId: b.characterId }, { name: "" }, { nick: "x" }]) {
        const r = await send(a.token, body);
        assert.equal(r.status, 400, JSON.stringify(body));
        assert.equal(code(r), "INVALID_REQUEST");
      }
      assert.equal((await send(a.token, { characterId: a.characterId })).status, 400);
      assert.equal((await h.request("POST", "/api/player/ignores", { token: a.token, body: { characterId: a.characterId } })).status, 400);
      assert.equal((await h.request("POST", "/api/player/ignores", { token: a.token, body: {} })).status, 400);
      assert.equal((await h.request("POST", "/api/player/me/friend-requests/abc/accept", { token: a.token })).status, 400);
      assert.equal((await h.request("POST", "/api/player/me/friend-requests/0/decline", { token: a.token })).status, 400);
    });

    it("answers 401 without a token on every social route", async () => {
      for (const [m, path] of [
        ["GET", "/api/player/ignores"],
        ["POST", "/api/player/ignores"],
        ["DELETE", "/api/player/ignores/x"],
        ["GET", "/api/player/me/friends"],
        ["DELETE", "/api/player/me/friends/x"],
        ["GET", "/api/player/me/friend-requests"],
        ["POST", "/api/player/me/friend-requests"],
        ["POST", "/api/player/me/friend-requests/1/accept"],
        ["POST", "/api/player/me/friend-requests/1/decline"],
        ["GET", "/api/player/me/deaths"],
        ["GET", "/api/player/me/kills"],
      ]) {
        assert.equal((await h.request(m!, path!)).status, 401, `${m} ${path}`);
      }
    });

    it("answers 403 on another account's character and 404 on unknown characters and targets", async () => {
      const a = await h.player();
      const b = await h.player();
      for (const [m, path] of [
        ["GET", `/api/player/${b.characterId}/friends`],
        ["GET", `/api/player/${b.characterId}/friend-requests`],
        ["POST", `/api/player/${b.characterId}/friend-requests`],
        ["POST", `/api/player/${b.characterId}/friend-requests/1/accept`],
        ["POST", `/api/player/${b.characterId}/friend-requests/1/decline`],
        ["DELETE", `/api/player/${b.characterId}/friends/${a.characterId}`],
        ["GET", `/api/player/${b.characterId}/deaths`],
        ["GET", `/api/player/${b.characterId}/kills`],
      ]) {
        const body = m === "POST" && path!.endsWith("requests") ? { characterId: a.characterId } : undefined;
        assert.equal((await h.request(m!, path!, { token: a.token, body })).status, 403, `${m} ${path}`);
        const unknown = path!.replace(b.characterId, randomUUID());
        assert.equal((await h.request(m!, unknown, { token: a.token, body })).status, 404, `${m} ${unknown}`);
      }
      const noSuchName = await send(a.token, { name: "Nobody Here" });
      assert.equal(noSuchName.status, 404);
      assert.equal((await send(a.token, { characterId: randomUUID() })).status, 404);
      assert.equal((await h.request("POST", "/api/player/ignores", { token: a.token, body: { name: "Nobody Here" } })).status, 404);
      assert.equal((await h.request("POST", "/api/player/me/friend-requests/999/accept", { token: a.token })).status, 404);
      // An account without characters has no `me`.
      assert.equal((await h.request("GET", "/api/player/me/friends", { token: h.account().token })).status, 404);
    });

    it("lists deaths and NPC kills", async () => {
      const a = await h.player();
      await h.characters.repo.recordKill(a.characterId, "goblin");
      await h.characters.repo.recordKill(a.characterId, "goblin");
      await h.characters.repo.recordKill(a.characterId, "chicken");
      const em = h.storage.orm.em.fork();
      em.create(PlayerDeathEntity, { id: randomUUID(), characterId: a.characterId, positionX: 3, positionZ: 4, killedBy: "goblin", resolvedAt: new Date() });
      await em.flush();

      const kills = await h.request("GET", `/api/player/${a.characterId}/kills`, { token: a.token });
      assert.equal(kills.status, 200);
      assert.equal(kills.body.total, 3);
      assert.deepEqual(
        kills.body.kills.map((k: { npcId: string; name: string; count: number }) => [k.npcId, k.name, k.count]),
        [
          ["goblin", "Goblin", 2],
          ["chicken", "Chicken", 1],
        ],
      );
      const deaths = await h.request("GET", `/api/player/me/deaths`, { token: a.token });
      assert.equal(deaths.status, 200);
      assert.equal(deaths.body.length, 1);
      assert.deepEqual(deaths.body[0].position, { x: 3, z: 4 });
      assert.equal(deaths.body[0].killedBy, "goblin");
      assert.equal(deaths.body[0].resolved, true);
    });
  });
}
