/**
 * Entry point: parse configuration (refusing to start with one line per problem), start the
 * server, and shut down gracefully on SIGTERM/SIGINT (exit 0 within 10 s).
 */
import { ConfigError, loadConfig } from "./config.js";
import { startServer } from "./server.js";
import { createLogger } from "./logger.js";

let config;
try {
  config = loadConfig();
} catch (e) {
  if (e instanceof ConfigError) {
    for (const p of e.problems) console.error(`config error: ${p}`);
    process.exit(1);
  }
  throw e;
}
const logger = createLogger(config.logLevel);
process.on("unhandledRejection", (reason) => logger.error({ err: reason }, "unhandled promise rejection"));

const server = await startServer(config, { logger }).catch((e) => {
  logger.fatal({ err: e }, "start-up failed");
  process.exit(1);
});

let stopping = false;
const stop = (signal: string) => {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "signal received");
  const force = setTimeout(() => {
    logger.error("shutdown took longer than 10 s; exiting");
    process.exit(1);
  }, 10_000);
  force.unref();
  server
    .close()
    .then(() => process.exit(0))
    .catch((e) => {
      logger.error({ err: e }, "shutdown failed");
      process.exit(1);
    });
};
process.on("SIGTERM", () => stop("SIGTERM"));
process.on("SIGINT", () => stop("SIGINT"));
