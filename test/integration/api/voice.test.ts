import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import jwt from "jsonwebtoken";
import { code, startApiHarness, type ApiHarness } from "../../helpers/api.js";
import { resetStorage, storageKinds } from "../../helpers/storage.js";

const VOICE_ENV = {
  VOICE_API_KEY: "APItestkey",
  VOICE_API_SECRET: "voice-secret-0123456789-abcdefghijklmnop",
  VOICE_URL: "wss://voice.example.test",
};

for (const kind of storageKinds()) {
  describe(`REST voice token (${kind.name})`, function () {
    describe("with voice settings", () => {
      let h: ApiHarness;
      beforeEach(async () => {
        const storage = await kind.get();
        await resetStorage(storage);
        h = await startApiHarness(storage, VOICE_ENV);
      });
      afterEach(async () => h.close());

      it("issues a LiveKit join token for the room of the character's area", async () => {
        const p = await h.player();
        const r = await h.request("POST", "/api/voice/token", { token: p.token });
        assert.equal(r.status, 200);
        assert.equal(r.body.url, VOICE_ENV.VOICE_URL);
        assert.equal(r.body.room, "area-lumbrook");
        assert.equal(r.body.identity, p.characterId);
        // Verified offline with the API secret: signature, identity, name and grants.
        const claims = jwt.verify(r.body.token, VOICE_ENV.VOICE_API_SECRET, { algorithms: ["HS256"] }) as Record<string, any>;
        assert.equal(claims.iss, VOICE_ENV.VOICE_API_KEY);
        assert.equal(claims.sub, p.characterId);
        assert.equal(claims.name, p.name);
        assert.equal(claims.video.room, "area-lumbrook");
        assert.equal(claims.video.roomJoin, true);
        assert.equal(claims.video.canPublish, true);
        assert.equal(claims.video.canSubscribe, true);
        const ttl = claims.exp - Math.floor(Date.now() / 1000);
        assert.ok(ttl > 3500 && ttl <= 3600, String(ttl));
        assert.throws(() => jwt.verify(r.body.token, "another-secret", { algorithms: ["HS256"] }));
      });

      it("uses the live position when online and the chosen character", async () => {
        const p = await h.player();
        const second = await h.request("POST", "/api/character", { token: p.token, body: {} });
        h.world.setOnline(second.body.id, { position: { x: 60, y: 10, z: 0 } });
        const r = await h.request("POST", "/api/voice/token", { token: p.token, body: { characterId: second.body.id } });
        assert.equal(r.status, 200);
        assert.equal(r.body.room, "area-saltmarsh_coast");
        assert.equal((jwt.decode(r.body.token) as Record<string, string>).sub, second.body.id);
      });

      it("answers 400, 401, 403 and 404 where they apply", async () => {
        const p = await h.player();
        const stranger = await h.player();
        assert.equal((await h.request("POST", "/api/voice/token")).status, 401);
        assert.equal((await h.request("POST", "/api/voice/token", { token: p.token, body: { room: "x" } })).status, 400);
        assert.equal((await h.request("POST", "/api/voice/token", { token: p.token, body: { characterId: stranger.characterId } })).status, 403);
        assert.equal((await h.request("POST", "/api/voice/token", { token: p.token, body: { characterId: randomUUID() } })).status, 404);
        assert.equal((await h.request("POST", "/api/voice/token", { token: h.account().token })).status, 404);
      });

      it("publishes the voice URL in /env.js", async () => {
        const text = (await h.request("GET", "/env.js")).body as string;
        assert.match(text, /"PUBLIC_VOICE_URL":"wss:\/\/voice\.example\.test"/);
        assert.ok(!text.includes(VOICE_ENV.VOICE_API_SECRET));
      });
    });

    describe("without voice settings", () => {
      let h: ApiHarness;
      beforeEach(async () => {
        const storage = await kind.get();
        await resetStorage(storage);
        h = await startApiHarness(storage);
      });
      afterEach(async () => h.close());

      it("answers 404 and publishes no voice URL", async () => {
        const p = await h.player();
        const r = await h.request("POST", "/api/voice/token", { token: p.token });
        assert.equal(r.status, 404);
        assert.equal(code(r), "NOT_FOUND");
        assert.match((await h.request("GET", "/env.js")).body as string, /"PUBLIC_VOICE_URL":null/);
      });
    });
  });
}
