/**
 * Changes of a stored character that need it out of the world (rename, delete), and the join
 * refusals that keep a player from being built from rows read before such a change ended.
 */
import type { CharacterRecord } from "./ports/character-store.js";
import { WorldError } from "./errors.js";
import type { PlayerQueues } from "./player-queues.js";

export class OutOfWorldGate {
  /** Characters with an out-of-world change running (count), and when the last one ended. */
  private readonly work = new Map<string, number>();
  private readonly ended = new Map<string, number>();

  constructor(
    private readonly queues: PlayerQueues,
    private readonly inWorld: (characterId: string) => boolean,
  ) {}

  /**
   * The change runs inside the character's storage queue, where joins read and build their player
   * (`CharacterResolver.resolveCharacter`): a join queued before it is in the world when it starts (the
   * change is then refused), one queued after it reads what it wrote. Joins asked for while it is
   * queued or running are refused at once (`assertMayJoin`).
   */
  async run<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    if (this.inWorld(characterId)) return { ok: false };
    this.work.set(characterId, (this.work.get(characterId) ?? 0) + 1);
    try {
      // A failed change comes back as a value: thrown, it would be logged as a failed storage job.
      const r = await this.queues.run(characterId, async (): Promise<{ ok: true; value: T } | { ok: false } | { failed: unknown }> => {
        if (this.inWorld(characterId)) return { ok: false };
        try {
          return { ok: true, value: await work() };
        } catch (e) {
          return { failed: e };
        }
      });
      if ("failed" in r) throw r.failed;
      return r;
    } finally {
      const left = this.work.get(characterId)! - 1;
      if (left > 0) this.work.set(characterId, left);
      else this.work.delete(characterId);
      const ended = performance.now();
      this.ended.set(characterId, ended);
      for (const [id, at] of this.ended) if (ended - at > 600_000) this.ended.delete(id);
    }
  }

  /**
   * Refuse a join (`CHARACTER_BUSY`, 409) while an out-of-world change of the character is queued or running, or one
   * built from a record read before such a change ended (`record.loadedAt`).
   */
  assertMayJoin(characterId: string, record?: CharacterRecord): void {
    const ended = this.ended.get(characterId);
    const stale = record !== undefined && ended !== undefined && (record.loadedAt === undefined || record.loadedAt <= ended);
    if (this.work.has(characterId) || stale) throw new WorldError("CHARACTER_BUSY", "this character is being changed; try again");
  }
}
