/**
 * Death: a dying player keeps its three most valuable items (the plan: `src/domain/death.ts`), the
 * rest go on the ground, and it respawns in town. The death is written in one transaction with a death lock that is resolved
 * once the dropped items are on the ground (docs/persistence.md "Deaths", docs/persistence.md).
 */
import { randomUUID } from "node:crypto";
import type { CharacterStore } from "../ports/character-store.js";
import type { GameContent } from "../../content/load.js";
import { planDeath, type ItemCount } from "../../domain/death.js";
import { inventoryToSlots } from "../../domain/inventory.js";
import { prayersOff } from "../../domain/prayer.js";
import type { Tile } from "../../domain/types.js";
import type { Logger } from "../../logger.js";
import { isLeaseLost, type LeaseFence } from "../ports/lease-fence.js";
import type { WorldClock } from "../clock.js";
import type { GroundItem, Npc } from "../objects.js";
import type { SpatialGrid } from "../grid.js";
import { system } from "../messages.js";
import type { PlayerQueues } from "../player-queues.js";
import { Player } from "../player.js";
import type { Interrupt } from "../world-events.js";
import type { Ground } from "./ground.js";
import type { WorldState } from "./world-state.js";

/** Longest wait, in ticks, between attempts to resolve a death lock that failed to resolve. */
export const PENDING_DEATH_MAX_BACKOFF_TICKS = 50;

/** A recorded death whose lock is not resolved yet: its dropped items are off the ground. */
interface PendingDeath {
  deathId: string;
  ownerId: string;
  tile: Tile;
  dropped: ItemCount[];
  /** The lease the death was recorded under: its resolve checks it too. */
  fence?: LeaseFence;
  /** The piles its resolve stores, made at the first attempt. */
  piles?: GroundItem[];
  nextTick: number;
  attempts: number;
  inFlight: boolean;
}

export interface DeathsDeps {
  players: ReadonlyMap<string, Player>;
  npcs: ReadonlyMap<string, Npc>;
  playerGrid: SpatialGrid<Player>;
  queues: PlayerQueues;
  characters: CharacterStore;
  content: GameContent;
  logger: Logger;
  clock: WorldClock;
  ground: Ground;
  state: WorldState;
  interrupt: Interrupt;
}

export class Deaths {
  /** Deaths whose lock failed to resolve; retried on the tick. */
  private readonly pending: PendingDeath[] = [];

  constructor(private readonly d: DeathsDeps) {}

  /**
   * A player died. In memory it is dead at once (so a second death cannot start and it can't act);
   * in its storage queue — after any settlement or item transaction already queued — the death
   * lock, the lost items and the respawn are written in one transaction, computed from the items
   * it holds at that moment. Then the player respawns, and the dropped items go on the ground.
   *
   * Exactly once: the dropped items are owed to exactly one place. While the lock is open they are
   * owed to the bank (`recoverOpenDeath`, run when the character next joins a world it is not live
   * in); the world puts them on the ground only after `resolveDeath` has closed the still-open lock.
   * Both close it conditionally, so whichever wins owns the items. A failed resolve is retried on
   * later ticks (`pending`); if the process ends first, the lock stays open and the bank gets
   * them. The resolve stores the piles in its own transaction, so a crash after it finds them on
   * the ground at the next start (docs/persistence.md "Ground piles"), never twice.
   *
   * No death recorded (one is still open, or the transaction failed): the player respawns with
   * everything it had and storage is unchanged.
   */
  kill(p: Player, killerId: string): void {
    if (p.dead) return;
    const { content, characters } = this.d;
    p.dead = true;
    p.action = null;
    p.prayer = prayersOff(p.prayer); // a death switches every prayer off (docs/combat.md#prayers)
    p.protection = "";
    p.path = [];
    p.lastCombatAt = undefined;
    if (p.tradeId) this.d.interrupt(p.id, "player_died");
    for (const n of this.d.npcs.values()) if (n.targetId === p.id) n.targetId = undefined;
    const deathTile = { x: p.x, z: p.z };
    let dropped: ItemCount[] | undefined;
    let deathId: string | null = null;
    void this.d.queues
      .run(p.id, async () => {
        try {
          // Items in memory that can't be trusted (a trade whose outcome is unknown) are never the
          // plan: storage holds the truth, and the death is planned from its rows (read in this
          // queue, where every write of the character runs), which the death then replaces.
          const stored = p.itemsStale ? await characters.load(p.id) : undefined;
          if (p.itemsStale && !stored) throw new Error("character not found while planning its death");
          const held = stored ? new Player(stored) : p;
          const plan = planDeath(heldItems(held), (id) => content.items.get(id));
          const after = { inventory: plan.inventory, equipment: {}, coins: held.coins, bank: held.bank };
          const id = randomUUID();
          try {
            deathId = await characters.recordDeath(
              { id, characterId: p.id, x: deathTile.x, z: deathTile.z, killedBy: killerId, items: { dropped: plan.dropped, kept: plan.kept } },
              p.snapshotWith(after, { x: content.spawn.x, z: content.spawn.z, health: p.maxHealth }),
            );
          } catch (e) {
            if (isLeaseLost(e)) throw e;
            // Did it commit? (its answer may have been lost with the connection, as a settlement's may.)
            const recorded = await characters.deathRecorded(id, p.id).catch(() => undefined);
            if (recorded === false) throw e;
            if (recorded === undefined) {
              // Unknown: storage holds either the pre-death or the post-death items, so memory is
              // trusted with neither (never written again; the next join reloads). An open lock
              // gives its items to the bank at that join; none go on the ground here.
              p.safety.markStale();
              this.d.logger.error({ err: e, playerId: p.id, deathId: id }, "death outcome unknown; the player's items will reload from storage");
              return;
            }
            deathId = id;
          }
          // A death already open: storage changes nothing (the player still respawns, below).
          if (!deathId) return;
          p.inventory = plan.inventory;
          p.equipment = {};
          p.coins = held.coins;
          p.bank = held.bank;
          // Memory now holds what the death transaction wrote.
          p.safety.itemsRestored();
          dropped = plan.dropped;
        } finally {
          // Respawn, whatever storage said: the recorded post-death state, or (no death recorded)
          // everything the player had, healed in town. Still in the queue, so a save queued after
          // the death (the player left meanwhile) writes the respawned state.
          p.x = content.spawn.x;
          p.z = content.spawn.z;
          p.health = p.maxHealth;
          p.safety.progressChanged();
          p.dead = false;
        }
      })
      .catch((e) => {
        // A refusal of the fence is logged once, by the player's drop (`World.dropLost`).
        if (!isLeaseLost(e)) this.d.logger.error({ err: e, playerId: p.id }, "death transaction failed; nothing changed");
      })
      .finally(() => {
        // A player that left meanwhile is not put back in the world (it would linger in the grid).
        if (this.d.players.get(p.id) === p) {
          this.d.playerGrid.set(p, p.x, p.z);
          system(p, "Oh dear, you are dead! You wake up in Lumbrook.");
          p.sync();
        }
        if (deathId && dropped) {
          const pending: PendingDeath = {
            deathId,
            ownerId: p.id,
            tile: deathTile,
            dropped,
            fence: p.fence,
            nextTick: this.d.clock.tick,
            attempts: 0,
            inFlight: false,
          };
          this.pending.push(pending);
          this.resolve(pending);
        }
      });
  }

  /** Retry the death locks that are due. */
  tick(): void {
    for (const d of this.pending) if (d.nextTick <= this.d.clock.tick) this.resolve(d);
  }

  /**
   * Close a death lock and, if this call closed it, put its dropped items on the ground: their piles
   * are stored in the transaction that closes the lock. A failure leaves it pending for a later tick
   * (backing off up to PENDING_DEATH_MAX_BACKOFF_TICKS).
   */
  private resolve(d: PendingDeath): void {
    if (d.inFlight) return;
    d.inFlight = true;
    d.attempts++;
    const { ground } = this.d;
    // The same piles (ids) on every attempt: a retry after a lost answer may find them stored already.
    const piles = (d.piles ??= d.dropped.map((item) => ground.newPile(item.itemId, item.quantity, d.tile.x, d.tile.z, d.ownerId)));
    this.d.characters
      .resolveDeath(d.deathId, d.fence && { characterId: d.ownerId, ...d.fence }, this.d.state.putStep(piles))
      .then((closedHere) => {
        this.pending.splice(this.pending.indexOf(d), 1);
        // Closed by recoverOpenDeath meanwhile: the bank has the items.
        if (closedHere) ground.place(...piles);
      })
      .catch((e) => {
        if (isLeaseLost(e)) {
          // The character's lease is no longer this world's: the lock stays open, and the bank gets
          // the items when the character next joins (`recoverOpenDeath`).
          this.pending.splice(this.pending.indexOf(d), 1);
          this.d.logger.warn({ deathId: d.deathId, characterId: d.ownerId }, "death lock left open for the bank: the lease changed hands");
          return;
        }
        d.nextTick = this.d.clock.tick + Math.min(PENDING_DEATH_MAX_BACKOFF_TICKS, 2 ** d.attempts);
        this.d.logger.error({ err: e, deathId: d.deathId, attempts: d.attempts }, "death lock not resolved yet; its items wait off the ground");
      })
      .finally(() => {
        d.inFlight = false;
      });
  }
}

/** Everything a player holds for its death plan: inventory slots in order, then worn items. */
function heldItems(p: Player): ItemCount[] {
  return [
    ...inventoryToSlots(p.inventory).map((s) => ({ itemId: s.itemId, quantity: s.quantity })),
    ...Object.values(p.equipment).flatMap((e) => (e ? [{ itemId: e.itemId, quantity: e.quantity }] : [])),
  ];
}
