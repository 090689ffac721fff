/** One live world as REST sees it: the `LocalWorldAccess` implementation over the world's players (`world.access`). */
import type { StoredGoal } from "../domain/goal-progress.js";
import type { WorldClock } from "./clock.js";
import type { GroundItem, Npc, ResourceInstance } from "./objects.js";
import { chatMessage } from "./messages.js";
import type { PlayerQueues } from "./player-queues.js";
import type { Player } from "./player.js";
import type { LivePlayerSummary, LocalWorldAccess, Surroundings, WorldMap, WorldSnapshot } from "./access.js";
import type { Movement } from "./systems/movement.js";
import type { Saving } from "./systems/saving.js";
import type { Visibility } from "./systems/visibility.js";

/** What the access asks of the world's membership (`World`). */
export interface Membership {
  playersOnline(): number;
  isOnline(characterId: string): boolean;
  isInWorld(characterId: string): boolean;
  whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }>;
  leave(playerId: string, reason: string, connectionId?: string, force?: boolean): Promise<void>;
}

export interface LocalAccessDeps {
  membership: Membership;
  players: ReadonlyMap<string, Player>;
  npcs: ReadonlyMap<string, Npc>;
  resources: ReadonlyMap<string, ResourceInstance>;
  groundItems: ReadonlyMap<string, GroundItem>;
  queues: PlayerQueues;
  clock: WorldClock;
  movement: Movement;
  visibility: Visibility;
  saving: Saving;
  /** Told when social relations change (the chat's cache of them). */
  socialChanged?: (characterIds: string[]) => void;
}

export class LocalAccess implements LocalWorldAccess {
  constructor(private readonly d: LocalAccessDeps) {}

  playersOnline(): number {
    return this.d.membership.playersOnline();
  }

  isOnline(characterId: string): boolean {
    return this.d.membership.isOnline(characterId);
  }

  isInWorld(characterId: string): boolean {
    return this.d.membership.isInWorld(characterId);
  }

  whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    return this.d.membership.whileOutOfWorld(characterId, work);
  }

  /**
   * Applied in the character's storage queue, after the caller's write: a join that read the
   * character before that write is in the world by then and gets the new flag; one that reads after
   * it reads the new flag.
   */
  setAgentFlag(characterId: string, isAgent: boolean): void {
    void this.d.queues.run(characterId, () => {
      const p = this.d.players.get(characterId);
      if (p && p.isAgent !== isAgent) {
        p.isAgent = isAgent;
        p.sync();
      }
      return Promise.resolve();
    });
  }

  livePlayer(characterId: string): LivePlayerSummary | undefined {
    const p = this.d.players.get(characterId);
    if (!p) return undefined;
    return {
      id: p.id,
      accountId: p.accountId,
      name: p.name,
      isAgent: p.isAgent,
      position: { x: p.x, y: p.y, z: p.z },
      combatLevel: p.combatLevel,
      health: p.health,
      maxHealth: p.maxHealth,
    };
  }

  livePlayerSync(characterId: string) {
    return this.d.players.get(characterId)?.syncPayload();
  }

  snapshot(): WorldSnapshot {
    // Connected players only, like playersOnline (a dropped one lingering for reconnection is not online).
    const players = [...this.d.players.values()]
      .filter((p) => p.connection !== undefined)
      .map((p) => ({ id: p.id, name: p.name, position: { x: p.x, y: p.y, z: p.z }, combatLevel: p.combatLevel, isAgent: p.isAgent }));
    let alive = 0;
    for (const n of this.d.npcs.values()) if (n.respawnTick === undefined) alive++;
    return {
      tick: this.d.clock.tick,
      serverTime: new Date(this.d.clock.now()).toISOString(),
      playersOnline: this.playersOnline(),
      players,
      npcCount: alive,
      resourceCount: this.d.resources.size,
      groundItemCount: this.d.groundItems.size,
    };
  }

  map(): WorldMap {
    return {
      tick: this.d.clock.tick,
      players: [...this.d.players.values()].map((p) => ({
        id: p.id,
        name: p.name,
        x: p.x,
        z: p.z,
        health: p.health,
        maxHealth: p.maxHealth,
        isAgent: p.isAgent,
        online: p.connection !== undefined,
      })),
      npcs: [...this.d.npcs.values()].map((n) => ({
        id: n.id,
        npcId: n.def.id,
        name: n.def.name,
        x: n.x,
        z: n.z,
        health: n.health,
        maxHealth: n.maxHealth,
        alive: n.respawnTick === undefined,
      })),
    };
  }

  surroundings(characterId: string, radius: number): Surroundings | undefined {
    const p = this.d.players.get(characterId);
    return p ? this.d.visibility.surroundings(p, radius) : undefined;
  }

  applyGoal(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): boolean {
    const p = this.d.players.get(characterId);
    if (!p) return false;
    p.goal = goal;
    p.goalsPaused = goalsPaused;
    if (goalsPaused) this.d.movement.stop(p);
    p.safety.progressChanged();
    p.sync();
    return true;
  }

  deliverPrivateMessage(characterId: string, from: { id?: string; name: string }, text: string): boolean {
    const p = this.d.players.get(characterId);
    if (!p?.connection) return false;
    p.send("chat:message", chatMessage("private", text, from.id, from.name));
    return true;
  }

  disconnect(characterId: string, code: number, reason: string): void {
    const p = this.d.players.get(characterId);
    if (!p) return;
    p.connection?.close(code, reason);
    // Not forced: a character in combat stays, without its connection, until the fight is over
    // (docs/protocol.md "Leaving in combat"; an agent's token replaced or revoked is no escape from a fight).
    this.d.membership.leave(characterId, reason, undefined, false).catch(() => undefined); // a failed save is logged by its queue
  }

  socialChanged(characterIds: string[]): void {
    this.d.socialChanged?.(characterIds);
  }

  async flush(characterId: string): Promise<void> {
    const p = this.d.players.get(characterId);
    if (!p) return;
    await this.d.queues.run(p.id, () => this.d.saving.save(p));
  }
}
