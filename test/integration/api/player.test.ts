import assert from "node:assert/strict";
import { CharacterEntity } from "../../../entities/index.js";
import { xpForLevel } from "../../../src/domain/xp.js";
import { MAX_CHARACTERS_PER_ACCOUNT } from "../../../src/services/characters.js";
import { code, startApiHarness, uniqueName, type ApiHarness } from "../../helpers/api.js";
import { pgliteStorage, resetStorage, storageKinds } from "../../helpers/storage.js";

for (const kind of storageKinds()) {
  describe(`REST player, world, characters and templates (${kind.name})`, function () {
    let h: ApiHarness;
    beforeEach(async () => {
      const storage = await kind.get();
      await resetStorage(storage);
      h = await startApiHarness(storage);
    });
    afterEach(async () => h.close());

    describe("/api/v1/player", () => {
      it("GET answers 404 while the account has no character, and 401 without a token", async () => {
        const a = h.account();
        const r = await h.request("GET", "/api/v1/player", { token: a.token });
        assert.equal(r.status, 404);
        assert.equal(code(r), "NOT_FOUND");
        assert.equal((await h.request("GET", "/api/v1/player")).status, 401);
        assert.equal((await h.request("GET", "/api/v1/player", { token: "not.a.token" })).status, 401);
      });

      it("POST creates the character (201) with the documented defaults and the starter kit", async () => {
        const a = h.account();
        const name = uniqueName();
        const r = await h.request("POST", "/api/v1/player", { token: a.token, body: { name } });
        assert.equal(r.status, 201);
        const p = r.body;
        assert.equal(p.name, name);
        assert.equal(p.accountId, a.accountId);
        assert.deepEqual(p.position, { x: 0, y: 10, z: 0 });
        assert.equal(p.health, 100);
        assert.equal(p.maxHealth, 100);
        assert.equal(p.combatLevel, 3);
        assert.deepEqual(p.skills.attack, { level: 1, xp: 0 });
        assert.deepEqual(p.skills.constitution, { level: 10, xp: xpForLevel(10) });
        assert.equal(p.coins, h.content.starterKit.coins);
        const kitIds = h.content.starterKit.items.map((i) => i.itemId);
        assert.deepEqual([...new Set(p.inventory.map((s: { itemId: string }) => s.itemId))].sort(), [...new Set(kitIds)].sort());
        assert.equal(p.goal, null);
        assert.equal(p.goalsPaused, false);
        assert.equal(p.online, false);

        const got = await h.request("GET", "/api/v1/player", { token: a.token });
        assert.equal(got.status, 200);
        assert.deepEqual(got.body, p);
      });

      it("POST with a template applies its levels (XP at the level threshold), items and coins", async () => {
        const a = h.account();
        const r = await h.request("POST", "/api/v1/player", { token: a.token, body: { name: uniqueName(), templateId: "warrior" } });
        assert.equal(r.status, 201);
        const t = h.content.templates.get("warrior")!;
        assert.deepEqual(r.body.skills.attack, { level: 10, xp: xpForLevel(10) });
        assert.deepEqual(r.body.skills.constitution, { level: 12, xp: xpForLevel(12) });
        assert.equal(r.body.maxHealth, 120);
        assert.equal(r.body.health, 120);
        assert.ok(r.body.combatLevel > 3);
        assert.equal(r.body.coins, h.content.starterKit.coins + t.coins);
        const ids = r.body.inventory.map((s: { itemId: string }) => s.itemId);
        for (const item of t.items) assert.ok(ids.includes(item.itemId), item.itemId);
        const row = await h.storage.orm.em.fork().findOneOrFail(CharacterEntity, { id: r.body.id });
        assert.equal(row.combatLevel, r.body.combatLevel);
      });

      it("POST on an account with a character renames it (200)", async () => {
        const p = await h.player();
        const name = uniqueName("R");
        const r = await h.request("POST", "/api/v1/player", { token: p.token, body: { name } });
        assert.equal(r.status, 200);
        assert.equal(r.body.id, p.characterId);
        assert.equal(r.body.name, name);
      });

      it("POST validates the name (400 with details) and refuses a taken name regardless of case (409)", async () => {
        const a = h.account();
        for (const name of ["ab", "thirteen-char", "bad!name", "", "   "]) {
          const r = await h.request("POST", "/api/v1/player", { token: a.token, body: { name } });
          assert.equal(r.status, 400, name);
          assert.equal(code(r), "INVALID_REQUEST");
          assert.ok(r.body.error.details.some((d: { field: string }) => d.field === "body.name"));
        }
        const other = await h.player();
        const r = await h.request("POST", "/api/v1/player", { token: a.token, body: { name: other.name.toUpperCase() } });
        assert.equal(r.status, 409);
        assert.equal(code(r), "NAME_TAKEN");
      });

      it("POST refuses an unknown template (400) and unknown fields (400)", async () => {
        const a = h.account();
        const r = await h.request("POST", "/api/v1/player", { token: a.token, body: { name: uniqueName(), templateId: "wizard" } });
        assert.equal(r.status, 400);
        assert.equal(r.body.error.details[0].field, "body.templateId");
        const extra = await h.request("POST", "/api/v1/player", { token: a.token, body: { name: uniqueName(), coins: 1e6 } });
        assert.equal(extra.status, 400);
      });

      it("POST renaming while the character is in the world is 409, also while a dropped connection lingers", async () => {
        const p = await h.player();
        h.world.setOnline(p.characterId);
        const r = await h.request("POST", "/api/v1/player", { token: p.token, body: { name: uniqueName() } });
        assert.equal(r.status, 409);
        assert.equal(code(r), "CONFLICT");
        h.world.setOffline(p.characterId);
        h.world.lingering.add(p.characterId);
        assert.equal((await h.request("POST", "/api/v1/player", { token: p.token, body: { name: uniqueName() } })).status, 409);
        h.world.lingering.delete(p.characterId);
        const renamed = await h.request("POST", "/api/v1/player", { token: p.token, body: { name: uniqueName() } });
        assert.equal(renamed.status, 200);
      });

      it("POST and PATCH with the name the character already has change nothing and are allowed in the world", async () => {
        const p = await h.player();
        h.world.setOnline(p.characterId);
        const post = await h.request("POST", "/api/v1/player", { token: p.token, body: { name: p.name } });
        assert.equal(post.status, 200);
        assert.equal(post.body.name, p.name);
        const patch = await h.request("PATCH", `/api/character/${p.characterId}`, { token: p.token, body: { name: p.name } });
        assert.equal(patch.status, 200);
        assert.equal(patch.body.name, p.name);
        // Another name is a rename on either route: refused while in the world.
        assert.equal(code(await h.request("POST", "/api/v1/player", { token: p.token, body: { name: uniqueName() } })), "CONFLICT");
        assert.equal(code(await h.request("PATCH", `/api/character/${p.characterId}`, { token: p.token, body: { name: uniqueName() } })), "CONFLICT");
        h.world.setOffline(p.characterId);
      });

      it("POST: 401 without a token, 403 for another account's characterId, 404 for an unknown one, 409 NAME_TAKEN when renaming", async () => {
        const p = await h.player();
        const other = await h.player();
        assert.equal((await h.request("POST", "/api/v1/player", { body: { name: uniqueName() } })).status, 401);
        const forbidden = await h.request("POST", "/api/v1/player", { token: p.token, body: { name: uniqueName(), characterId: other.characterId } });
        assert.equal(forbidden.status, 403);
        assert.equal(code(forbidden), "FORBIDDEN");
        const unknown = await h.request("POST", "/api/v1/player", { token: p.token, body: { name: uniqueName(), characterId: "no-such-character" } });
        assert.equal(unknown.status, 404);
        assert.equal(code(unknown), "NOT_FOUND");
        const taken = await h.request("POST", "/api/v1/player", { token: p.token, body: { name: other.name.toUpperCase() } });
        assert.equal(taken.status, 409);
        assert.equal(code(taken), "NAME_TAKEN");
        assert.equal((await h.request("GET", "/api/v1/player", { token: p.token })).body.name, p.name, "nothing changed");
        assert.equal((await h.request("GET", "/api/v1/player", { token: other.token })).body.name, other.name);
      });

      it("GET answers 400 for a bad query", async () => {
        const p = await h.player();
        for (const q of ["characterId=", `characterId=${"x".repeat(129)}`, "characterId=a&characterId=b"]) {
          const r = await h.request("GET", `/api/v1/player?${q}`, { token: p.token });
          assert.equal(r.status, 400, q);
          assert.equal(code(r), "INVALID_REQUEST");
          assert.equal(r.body.error.details[0].field, "query.characterId");
        }
      });

      it("GET ?characterId= chooses the character; another account's is 403, an unknown one 404", async () => {
        const p = await h.player();
        const second = await h.request("POST", "/api/character", { token: p.token, body: { name: uniqueName() } });
        const r = await h.request("GET", `/api/v1/player?characterId=${second.body.id}`, { token: p.token });
        assert.equal(r.status, 200);
        assert.equal(r.body.id, second.body.id);
        const other = await h.player();
        assert.equal((await h.request("GET", `/api/v1/player?characterId=${other.characterId}`, { token: p.token })).status, 403);
        assert.equal((await h.request("GET", `/api/v1/player?characterId=nope`, { token: p.token })).status, 404);
      });

      it("GET answers the live state when the character is online", async () => {
        const p = await h.player();
        h.world.setOnline(p.characterId, { sync: { position: { x: 5, y: 10, z: -3 }, coins: 999, health: 40 } });
        const r = await h.request("GET", "/api/v1/player", { token: p.token });
        assert.equal(r.status, 200);
        assert.equal(r.body.online, true);
        assert.deepEqual(r.body.position, { x: 5, y: 10, z: -3 });
        assert.equal(r.body.coins, 999);
        assert.equal(r.body.health, 40);
        assert.equal(r.body.name, p.name);
      });

      it("a character-bound token reads only its own character", async () => {
        const p = await h.player();
        const second = await h.request("POST", "/api/character", { token: p.token, body: { name: uniqueName() } });
        const bound = h.token({ sub: p.accountId, characterId: second.body.id });
        const r = await h.request("GET", "/api/v1/player", { token: bound });
        assert.equal(r.body.id, second.body.id);
        assert.equal((await h.request("GET", `/api/v1/player?characterId=${p.characterId}`, { token: bound })).status, 403);
      });
    });

    describe("/api/v1/world", () => {
      it("answers the snapshot with the areas", async () => {
        const p = await h.player();
        h.world.setOnline(p.characterId, { name: p.name, position: { x: 1, y: 10, z: 2 } });
        const r = await h.request("GET", "/api/v1/world", { token: p.token });
        assert.equal(r.status, 200);
        assert.equal(r.body.tick, 42);
        assert.equal(r.body.playersOnline, 1);
        assert.equal(r.body.players[0].name, p.name);
        assert.equal(typeof r.body.npcCount, "number");
        assert.equal(r.body.areas.length, h.content.areas.length);
        assert.ok(r.body.areas.some((a: { id: string }) => a.id === "lumbrook"));
      });

      it("requires a token", async () => {
        assert.equal((await h.request("GET", "/api/v1/world")).status, 401);
      });
    });

    describe("/api/character", () => {
      it("lists, creates, reads, renames and deletes", async () => {
        const a = h.account();
        const created = await h.request("POST", "/api/character", { token: a.token, body: { name: uniqueName(), templateId: "woodsman" } });
        assert.equal(created.status, 201);
        assert.equal(created.body.skills.woodcutting.level, 10);
        const id = created.body.id;

        const list = await h.request("GET", "/api/character", { token: a.token });
        assert.equal(list.status, 200);
        assert.deepEqual(
          list.body.map((c: { id: string }) => c.id),
          [id],
        );
        assert.equal(list.body[0].online, false);
        assert.equal(list.body[0].combatLevel, 3);

        const read = await h.request("GET", `/api/character/${id}`, { token: a.token });
        assert.equal(read.status, 200);
        assert.equal(read.body.name, created.body.name);
        const me = await h.request("GET", `/api/character/me`, { token: a.token });
        assert.equal(me.body.id, id);

        const name = uniqueName("N");
        const renamed = await h.request("PATCH", `/api/character/${id}`, { token: a.token, body: { name } });
        assert.equal(renamed.status, 200);
        assert.equal(renamed.body.name, name);

        const del = await h.request("DELETE", `/api/character/${id}`, { token: a.token });
        assert.equal(del.status, 204);
        assert.equal((await h.request("GET", `/api/character/${id}`, { token: a.token })).status, 404);
        assert.deepEqual((await h.request("GET", "/api/character", { token: a.token })).body, []);
      });

      it("creates with a generated name when none is given", async () => {
        const a = h.account();
        const r = await h.request("POST", "/api/character", { token: a.token, body: {} });
        assert.equal(r.status, 201);
        assert.match(r.body.name, /^Player\d{6}$/);
      });

      it("answers 400 for bad bodies and ids", async () => {
        const p = await h.player();
        assert.equal((await h.request("POST", "/api/character", { token: p.token, body: { name: "x" } })).status, 400);
        assert.equal((await h.request("POST", "/api/character", { token: p.token, raw: "{oops" })).status, 400);
        assert.equal((await h.request("PATCH", `/api/character/${p.characterId}`, { token: p.token, body: {} })).status, 400);
        assert.equal((await h.request("POST", `/api/character/${p.characterId}/agent`, { token: p.token, body: { isAgent: "yes" } })).status, 400);
      });

      it("answers 401 without a token on every route", async () => {
        const p = await h.player();
        for (const [m, path] of [
          ["GET", "/api/character"],
          ["POST", "/api/character"],
          ["GET", `/api/character/${p.characterId}`],
          ["PATCH", `/api/character/${p.characterId}`],
          ["DELETE", `/api/character/${p.characterId}`],
          ["POST", `/api/character/${p.characterId}/agent`],
        ]) {
          const body = m === "GET" || m === "DELETE" ? undefined : { name: uniqueName() };
          assert.equal((await h.request(m!, path!, { body })).status, 401, `${m} ${path}`);
        }
      });

      it("answers 403 on another account's character and 404 on an unknown one", async () => {
        const p = await h.player();
        const other = await h.player();
        for (const [m, path, body] of [
          ["GET", `/api/character/${other.characterId}`, undefined],
          ["PATCH", `/api/character/${other.characterId}`, { name: uniqueName() }],
          ["DELETE", `/api/character/${other.characterId}`, undefined],
          ["POST", `/api/character/${other.characterId}/agent`, {}],
        ] as const) {
          assert.equal((await h.request(m, path, { token: p.token, body })).status, 403, `${m} ${path}`);
          const unknown = path.replace(other.characterId, "00000000-0000-0000-0000-000000000000");
          assert.equal((await h.request(m, unknown, { token: p.token, body })).status, 404, `${m} ${unknown}`);
        }
        // Still there.
        assert.equal((await h.request("GET", `/api/character/${other.characterId}`, { token: other.token })).status, 200);
      });

      it("answers 409 for a taken name, a rename or delete while online, and an account at its cap", async () => {
        const p = await h.player();
        const other = await h.player();
        const taken = await h.request("PATCH", `/api/character/${p.characterId}`, { token: p.token, body: { name: other.name.toLowerCase() } });
        assert.equal(taken.status, 409);
        assert.equal(code(taken), "NAME_TAKEN");
        const takenCreate = await h.request("POST", "/api/character", { token: p.token, body: { name: other.name } });
        assert.equal(code(takenCreate), "NAME_TAKEN");

        h.world.setOnline(p.characterId);
        assert.equal((await h.request("PATCH", `/api/character/${p.characterId}`, { token: p.token, body: { name: uniqueName() } })).status, 409);
        const del = await h.request("DELETE", `/api/character/${p.characterId}`, { token: p.token });
        assert.equal(del.status, 409);
        assert.equal(code(del), "CONFLICT");
        h.world.setOffline(p.characterId);
        h.world.lingering.add(p.characterId);
        assert.equal((await h.request("PATCH", `/api/character/${p.characterId}`, { token: p.token, body: { name: uniqueName() } })).status, 409);
        assert.equal((await h.request("DELETE", `/api/character/${p.characterId}`, { token: p.token })).status, 409);
        h.world.lingering.delete(p.characterId);

        for (let i = 1; i < MAX_CHARACTERS_PER_ACCOUNT; i++) {
          assert.equal((await h.request("POST", "/api/character", { token: p.token, body: {} })).status, 201);
        }
        const full = await h.request("POST", "/api/character", { token: p.token, body: {} });
        assert.equal(full.status, 409);
      });

      it("an agent token cannot create or delete characters and sees only itself", async () => {
        const p = await h.player();
        await h.request("POST", "/api/character", { token: p.token, body: {} });
        const bound = h.token({ sub: p.accountId, characterId: p.characterId });
        assert.equal((await h.request("POST", "/api/character", { token: bound, body: {} })).status, 403);
        assert.equal((await h.request("DELETE", `/api/character/${p.characterId}`, { token: bound })).status, 403);
        const list = await h.request("GET", "/api/character", { token: bound });
        assert.deepEqual(
          list.body.map((c: { id: string }) => c.id),
          [p.characterId],
        );
      });

      it("marks and unmarks a character as an agent, and tells the world at once", async () => {
        const p = await h.player();
        const r = await h.request("POST", `/api/character/${p.characterId}/agent`, { token: p.token, body: {} });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, { id: p.characterId, isAgent: true, agentId: null });
        assert.equal((await h.request("GET", `/api/character/${p.characterId}`, { token: p.token })).body.isAgent, true);
        const off = await h.request("POST", `/api/character/${p.characterId}/agent`, { token: p.token, body: { isAgent: false } });
        assert.equal(off.body.isAgent, false);
        assert.deepEqual(h.world.callsOf("setAgentFlag"), [
          [p.characterId, true],
          [p.characterId, false],
        ]);
      });

      it("creating with an unknown template is 400 INVALID_REQUEST on body.templateId, and creates nothing", async () => {
        const a = h.account();
        const r = await h.request("POST", "/api/character", { token: a.token, body: { name: uniqueName(), templateId: "no_such_template" } });
        assert.equal(r.status, 400);
        assert.equal(code(r), "INVALID_REQUEST");
        assert.equal(r.body.error.details[0].field, "body.templateId");
        assert.deepEqual((await h.request("GET", "/api/character", { token: a.token })).body, []);
      });

      it("deleting a character tells the world its friends changed", async () => {
        const a = await h.player();
        const b = await h.player();
        await h.request("POST", `/api/player/me/friend-requests`, { token: a.token, body: { characterId: b.characterId } });
        await h.request("POST", `/api/player/me/friend-requests`, { token: b.token, body: { characterId: a.characterId } });
        h.world.calls.length = 0;
        assert.equal((await h.request("DELETE", `/api/character/${a.characterId}`, { token: a.token })).status, 204);
        const [ids] = h.world.callsOf("socialChanged")[0] as [string[]];
        assert.deepEqual([...ids].sort(), [a.characterId, b.characterId].sort());
        assert.deepEqual((await h.request("GET", `/api/player/me/friends`, { token: b.token })).body, []);
      });
    });

    describe("/api/template", () => {
      it("lists and reads templates without a token; unknown is 404", async () => {
        const list = await h.request("GET", "/api/template");
        assert.equal(list.status, 200);
        assert.equal(list.body.length, h.content.templates.size);
        const warrior = await h.request("GET", "/api/template/warrior");
        assert.equal(warrior.status, 200);
        assert.equal(warrior.body.skills.attack.level, 10);
        assert.equal(warrior.body.skills.woodcutting.level, 1);
        assert.equal(warrior.body.maxHealth, 120);
        assert.ok(warrior.body.combatLevel > 3);
        const missing = await h.request("GET", "/api/template/wizard");
        assert.equal(missing.status, 404);
        assert.equal(code(missing), "NOT_FOUND");
      });
    });
  });
}

describe("REST OpenAPI document", function () {
  it("lists every route of the REST families", async () => {
    const h = await startApiHarness(await pgliteStorage());
    try {
      const doc = (await h.request("GET", "/api/openapi.json")).body;
      const expected: [string, string][] = [
        ["get", "/api/v1/player"],
        ["post", "/api/v1/player"],
        ["get", "/api/v1/world"],
        ["get", "/api/character"],
        ["post", "/api/character"],
        ["get", "/api/character/{characterId}"],
        ["patch", "/api/character/{characterId}"],
        ["delete", "/api/character/{characterId}"],
        ["post", "/api/character/{characterId}/agent"],
        ["get", "/api/template"],
        ["get", "/api/template/{templateId}"],
        ["get", "/api/player/ignores"],
        ["post", "/api/player/ignores"],
        ["delete", "/api/player/ignores/{characterId}"],
        ["get", "/api/player/{characterId}/friends"],
        ["delete", "/api/player/{characterId}/friends/{friendId}"],
        ["get", "/api/player/{characterId}/friend-requests"],
        ["post", "/api/player/{characterId}/friend-requests"],
        ["post", "/api/player/{characterId}/friend-requests/{requestId}/accept"],
        ["post", "/api/player/{characterId}/friend-requests/{requestId}/decline"],
        ["get", "/api/player/{characterId}/deaths"],
        ["get", "/api/player/{characterId}/kills"],
        ["post", "/api/agent/register"],
        ["get", "/api/agent"],
        ["get", "/api/agent/{agentId}"],
        ["delete", "/api/agent/{agentId}"],
        ["get", "/api/agents/mapping/{agentId}"],
        ["get", "/api/agents/{agentId}/goal"],
        ["post", "/api/agents/{agentId}/goal"],
        ["post", "/api/agents/{agentId}/goal/stop"],
        ["post", "/api/agents/{agentId}/goal/resume"],
        ["post", "/api/agents/{agentId}/message"],
        ["get", "/api/agents/{agentId}/quick-actions"],
        ["get", "/api/characters/{characterId}/skills"],
        ["get", "/api/characters/{characterId}/position"],
        ["post", "/api/voice/token"],
      ];
      for (const [method, path] of expected) assert.ok(doc.paths[path]?.[method], `${method.toUpperCase()} ${path}`);
      assert.ok(doc.components.schemas.Player);
    } finally {
      await h.close();
    }
  });
});
