/**
 * Entry point: parse configuration (refusing to start with one line per problem), then start the
 * server under the process lifecycle (src/lifecycle.ts): SIGTERM/SIGINT at any time, even during
 * start-up, stop gracefully and exit 0 within 10 s; an uncaught exception stops gracefully and
 * exits 1; a start-up failure prints one `start-up error:` line per problem and exits 1.
 */
import { ConfigError, loadConfig, type Config } from "./config.js";
import { startServer } from "./server/server.js";
import { createLogger } from "./logger.js";
import { runProcess, startupErrorLines } from "./lifecycle.js";

let config: Config;
try {
  config = loadConfig();
} catch (e) {
  const prefix = e instanceof ConfigError ? "config error" : "start-up error";
  for (const line of startupErrorLines(e)) console.error(`${prefix}: ${line}`);
  process.exit(1);
}
const logger = createLogger(config.logLevel);
runProcess({ logger, start: () => startServer(config, { logger }) });
