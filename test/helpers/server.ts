/** Start the real server on a free port for a test, with an environment the test controls. */
import { loadConfig, type Config } from "../../src/config.js";
import { startServer, type GameServer } from "../../src/server/server.js";
import { createLogger } from "../../src/logger.js";
import { pgliteStorage } from "./storage.js";
import type { Storage } from "../../src/storage/orm.js";

/** The environment tests run with unless they override it. */
export const TEST_ENV: NodeJS.ProcessEnv = {
  NODE_ENV: "test",
  JWT_SECRET: "test-secret-0123456789-abcdefghijkl",
  ADMIN_CODE: "test-admin-code",
  TICK_MS: "50",
  SKIP_MANIFESTS: "false",
  WORLD: "world",
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? "silent",
  // Every test client connects from 127.0.0.1; the cap's own test sets a small one.
  MAX_SOCKETS_PER_ADDRESS: "1000",
  // Every test client matchmakes from 127.0.0.1, many with one account; the limits' own test sets small ones.
  MATCHMAKE_PER_MINUTE: "100000",
  MATCHMAKE_PER_ACCOUNT_PER_MINUTE: "100000",
};

export function testConfig(overrides: NodeJS.ProcessEnv = {}): Config {
  return loadConfig({ ...TEST_ENV, ...overrides });
}

/** Start a server on an ephemeral port using the shared test storage (or the one given). */
export async function startTestServer(overrides: NodeJS.ProcessEnv = {}, storage?: Storage): Promise<GameServer> {
  const config = testConfig(overrides);
  return startServer(config, {
    storage: storage ?? (await pgliteStorage()),
    port: 0,
    host: "127.0.0.1",
    logger: createLogger(config.logLevel),
  });
}
