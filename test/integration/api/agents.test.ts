import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import jwt from "jsonwebtoken";
import { CharacterEntity, AgentMappingEntity } from "../../../entities/index.js";
import { xpForLevel } from "../../../src/domain/xp.js";
import { code, startApiHarness, type ApiHarness } from "../../helpers/api.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

for (const kind of storageKinds()) {
  describe(`REST agents, goals and character data (${kind.name})`, function () {
    let h: ApiHarness;
    beforeEach(async () => {
      const storage = await kind.get();
      await resetStorage(storage);
      h = await startApiHarness(storage);
    });
    afterEach(async () => h.close());

    /** An owner with a character registered as an agent. */
    async function agent() {
      const owner = await h.player();
      const r = await h.request("POST", "/api/agent/register", { token: owner.token, body: { characterId: owner.characterId } });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return { ...owner, agentId: r.body.agentId as string, agentToken: r.body.token as string, credentials: r.body };
    }

    const row = (id: string) => h.storage.orm.em.fork().findOneOrFail(CharacterEntity, { id });

    describe("/api/agent", () => {
      it("register issues a bound token that works, flags the character and points at the endpoints", async () => {
        const a = await agent();
        const c = a.credentials;
        assert.equal(c.characterId, a.characterId);
        assert.equal(c.name, a.name);
        assert.equal(c.wsUrl, h.config.publicWsUrl);
        assert.equal(c.sdkEndpoint, `${h.config.publicApiUrl}/ws`);
        const days = (Date.parse(c.expiresAt) - Date.now()) / 86_400_000;
        assert.ok(days > 29.9 && days <= 30, String(days));
        const claims = jwt.decode(c.token) as Record<string, unknown>;
        assert.equal(claims.sub, a.accountId);
        assert.equal(claims.characterId, a.characterId);
        assert.equal(claims.name, a.name);
        const mapping = await h.storage.orm.em.fork().findOneOrFail(AgentMappingEntity, { id: a.agentId });
        assert.equal(claims.jti, mapping.tokenId);
        assert.equal((await row(a.characterId)).isAgent, true);
        assert.deepEqual(h.world.callsOf("setAgentFlag"), [[a.characterId, true]], "the live player is flagged at once");

        const me = await h.request("GET", "/api/v1/player", { token: a.agentToken });
        assert.equal(me.status, 200);
        assert.equal(me.body.id, a.characterId);
        assert.equal(me.body.isAgent, true);
      });

      it("revoke stops the token at once and disconnects the agent; revoking again is 409", async () => {
        const a = await agent();
        h.world.setOnline(a.characterId);
        const r = await h.request("DELETE", `/api/agent/${a.agentId}`, { token: a.token });
        assert.equal(r.status, 200);
        assert.equal(r.body.active, false);
        assert.ok(r.body.revokedAt);
        assert.deepEqual(h.world.callsOf("disconnect"), [[a.characterId, 4003, "agent token revoked"]]);
        const after = await h.request("GET", "/api/v1/player", { token: a.agentToken });
        assert.equal(after.status, 401);
        assert.equal(code(after), "UNAUTHORIZED");
        const again = await h.request("DELETE", `/api/agent/${a.agentId}`, { token: a.token });
        assert.equal(again.status, 409);
        assert.equal(code(again), "CONFLICT");
      });

      it("registering again re-keys the agent: same id, old token refused, live connection closed", async () => {
        const a = await agent();
        h.world.setOnline(a.characterId);
        const r = await h.request("POST", "/api/agent/register", { token: a.token, body: { characterId: a.characterId } });
        assert.equal(r.status, 201);
        assert.equal(r.body.agentId, a.agentId);
        assert.equal((await h.request("GET", "/api/v1/player", { token: a.agentToken })).status, 401);
        assert.equal((await h.request("GET", "/api/v1/player", { token: r.body.token })).status, 200);
        assert.deepEqual(h.world.callsOf("disconnect"), [[a.characterId, 4003, "agent token replaced"]]);
        // A revoked agent can be registered again.
        await h.request("DELETE", `/api/agent/${a.agentId}`, { token: a.token });
        const back = await h.request("POST", "/api/agent/register", { token: a.token, body: { characterId: a.characterId } });
        assert.equal(back.status, 201);
        assert.equal((await h.request("GET", "/api/v1/player", { token: back.body.token })).status, 200);
      });

      it("lists and reads agents: the owner sees all, an agent token only itself, others nothing", async () => {
        const a = await agent();
        const second = await h.request("POST", "/api/character", { token: a.token, body: {} });
        const b = await h.request("POST", "/api/agent/register", { token: a.token, body: { characterId: second.body.id } });
        const list = await h.request("GET", "/api/agent", { token: a.token });
        assert.equal(list.status, 200);
        assert.deepEqual(
          list.body.map((x: { agentId: string }) => x.agentId),
          [a.agentId, b.body.agentId],
        );
        assert.equal(list.body[0].active, true);
        assert.equal(list.body[0].online, false);
        const own = await h.request("GET", "/api/agent", { token: a.agentToken });
        assert.deepEqual(
          own.body.map((x: { agentId: string }) => x.agentId),
          [a.agentId],
        );
        const stranger = await h.player();
        assert.deepEqual((await h.request("GET", "/api/agent", { token: stranger.token })).body, []);

        const one = await h.request("GET", `/api/agent/${a.agentId}`, { token: a.agentToken });
        assert.equal(one.status, 200);
        assert.equal(one.body.name, a.name);
        assert.equal((await h.request("GET", `/api/agent/${b.body.agentId}`, { token: a.agentToken })).status, 403);
        assert.equal((await h.request("GET", `/api/agent/${a.agentId}`, { token: stranger.token })).status, 403);
        assert.equal((await h.request("GET", `/api/agent/${randomUUID()}`, { token: a.token })).status, 404);
        assert.equal((await h.request("GET", `/api/agent/${a.agentId}`)).status, 401);
        assert.equal((await h.request("GET", `/api/agent/${a.agentId}`, { token: "not.a.token" })).status, 401);
      });

      it("register and revoke: 400, 401, 403 (another account, agent token), 404", async () => {
        const a = await agent();
        const stranger = await h.player();
        assert.equal((await h.request("POST", "/api/agent/register", { token: a.token, body: {} })).status, 400);
        assert.equal((await h.request("POST", "/api/agent/register", { body: { characterId: a.characterId } })).status, 401);
        assert.equal((await h.request("POST", "/api/agent/register", { token: stranger.token, body: { characterId: a.characterId } })).status, 403);
        assert.equal((await h.request("POST", "/api/agent/register", { token: a.agentToken, body: { characterId: a.characterId } })).status, 403);
        assert.equal((await h.request("POST", "/api/agent/register", { token: a.token, body: { characterId: randomUUID() } })).status, 404);
        assert.equal((await h.request("GET", "/api/agent")).status, 401);
        assert.equal((await h.request("DELETE", `/api/agent/${a.agentId}`)).status, 401);
        assert.equal((await h.request("DELETE", `/api/agent/${a.agentId}`, { token: stranger.token })).status, 403);
        assert.equal((await h.request("DELETE", `/api/agent/${a.agentId}`, { token: a.agentToken })).status, 403);
        assert.equal((await h.request("DELETE", `/api/agent/${randomUUID()}`, { token: a.token })).status, 404);
        assert.deepEqual(h.world.callsOf("disconnect"), []);
      });

      it("unmarking the agent flag revokes its token", async () => {
        const a = await agent();
        const r = await h.request("POST", `/api/character/${a.characterId}/agent`, { token: a.token, body: { isAgent: false } });
        assert.deepEqual(r.body, { id: a.characterId, isAgent: false, agentId: a.agentId });
        assert.equal((await h.request("GET", "/api/v1/player", { token: a.agentToken })).status, 401);
      });
    });

    describe("/api/agents/mapping/:agentId", () => {
      it("maps an agent to its character for the owner and the agent; 401, 403, 404", async () => {
        const a = await agent();
        for (const token of [a.token, a.agentToken]) {
          const r = await h.request("GET", `/api/agents/mapping/${a.agentId}`, { token });
          assert.equal(r.status, 200);
          assert.equal(r.body.characterId, a.characterId);
          assert.equal(r.body.accountId, a.accountId);
          assert.equal(r.body.characterName, a.name);
          assert.equal(r.body.active, true);
        }
        const stranger = await h.player();
        assert.equal((await h.request("GET", `/api/agents/mapping/${a.agentId}`, { token: stranger.token })).status, 403);
        assert.equal((await h.request("GET", `/api/agents/mapping/${randomUUID()}`, { token: a.token })).status, 404);
        assert.equal((await h.request("GET", `/api/agents/mapping/${a.agentId}`)).status, 401);
      });
    });

    describe("goals and pause", () => {
      const goal = (a: { agentId: string }, token: string, body: unknown) => h.request("POST", `/api/agents/${a.agentId}/goal`, { token, body });

      it("starts with no goal, unpaused", async () => {
        const a = await agent();
        const r = await h.request("GET", `/api/agents/${a.agentId}/goal`, { token: a.agentToken });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, { success: true, goal: null, goalsPaused: false, online: false });
      });

      it("the agent sets a goal from availableGoals; it is stored and applied to the world", async () => {
        const a = await agent();
        h.world.setOnline(a.characterId);
        const r = await goal(a, a.agentToken, { goalId: "woodcutting:tree", targetCount: 20 });
        assert.equal(r.status, 200);
        assert.equal(r.body.goal.type, "woodcutting");
        assert.equal(r.body.goal.description, "Chop trees");
        assert.equal(r.body.goal.target, "tree");
        assert.equal(r.body.goal.progress, 0);
        assert.equal(r.body.goal.targetCount, 20);
        assert.equal(r.body.goal.setBy, "agent");
        assert.ok(!Number.isNaN(Date.parse(r.body.goal.startedAt)));
        assert.equal(r.body.online, true);
        assert.deepEqual(h.world.callsOf("applyGoal").at(-1), [a.characterId, r.body.goal, false]);
        const stored = await row(a.characterId);
        assert.deepEqual(stored.goal, r.body.goal);
        // Progress in the running world: live-world.test.ts.
      });

      it("free-form goals need a type and a description; unavailable goal ids are 400", async () => {
        const a = await agent();
        const custom = await goal(a, a.agentToken, { type: "explore", description: "Walk to the coast", target: "saltmarsh_coast" });
        assert.equal(custom.status, 200);
        assert.equal(custom.body.goal.description, "Walk to the coast");
        for (const body of [{}, { type: "explore" }, { type: "dancing", description: "x" }, { goalId: "" }, { goalId: "woodcutting:tree", extra: 1 }]) {
          const r = await goal(a, a.agentToken, body);
          assert.equal(r.status, 400, JSON.stringify(body));
          assert.equal(code(r), "INVALID_REQUEST");
        }
        const oak = await goal(a, a.agentToken, { goalId: "woodcutting:oak_tree" });
        assert.equal(oak.status, 400);
        assert.equal(oak.body.error.details[0].field, "body.goalId");
      });

      it("stop pauses and clears; the agent's own goals are then 409 GOALS_PAUSED; the owner's clear the pause", async () => {
        const a = await agent();
        h.world.setOnline(a.characterId);
        await goal(a, a.agentToken, { goalId: "combat:goblin" });
        const stop = await h.request("POST", `/api/agents/${a.agentId}/goal/stop`, { token: a.token });
        assert.equal(stop.status, 200);
        assert.equal(stop.body.success, true);
        assert.equal(stop.body.goal, null);
        assert.equal(stop.body.goalsPaused, true);
        assert.ok(stop.body.availableGoals.length > 0);
        for (const g of stop.body.availableGoals) assert.deepEqual(Object.keys(g).sort(), ["description", "id", "type"]);
        assert.deepEqual(h.world.callsOf("applyGoal").at(-1), [a.characterId, null, true]);
        const stored = await row(a.characterId);
        assert.equal(stored.goalsPaused, true);
        assert.equal(stored.goal, null);

        const refused = await goal(a, a.agentToken, { goalId: "woodcutting:tree" });
        assert.equal(refused.status, 409);
        assert.equal(code(refused), "GOALS_PAUSED");
        assert.equal((await row(a.characterId)).goal, null);

        const owner = await goal(a, a.token, { goalId: "cooking:cook_shrimp" });
        assert.equal(owner.status, 200);
        assert.equal(owner.body.goalsPaused, false);
        assert.equal(owner.body.goal.setBy, "owner");
        assert.equal((await row(a.characterId)).goalsPaused, false);
        assert.equal((await goal(a, a.agentToken, { goalId: "woodcutting:tree" })).status, 200);
      });

      it("resume is the owner's: it unpauses and keeps the goal; an agent token gets 403", async () => {
        const a = await agent();
        await h.request("POST", `/api/agents/${a.agentId}/goal/stop`, { token: a.agentToken });
        const denied = await h.request("POST", `/api/agents/${a.agentId}/goal/resume`, { token: a.agentToken });
        assert.equal(denied.status, 403);
        const r = await h.request("POST", `/api/agents/${a.agentId}/goal/resume`, { token: a.token });
        assert.equal(r.status, 200);
        assert.deepEqual({ ...r.body, availableGoals: undefined }, { success: true, goal: null, goalsPaused: false, availableGoals: undefined });
        assert.deepEqual(h.world.callsOf("applyGoal").at(-1), [a.characterId, null, false]);
        assert.equal((await row(a.characterId)).goalsPaused, false);
        // The pause survives in storage while offline, and reads come from storage.
        await h.request("POST", `/api/agents/${a.agentId}/goal/stop`, { token: a.token });
        const g = await h.request("GET", `/api/agents/${a.agentId}/goal`, { token: a.agentToken });
        assert.equal(g.body.goalsPaused, true);
        assert.equal(g.body.online, false);
      });

      it("availableGoals follow the character's levels and the content", async () => {
        const a = await agent();
        const stop = await h.request("POST", `/api/agents/${a.agentId}/goal/stop`, { token: a.token });
        const descriptions = stop.body.availableGoals.map((g: { description: string }) => g.description);
        for (const d of ["Chop trees", "Train combat on goblins", "Cook shrimp", "Mine copper ore", "Fish for raw shrimp"]) {
          assert.ok(descriptions.includes(d), `${d} in ${descriptions.join(", ")}`);
        }
        assert.ok(!descriptions.includes("Chop oak trees"));
        assert.ok(!descriptions.includes("Train combat on ash bandits"));
        await h.storage.orm.em.fork().nativeUpdate(CharacterEntity, { id: a.characterId }, { woodcuttingLevel: 15, woodcuttingXp: xpForLevel(15) });
        const later = await h.request("POST", `/api/agents/${a.agentId}/goal/resume`, { token: a.token });
        assert.ok(
          later.body.availableGoals.some((g: { id: string; description: string }) => g.id === "woodcutting:oak_tree" && g.description === "Chop oak trees"),
        );
      });

      it("goal routes: 401, 403 for another account, 404 for an unknown agent", async () => {
        const a = await agent();
        const stranger = await h.player();
        const unknown = randomUUID();
        for (const [m, path, body] of [
          ["GET", "goal", undefined],
          ["POST", "goal", { goalId: "woodcutting:tree" }],
          ["POST", "goal/stop", undefined],
          ["POST", "goal/resume", undefined],
          ["POST", "message", { text: "hi" }],
          ["GET", "quick-actions", undefined],
        ] as const) {
          assert.equal((await h.request(m, `/api/agents/${a.agentId}/${path}`, { body })).status, 401, `${m} ${path}`);
          assert.equal((await h.request(m, `/api/agents/${a.agentId}/${path}`, { token: stranger.token, body })).status, 403, `${m} ${path}`);
          assert.equal((await h.request(m, `/api/agents/${unknown}/${path}`, { token: a.token, body })).status, 404, `${m} ${path}`);
        }
        // A token bound to another character of the same account is refused too.
        const second = await h.request("POST", "/api/character", { token: a.token, body: {} });
        const otherBound = h.token({ sub: a.accountId, characterId: second.body.id });
        assert.equal((await h.request("GET", `/api/agents/${a.agentId}/goal`, { token: otherBound })).status, 403);
      });
    });

    describe("message and quick actions", () => {
      it("delivers a private message to an online agent; offline is 409; empty text is 400", async () => {
        const a = await agent();
        const offline = await h.request("POST", `/api/agents/${a.agentId}/message`, { token: a.token, body: { text: "come home" } });
        assert.equal(offline.status, 409);
        assert.equal(code(offline), "CONFLICT");
        h.world.setOnline(a.characterId);
        await h.request("POST", `/api/agents/${a.agentId}/goal/stop`, { token: a.token });
        const r = await h.request("POST", `/api/agents/${a.agentId}/message`, { token: a.token, body: { text: "come home" } });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, { delivered: true });
        assert.deepEqual(h.world.messages, [{ characterId: a.characterId, from: { name: "Owner" }, text: "come home" }]);
        assert.equal((await h.request("POST", `/api/agents/${a.agentId}/message`, { token: a.token, body: { text: "  " } })).status, 400);
        assert.equal((await h.request("POST", `/api/agents/${a.agentId}/message`, { token: a.token, body: { text: "x".repeat(201) } })).status, 400);
      });

      it("offline: nearby things come from the content around the stored position", async () => {
        const a = await agent();
        const r = await h.request("GET", `/api/agents/${a.agentId}/quick-actions`, { token: a.agentToken });
        assert.equal(r.status, 200);
        assert.equal(r.body.source, "content");
        assert.equal(r.body.online, false);
        assert.deepEqual(r.body.position, { x: 0, y: 10, z: 0 });
        assert.ok(r.body.nearby.stations.some((s: { id: string }) => s.id === "lumbrook_bank_booth"));
        for (const list of Object.values(r.body.nearby) as { distance: number }[][]) for (const e of list) assert.ok(e.distance <= 16);
        assert.ok(r.body.availableGoals.length > 0);
        assert.equal(r.body.inventory.length, 28 - r.body.freeSlots);
        assert.ok(r.body.inventory.some((s: { itemId: string }) => s.itemId === "bronze_axe"));
        assert.equal(r.body.goalsPaused, false);
      });

      it("online: nearby things come from the world within 16 tiles", async () => {
        const a = await agent();
        const surroundings = {
          stations: [],
          resources: [{ id: "r1", type: "tree", skill: "woodcutting", x: 3, z: 3, depleted: false, distance: 3 }],
          npcs: [{ id: "n1", npcId: "goblin", name: "Goblin", x: 5, z: 1, combatLevel: 5, health: 50, distance: 5 }],
          groundItems: [],
        };
        h.world.setOnline(a.characterId, { surroundings, sync: { coins: 77 } });
        const r = await h.request("GET", `/api/agents/${a.agentId}/quick-actions`, { token: a.token });
        assert.equal(r.body.source, "live");
        assert.deepEqual(r.body.nearby, surroundings);
        assert.equal(r.body.coins, 77);
        assert.deepEqual(h.world.callsOf("surroundings"), [[a.characterId, 16]]);
      });
    });

    describe("/api/characters/:characterId", () => {
      it("skills: stored when offline, live when online; 401, 403, 404", async () => {
        const p = await h.player(undefined, "angler");
        const r = await h.request("GET", `/api/characters/${p.characterId}/skills`, { token: p.token });
        assert.equal(r.status, 200);
        assert.equal(r.body.online, false);
        assert.deepEqual(r.body.skills.fishing, { level: 10, xp: xpForLevel(10) });
        assert.equal(r.body.totalLevel, 10 + 10 + 8 + 9);
        assert.equal(r.body.combatLevel, 3);
        const live = { ...r.body.skills, fishing: { level: 11, xp: xpForLevel(11) } };
        h.world.setOnline(p.characterId, { sync: { skills: live } });
        const on = await h.request("GET", `/api/characters/${p.characterId}/skills`, { token: p.token });
        assert.equal(on.body.online, true);
        assert.equal(on.body.skills.fishing.level, 11);

        const stranger = await h.player();
        assert.equal((await h.request("GET", `/api/characters/${p.characterId}/skills`)).status, 401);
        assert.equal((await h.request("GET", `/api/characters/${p.characterId}/skills`, { token: stranger.token })).status, 403);
        assert.equal((await h.request("GET", `/api/characters/${randomUUID()}/skills`, { token: p.token })).status, 404);
      });

      it("position: stored when offline, live when online, with the area; 401, 403, 404", async () => {
        const p = await h.player();
        const r = await h.request("GET", `/api/characters/${p.characterId}/position`, { token: p.token });
        assert.equal(r.status, 200);
        assert.deepEqual(r.body, {
          characterId: p.characterId,
          online: false,
          position: { x: 0, y: 10, z: 0 },
          area: { id: "lumbrook", name: "Lumbrook", safeZone: true, pvp: false },
        });
        h.world.setOnline(p.characterId, { position: { x: -60, y: 10, z: 10 } });
        const on = await h.request("GET", `/api/characters/${p.characterId}/position`, { token: p.token });
        assert.equal(on.body.online, true);
        assert.deepEqual(on.body.position, { x: -60, y: 10, z: 10 });
        assert.equal(on.body.area.id, "greenwood");

        const stranger = await h.player();
        assert.equal((await h.request("GET", `/api/characters/${p.characterId}/position`)).status, 401);
        assert.equal((await h.request("GET", `/api/characters/${p.characterId}/position`, { token: stranger.token })).status, 403);
        assert.equal((await h.request("GET", `/api/characters/${randomUUID()}/position`, { token: p.token })).status, 404);
      });
    });
  });
}
