/**
 * Serialises every storage write of a player: batched progress saves, immediate item transactions,
 * death locks and settlements for the same character never interleave. The game loop only enqueues;
 * it never awaits.
 */
import { storageFailureLog, type Logger } from "../logger.js";
import { isLeaseLost, type LeaseLostError } from "./ports/lease-fence.js";

export class PlayerQueues {
  private readonly chains = new Map<string, Promise<unknown>>();
  private pending = 0;
  /**
   * @param onFailure told of every job that failed (metrics).
   * @param onLeaseLost told of a job the lease fence refused (docs/cluster.md "The fence"): the
   * player's lease is lost, it is dropped (`World.dropLost`), which logs it once.
   * @param isUnavailable whether a failure says storage can't answer now (`CharacterStore.isUnavailable`):
   * logged once per burst, not per job.
   */
  constructor(
    private readonly logger: Logger,
    private readonly onFailure: (() => void) | undefined,
    private readonly onLeaseLost: ((playerId: string, e: LeaseLostError) => void) | undefined,
    private readonly isUnavailable: (e: unknown) => boolean,
  ) {}

  /** Jobs queued or running, over all players. */
  get depth(): number {
    return this.pending;
  }

  /**
   * No job of this player is queued or running: a job `run` now (synchronously after this check) is
   * the first of its queue, so nothing of the player runs before or during it.
   */
  idle(playerId: string): boolean {
    return !this.chains.has(playerId);
  }

  /** Run `job` after every earlier job of this player. Resolves with its result. */
  run<T>(playerId: string, job: () => Promise<T>): Promise<T> {
    const prev = this.chains.get(playerId) ?? Promise.resolve();
    this.pending++;
    const next = prev.catch(() => undefined).then(job);
    const tail = next.catch((e) => {
      this.onFailure?.();
      if (isLeaseLost(e) && this.onLeaseLost) return this.onLeaseLost(playerId, e);
      // Storage that is down or overloaded is logged once per burst, not per job.
      if (this.isUnavailable(e)) storageFailureLog(this.logger).failure(e, { playerId });
      else this.logger.error({ err: e, playerId }, "player storage job failed");
    });
    void tail.finally(() => this.pending--);
    this.chains.set(playerId, tail);
    void tail.then(() => {
      if (this.chains.get(playerId) === tail) this.chains.delete(playerId);
    });
    return next;
  }

  /**
   * Put a job that ends when `done` settles in the queue of each of these players, as
   * `run(id, () => done)` for each would, but the idle queues (`idle`) share one chain: a batched
   * save of a few hundred players queues a few promises, not a few per player (docs/persistence.md
   * "Many players, one statement"). The shared job's outcome is not reported: `done` only orders.
   */
  holdUntil(playerIds: readonly string[], done: Promise<void>): void {
    const idle: string[] = [];
    for (const id of playerIds) {
      if (this.idle(id)) idle.push(id);
      else void this.run(id, () => done);
    }
    if (idle.length === 0) return;
    this.pending += idle.length;
    const ended = () => {
      this.pending -= idle.length;
      for (const id of idle) if (this.chains.get(id) === tail) this.chains.delete(id);
    };
    const tail: Promise<void> = done.then(ended, ended);
    for (const id of idle) this.chains.set(id, tail);
  }

  /** Run `job` holding the queues of several players (ordered by id to avoid lock cycles). */
  runMany<T>(playerIds: string[], job: () => Promise<T>): Promise<T> {
    const ids = [...new Set(playerIds)].sort();
    if (ids.length === 1) return this.run(ids[0]!, job);
    // Acquire in order: the job runs inside the innermost queue while the outer ones wait on it.
    const acquire = (i: number): Promise<T> => (i === ids.length ? job() : this.run(ids[i]!, () => acquire(i + 1)));
    return acquire(0);
  }

  /** Resolves when every queued job has finished. */
  async drain(): Promise<void> {
    while (this.chains.size > 0) await Promise.allSettled([...this.chains.values()]);
  }
}
