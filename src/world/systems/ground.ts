/**
 * Things lying in the world for a while: ground items (drops, loot, death piles) and fires. Items
 * are private to their owner for GROUND_ITEM_PRIVATE_TICKS, then public, and gone after
 * GROUND_ITEM_LIFETIME_TICKS; fires burn out. Picking an item up is a player action of the tick
 * that commits at once, the pile's row deleted in the same transaction (docs/persistence.md
 * "Ground piles"). Storage of piles and fires: `WorldState`.
 */
import { randomUUID } from "node:crypto";
import type { GameContent } from "../../content/load.js";
import { addItem } from "../../domain/inventory.js";
import { COINS_ITEM_ID, MAX_STACK } from "../../domain/types.js";
import type { WorldClock } from "../clock.js";
import type { GroundItem, ResourceInstance } from "../objects.js";
import type { SpatialGrid } from "../grid.js";
import { refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { Logger } from "../../logger.js";
import type { Movement } from "./movement.js";
import type { Saving } from "./saving.js";
import type { RestoredState, WorldState } from "./world-state.js";

/** Ticks a dropped or death item stays private to its owner, and lives in total. */
export const GROUND_ITEM_PRIVATE_TICKS = 100;
export const GROUND_ITEM_LIFETIME_TICKS = 300;

export interface GroundDeps {
  groundItems: Map<string, GroundItem>;
  itemGrid: SpatialGrid<GroundItem>;
  resources: Map<string, ResourceInstance>;
  resourceGrid: SpatialGrid<ResourceInstance>;
  content: GameContent;
  clock: WorldClock;
  movement: Movement;
  saving: Saving;
  state: WorldState;
  logger?: Logger;
  /** Ticks a pile lives (GROUND_ITEM_LIFETIME_TICKS by default). */
  lifetimeTicks?: number;
  /** Counts despawned piles (`realm_ground_piles_despawned_total`). */
  despawned?: { inc(n?: number): void };
}

/** May the player see (and take) the item at `tick`? Its owner always; everyone once public. */
export function canSeeGroundItem(p: Player, g: GroundItem, tick: number): boolean {
  return !g.ownerId || g.ownerId === p.id || tick >= g.publicTick;
}

export class Ground {
  private fireSeq = 0;
  private readonly lifetimeTicks: number;

  constructor(private readonly d: GroundDeps) {
    this.lifetimeTicks = Math.max(d.lifetimeTicks ?? GROUND_ITEM_LIFETIME_TICKS, GROUND_ITEM_PRIVATE_TICKS);
  }

  /**
   * A new pile, not on the ground yet (private to `ownerId` for GROUND_ITEM_PRIVATE_TICKS). Items
   * that come from a player's stored items go on the ground (`place`) only after the transaction
   * that took them out of storage and stored the pile (`WorldState.putStep`) committed: nothing on
   * the ground can exist in a stored inventory too, and nothing committed is off both.
   */
  newPile(itemId: string, quantity: number, x: number, z: number, ownerId?: string): GroundItem {
    const tick = this.d.clock.tick;
    return {
      id: `item:${randomUUID()}`,
      itemId,
      quantity,
      x,
      z,
      ownerId,
      publicTick: tick + GROUND_ITEM_PRIVATE_TICKS,
      expiresTick: tick + this.lifetimeTicks,
      sinceTick: tick,
      stored: this.d.state.persists,
      storing: false,
      taking: false,
    };
  }

  /** Put piles whose transaction committed on the ground, their times counted from now. */
  place(...piles: GroundItem[]): void {
    for (const g of piles) {
      const shift = this.d.clock.tick - g.sinceTick;
      g.publicTick += shift;
      g.expiresTick += shift;
      g.sinceTick = this.d.clock.tick;
      this.d.groundItems.set(g.id, g);
      this.d.itemGrid.set(g, g.x, g.z);
    }
  }

  /** A pile of new items that were in nobody's storage (an NPC's loot): on the ground at once, stored on its own. */
  drop(itemId: string, quantity: number, x: number, z: number, ownerId?: string): GroundItem {
    const g = { ...this.newPile(itemId, quantity, x, z, ownerId), stored: false };
    this.place(g);
    this.d.state.storeLoot(g);
    return g;
  }

  remove(id: string): void {
    this.d.groundItems.delete(id);
    this.d.itemGrid.delete(id);
  }

  /** Put back what storage held at start-up (`WorldState.restore`). */
  restore(state: RestoredState): void {
    for (const r of state.piles) {
      const { publicAt: _p, expiresAt: _e, ...pile } = r;
      this.place({ ...pile, ownerId: r.ownerId, sinceTick: this.d.clock.tick, stored: true, storing: false, taking: false });
    }
    for (const f of state.fires) this.lightFire(f.x, f.z, f.lifetimeTicks);
  }

  canSee(p: Player, g: GroundItem): boolean {
    return canSeeGroundItem(p, g, this.d.clock.tick);
  }

  /** Light a fire on a tile for `lifetimeTicks`; it is a resource (cook on it) until it burns out. */
  lightFire(x: number, z: number, lifetimeTicks: number): ResourceInstance {
    const fire: ResourceInstance = {
      id: `fire:${++this.fireSeq}`,
      type: "fire",
      skill: "firemaking",
      x,
      z,
      node: undefined,
      respawnTick: undefined,
      remaining: undefined,
      expiresTick: this.d.clock.tick + lifetimeTicks,
    };
    this.d.resources.set(fire.id, fire);
    this.d.resourceGrid.set(fire, x, z);
    this.d.state.changed(x, z);
    return fire;
  }

  /** Fires burn out, old items vanish. */
  tick(): void {
    const tick = this.d.clock.tick;
    for (const r of this.d.resources.values()) {
      if (r.expiresTick !== undefined && r.expiresTick <= tick) {
        this.d.resources.delete(r.id);
        this.d.resourceGrid.delete(r.id);
        this.d.state.changed(r.x, r.z);
      }
    }
    for (const g of this.d.groundItems.values()) {
      if (g.expiresTick > tick || g.taking) continue;
      this.remove(g.id);
      this.d.state.pileDespawned(g);
      this.d.despawned?.inc();
      // Items leave the game here: one line each, so an audit of items (the chaos run) can count them.
      this.d.logger?.info({ pileId: g.id, itemId: g.itemId, quantity: g.quantity, ownerId: g.ownerId }, "ground pile despawned");
    }
  }

  /**
   * The `pickup` action: walk onto the item's tile, then take it whole (or refuse, leaving it). The
   * pickup commits at once (`Saving.commitItems`): the taker's items and the pile's deletion in one
   * transaction, the pile off the ground and in the inventory only once it committed. Meanwhile the
   * pile is `taking` (nobody else takes it, it does not despawn) and the taker's items are locked.
   */
  stepPickup(p: Player, itemId: string): void {
    const g = this.d.groundItems.get(itemId);
    if (!g || g.taking || !this.canSee(p, g)) {
      p.action = null;
      return;
    }
    if (p.x !== g.x || p.z !== g.z) {
      // "wait": the tick's path budget is spent, the walk is searched again next tick.
      if (p.pathLength === 0 && this.d.movement.actionPathTo(p, g) === false) p.action = null;
      return;
    }
    // Its row is being written (loot): take it on a later tick.
    if (g.storing) return;
    p.action = null;
    if (p.itemsLocked || p.tradeId) return refuse(p, "ITEMS_LOCKED", "You can't do that right now.");
    let change: { coins: number } | { inventory: Player["inventory"] };
    if (g.itemId === COINS_ITEM_ID) {
      // All or nothing: a pile that would pass the coin cap stays on the ground.
      if (p.coins + g.quantity > MAX_STACK) return refuse(p, "STACK_OVERFLOW", "You can't carry that many coins.");
      change = { coins: p.coins + g.quantity };
    } else {
      const def = this.d.content.items.get(g.itemId);
      if (!def) return;
      const added = addItem(p.inventory, def, g.quantity);
      if (!added.ok) return refuse(p, "INVENTORY_FULL");
      change = { inventory: added.value };
    }
    g.taking = true;
    void this.d.saving
      .commitItems(
        p,
        () => change,
        () => this.remove(g.id),
        this.d.state.takeStep(g),
        // Outcome unknown: the items were read back; the pile is gone if its deletion committed.
        async () => {
          if (g.stored && !(await this.d.state.isStored(g))) this.remove(g.id);
        },
      )
      .finally(() => {
        g.taking = false;
      });
  }
}
