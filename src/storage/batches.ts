/**
 * Statements of concurrent joins sent together (docs/persistence.md "Joins together"). A crowd that
 * joins at once asks for the same few statements per join (the account's first character, the
 * lease, the load, the login); sent one by one, writing them to PostgreSQL's socket was a sixth of
 * the server's main thread while 2,000 clients joined (`npm run bench:world -- --crowd --bots 2000
 * --cpu-prof <dir>`). Here each kind of statement has at most one batch in flight (unless it waits
 * longer than MAX_HOLD_MS): what is asked meanwhile waits for it and goes with the next, as one
 * statement over an array of keys. A request that finds nothing in flight goes at the end of the
 * event loop's turn (`setImmediate`), with what the turn's other callbacks asked: on a busy main
 * thread a turn runs many sockets' callbacks (in the crowd of 2,000, batches of about 3 where
 * waiting only for the microtasks made them of 1.3–1.9), and on an idle one it comes at once.
 */
import DataLoader from "dataloader";

/** At most this many keys in one statement. */
export const MAX_BATCH = 128;
/**
 * A batch in flight longer than this no longer holds back the next: a statement that waits (a lease
 * row locked by a stalled process's transaction, a saturated database) delays the joins batched
 * with it, not every later one.
 */
export const MAX_HOLD_MS = 100;

/**
 * `run` of one key, batched: the keys asked while a batch is in flight go together, in the order
 * asked, as the next `run` (once it is answered, or `holdMs` after it was sent). `run` answers each
 * key at its position, a value or an `Error` (that key's failure alone); a `run` that throws fails
 * the whole batch. The same key may be asked twice in one batch (`uniqueRounds` when that matters).
 */
export function batchedInFlight<K, V>(
  run: (keys: readonly K[]) => Promise<readonly (V | Error)[]>,
  { max = MAX_BATCH, holdMs = MAX_HOLD_MS }: { max?: number; holdMs?: number } = {},
): (key: K) => Promise<V> {
  let idle: Promise<void> = Promise.resolve();
  const loader = new DataLoader<K, V, K>(
    (keys) => {
      const done = run(keys);
      let timer: NodeJS.Timeout | undefined;
      const held = new Promise<void>((resolve) => (timer = setTimeout(resolve, holdMs)));
      const answered = done.then(
        () => clearTimeout(timer),
        () => clearTimeout(timer),
      );
      idle = Promise.race([answered, held]);
      return done;
    },
    { cache: false, maxBatchSize: max, batchScheduleFn: (dispatch) => void idle.then(() => setImmediate(dispatch)) },
  );
  return (key) => loader.load(key);
}

/**
 * The positions of `keys` in rounds with no key twice in one round, the first occurrences first:
 * for statements whose rows must not share a key (an upsert's conflict target, a login that closes
 * the character's earlier ones), run one round after the other.
 */
export function uniqueRounds<K>(keys: readonly K[], keyOf: (k: K) => string): number[][] {
  const rounds: number[][] = [];
  const seen = new Map<string, number>();
  keys.forEach((k, i) => {
    const key = keyOf(k);
    const round = seen.get(key) ?? 0;
    seen.set(key, round + 1);
    (rounds[round] ??= []).push(i);
  });
  return rounds;
}
