/**
 * Leaves written together (docs/persistence.md "Leaving"): a group commit of the saves of players who
 * leave. A leave is written at once when no group is being written; leaves that come while groups
 * are being written wait and go together in the next one, up to `LEAVE_GROUP_MAX` players a
 * transaction (the shutdown save's `CharacterStore.saveLeaving`: progress, coins, items and the close
 * of their logins in a few statements), `LEAVE_GROUP_PARALLEL` transactions at once. Two thousand
 * players who leave together (a network cut, the end of a load test) were two thousand transactions
 * of about ten round trips each on a pool of 20 connections: the last of them waited past the pool's
 * 5-second acquire time-out and failed.
 *
 * Ordering as in the batched progress save: a leaving player joins a group from a job in its storage
 * queue that ends only when the group has been written, so whatever of the player is queued later
 * comes after the write; the job is put in at once, or after the work already queued for it (a
 * batched progress save in flight, an item commit), which then runs before the player is written.
 */
import type { PlayerQueues } from "../player-queues.js";
import type { Player } from "../player.js";

/** Players a leave group writes at most (one transaction). */
export const LEAVE_GROUP_MAX = 100;
/** Leave groups written at once (the rest of the pool stays for joins, item commits and saves). */
export const LEAVE_GROUP_PARALLEL = 2;

/**
 * Writes a group (`Saving.writeLeaving`): calls `written` once the group's own write has ended
 * (committed or failed), and answers, by player, the outcome of each player it did not write: its
 * save alone (a row another transaction held; every player of a group that failed), or the fence's
 * refusal.
 */
export type WriteLeaving = (group: { players: Player[]; written: () => void }, reason: string) => Promise<Map<Player, Promise<void>>>;

interface Leaver {
  p: Player;
  /** Ends the job the leave put in the player's queue. */
  written: () => void;
  /** Settles the leave: with its group's write, or with the player's own outcome (`WriteLeaving`). */
  settle: (outcome?: Promise<void>) => void;
}

export class LeaveGroups {
  /** Leaves waiting for a group, by the reason their logins close with (a group has one). */
  private readonly waiting = new Map<string, Leaver[]>();
  private writing = 0;
  private scheduled = false;

  constructor(
    private readonly queues: PlayerQueues,
    private readonly write: WriteLeaving,
  ) {}

  /**
   * Save `p` in the next group: at once when its storage queue is idle, else once the work queued
   * for it is done (a batched progress save in flight, an item commit). Resolves when it is saved,
   * in its group or alone after it; rejects when neither could save it.
   */
  add(p: Player, reason: string): Promise<void> {
    if (this.queues.idle(p.id)) {
      const { written, saved } = this.enter(p, reason);
      void this.queues.run(p.id, () => written);
      return saved;
    }
    // The job holds the player's queue until the group's write has ended; the leave settles after
    // (a save alone instead runs in the queue once the job has ended).
    let saved!: Promise<void>;
    return this.queues
      .run(p.id, () => {
        const entered = this.enter(p, reason);
        saved = entered.saved;
        return entered.written;
      })
      .then(() => saved);
  }

  /** `p` waits for the next group: `written` when the group's write has ended, `saved` when the leave settles. */
  private enter(p: Player, reason: string): { written: Promise<void>; saved: Promise<void> } {
    let written!: () => void;
    const done = new Promise<void>((resolve) => (written = resolve));
    const saved = new Promise<void>((settle) => {
      const list = this.waiting.get(reason);
      if (list) list.push({ p, written, settle });
      else this.waiting.set(reason, [{ p, written, settle }]);
    });
    // Leaves read in the same turn of the event loop start their group together.
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => {
        this.scheduled = false;
        this.pump();
      });
    }
    return { written: done, saved };
  }

  private pump(): void {
    while (this.writing < LEAVE_GROUP_PARALLEL) {
      const next = this.take();
      if (!next) return;
      this.writing++;
      void this.writeGroup(next.leavers, next.reason).finally(() => {
        this.writing--;
        this.pump();
      });
    }
  }

  /** The first `LEAVE_GROUP_MAX` leaves of the reason that waits longest. */
  private take(): { leavers: Leaver[]; reason: string } | undefined {
    for (const [reason, list] of this.waiting) {
      const leavers = list.splice(0, LEAVE_GROUP_MAX);
      if (list.length === 0) this.waiting.delete(reason);
      return { leavers, reason };
    }
    return undefined;
  }

  private async writeGroup(leavers: Leaver[], reason: string): Promise<void> {
    // A player whose lease is lost by now is not written at all (as in every leave save).
    for (const l of leavers) {
      if (!l.p.leaseLost) continue;
      l.written();
      l.settle();
    }
    const group = leavers.filter((l) => !l.p.leaseLost);
    if (group.length === 0) return;
    const written = () => group.forEach((l) => l.written());
    try {
      const alone = await this.write({ players: group.map((l) => l.p), written }, reason);
      for (const l of group) l.settle(alone.get(l.p));
    } catch (e) {
      // (`Saving.writeLeaving` answers its failures with saves alone; this is only a last guard.)
      written();
      for (const l of group) l.settle(Promise.reject(e as Error));
    }
  }
}
