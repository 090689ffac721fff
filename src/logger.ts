/** Structured logging (pino). Secrets are redacted by path wherever they could appear. */
import { pino, type DestinationStream, type Logger, type LoggerOptions } from "pino";

export type { Logger };

/** Create the process logger (writing to stdout unless a destination is given, as tests do). */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options: LoggerOptions<never> = {
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
  };
  return destination ? pino(options, destination) : pino(options);
}
