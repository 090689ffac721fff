import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "../../src/config.js";

const prodBase = {
  NODE_ENV: "production",
  DATABASE_URL: "postgres://u@db/game",
  JWT_SECRET: "a-very-long-random-production-secret-0123456789",
  ADMIN_CODE: "admin-code-xyz",
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
  it("applies SPEC.md defaults in development", () => {
    const c = loadConfig({});
    assert.equal(c.port, 5555);
    assert.equal(c.env, "development");
    assert.equal(c.worldDir, "world");
    assert.equal(c.manifestsDir, "world/manifests");
    assert.equal(c.saveIntervalSeconds, 60);
    assert.equal(c.tickMs, 600);
    assert.equal(c.rateLimitBlockSeconds, 60);
    assert.equal(c.publicApiUrl, "http://localhost:5555");
    assert.equal(c.publicWsUrl, "ws://localhost:5555/ws");
    assert.equal(c.agentFrameworkApiUrl, "http://localhost:4001");
    assert.equal(c.rateLimitEnabled, true);
    assert.equal(c.adminCode, "dev");
    assert.equal(c.databaseUrl, undefined);
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

  it("rejects malformed values with the setting named", () => {
    assert.match(problems({ PORT: "abc" })[0], /^PORT/);
    assert.match(problems({ TICK_MS: "5" })[0], /^TICK_MS/);
    assert.match(problems({ NODE_ENV: "staging" })[0], /^NODE_ENV/);
    assert.match(problems({ PUBLIC_WS_URL: "ws://host/socket" })[0], /PUBLIC_WS_URL/);
    assert.match(problems({ VOICE_API_KEY: "k" })[0], /must be set together/);
    assert.match(problems({ PUBLIC_IDP_APP_ID: "app" })[0], /IDP_JWKS_URL/);
  });

  it("takes TICK_MS, SAVE_INTERVAL, TRUST_PROXY and RATE_LIMIT_BLOCK_SECONDS", () => {
    const c = loadConfig({ TICK_MS: "50", SAVE_INTERVAL: "5", TRUST_PROXY: "true", RATE_LIMIT_BLOCK_SECONDS: "2" });
    assert.deepEqual([c.tickMs, c.saveIntervalSeconds, c.trustProxy, c.rateLimitBlockSeconds], [50, 5, true, 2]);
  });
});
