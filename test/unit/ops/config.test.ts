import assert from "node:assert/strict";
import { ConfigError, configWarnings, loadBuildEnv, loadConfig, publicAddressOf } from "../../../src/config.js";

const prodBase = {
  NODE_ENV: "production",
  DATABASE_URL: "postgres://u@db/game",
  JWT_SECRET: "a-very-long-random-production-secret-0123456789",
  ADMIN_CODE: "a-long-random-admin-code-7f3k",
};

function problems(env: NodeJS.ProcessEnv): string[] {
  try {
    loadConfig(env);
  } catch (e) {
    if (e instanceof ConfigError) return e.problems;
    throw e;
  }
  return [];
}

describe("config", () => {
  it("applies the documented defaults in development", () => {
    const c = loadConfig({});
    assert.equal(c.port, 5555);
    assert.equal(c.env, "development");
    assert.equal(c.worldDir, "world");
    assert.equal(c.manifestsDir, "world/manifests");
    assert.equal(c.saveIntervalSeconds, 60);
    assert.equal(c.tickMs, 600);
    assert.equal(c.tickPhase, "auto");
    assert.equal(c.rateLimitBlockSeconds, 60);
    assert.equal(c.publicApiUrl, "http://localhost:5555");
    assert.equal(c.publicWsUrl, "ws://localhost:5555/ws");
    assert.equal(c.agentFrameworkApiUrl, "http://localhost:4001");
    assert.equal(c.rateLimitEnabled, true);
    assert.equal(c.adminCode, "dev");
    assert.equal(c.databaseUrl, undefined);
  });

  it("has no well-known secret in development: a random JWT secret per start, the dev admin code from loopback only", () => {
    const a = loadConfig({});
    const b = loadConfig({ NODE_ENV: "development" });
    assert.equal(a.jwtSecretGenerated, true);
    assert.ok(a.jwtSecret.length >= 43, "32 random bytes");
    assert.notEqual(a.jwtSecret, b.jwtSecret, "drawn again at each start");
    assert.notEqual(a.jwtSecret, "dev-secret-do-not-use-in-production-000000");
    assert.equal(a.adminCode, "dev");
    assert.equal(a.adminCodeLoopbackOnly, true);
    const set = loadConfig({ JWT_SECRET: "a-chosen-secret-0123456789", ADMIN_CODE: "chosen" });
    assert.equal(set.jwtSecretGenerated, false);
    assert.equal(set.adminCodeLoopbackOnly, false);
    assert.ok(configWarnings(a).some((w) => /random secret/.test(w)));
    assert.ok(configWarnings(a).some((w) => /loopback/.test(w)));
  });

  it("refuses the old development JWT secret and other known defaults in every environment", () => {
    for (const NODE_ENV of ["development", "test"]) {
      assert.throws(() => loadConfig({ NODE_ENV, JWT_SECRET: "dev-secret-do-not-use-in-production-000000" }), /known default/);
    }
  });

  it("MAX_SOCKETS_PER_ADDRESS: 10 by default, a positive integer", () => {
    assert.equal(loadConfig({}).maxSocketsPerAddress, 10);
    assert.equal(loadConfig({ MAX_SOCKETS_PER_ADDRESS: "100000" }).maxSocketsPerAddress, 100000);
    assert.throws(() => loadConfig({ MAX_SOCKETS_PER_ADDRESS: "0" }), /MAX_SOCKETS_PER_ADDRESS/);
  });

  it("WORLDS: world 1 by default; unique positive integers, ascending; a bad list is one line", () => {
    assert.deepEqual(loadConfig({}).worlds, [1]);
    assert.deepEqual(loadConfig({ WORLDS: "" }).worlds, [1]);
    assert.deepEqual(loadConfig({ WORLDS: "2" }).worlds, [2]);
    assert.deepEqual(loadConfig({ WORLDS: "3, 1,2" }).worlds, [1, 2, 3]);
    for (const bad of ["0", "1,1", "a", "1,", ",2", "1;2", "-1", "1.5", "01", "1 2", "1234567"]) {
      const found = problems({ WORLDS: bad });
      assert.equal(found.length, 1, `WORLDS=${bad}: ${found.join(" | ")}`);
      assert.match(found[0]!, /^WORLDS: /);
    }
    assert.match(problems({ WORLDS: "1,2,1" })[0]!, /more than once/);
  });

  it("WORLD_MAX_PLAYERS: 5000 by default, a positive integer", () => {
    assert.equal(loadConfig({}).worldMaxPlayers, 5000);
    assert.equal(loadConfig({ WORLD_MAX_PLAYERS: "2" }).worldMaxPlayers, 2);
    assert.deepEqual(problems({ WORLD_MAX_PLAYERS: "0" }).length, 1);
  });

  it("LISTEN_BACKLOG: 4096 by default, 1 to 65535", () => {
    assert.equal(loadConfig({}).listenBacklog, 4096);
    assert.equal(loadConfig({ LISTEN_BACKLOG: "511" }).listenBacklog, 511);
    for (const bad of ["0", "65536", "many", "1.5"]) assert.throws(() => loadConfig({ LISTEN_BACKLOG: bad }), /LISTEN_BACKLOG/);
  });

  it("SEAT_RESERVATION_SECONDS: 30 by default, 1 to 600", () => {
    assert.equal(loadConfig({}).seatReservationSeconds, 30);
    assert.equal(loadConfig({ SEAT_RESERVATION_SECONDS: "15" }).seatReservationSeconds, 15);
    for (const bad of ["0", "601", "soon"]) assert.throws(() => loadConfig({ SEAT_RESERVATION_SECONDS: bad }), /SEAT_RESERVATION_SECONDS/);
  });

  it("LEASE_TTL_SECONDS: 30 by default, 2 to 3600, a bad value is one line", () => {
    assert.equal(loadConfig({}).leaseTtlSeconds, 30);
    assert.equal(loadConfig({ LEASE_TTL_SECONDS: "5" }).leaseTtlSeconds, 5);
    for (const bad of ["1", "3601", "ten", "2.5"]) {
      const found = problems({ LEASE_TTL_SECONDS: bad });
      assert.equal(found.length, 1, `LEASE_TTL_SECONDS=${bad}`);
      assert.match(found[0]!, /^LEASE_TTL_SECONDS: /);
    }
  });

  it("is frozen", () => {
    const c = loadConfig({});
    assert.throws(() => {
      (c as { port: number }).port = 1;
    });
  });

  it("accepts a complete production environment", () => {
    const c = loadConfig(prodBase);
    assert.equal(c.isProduction, true);
    assert.equal(c.databaseUrl, prodBase.DATABASE_URL);
  });

  const cases: [string, NodeJS.ProcessEnv, RegExp][] = [
    ["missing DATABASE_URL", { ...prodBase, DATABASE_URL: "" }, /DATABASE_URL is required/],
    ["missing JWT_SECRET", { ...prodBase, JWT_SECRET: undefined }, /JWT_SECRET is required/],
    ["short JWT_SECRET", { ...prodBase, JWT_SECRET: "short-secret" }, /at least 32 characters/],
    ["known default JWT_SECRET", { ...prodBase, JWT_SECRET: "dev-secret-do-not-use-in-production-000000" }, /known default/],
    ["missing ADMIN_CODE", { ...prodBase, ADMIN_CODE: undefined }, /ADMIN_CODE is required/],
    ["short ADMIN_CODE", { ...prodBase, ADMIN_CODE: "fifteen-chars-x" }, /ADMIN_CODE must be at least 16 characters/],
    ["ADMIN_CODE dev", { ...prodBase, ADMIN_CODE: "dev" }, /ADMIN_CODE is a known default/],
    ["ADMIN_CODE of the test suite", { ...prodBase, ADMIN_CODE: "Test-Admin-Code" }, /ADMIN_CODE is a known default/],
    ["ADMIN_CODE that is a known default of 16+ characters", { ...prodBase, ADMIN_CODE: "change-me-admin-code" }, /ADMIN_CODE is a known default/],
  ];
  for (const [name, env, re] of cases) {
    it(`refuses production with ${name}`, () => {
      const p = problems(env);
      assert.equal(p.length, 1, p.join("; "));
      assert.match(p[0], re);
    });
  }

  it("reports every production problem at once, one line each", () => {
    const p = problems({ NODE_ENV: "production" });
    assert.equal(p.length, 3);
  });

  it("ignores DISABLE_RATE_LIMIT in production but honours it in development", () => {
    assert.equal(loadConfig({ ...prodBase, DISABLE_RATE_LIMIT: "true" }).rateLimitEnabled, true);
    assert.equal(loadConfig({ DISABLE_RATE_LIMIT: "true" }).rateLimitEnabled, false);
  });

  it("PLAYGROUND: mounted outside production unless false; never in production", () => {
    assert.equal(loadConfig({}).playground, true);
    assert.equal(loadConfig({ PLAYGROUND: "false" }).playground, false);
    assert.equal(loadConfig({ ...prodBase, PLAYGROUND: "true" }).playground, false);
    assert.match(problems({ PLAYGROUND: "maybe" })[0], /^PLAYGROUND/);
  });

  it("rejects malformed values with the setting named", () => {
    assert.match(problems({ PORT: "abc" })[0], /^PORT/);
    assert.match(problems({ TICK_MS: "5" })[0], /^TICK_MS/);
    assert.match(problems({ NODE_ENV: "staging" })[0], /^NODE_ENV/);
    assert.match(problems({ PUBLIC_WS_URL: "ws://host/socket" })[0], /PUBLIC_WS_URL/);
    assert.match(problems({ VOICE_API_KEY: "k" })[0], /must be set together/);
  });

  it("REDIS_URL: redis:// or rediss://, with the process's own PUBLIC_WS_URL, whose address without scheme is the publicAddress", () => {
    assert.equal(loadConfig({}).cluster, undefined, "one process without REDIS_URL");
    assert.deepEqual(problems({ REDIS_URL: "http://127.0.0.1:6379", PUBLIC_WS_URL: "ws://h:1/ws" }), ["REDIS_URL must use redis:// or rediss://"]);
    assert.match(problems({ REDIS_URL: "redis://127.0.0.1:6379" })[0]!, /^PUBLIC_WS_URL is required with REDIS_URL/);
    const c = loadConfig({ REDIS_URL: "rediss://:pw@cache.internal:6380/2", PUBLIC_WS_URL: "wss://eu1.game.example/ws/" });
    assert.deepEqual(c.cluster, { redisUrl: "rediss://:pw@cache.internal:6380/2", publicAddress: "eu1.game.example/ws" });
    assert.equal(loadConfig({ REDIS_URL: "redis://r:6379", PUBLIC_WS_URL: "ws://10.0.0.5:5556/ws" }).cluster?.publicAddress, "10.0.0.5:5556/ws");
    assert.equal(publicAddressOf("ws://127.0.0.1:5555/ws"), "127.0.0.1:5555/ws");
    assert.ok(configWarnings(c).some((w) => /REDIS_URL without DATABASE_URL/.test(w)));
    assert.ok(
      !configWarnings(loadConfig({ REDIS_URL: "redis://r", PUBLIC_WS_URL: "ws://h:1/ws", DATABASE_URL: "postgres://u@db/g" })).some((w) => /REDIS_URL/.test(w)),
    );
  });

  it("accepts a 16-character ADMIN_CODE in production, and any ADMIN_CODE outside production", () => {
    assert.equal(loadConfig({ ...prodBase, ADMIN_CODE: "sixteen-chars-xy" }).adminCode, "sixteen-chars-xy");
    assert.equal(loadConfig({ ADMIN_CODE: "dev" }).adminCode, "dev");
  });

  it("reports schema problems and production problems together", () => {
    const p = problems({ ...prodBase, PORT: "abc", DATABASE_URL: undefined });
    assert.equal(p.length, 2, p.join("; "));
    assert.match(p[0]!, /^PORT: /);
    assert.match(p[1]!, /DATABASE_URL is required in production/);
    const all = problems({ NODE_ENV: "production", PORT: "abc", TICK_MS: "5", PUBLIC_WS_URL: "not a url" });
    assert.equal(all.length, 6, all.join("; "));
    for (const re of [/^PORT/, /^TICK_MS/, /^PUBLIC_WS_URL/, /DATABASE_URL/, /JWT_SECRET/, /ADMIN_CODE/]) {
      assert.ok(
        all.some((l) => re.test(l)),
        `${re} in ${all.join("; ")}`,
      );
    }
  });

  describe("identity provider", () => {
    const idp = { PUBLIC_IDP_APP_ID: "app-id", IDP_JWKS_URL: "https://idp.example/.well-known/jwks.json", IDP_ISSUER: "https://idp.example" };

    it("takes the app id, key set address and issuer together", () => {
      const c = loadConfig(idp);
      assert.deepEqual({ ...c.idp }, { appId: "app-id", appSecret: undefined, jwksUrl: idp.IDP_JWKS_URL, issuer: idp.IDP_ISSUER });
      assert.equal(loadConfig({}).idp, undefined);
    });

    it("requires IDP_JWKS_URL and IDP_ISSUER with PUBLIC_IDP_APP_ID, one line each", () => {
      assert.deepEqual(problems({ ...idp, IDP_ISSUER: undefined }), ["IDP_ISSUER is required when PUBLIC_IDP_APP_ID is set"]);
      assert.deepEqual(problems({ ...idp, IDP_ISSUER: "  " }), ["IDP_ISSUER is required when PUBLIC_IDP_APP_ID is set"]);
      assert.deepEqual(problems({ ...idp, IDP_JWKS_URL: "" }), ["IDP_JWKS_URL is required when PUBLIC_IDP_APP_ID is set"]);
      assert.equal(problems({ PUBLIC_IDP_APP_ID: "app" }).length, 2);
    });

    it("reports a malformed IDP_JWKS_URL once", () => {
      const p = problems({ ...idp, IDP_JWKS_URL: "not a url" });
      assert.equal(p.length, 1, p.join("; "));
      assert.match(p[0]!, /^IDP_JWKS_URL: /);
    });
  });

  it("TICK_PHASE: auto (default, also when empty) or off; anything else refused with the setting named", () => {
    const table: [value: string | undefined, phase: string][] = [
      [undefined, "auto"],
      ["", "auto"],
      ["auto", "auto"],
      ["off", "off"],
      [" off ", "off"],
    ];
    for (const [value, phase] of table) assert.equal(loadConfig({ TICK_PHASE: value }).tickPhase, phase, JSON.stringify(value));
    for (const bad of ["on", "OFF", "true", "0", "auto,off"]) assert.deepEqual(problems({ TICK_PHASE: bad }), ["TICK_PHASE: must be auto or off"], bad);
  });

  it("takes TICK_MS, SAVE_INTERVAL, TRUST_PROXY and RATE_LIMIT_BLOCK_SECONDS", () => {
    const c = loadConfig({ TICK_MS: "50", SAVE_INTERVAL: "5", TRUST_PROXY: "true", RATE_LIMIT_BLOCK_SECONDS: "2" });
    assert.deepEqual([c.tickMs, c.saveIntervalSeconds, c.trustProxy, c.rateLimitBlockSeconds], [50, 5, true, 2]);
  });

  describe("build steps (loadBuildEnv)", () => {
    it("parses WORLD and SKIP_ASSETS with the server's rules, into a frozen object", () => {
      const b = loadBuildEnv({});
      assert.deepEqual(b, {
        worldDir: "world",
        manifestsDir: "world/manifests",
        skipAssets: false,
        cdnPort: 8080,
        cdnHost: undefined,
        cdnUrl: undefined,
        strict: false,
      });
      assert.equal(loadBuildEnv({ PUBLIC_CDN_URL: "https://cdn.example.com/" }).cdnUrl, "https://cdn.example.com/");
      assert.equal(loadBuildEnv({ NODE_ENV: "production" }).strict, true);
      assert.equal(loadBuildEnv({ CI: "true" }).strict, true);
      assert.equal(loadBuildEnv({ PORT_CDN: "8181" }).cdnPort, 8181);
      assert.ok(Object.isFrozen(b));
      assert.equal(loadBuildEnv({ WORLD: "/srv/realm/", SKIP_ASSETS: "" }).manifestsDir, "/srv/realm/manifests");
      assert.equal(loadConfig({ WORLD: "/srv/realm/" }).manifestsDir, loadBuildEnv({ WORLD: "/srv/realm/" }).manifestsDir);
      for (const [v, skip] of [
        ["true", true],
        ["1", true],
        ["yes", true],
        ["false", false],
        ["0", false],
        ["no", false],
      ] as const)
        assert.equal(loadBuildEnv({ SKIP_ASSETS: v }).skipAssets, skip, v);
    });

    it("fails with one line per bad setting", () => {
      assert.throws(
        () => loadBuildEnv({ SKIP_ASSETS: "TRUE", WORLD: "", PORT_CDN: "http" }),
        (e: unknown) =>
          e instanceof ConfigError &&
          e.problems.length === 3 &&
          /^WORLD: /.test(e.problems[0]!) &&
          /^SKIP_ASSETS: /.test(e.problems[1]!) &&
          /^PORT_CDN: must be an integer/.test(e.problems[2]!),
      );
    });
  });
});
