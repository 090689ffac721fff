/**
 * A cache of relations (a character id to a set of character ids, such as its friends) that is
 * trusted for a time-to-live and cleared by `invalidate`. A load stores its answer only when no
 * invalidation of its key ran while it read (otherwise the answer may predate the change).
 */
export interface RelationCacheOptions {
  /** How long an entry is trusted without an invalidation. */
  ttlMs: number;
  /** Entries kept before the cache is emptied. */
  max: number;
  now: () => number;
}

export class RelationCache {
  private readonly entries = new Map<string, { ids: Set<string>; at: number }>();
  /**
   * Invalidations per key, while a load of it runs. Entries are dropped when no load of the key is
   * running.
   */
  private readonly generations = new Map<string, { gen: number; loading: number }>();

  constructor(private readonly opts: RelationCacheOptions) {}

  /** The relations of `key`: cached when fresh, else from `load` (stored unless invalidated meanwhile). */
  async get(key: string, load: () => Promise<Set<string>>): Promise<Set<string>> {
    const hit = this.entries.get(key);
    if (hit && this.opts.now() - hit.at < this.opts.ttlMs) return hit.ids;
    let g = this.generations.get(key);
    if (!g) this.generations.set(key, (g = { gen: 0, loading: 0 }));
    const gen = g.gen;
    g.loading++;
    try {
      const ids = await load();
      if (g.gen === gen) {
        if (this.entries.size >= this.opts.max) this.entries.clear();
        this.entries.set(key, { ids, at: this.opts.now() });
      }
      return ids;
    } finally {
      if (--g.loading === 0 && this.generations.get(key) === g) this.generations.delete(key);
    }
  }

  /** Forget `key`, and keep a load of it that is running from storing its answer. */
  invalidate(key: string): void {
    this.entries.delete(key);
    const g = this.generations.get(key);
    if (g) g.gen++;
  }
}
