/**
 * Gives the `pg` pool back a connection whose server side went away while it was checked out
 * (docs/persistence.md "Cut database connections").
 *
 * MikroORM 7 runs transactions through Kysely's controlled transactions, which hand the connection
 * back to the pool only after a successful COMMIT or ROLLBACK (and never when BEGIN fails). When a
 * backend is terminated (`pg_terminate_backend`, `idle_in_transaction_session_timeout`, a server
 * restart) mid-transaction, both fail, and the `pg` client stays checked out for good: the pool
 * counts it in use, every later query waits for a slot that never frees, and storage stays down
 * although the server is fine. This guard watches checked-out clients: one whose connection ended
 * is released with an error (the pool discards it and opens a fresh one for the next query), and
 * the release its holder may still make later becomes a no-op.
 */
import type { EventEmitter } from "node:events";

/** The parts of a `pg` client the guard uses. */
interface PooledClient extends EventEmitter {
  release: (err?: Error | boolean) => void;
}

/** The parts of a `pg` pool the guard uses. */
interface GuardedPool {
  on(event: "acquire", listener: (client: PooledClient) => void): unknown;
  on(event: "release", listener: (err: Error | undefined, client: PooledClient) => void): unknown;
}

/** True once a client's connection ended (`pg` sets `_ending` on `end()`, `_ended` when the socket closed). */
const ended = (client: PooledClient): boolean => {
  const c = client as unknown as { _ended?: boolean; _ending?: boolean; _queryable?: boolean };
  return c._ended === true || c._queryable === false;
};

/**
 * Install the guard on `pool` (MikroORM's `driverOptions.onPoolCreated`). `onReclaim` is told of
 * each connection given back this way.
 */
export function guardPool(pool: GuardedPool, onReclaim: () => void = () => {}): void {
  const checkedOut = new Map<PooledClient, () => void>();
  const reclaim = (client: PooledClient) => {
    if (!checkedOut.has(client)) return;
    const release = client.release;
    // The holder's own release (after its failed query) must not throw "already released".
    client.release = () => {};
    release(new Error("database connection ended while checked out"));
    onReclaim();
  };
  pool.on("acquire", (client) => {
    const onEnd = () => reclaim(client);
    checkedOut.set(client, () => client.removeListener("end", onEnd));
    client.once("end", onEnd);
    // `pg-pool` sets the client's release right after emitting "acquire".
    queueMicrotask(() => {
      if (ended(client)) reclaim(client);
    });
  });
  pool.on("release", (_err, client) => {
    checkedOut.get(client)?.();
    checkedOut.delete(client);
  });
}
