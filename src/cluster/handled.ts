/**
 * Colyseus's Redis presence and driver without unhandled rejections while Redis is down
 * (docs/cluster.md "What a cluster guarantees", the row "Loses Redis").
 *
 * Colyseus calls many of their commands without waiting for them (`stats.persist()` on every room
 * join and leave and once a second, `presence.publish` of IPC and lobby messages, `driver.remove`,
 * `presence.hset` of restore lists, `presence.unsubscribe`). While Redis is down each of those
 * rejects (ioredis `MaxRetriesPerRequestError`), and nobody handles it: the chaos run logged
 * hundreds of "unhandled promise rejection" lines. Here every promise the two objects return gets a
 * handler that counts the failure in one burst log (one line per outage, as storage failures):
 * a caller that waits still gets the rejection; a caller that does not wait loses nothing it
 * would have seen.
 */
import type { Logger } from "../logger.js";
import { FailureBurstLog } from "../storage/unavailable.js";

/** The burst log of Redis commands that Colyseus's presence and driver sent and that failed. */
export function redisFailureLog(logger: Logger): FailureBurstLog {
  return new FailureBurstLog(logger, "redis unavailable: Colyseus presence and driver commands fail");
}

/**
 * Wrap every method of `target` (own and inherited, up to `Object.prototype`) on the instance, so
 * that a promise it returns always has a handler: a failure goes to `log`, a success ends its burst.
 * Returns `target`.
 */
export function handleRejections<T extends object>(target: T, log: FailureBurstLog): T {
  const names = new Set<string>();
  for (let proto = Object.getPrototypeOf(target) as object | null; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto) as object | null) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name === "constructor") continue;
      const desc = Object.getOwnPropertyDescriptor(proto, name);
      if (desc && typeof desc.value === "function") names.add(name);
    }
  }
  const obj = target as Record<string, unknown>;
  for (const name of names) {
    const method = obj[name] as (...args: unknown[]) => unknown;
    obj[name] = function (this: unknown, ...args: unknown[]) {
      const result = method.apply(target, args);
      if (result instanceof Promise) {
        result.then(
          () => log.success(),
          (e: unknown) => log.failure(e, { command: name }),
        );
      }
      return result;
    };
  }
  return target;
}
