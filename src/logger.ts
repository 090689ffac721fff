/** Structured logging (pino). Secrets are redacted by path wherever they could appear. */
import { pino, type Logger } from "pino";

export type { Logger };

/** Create the process logger. */
export function createLogger(level: string): Logger {
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
  });
}
