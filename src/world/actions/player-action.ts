/** `player:move` and `player:action` (attack, gather, pickup, talk; buy and sell go to the store). */
import { chebyshev, moveTargetRefusal } from "../../domain/movement.js";
import type { SkillName } from "../../domain/types.js";
import type { ClientEventPayload } from "../../events.js";
import { system } from "../messages.js";
import { refuse, refuseWith } from "../refusals.js";
import type { Player } from "../player.js";
import { launcherOf, shotCheck } from "../systems/combat.js";
import { VIEW_RADIUS } from "../systems/visibility.js";
import type { World } from "../world.js";
import { busyWithTrade, INTERACT_RANGE } from "./guards.js";
import { unequip } from "./inventory.js";
import { storeAction, talkToStore } from "./store.js";

/**
 * `player:move`: validate the target tile and record it; the tick finds the path within its
 * path-finding budget (docs/protocol.md "Movement"). A target no path can reach is
 * refused here without a search.
 */
export function handleMove(w: World, p: Player, m: ClientEventPayload<"player:move">) {
  if (p.dead) return;
  // The player is its own tile and the map's blocked test is the movement's own: nothing is made
  // for an accepted move but its request (a crowd sends one a second per player).
  const refusal = moveTargetRefusal(p, m, w.content.worldBounds, w.movement.blocked);
  if (refusal) return refuse(p, refusal.error.code, refusal.error.message);
  if (!w.movement.request(p, { x: m.x, z: m.z, run: m.run ?? false })) return refuse(p, "NO_PATH");
  p.action = null;
}

/** `player:action`: attack, gather, pickup, talk, buy, sell, unequip, pray, unpray. */
export async function handleAction(w: World, p: Player, a: ClientEventPayload<"player:action">) {
  if (p.dead) return;
  const targetId = a.targetId ?? "";
  switch (a.action) {
    case "attack":
      return attack(w, p, targetId);
    case "gather": {
      if (busyWithTrade(p)) return;
      const r = w.resources.get(targetId);
      if (!r?.node) return refuse(p, "NO_SUCH_TARGET", "There is nothing to gather there.");
      if (chebyshev(p, r) > VIEW_RADIUS) return refuse(p, "TOO_FAR");
      const skill = r.node.skill as SkillName;
      if (p.skills[skill].level < r.node.levelRequired) return refuse(p, "LEVEL_TOO_LOW", `You need ${skill} level ${r.node.levelRequired} to do that.`);
      if (!w.gathering.bestTool(p, r.node.tools)) return refuseWith(p, w.gathering.noTool(p, r.node.tools));
      p.action = { kind: "gather", nodeId: targetId, nextAttemptTick: w.tick + 1 };
      return;
    }
    case "pickup": {
      if (busyWithTrade(p)) return;
      const g = w.groundItems.get(targetId);
      if (!g || !w.ground.canSee(p, g)) return refuse(p, "NO_SUCH_TARGET", "That item is gone.");
      if (chebyshev(p, g) > VIEW_RADIUS) return refuse(p, "TOO_FAR");
      p.action = { kind: "pickup", groundItemId: targetId };
      return;
    }
    case "talk": {
      const npc = w.npcs.get(targetId);
      if (npc && npc.respawnTick === undefined) {
        if (chebyshev(p, npc) > INTERACT_RANGE) return refuse(p, "TOO_FAR", `You need to be closer to talk to the ${npc.def.name.toLowerCase()}.`);
        return system(p, `${npc.def.name}: ${npc.def.examine}`);
      }
      return talkToStore(w, p, targetId);
    }
    case "buy":
    case "sell":
      return storeAction(w, p, a);
    case "unequip":
      return unequip(w, p, targetId);
    case "pray":
      return w.prayers.pray(p, targetId);
    case "unpray":
      return w.prayers.unpray(p, targetId);
  }
}

/**
 * Start fighting an NPC, or a player when both stand in a PvP area. With a launcher the first shot
 * must be possible from where the player stands: ammunition it can fire, the target in range and
 * in sight (docs/combat.md#ranged); later in the fight it walks after a target that leaves them.
 */
function attack(w: World, p: Player, targetId: string) {
  if (busyWithTrade(p)) return;
  const npc = w.npcs.get(targetId);
  const other = npc ? undefined : w.players.get(targetId);
  if (npc) {
    if (!npc.def.attackable || npc.respawnTick !== undefined) return refuse(p, "CANNOT_ATTACK");
    if (chebyshev(p, npc) > VIEW_RADIUS) return refuse(p, "TOO_FAR");
  } else if (other) {
    if (!w.combat.canPvp(p, other)) return refuse(p, "NOT_IN_PVP_AREA");
    if (other.dead) return refuse(p, "CANNOT_ATTACK");
    if (chebyshev(p, other) > VIEW_RADIUS) return refuse(p, "TOO_FAR");
  } else return refuse(p, "NO_SUCH_TARGET", "There is nothing like that to attack.");
  const target = (npc ?? other)!;
  const launcher = launcherOf(p, w.content);
  if (launcher) {
    const shot = shotCheck(p, launcher, { x: target.x, z: target.z }, w.content);
    if (!shot.ok) return refuse(p, shot.error.code, shot.error.message);
  }
  p.action = { kind: "attack", targetId };
}
