/**
 * Queries on characters that mean something in the game: create with the starter kit, load a
 * whole player record, save progress, and the immediate item transactions. Each public method is
 * its own unit of work on a fresh entity manager.
 */
import { randomUUID } from "node:crypto";
import { LockMode } from "@mikro-orm/core";
import type { SqlEntityManager } from "@mikro-orm/sql";
import { AccountEntity } from "../../../entities/account.js";
import { PlayerLoginEntity, PlayerDeathEntity, NpcKillEntity } from "../../../entities/activity.js";
import { BankItemEntity, CharacterEntity, EquipmentItemEntity, InventoryItemEntity, type Character } from "../../../entities/character.js";
import type {
  CharacterStore,
  DeathRecovery,
  LeaveBatchResult,
  LeaveSave,
  NewDeath,
  ProgressBatchResult,
  ProgressSnapshot,
  CharacterProgress,
  ItemRows,
  LoadedRecord,
  SkillColumns,
} from "../../world/ports/character-store.js";
import { isUniqueViolation } from "../errors.js";
import { HOLD_LEASE_SQL, LeaseLostError, type LeaseFence } from "../fence.js";
import type { Orm } from "../orm.js";
import { isStorageUnavailable } from "../unavailable.js";
import { runStep, type TransactionStep } from "../world-state.js";
import { bankDropped } from "./death-bank.js";
import { JoinStatements } from "./join-statements.js";
import { writeLeaveBatch } from "./leave-batch.js";
import { progressData, writeProgressBatch } from "./progress.js";

export type { CharacterProgress, DeathRecovery, ItemRows, ProgressBatchResult, ProgressSnapshot, SkillColumns };

/** A character record as storage reads it: the whole stored row, and whether a death lock is open. */
export interface CharacterRecord extends LoadedRecord {
  character: Character;
}

export interface NewCharacter {
  accountId: string;
  name?: string;
  isAgent?: boolean;
  skills?: SkillColumns;
  coins: number;
  inventory: { slot: number; itemId: string; quantity: number }[];
  position?: { x: number; y: number; z: number };
  /**
   * The account may own at most this many characters: checked in the creating transaction with the
   * account row locked, so concurrent creations for one account can never pass it together.
   */
  maxPerAccount?: number;
}

/** Thrown when the account already owns `NewCharacter.maxPerAccount` characters. */
export class AccountFullError extends Error {
  constructor(readonly max: number) {
    super(`an account may own at most ${max} characters`);
  }
}

/** Thrown when a character name is taken (case-insensitive). */
export class NameTakenError extends Error {
  constructor(name: string) {
    super(`the name "${name}" is taken`);
  }
}

/**
 * The world's `CharacterStore` (src/world/ports/character-store.ts) on PostgreSQL, and the
 * character queries of the REST services (create, find, list, names).
 */
export class CharacterRepository implements CharacterStore {
  /** What joins read and write, batched across concurrent joins. */
  private readonly joins: JoinStatements;

  constructor(private readonly orm: Orm) {
    this.joins = new JoinStatements(orm);
  }

  private fork(): SqlEntityManager {
    return this.orm.em.fork() as SqlEntityManager;
  }

  /** Create a character with its starting items. A generated name is used when none is given. */
  async create(spec: NewCharacter): Promise<Character> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const name = spec.name ?? `Player${Math.floor(100000 + Math.random() * 900000)}`;
      try {
        return await this.fork().transactional(async (em) => {
          await em
            .createQueryBuilder(AccountEntity)
            .insert({ id: spec.accountId, anonymous: false, roles: [], createdAt: new Date() })
            .onConflict("id")
            .ignore()
            .execute();
          if (spec.maxPerAccount !== undefined) {
            // The account row lock serialises creations for one account: the count below is exact.
            await em.findOne(AccountEntity, { id: spec.accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
            if ((await em.count(CharacterEntity, { accountId: spec.accountId })) >= spec.maxPerAccount) throw new AccountFullError(spec.maxPerAccount);
          }
          const data: Record<string, unknown> = {
            id: randomUUID(),
            accountId: spec.accountId,
            name,
            isAgent: spec.isAgent ?? false,
            coins: spec.coins,
          };
          for (const [skill, s] of Object.entries(spec.skills ?? {})) {
            data[`${skill}Level`] = s.level;
            data[`${skill}Xp`] = s.xp;
          }
          if (spec.position) Object.assign(data, { positionX: spec.position.x, positionY: spec.position.y, positionZ: spec.position.z });
          const c = em.create(CharacterEntity, data as never);
          for (const row of spec.inventory) em.create(InventoryItemEntity, { characterId: c.id, ...row });
          await em.flush();
          return c;
        });
      } catch (e) {
        if (!isUniqueViolation(e)) throw e;
        if (spec.name !== undefined) throw new NameTakenError(spec.name);
      }
    }
    throw new Error("could not generate a free character name");
  }

  async findById(id: string): Promise<Character | null> {
    return this.fork().findOne(CharacterEntity, { id });
  }

  async listByAccount(accountId: string): Promise<Character[]> {
    return this.fork().find(CharacterEntity, { accountId }, { orderBy: { createdAt: "asc", id: "asc" } });
  }

  /**
   * The oldest character of an account (`listByAccount`'s first): one indexed row, no entity built.
   * Every join without a character id asks it; the entity read was about 5 % of a crowd's join
   * phase. Batched across concurrent joins (`JoinStatements`).
   */
  firstOfAccount(accountId: string): Promise<string | undefined> {
    return this.joins.firstOfAccount(accountId);
  }

  async isNameTaken(name: string, exceptId?: string): Promise<boolean> {
    const rows = await this.fork().getConnection().execute<{ id: string }[]>("select id from characters where lower(name) = lower(?)", [name]);
    return rows.some((r) => r.id !== exceptId);
  }

  /**
   * Load a character with its inventory, equipment and bank, and whether a death lock of it is
   * open, in one statement (`loadCharacters`), batched across concurrent loads (`JoinStatements`).
   */
  load(id: string): Promise<CharacterRecord | null> {
    return this.joins.load(id);
  }

  /** Item rows of a character as committed (one read each; `load` has them in its one statement). */
  async itemRows(em: SqlEntityManager, characterId: string): Promise<ItemRows> {
    const [inv, eq, bank] = await Promise.all([
      em.find(InventoryItemEntity, { characterId }, { orderBy: { slot: "asc" } }),
      em.find(EquipmentItemEntity, { characterId }),
      em.find(BankItemEntity, { characterId }, { orderBy: { itemId: "asc" } }),
    ]);
    return {
      inventory: inv.map((r) => ({ slot: r.slot, itemId: r.itemId, quantity: r.quantity })),
      equipment: Object.fromEntries(eq.map((r) => [r.slotType, { itemId: r.itemId, quantity: r.quantity }])),
      bank: bank.map((r) => ({ itemId: r.itemId, quantity: r.quantity })),
    };
  }

  /**
   * Save one player's progress (and its items when present) in one transaction. `groundStep` runs in
   * the same transaction after the snapshot: the ground piles a drop stores or a pickup takes
   * (docs/persistence.md "Ground piles"); when it throws, nothing is written.
   */
  async save(s: ProgressSnapshot, groundStep?: TransactionStep): Promise<void> {
    await this.fork().transactional(async (em) => {
      await this.writeSnapshot(em, s);
      if (groundStep) await runStep(groundStep, em);
    });
  }

  /**
   * Save the progress of several players (no items, no coins) in one statement
   * (`writeProgressBatch`, at most `PROGRESS_BATCH_MAX` of them): the rows updated, and the
   * characters the fence refused.
   */
  async saveProgress(rows: readonly CharacterProgress[]): Promise<ProgressBatchResult> {
    return writeProgressBatch(this.orm, rows);
  }

  /**
   * Check the lease fence inside an open transaction and hold it until commit (docs/cluster.md
   * "The fence"). @throws LeaseLostError (the transaction must roll back) when it changed hands.
   */
  async holdLease(em: SqlEntityManager, characterId: string, fence: LeaseFence | undefined): Promise<void> {
    if (!fence) return;
    const rows = await em.getConnection().execute(HOLD_LEASE_SQL, [characterId, fence.owner, fence.epoch], "all", em.getTransactionContext());
    if (rows.length === 0) throw new LeaseLostError([characterId], [fence.epoch]);
  }

  /**
   * Save the whole state of several characters that leave (a leave group, a shutdown batch), and close their logins, in
   * one transaction (`writeLeaveBatch`, at most `LEAVE_BATCH_MAX`), each under its fence.
   * @returns the characters written and those the fence refused (nothing written for them).
   */
  async saveLeaving(saves: readonly LeaveSave[], reason: string): Promise<LeaveBatchResult> {
    return writeLeaveBatch(this.orm, saves, reason);
  }

  /**
   * Write a snapshot inside an open transaction: the fence first (`holdLease`), then the character
   * row locked so it never interleaves with a settlement touching the same character.
   */
  async writeSnapshot(em: SqlEntityManager, s: ProgressSnapshot): Promise<void> {
    await this.holdLease(em, s.characterId, s.fence);
    const character = await em.findOne(CharacterEntity, { id: s.characterId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
    if (!character) return;
    // The same properties as the batched save (src/storage/characters/progress.ts).
    const data = progressData(s, new Date());
    if (s.coins !== undefined) data.coins = s.coins;
    em.assign(character, data as never);
    await em.flush();
    if (s.items) await this.replaceItems(em, s.characterId, s.items);
  }

  /** Replace a character's item rows with the given ones (inside a transaction). */
  async replaceItems(em: SqlEntityManager, characterId: string, items: ProgressSnapshot["items"] & {}): Promise<void> {
    await em.nativeDelete(InventoryItemEntity, { characterId });
    await em.nativeDelete(EquipmentItemEntity, { characterId });
    if (items.bank) await em.nativeDelete(BankItemEntity, { characterId });
    if (items.inventory.length)
      await em.insertMany(
        InventoryItemEntity,
        items.inventory.map((r) => ({ characterId, ...r })),
      );
    const eq = Object.entries(items.equipment);
    if (eq.length)
      await em.insertMany(
        EquipmentItemEntity,
        eq.map(([slotType, r]) => ({ characterId, slotType, itemId: r.itemId, quantity: r.quantity })),
      );
    if (items.bank?.length)
      await em.insertMany(
        BankItemEntity,
        items.bank.map((r) => ({ characterId, ...r })),
      );
  }

  /**
   * Record that a character entered the world over `transport`, closing the logins it still has
   * open, in one statement (`openLogins`), batched across concurrent joins. @returns the login's id.
   */
  recordLogin(characterId: string, accountId: string, transport: string): Promise<string> {
    return this.joins.openLogin({ characterId, accountId, transport });
  }

  /** Record that the character of a login left the world, and why (once: a closed login stays as it is). */
  async recordLogout(loginId: string, reason: string): Promise<void> {
    await this.fork().nativeUpdate(PlayerLoginEntity, { id: loginId, endedAt: null }, { endedAt: new Date(), endReason: reason });
  }

  /**
   * Close the logins a stopped process left open: every open login whose character no process
   * plays (no valid lease in `character_leases`). Logins of characters another live process plays
   * (it renews their leases) stay open, so processes sharing the database never close each
   * other's. @returns how many were closed.
   */
  async closeStaleLogins(): Promise<number> {
    const rows = await this.fork()
      .getConnection()
      .execute<{ id: string }[]>(
        `update player_logins set ended_at = now(), end_reason = 'server_restart'
         where ended_at is null
           and not exists (select 1 from character_leases l where l.character_id = player_logins.character_id and l.expires_at > now())
         returning id`,
      );
    return rows.length;
  }

  async recordKill(characterId: string, npcId: string): Promise<void> {
    await this.fork()
      .getConnection()
      .execute(
        `insert into npc_kills (character_id, npc_id, count, last_kill_at) values (?, ?, 1, now())
         on conflict (character_id, npc_id) do update set count = npc_kills.count + 1, last_kill_at = now()`,
        [characterId, npcId],
      );
  }

  /**
   * Take the death lock and write the post-death state atomically. Returns false (changing
   * nothing) when a death is already open for the character.
   */
  async recordDeath(death: NewDeath, after: ProgressSnapshot): Promise<string | null> {
    try {
      return await this.fork().transactional(async (em) => {
        await this.holdLease(em, death.characterId, after.fence);
        const id = death.id ?? randomUUID();
        await em.insert(PlayerDeathEntity, {
          id,
          characterId: death.characterId,
          positionX: death.x,
          positionZ: death.z,
          killedBy: death.killedBy ?? null,
          items: death.items,
          createdAt: new Date(),
        });
        await this.writeSnapshot(em, after);
        return id;
      });
    } catch (e) {
      if (isUniqueViolation(e)) return null;
      throw e;
    }
  }

  /**
   * Whether the death `deathId` was recorded, for a `recordDeath` whose COMMIT's answer was lost:
   * read after waiting for the character's row lock (a commit still finishing is seen), as a
   * settlement reads its audit record. Throws when storage can't answer.
   */
  async deathRecorded(deathId: string, characterId: string): Promise<boolean> {
    return this.fork().transactional(async (em) => {
      await em.findOne(CharacterEntity, { id: characterId }, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
      return (await em.count(PlayerDeathEntity, { id: deathId })) > 0;
    });
  }

  /**
   * Resolve an open death lock: the dropped items may now go on the ground. Conditional on the lock
   * still being open, so it and `recoverOpenDeath` exclude each other: whichever closes the lock
   * owns the dropped items (ground or bank), never both. The lock records who closed it, so a retry
   * after a lost answer knows an earlier attempt of its own did (`resolution` = `ground`). With a
   * `fence`, only while the character's lease is still that one (else LeaseLostError: the bank gets
   * the items at the next join). `groundStep` stores the dropped items' piles in the same
   * transaction, only when this call closed the lock (an earlier attempt that did stored them too).
   * @returns true when the lock is closed for the ground (by this call or an earlier one of this
   * death's own), false when `recoverOpenDeath` closed it.
   */
  async resolveDeath(deathId: string, fence?: { characterId: string } & LeaseFence, groundStep?: TransactionStep): Promise<boolean> {
    return this.fork().transactional(async (em) => {
      if (fence) await this.holdLease(em, fence.characterId, fence);
      const n = await em.nativeUpdate(PlayerDeathEntity, { id: deathId, resolvedAt: null }, { resolvedAt: new Date(), resolution: "ground" });
      if (n > 0) {
        if (groundStep) await runStep(groundStep, em);
        return true;
      }
      return (await em.findOne(PlayerDeathEntity, { id: deathId }))?.resolution === "ground";
    });
  }

  /**
   * Resolve a death whose lock is still open — the process died, or could not resolve it, before
   * the items went on the ground: the dropped items go to the character's bank. One transaction
   * with the lock row locked, so it happens exactly once and never after `resolveDeath`.
   * A bank row never passes the stack cap: what it can't take comes back in `overflow` (nothing is
   * dropped silently) for the caller to put on the ground where the player died.
   * `overflowStep` stores the overflow's ground piles in the same transaction.
   * @returns the number of item stacks restored and the overflow (`restored` 0: no open death).
   */
  async recoverOpenDeath(characterId: string, fence?: LeaseFence, overflowStep?: (r: DeathRecovery) => TransactionStep | undefined): Promise<DeathRecovery> {
    return this.fork().transactional(async (em) => {
      await this.holdLease(em, characterId, fence);
      const open = await em.findOne(PlayerDeathEntity, { characterId, resolvedAt: null }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      if (!open) return { restored: 0, overflow: [], at: { x: 0, z: 0 } };
      const dropped = open.items?.dropped ?? [];
      const overflow = await bankDropped(em, characterId, dropped);
      open.resolvedAt = new Date();
      open.resolution = "bank";
      await em.flush();
      const recovery = { restored: dropped.length, overflow, at: { x: open.positionX, z: open.positionZ } };
      const step = overflow.length > 0 ? overflowStep?.(recovery) : undefined;
      if (step) await runStep(step, em);
      return recovery;
    });
  }

  /** Whether `e` says storage can't answer now (src/storage/unavailable.ts). */
  isUnavailable(e: unknown): boolean {
    return isStorageUnavailable(e);
  }

  /** Whether a failed write is worth trying again: storage unavailable, or a serialization failure (40001) or deadlock (40P01). */
  isTransient(e: unknown): boolean {
    const code = (e as { code?: string })?.code ?? (e as { cause?: { code?: string } })?.cause?.code;
    return isStorageUnavailable(e) || code === "40001" || code === "40P01";
  }

  async kills(characterId: string) {
    return this.fork().find(NpcKillEntity, { characterId }, { orderBy: { count: "desc" } });
  }

  async deaths(characterId: string) {
    return this.fork().find(PlayerDeathEntity, { characterId }, { orderBy: { createdAt: "desc" }, limit: 100 });
  }
}
