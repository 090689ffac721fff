/**
 * A player's item-safety state, and the only code that writes it: whether its items may change now
 * (`locked` while an immediate transaction, a death or a settlement runs), what changed since the
 * last save (`itemsDirty`, `progressDirty`), and whether the items in memory can be trusted at all
 * (`stale`: a trade's outcome could not be confirmed; they are never written again, and the player
 * reloads on its next join). `save` is the one save path of the world and the trade service
 * (`saveProgressTogether` its form for a batch of players' progress).
 */
export class ItemSafety {
  #locked = false;
  #itemsDirty = false;
  #stale = false;
  #progressDirty = false;

  /** An immediate item transaction (bank, store, trade settlement, death) is running. */
  get locked(): boolean {
    return this.#locked;
  }
  /** Items or coins changed since the last save. */
  get itemsDirty(): boolean {
    return this.#itemsDirty;
  }
  /** The items and coins in memory may differ from storage. */
  get stale(): boolean {
    return this.#stale;
  }
  /** Position, health, XP or goal changed since the last save. */
  get progressDirty(): boolean {
    return this.#progressDirty;
  }

  lock(): void {
    this.#locked = true;
  }
  unlock(): void {
    this.#locked = false;
  }
  /** Locked exactly while `held` (a settlement still holds the character's items). */
  lockWhile(held: boolean): void {
    this.#locked = held;
  }
  /** Items or coins changed in memory: the next save writes them. */
  itemsChanged(): void {
    this.#itemsDirty = true;
  }
  /** Position, health, XP or goal changed: the next save writes them. */
  progressChanged(): void {
    this.#progressDirty = true;
  }
  /** Storage holds the items memory holds (an immediate transaction committed them). */
  itemsWritten(): void {
    this.#itemsDirty = false;
  }
  /** Memory now holds the items storage wrote (a death's transaction): trusted and saved. */
  itemsRestored(): void {
    this.#itemsDirty = false;
    this.#stale = false;
  }
  /** The items in memory can no longer be trusted: never write them again. */
  markStale(): void {
    this.#stale = true;
  }

  /**
   * The one save path: take the dirty flags, `write` (with the items when they changed), and give
   * the flags back if the write fails, so the next save tries again. Run it in the player's
   * storage queue.
   */
  async save(write: (includeItems: boolean) => Promise<void>): Promise<void> {
    const items = this.#itemsDirty;
    const progress = this.#progressDirty;
    this.#itemsDirty = false;
    this.#progressDirty = false;
    try {
      await write(items);
    } catch (e) {
      if (items) this.#itemsDirty = true;
      if (progress) this.#progressDirty = true;
      throw e;
    }
  }

  /**
   * The same save path for the progress of several players written together (a batched progress
   * save, docs/persistence.md "Batched saves"): take every player's progress flag, `write`, and give
   * every one its flag back if the write fails. Items flags stay as they are: such a write holds no
   * items, so changed items are written by a later save.
   */
  static async saveProgressTogether(all: readonly ItemSafety[], write: () => Promise<void>): Promise<void> {
    const taken = all.map((s) => {
      const was = s.#progressDirty;
      s.#progressDirty = false;
      return was;
    });
    try {
      await write();
    } catch (e) {
      all.forEach((s, i) => {
        if (taken[i]) s.#progressDirty = true;
      });
      throw e;
    }
  }
}
