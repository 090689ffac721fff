/** Structured logging (pino). Secrets are redacted by path wherever they could appear. */
import { pino, type Logger } from "pino";

export type { Logger };

/** Create the process logger (to stdout, or to `destination`: tests capture the output). */
export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({
    level,
    base: undefined,
    redact: {
      paths: [
        "token",
        "*.token",
        "authorization",
        "*.authorization",
        "headers.authorization",
        "req.headers.authorization",
        "jwtSecret",
        "*.jwtSecret",
        "adminCode",
        "*.adminCode",
        "password",
        "*.password",
        "databaseUrl",
        "*.databaseUrl",
      ],
      censor: "[redacted]",
    },
  }, destination);
}
