/**
 * Bounded concurrency for database work, with priorities, so background writes (the batched
 * progress saves) never take every pool connection while players are joining or creating
 * characters (docs/operations.md "When the server is busy").
 *
 * - `interactive` work (joins, character creations) may hold up to `max - 1` slots and is served
 *   first;
 * - `background` work (saves) holds at most `background` slots, and only one while interactive
 *   work is waiting. One slot is always left to background work, so a save that a join waits for
 *   (the join runs in the character's storage queue, behind its save) always makes progress: the
 *   two priorities can never wait on each other in a cycle.
 *
 * Work that waits here holds nothing (no connection): it starts when a slot is free. Nothing is
 * refused or timed out here; the admission gates in front of interactive work bound how much of it
 * there is and how long it may wait.
 */

export type DbPriority = "interactive" | "background";

export interface DbWorkLimiterOptions {
  /** Slots in all (the size of the connection pool). */
  max: number;
  /** Slots background work may hold at once (SAVE_CONCURRENCY). */
  background: number;
}

export interface DbWorkStats {
  interactive: number;
  background: number;
  waitingInteractive: number;
  waitingBackground: number;
}

export class DbWorkLimiter {
  private readonly max: number;
  private readonly maxInteractive: number;
  private readonly maxBackground: number;
  private running = { interactive: 0, background: 0 };
  private readonly waiting: Record<DbPriority, (() => void)[]> = { interactive: [], background: [] };

  constructor(opts: DbWorkLimiterOptions) {
    this.max = Math.max(2, Math.floor(opts.max));
    this.maxInteractive = this.max - 1;
    this.maxBackground = Math.max(1, Math.min(Math.floor(opts.background), this.max));
  }

  /** Run `work` when a slot of its priority is free; resolves or rejects with its outcome. */
  async run<T>(priority: DbPriority, work: () => Promise<T>): Promise<T> {
    if (!this.mayStart(priority)) await new Promise<void>((resolve) => this.waiting[priority].push(resolve));
    else this.running[priority]++;
    try {
      return await work();
    } finally {
      this.running[priority]--;
      this.dispatch();
    }
  }

  /** Interactive work: a join or a character creation (served first). */
  interactive<T>(work: () => Promise<T>): Promise<T> {
    return this.run("interactive", work);
  }

  /** Background work: a batched save. */
  background<T>(work: () => Promise<T>): Promise<T> {
    return this.run("background", work);
  }

  get stats(): DbWorkStats {
    return {
      interactive: this.running.interactive,
      background: this.running.background,
      waitingInteractive: this.waiting.interactive.length,
      waitingBackground: this.waiting.background.length,
    };
  }

  private get total() {
    return this.running.interactive + this.running.background;
  }

  private mayStart(priority: DbPriority): boolean {
    if (this.total >= this.max) return false;
    if (priority === "interactive") return this.running.interactive < this.maxInteractive;
    const cap = this.waiting.interactive.length > 0 ? 1 : this.maxBackground;
    return this.running.background < cap;
  }

  /** Hand free slots to waiters, interactive first. A woken waiter counts as running at once. */
  private dispatch() {
    for (const priority of ["interactive", "background"] as const) {
      const queue = this.waiting[priority];
      while (queue.length > 0 && this.mayStart(priority)) {
        this.running[priority]++;
        queue.shift()!();
      }
    }
  }
}
