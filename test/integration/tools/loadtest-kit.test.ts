/**
 * The `@colyseus/loadtest` kit (docs/benchmarks.md "Load testing with @colyseus/loadtest"): bot tokens minted
 * with the server's secret, the token script, and the bot's room flow against a real server with
 * its authentication limit on (more bots than the limit's 10 attempts a minute).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { matchMaker } from "@colyseus/core";
import type { Room } from "@colyseus/sdk";
import { worldBot } from "../../../loadtest/colyseus/bot.js";
import { botToken, botTokens } from "../../../loadtest/colyseus/tokens.js";
import { verifyServerToken } from "../../../src/auth/tokens.js";
import type { GameServer } from "../../../src/server/server.js";
import { eventually } from "../../helpers/clients.js";
import { startTestServer, TEST_ENV } from "../../helpers/server.js";
import { pgliteStorage, resetStorage } from "../../helpers/storage.js";

const SECRET = TEST_ENV.JWT_SECRET!;

describe("loadtest kit (loadtest/colyseus)", function () {
  this.timeout(120_000);

  it("bot tokens are plain server tokens for <prefix>-<n>, named bot<n>, that the server's secret verifies", () => {
    const tokens = botTokens(SECRET, 3, { prefix: "run7", ttlSeconds: 600 });
    assert.equal(new Set(tokens).size, 3);
    tokens.forEach((t, n) => {
      const c = verifyServerToken(SECRET, t);
      assert.equal(c.sub, `run7-${n}`);
      assert.equal(c.name, `bot${n}`);
      assert.equal(c.roles, undefined);
      assert.equal(c.exp - c.iat, 600);
    });
    assert.throws(() => verifyServerToken("another-secret-0123456789-abcdefgh", tokens[0]!));
  });

  it("npm run loadtest:tokens prints one token per line, signed with JWT_SECRET; bad options are refused", () => {
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, JWT_SECRET: SECRET, NODE_ENV: "development" };
    const run = (args: string[]) =>
      spawnSync(process.execPath, ["node_modules/tsx/dist/cli.mjs", "loadtest/colyseus/mint-tokens.ts", ...args], { env, encoding: "utf8" });
    const ok = run(["--count", "4", "--prefix", "ci"]);
    assert.equal(ok.status, 0, ok.stderr);
    const lines = ok.stdout.trim().split("\n");
    assert.equal(lines.length, 4);
    assert.deepEqual(
      lines.map((t) => verifyServerToken(SECRET, t).sub),
      ["ci-0", "ci-1", "ci-2", "ci-3"],
    );
    for (const bad of [
      ["--count", "0"],
      ["--count", "x"],
      ["--prefix", "../x"],
      ["--hours", "-1"],
    ]) {
      const r = run(bad);
      assert.equal(r.status, 2, `${bad.join(" ")}: ${r.stdout}${r.stderr}`);
      assert.equal(r.stdout, "");
    }
  });

  describe("the bot against a running server", () => {
    let server: GameServer;
    const rooms: Room[] = [];
    before(async () => {
      await resetStorage(await pgliteStorage());
      server = await startTestServer(); // rate limits on
    });
    after(async () => {
      await Promise.allSettled(rooms.map((r) => r.leave(true)));
      await server?.close();
    });

    it("12 bots (more than the authentication limit) join the existing world room with minted tokens, walk and chat", async () => {
      const endpoint = `${server.url}/ws`;
      const lines: string[] = [];
      const settings = { tokenFor: (n: number) => botToken(SECRET, n, { prefix: "lt" }), moveEveryMs: 100, chatChance: 0.2, log: (l: string) => lines.push(l) };
      for (let clientId = 0; clientId < 12; clientId++) rooms.push(await worldBot({ endpoint, roomName: "world", clientId }, settings));
      assert.equal(server.world.players.size, 12);
      assert.ok(
        rooms.every((r) => r.roomId === rooms[0]!.roomId),
        "all in the one world room",
      );

      const start = new Map([...server.world.players.values()].map((p) => [p.id, `${p.x},${p.z}`]));
      await eventually(() => [...server.world.players.values()].every((p) => `${p.x},${p.z}` !== start.get(p.id)), "every bot moved", 30_000);
      const chats: string[] = [];
      rooms[0]!.onMessage("chat:message", (m: { text: string }) => chats.push(m.text));
      await eventually(() => chats.some((t) => /^hello from bot \d+$/.test(t)), "a bot chat line arrives", 30_000);
      assert.deepEqual(lines, [], "no bot left or failed");
    });

    it("a bot only joins rooms that exist: an unknown room name is refused and creates nothing", async () => {
      const settings = { tokenFor: (n: number) => botToken(SECRET, n, { prefix: "lt-none" }), moveEveryMs: 1000, chatChance: 0 };
      await assert.rejects(worldBot({ endpoint: `${server.url}/ws`, roomName: "nowhere", clientId: 0 }, settings));
      await assert.rejects(worldBot({ endpoint: `${server.url}/ws`, roomId: "no-such-room", clientId: 1 }, settings));
      const listed = await matchMaker.query({});
      assert.deepEqual(
        listed.map((r) => r.name),
        ["world"],
      );
    });
  });
});
