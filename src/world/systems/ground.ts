/**
 * Things lying in the world for a while: ground items (drops, loot, death piles) and fires. Items
 * are private to their owner for GROUND_ITEM_PRIVATE_TICKS, then public, and gone after
 * GROUND_ITEM_LIFETIME_TICKS; fires burn out. Picking an item up is a player action of the tick.
 */
import type { GameContent } from "../../content/load.js";
import { addItem } from "../../domain/inventory.js";
import { COINS_ITEM_ID, MAX_STACK } from "../../domain/types.js";
import type { WorldClock } from "../clock.js";
import type { GroundItem, ResourceInstance } from "../objects.js";
import type { SpatialGrid } from "../grid.js";
import { refuse } from "../refusals.js";
import type { Player } from "../player.js";
import type { Movement } from "./movement.js";

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
}

/** May the player see (and take) the item at `tick`? Its owner always; everyone once public. */
export function canSeeGroundItem(p: Player, g: GroundItem, tick: number): boolean {
  return !g.ownerId || g.ownerId === p.id || tick >= g.publicTick;
}

export class Ground {
  private itemSeq = 0;
  private fireSeq = 0;

  constructor(private readonly d: GroundDeps) {}

  /**
   * Put a pile on the ground (private to `ownerId` for GROUND_ITEM_PRIVATE_TICKS). Items that come
   * from a player's stored items go here only after their removal committed (a drop's transaction,
   * a death's resolved lock): nothing on the ground can exist in a stored inventory too (README,
   * Persistence).
   */
  drop(itemId: string, quantity: number, x: number, z: number, ownerId?: string): GroundItem {
    const tick = this.d.clock.tick;
    const g: GroundItem = {
      id: `item:${++this.itemSeq}`,
      itemId,
      quantity,
      x,
      z,
      ownerId,
      publicTick: tick + GROUND_ITEM_PRIVATE_TICKS,
      expiresTick: tick + GROUND_ITEM_LIFETIME_TICKS,
    };
    this.d.groundItems.set(g.id, g);
    this.d.itemGrid.set(g, x, z);
    return g;
  }

  remove(id: string): void {
    this.d.groundItems.delete(id);
    this.d.itemGrid.delete(id);
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
    return fire;
  }

  /** Fires burn out, old items vanish. */
  tick(): void {
    const tick = this.d.clock.tick;
    for (const r of this.d.resources.values()) {
      if (r.expiresTick !== undefined && r.expiresTick <= tick) {
        this.d.resources.delete(r.id);
        this.d.resourceGrid.delete(r.id);
      }
    }
    for (const g of this.d.groundItems.values()) if (g.expiresTick <= tick) this.remove(g.id);
  }

  /** The `pickup` action: walk onto the item's tile, then take it whole (or refuse, leaving it). */
  stepPickup(p: Player, itemId: string): void {
    const g = this.d.groundItems.get(itemId);
    if (!g || !this.canSee(p, g)) {
      p.action = null;
      return;
    }
    if (p.x !== g.x || p.z !== g.z) {
      // "wait": the tick's path budget is spent, the walk is searched again next tick.
      if (p.path.length === 0 && this.d.movement.actionPathTo(p, g) === false) p.action = null;
      return;
    }
    p.action = null;
    if (p.itemsLocked || p.tradeId) return refuse(p, "ITEMS_LOCKED", "You can't do that right now.");
    if (g.itemId === COINS_ITEM_ID) {
      // All or nothing: a pile that would pass the coin cap stays on the ground.
      if (p.coins + g.quantity > MAX_STACK) return refuse(p, "STACK_OVERFLOW", "You can't carry that many coins.");
      p.coins += g.quantity;
    } else {
      const def = this.d.content.items.get(g.itemId);
      if (!def) return;
      const added = addItem(p.inventory, def, g.quantity);
      if (!added.ok) return refuse(p, "INVENTORY_FULL");
      p.inventory = added.value;
    }
    p.safety.itemsChanged();
    this.remove(g.id);
    p.sync();
  }
}
