/**
 * Saving: batched saves of what changed (progress, items) on SAVE_INTERVAL, the final save when a
 * player leaves, and immediate item transactions (bank, store, drop, admin) that write first and
 * change memory only once committed. Every write runs in the player's storage queue; the tick never
 * waits for one. Settlements hold a character's items (`holdItems`) while they run. Players whose
 * only change is progress are saved many to one statement (docs/persistence.md "Batched saves").
 */
import type { Inventory } from "../../domain/inventory.js";
import { storageFailureLog, type Logger } from "../../logger.js";
import { PROGRESS_BATCH_MAX, type CharacterStore, type TransactionStep } from "../ports/character-store.js";
import { isLeaseLost, LeaseLostError } from "../ports/lease-fence.js";
import { PileGoneError } from "../ports/world-state-store.js";
import { ItemSafety } from "../item-safety.js";
import { LeaveGroups } from "./leave-groups.js";
import { refuse, refuseWith, type Refusal } from "../refusals.js";
import type { PlayerQueues } from "../player-queues.js";
import type { Player } from "../player.js";

/** What an immediate item transaction writes (each field absent: unchanged). */
export interface ItemChange {
  inventory?: Inventory;
  coins?: number;
  bank?: Map<string, number>;
  equipment?: Player["equipment"];
}

function isRefusal(r: ItemChange | Refusal): r is Refusal {
  return "code" in r;
}

export interface SavingDeps {
  players: ReadonlyMap<string, Player>;
  queues: PlayerQueues;
  characters: CharacterStore;
  logger: Logger;
  /** Background database work for batched saves (WorldDeps.backgroundWork). */
  backgroundWork?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Told of `players` saves that failed in a batched progress save (metrics; each queue job's failure is counted by the queues). */
  onBatchFailure?: (players: number) => void;
  /** A player's write was refused by the lease fence (`World.dropLost`). */
  leaseLost?: (p: Player, why: string) => void;
  /** Waits between attempts of a leave save that failed on a transient error (default `LEAVE_SAVE_BACKOFF_MS`). */
  leaveRetryMs?: readonly number[];
}

/**
 * Waits between the attempts of a leave save that failed on a transient storage error (a dropped
 * connection, a lock or statement time-out, a serialization failure): five more attempts over
 * about 8 s, while the process lives and the lease is still its own (the fence refuses it
 * otherwise). docs/persistence.md "Leaving".
 */
export const LEAVE_SAVE_BACKOFF_MS: readonly number[] = [250, 500, 1_000, 2_000, 4_000];

export class Saving {
  /** Characters whose items are held by a settlement (count): a player joining meanwhile is locked. */
  private readonly itemHolds = new Map<string, number>();
  /** Players whose last batched progress save failed: saved one at a time until a save succeeds. */
  private readonly alone = new WeakSet<Player>();
  /** Shutdown has begun (`stopRetrying`): a failed leave save is not retried. */
  private stopping = false;
  /** Leaves written together (`saveOnLeave`). */
  private readonly leaves: LeaveGroups;

  constructor(private readonly d: SavingDeps) {
    this.leaves = new LeaveGroups(d.queues, (group, reason) => this.writeLeaving(group, reason));
  }

  /**
   * Queue a save of every player whose state changed. Never awaited by the tick. A player whose only
   * change is progress, with nothing in its storage queue, joins a batched progress save
   * (`saveProgressBatch`); any other is saved alone, in its queue.
   */
  saveDirty(): void {
    const batch: Player[] = [];
    for (const p of this.d.players.values()) {
      if (!p.progressDirty && !p.itemsDirty) continue;
      if (p.itemsLocked) continue;
      if (!p.itemsDirty && !this.alone.has(p) && this.d.queues.idle(p.id)) {
        batch.push(p);
        continue;
      }
      // In the player's queue (its saves stay in order), then behind interactive database work.
      void this.d.queues.run(p.id, () => this.background(() => this.save(p)));
    }
    for (let i = 0; i < batch.length; i += PROGRESS_BATCH_MAX) this.saveProgressBatch(batch.slice(i, i + PROGRESS_BATCH_MAX));
  }

  /**
   * Save the progress of `players` in one statement, as one background job (at most
   * `PROGRESS_BATCH_MAX` players; `saveDirty` checked that each one's queue is idle).
   *
   * Ordering: a job is put in every player's queue now, synchronously with that check, so it is the
   * first job of each queue, and it ends only when the batch has been written (or failed). So
   * nothing else of these players — a save on leaving, an item transaction, a death, a settlement, a
   * join reading the row — runs before or during the batch: whatever they write comes after it, as
   * with one save per player. The batch itself waits for nothing but a background slot and the
   * database, never for a queue, so holding several queues at once can't deadlock (a queue that
   * was not idle would make it wait behind that queue's jobs: such a player is saved alone).
   */
  private saveProgressBatch(players: readonly Player[]): void {
    let written!: () => void;
    const done = new Promise<void>((resolve) => (written = resolve));
    this.d.queues.holdUntil(
      players.map((p) => p.id),
      done,
    );
    void this.background(() => this.writeProgressBatch(players)).then(written, written);
  }

  /** The write of a batched progress save: flags as `ItemSafety.saveProgressTogether`; a failure is logged once. */
  private async writeProgressBatch(players: readonly Player[]): Promise<void> {
    try {
      await ItemSafety.saveProgressTogether(
        players.map((p) => p.safety),
        async () => {
          const { fenced } = await this.d.characters.saveProgress(players.map((p) => p.snapshot(false)));
          // Refused by the fence, row by row (the others are written): those players' leases are lost.
          for (const id of fenced) {
            const p = players.find((q) => q.id === id);
            if (p) this.d.leaseLost?.(p, "a batched save was refused by the lease fence");
          }
        },
      );
    } catch (e) {
      // Every player got its progress flag back: the next interval saves it again, alone, so one
      // row the statement can't write (a check, a held lock) never keeps the others from saving.
      for (const p of players) this.alone.add(p);
      this.d.onBatchFailure?.(players.length);
      const context = { players: players.length, firstPlayerId: players[0]?.id };
      if (this.d.characters.isUnavailable(e)) storageFailureLog(this.d.logger).failure(e, context);
      else this.d.logger.error({ err: e, ...context }, "batched progress save failed; its players will be saved one at a time");
    }
  }

  private background<T>(work: () => Promise<T>): Promise<T> {
    return this.d.backgroundWork ? this.d.backgroundWork(work) : work();
  }

  /**
   * Save one player now (call it inside its queue): the one save path (`ItemSafety.save`), used by
   * the batched save, `flush` and the trade service before a settlement.
   */
  async save(p: Player): Promise<void> {
    await p.safety.save((items) => this.d.characters.save(p.snapshot(items)));
    this.alone.delete(p);
  }

  /**
   * Save a player that left, with its items, and close its login, in a leave group after whatever
   * storage work is queued for it (`LeaveGroups`, docs/persistence.md "Leaving"). Resolves when it is
   * saved.
   */
  saveOnLeave(p: Player, reason: string): Promise<void> {
    return this.leaves.add(p, reason);
  }

  /**
   * Queue the save of a player that left, alone, with its items, and record the end of its login. A
   * save that fails on a transient error is tried again (`LEAVE_SAVE_BACKOFF_MS`) unless shutdown
   * has begun; a player whose lease is lost is not written at all.
   */
  private saveAlone(p: Player, reason: string): Promise<void> {
    return this.d.queues.run(p.id, async () => {
      const waits = this.d.leaveRetryMs ?? LEAVE_SAVE_BACKOFF_MS;
      for (let attempt = 0; ; attempt++) {
        if (p.leaseLost) return;
        try {
          await this.d.characters.save(p.snapshot(true));
          break;
        } catch (e) {
          if (isLeaseLost(e) || !this.d.characters.isTransient(e) || this.stopping || attempt >= waits.length) throw e;
          this.d.logger.warn({ playerId: p.id, attempt: attempt + 1, err: e }, "leave save failed; trying again");
          await new Promise((resolve) => setTimeout(resolve, waits[attempt]));
        }
      }
      if (p.loginId) await this.d.characters.recordLogout(p.loginId, reason);
    });
  }

  /** Shutdown: leave saves are no longer retried (shutdown has its own budget). */
  stopRetrying(): void {
    this.stopping = true;
  }

  /**
   * Save players that left at shutdown (docs/persistence.md "Shutdown"): `batch` players a
   * transaction (`CharacterStore.saveLeaving`: progress, coins, items and the close of their
   * logins, a few statements for the whole batch), `parallel` transactions at once on the pool.
   * Ordering as in `saveProgressBatch`: a player whose queue is idle gets a job now that ends when its
   * batch was written, so whatever else of it is queued later comes after; a player with storage
   * work queued or running is saved alone, after it (`saveAlone`). A batch that fails is logged
   * once and its players saved one at a time.
   */
  async saveLeavingTogether(all: readonly Player[], reason: string, batch: number, parallel: number): Promise<void> {
    // A player whose lease is lost is not written at all (as in `saveAlone`).
    const players = all.filter((p) => !p.leaseLost);
    const together = players.filter((p) => this.d.queues.idle(p.id));
    // (A failure is logged by the player's queue; the promises are awaited only at the end.)
    const batched = new Set(together);
    const alone = players.filter((p) => !batched.has(p)).map((p) => this.saveAlone(p, reason).catch(() => undefined));
    const batches: { players: Player[]; written: () => void }[] = [];
    for (let i = 0; i < together.length; i += batch) {
      const chunk = together.slice(i, i + batch);
      let written!: () => void;
      const done = new Promise<void>((resolve) => (written = resolve));
      for (const p of chunk) void this.d.queues.run(p.id, () => done);
      batches.push({ players: chunk, written });
    }
    // Saves of players the batches could not take (a row another transaction held, a batch that
    // failed) run alone, after their batch, while the workers go on with the next batches.
    const later: Promise<void>[] = [];
    let next = 0;
    const worker = async () => {
      while (next < batches.length) later.push(...(await this.writeLeaving(batches[next++]!, reason)).values());
    };
    await Promise.all(Array.from({ length: Math.min(parallel, batches.length) }, worker));
    await Promise.allSettled([...alone, ...later]);
  }

  /**
   * One batch of `saveLeavingTogether` or leave group (`LeaveGroups`). @returns, by player, the
   * outcome of each player the batch did not write: its save alone (a row another transaction held;
   * every player of a batch that failed), started after the batch's queue jobs ended (a failure is
   * logged by the player's queue), or the fence's refusal (a `LeaseLostError`), each marked handled.
   */
  private async writeLeaving(b: { players: Player[]; written: () => void }, reason: string): Promise<Map<Player, Promise<void>>> {
    try {
      const { fenced, busy } = await this.d.characters.saveLeaving(
        b.players.map((p) => ({ snapshot: p.snapshot(true), loginId: p.loginId })),
        reason,
      );
      b.written();
      // Rows another transaction held (a settlement waiting on a lock): saved alone, after it.
      const outcomes = this.eachAlone(
        b.players.filter((p) => busy?.includes(p.id)),
        reason,
      );
      // Refused by the fence (the others are written): those players' leases are lost.
      for (const id of fenced) {
        const p = b.players.find((q) => q.id === id);
        if (!p) continue;
        this.d.leaseLost?.(p, "a leave save was refused by the lease fence");
        const refused = Promise.reject(new LeaseLostError([p.id], [p.fence?.epoch]));
        refused.catch(() => undefined);
        outcomes.set(p, refused);
      }
      return outcomes;
    } catch (e) {
      b.written();
      const context = { players: b.players.length, firstPlayerId: b.players[0]?.id };
      if (this.d.characters.isUnavailable(e)) storageFailureLog(this.d.logger).failure(e, context);
      else this.d.logger.error({ err: e, ...context }, "batched leave save failed; its players will be saved one at a time");
      return this.eachAlone(b.players, reason);
    }
  }

  /** `saveAlone` of each player, by player (each marked handled: its queue logs a failure). */
  private eachAlone(players: readonly Player[], reason: string): Map<Player, Promise<void>> {
    const saves = new Map<Player, Promise<void>>();
    for (const p of players) {
      const save = this.saveAlone(p, reason);
      save.catch(() => undefined);
      saves.set(p, save);
    }
    return saves;
  }

  /**
   * Commit an item change immediately (bank, store, admin): `plan` returns the new inventory, coins
   * and bank, or why not (a refusal). The change is written in one transaction; memory is updated
   * only after it commits. `groundStep` stores or deletes the ground piles the change puts down or
   * takes (a drop, a pickup) in that same transaction (docs/persistence.md "Ground piles"); such a
   * change is refused while the player's items can't be trusted (they would not be written).
   */
  async commitItems(
    p: Player,
    plan: () => ItemChange | Refusal,
    onCommitted?: () => void,
    groundStep?: TransactionStep,
    readBack?: () => Promise<void>,
  ): Promise<boolean> {
    if (p.itemsLocked || p.dead || (groundStep && p.itemsStale)) {
      refuse(p, "ITEMS_LOCKED");
      return false;
    }
    const result = plan();
    if (isRefusal(result)) {
      refuseWith(p, result);
      return false;
    }
    p.safety.lock();
    const next = {
      inventory: result.inventory ?? p.inventory,
      coins: result.coins ?? p.coins,
      bank: result.bank ?? p.bank,
      equipment: result.equipment ?? p.equipment,
    };
    try {
      // Items that can't be trusted are never written (`ItemSafety.stale`).
      await this.d.queues.run(p.id, () => this.d.characters.save(p.itemsStale ? p.snapshot(false) : p.snapshotWith(next), groundStep));
      p.inventory = next.inventory;
      p.coins = next.coins;
      p.bank = next.bank;
      p.equipment = next.equipment;
      p.safety.itemsWritten();
      onCommitted?.();
      return true;
    } catch (e) {
      if (e instanceof PileGoneError) {
        refuse(p, "NO_SUCH_TARGET", "That item is gone.");
        return false;
      }
      // A refusal of the fence is logged once, by the player's drop (`World.dropLost`).
      if (!isLeaseLost(e)) {
        this.d.logger.error({ err: e, playerId: p.id }, "item transaction failed");
        await this.readBackItems(p, readBack);
      }
      refuse(p, "TRANSACTION_FAILED");
      return false;
    } finally {
      // A settlement that holds the character's items keeps them locked (`holdItems`).
      p.safety.lockWhile(this.itemHolds.has(p.id));
      p.sync();
    }
  }

  /**
   * After an item transaction failed without a known outcome (its COMMIT's answer may have been
   * lost with the connection, docs/persistence.md "Unknown outcomes"): memory follows storage. The
   * player's items and coins are read back from what committed, in its queue, and `readBack`
   * reconciles what else the transaction touched (a drop's or pickup's pile). If the read fails too,
   * the items in memory are marked untrusted and never written again; the next join reloads them.
   * Unsaved item changes of the player (gathering, eating since the last save) are given up: storage
   * wins, so nothing is written twice or lost from it.
   */
  private async readBackItems(p: Player, readBack?: () => Promise<void>): Promise<void> {
    if (p.itemsStale || p.leaseLost) return;
    try {
      await this.d.queues.run(p.id, async () => {
        const record = await this.d.characters.load(p.id);
        if (!record) return;
        p.loadItems(record, record.character.coins);
        p.safety.itemsWritten();
        await readBack?.();
      });
    } catch (e) {
      p.safety.markStale();
      this.d.logger.error({ err: e, playerId: p.id }, "items not read back after a failed item transaction; they are not written again until the next join");
    }
  }

  /**
   * Hold the items of characters while a trade settles: their players — the ones here now and any
   * that joins before `release` — are locked (`itemsLocked`), so no item change (bank, store, use,
   * gathering, kill coins, pickup) is planned from items the settlement is about to replace. The
   * settlement unlocks the players it refreshed; `release` (idempotent) ends the hold itself.
   */
  holdItems(characterIds: readonly string[]): () => void {
    for (const id of characterIds) {
      this.itemHolds.set(id, (this.itemHolds.get(id) ?? 0) + 1);
      const p = this.d.players.get(id);
      if (p) p.safety.lock();
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const id of characterIds) {
        const left = this.itemHolds.get(id)! - 1;
        if (left > 0) this.itemHolds.set(id, left);
        else this.itemHolds.delete(id);
      }
    };
  }

  /** Is a settlement holding the character's items (`holdItems`)? */
  itemsHeld(characterId: string): boolean {
    return this.itemHolds.has(characterId);
  }
}
