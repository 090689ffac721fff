/**
 * Gathering (woodcutting, fishing, mining): resource nodes, the `gather` action (walk next to the
 * node, an attempt every GATHER_INTERVAL_TICKS), depletion and respawn.
 */
import type { GameContent } from "../../content/load.js";
import { depleteAfterSuccess, nodeCurve, rollGather } from "../../domain/gathering.js";
import { addItem, inventoryToSlots, removeFromSlot, type Inventory } from "../../domain/inventory.js";
import { chebyshev } from "../../domain/movement.js";
import type { SkillName } from "../../domain/types.js";
import type { WorldClock } from "../clock.js";
import type { ResourceInstance } from "../objects.js";
import type { SpatialGrid } from "../grid.js";
import { refusal, refuse, type Refusal, type RefusalCode } from "../refusals.js";
import type { Player } from "../player.js";
import type { Movement } from "./movement.js";
import type { Progress } from "./progress.js";

/** Ticks between gathering attempts. */
export const GATHER_INTERVAL_TICKS = 4;

export interface GatheringDeps {
  resources: Map<string, ResourceInstance>;
  resourceGrid: SpatialGrid<ResourceInstance>;
  content: GameContent;
  clock: WorldClock;
  movement: Movement;
  progress: Progress;
  /** Told of every node that depleted, regrew or counted down (`WorldState.changed`). */
  changed?: (x: number, z: number) => void;
}

export class Gathering {
  constructor(private readonly d: GatheringDeps) {}

  /** Place every resource node of the content. */
  spawn(): void {
    for (const r of this.d.content.resourceNodes) {
      const node = this.d.content.gatheringNodes.get(r.type)!;
      const inst: ResourceInstance = {
        id: r.id,
        type: r.type,
        skill: node.skill,
        x: r.x,
        z: r.z,
        node,
        respawnTick: undefined,
        remaining: node.resourcesPerNode,
        expiresTick: undefined,
      };
      this.d.resources.set(inst.id, inst);
      this.d.resourceGrid.set(inst, inst.x, inst.z);
    }
  }

  /** Depleted nodes whose time has come are full again. */
  tick(): void {
    const tick = this.d.clock.tick;
    for (const r of this.d.resources.values()) {
      if (r.respawnTick !== undefined && r.respawnTick <= tick) {
        r.respawnTick = undefined;
        r.remaining = r.node?.resourcesPerNode;
        this.d.changed?.(r.x, r.z);
      }
    }
  }

  /** The best tool the player holds (inventory or wielded) among `toolIds`. */
  /** Is the player's level in the tool's skill at least the tool's `levelRequired` (tools.json)? */
  private mayUse(p: Player, toolId: string): boolean {
    const def = this.d.content.tools.get(toolId);
    return !def || p.skills[def.skill as SkillName].level >= def.levelRequired;
  }

  /**
   * Why the player has no tool for the node: it holds one of them only above its level
   * (LEVEL_TOO_LOW, skill-unlocks.json's "Use an iron axe"), or none (TOOL_REQUIRED).
   */
  noTool(p: Player, toolIds: readonly string[]): Refusal {
    const held = new Set([...inventoryToSlots(p.inventory).map((s) => s.itemId), p.equipment.weapon?.itemId]);
    const tooHigh = toolIds.map((id) => this.d.content.tools.get(id)).find((t) => t && held.has(t.itemId) && !this.mayUse(p, t.itemId));
    if (tooHigh)
      return refusal(
        "LEVEL_TOO_LOW",
        `You need ${tooHigh.skill} level ${tooHigh.levelRequired} to use the ${this.d.content.items.get(tooHigh.itemId)?.name.toLowerCase() ?? tooHigh.itemId}.`,
      );
    return refusal("TOOL_REQUIRED", `You need a ${toolIds.map((t) => this.d.content.items.get(t)?.name ?? t).join(" or ")} for that.`);
  }

  bestTool(p: Player, toolIds: readonly string[]): { itemId: string; tier: number } | undefined {
    let best: { itemId: string; tier: number } | undefined;
    const held = new Set([...inventoryToSlots(p.inventory).map((s) => s.itemId), p.equipment.weapon?.itemId].filter(Boolean) as string[]);
    for (const id of toolIds) {
      if (!held.has(id) || !this.mayUse(p, id)) continue;
      const tier = this.d.content.tools.get(id)?.tier ?? 0;
      if (!best || tier > best.tier) best = { itemId: id, tier };
    }
    return best;
  }

  /**
   * The `gather` action. Outline: the node must be there and not depleted; walk next to it; every
   * GATHER_INTERVAL_TICKS check tool and level, then roll; a success takes what the node consumes,
   * gives its yield and XP, and may deplete the node.
   */
  step(p: Player, a: { nodeId: string; nextAttemptTick: number }): void {
    const { clock, content } = this.d;
    const r = this.d.resources.get(a.nodeId);
    if (!r || !r.node) {
      p.action = null;
      return;
    }
    if (r.respawnTick !== undefined) return this.stop(p, "DEPLETED", `The ${r.node.name.toLowerCase()} is depleted.`);
    if (chebyshev(p.tile, r) > 1) {
      // "wait": the tick's path budget is spent, the walk is searched again next tick.
      if (p.pathLength === 0 && this.d.movement.actionPathTo(p, r, true) === false) p.action = null;
      return;
    }
    p.path = [];
    if (clock.tick < a.nextAttemptTick) return;
    a.nextAttemptTick = clock.tick + GATHER_INTERVAL_TICKS;
    const node = r.node;
    const skill = node.skill as SkillName;
    const tool = this.bestTool(p, node.tools);
    if (!tool) {
      const why = this.noTool(p, node.tools);
      return this.stop(p, why.code, why.text);
    }
    if (p.skills[skill].level < node.levelRequired) return this.stop(p, "LEVEL_TOO_LOW", `You need ${skill} level ${node.levelRequired} to do that.`);
    if (p.itemsLocked || p.tradeId) return;
    const roll = rollGather(
      { level: p.skills[skill].level, requiredLevel: node.levelRequired, toolTier: tool.tier, curve: nodeCurve(node.successBase) },
      clock.rng,
    );
    if (!roll.ok || !roll.value.success) return;
    let inv: Inventory = p.inventory;
    if (node.consumes) {
      const { itemId, quantity } = node.consumes;
      const idx = inv.findIndex((s) => s?.itemId === itemId && s.quantity >= quantity);
      if (idx < 0) return this.stop(p, "INSUFFICIENT_QUANTITY", `You have no ${content.items.get(itemId)?.name ?? itemId} left.`);
      const used = removeFromSlot(inv, idx, quantity);
      if (!used.ok) return;
      inv = used.value;
    }
    const added = addItem(inv, content.items.get(node.yields)!, 1);
    if (!added.ok) return this.stop(p, "INVENTORY_FULL", "Your inventory is too full to hold any more.");
    p.inventory = added.value;
    p.safety.itemsChanged();
    this.d.progress.grantXp(p, { [skill]: node.xp });
    this.d.progress.countGoal(p, { type: skill as "woodcutting" | "fishing" | "mining", nodeId: node.id, itemId: node.yields });
    p.sync();
    const { depleted, remaining } = depleteAfterSuccess(node, r.remaining, clock.rng);
    if (remaining !== r.remaining || depleted) this.d.changed?.(r.x, r.z);
    r.remaining = remaining;
    if (depleted) {
      r.respawnTick = clock.tick + node.respawnTicks;
      p.action = null;
    }
  }

  /** End the action and say why. */
  private stop(p: Player, code: RefusalCode, text: string): void {
    p.action = null;
    refuse(p, code, text);
  }
}
