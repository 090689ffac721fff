/**
 * Saving: batched saves of what changed (progress, items) on SAVE_INTERVAL, the final save when a
 * player leaves, and immediate item transactions (bank, store, drop, admin) that write first and
 * change memory only once committed. Every write runs in the player's storage queue; the tick never
 * waits for one. Settlements hold a character's items (`holdItems`) while they run.
 */
import type { CharacterRepository } from "../../../entities/character-repository.js";
import type { Inventory } from "../../domain/inventory.js";
import type { Logger } from "../../logger.js";
import { refuse, refuseWith, type Refusal } from "../refusals.js";
import type { PlayerQueues } from "../persistence.js";
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
  characters: CharacterRepository;
  logger: Logger;
  /** Background database work for batched saves (WorldDeps.backgroundWork). */
  backgroundWork?: <T>(work: () => Promise<T>) => Promise<T>;
}

export class Saving {
  /** Characters whose items are held by a settlement (count): a player joining meanwhile is locked. */
  private readonly itemHolds = new Map<string, number>();

  constructor(private readonly d: SavingDeps) {}

  /** Queue a save of every player whose state changed. Never awaited by the tick. */
  saveDirty(): void {
    for (const p of this.d.players.values()) {
      if (!p.progressDirty && !p.itemsDirty) continue;
      if (p.itemsLocked) continue;
      // In the player's queue (its saves stay in order), then behind interactive database work.
      const background = this.d.backgroundWork;
      void this.d.queues.run(p.id, () => (background ? background(() => this.save(p)) : this.save(p)));
    }
  }

  /**
   * Save one player now (call it inside its queue): the one save path (`ItemSafety.save`), used by
   * the batched save, `flush` and the trade service before a settlement.
   */
  save(p: Player): Promise<void> {
    return p.safety.save((items) => this.d.characters.save(p.snapshot(items)));
  }

  /** Queue the save of a player that left, with its items, and record the end of its login. */
  saveOnLeave(p: Player, reason: string): Promise<void> {
    return this.d.queues.run(p.id, async () => {
      await this.d.characters.save(p.snapshot(true));
      if (p.loginId) await this.d.characters.recordLogout(p.loginId, reason);
    });
  }

  /**
   * Commit an item change immediately (bank, store, admin): `plan` returns the new inventory, coins
   * and bank, or why not (a refusal). The change is written in one transaction; memory is updated
   * only after it commits.
   */
  async commitItems(p: Player, plan: () => ItemChange | Refusal, onCommitted?: () => void): Promise<boolean> {
    if (p.itemsLocked || p.dead) {
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
      await this.d.queues.run(p.id, () => this.d.characters.save(p.itemsStale ? p.snapshot(false) : p.snapshotWith(next)));
      p.inventory = next.inventory;
      p.coins = next.coins;
      p.bank = next.bank;
      p.equipment = next.equipment;
      p.safety.itemsWritten();
      onCommitted?.();
      return true;
    } catch (e) {
      this.d.logger.error({ err: e, playerId: p.id }, "item transaction failed");
      refuse(p, "TRANSACTION_FAILED");
      return false;
    } finally {
      // A settlement that holds the character's items keeps them locked (`holdItems`).
      p.safety.lockWhile(this.itemHolds.has(p.id));
      p.sync();
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
