/**
 * An in-memory `WorldAccess` for REST tests: the test decides who is online (with what live state)
 * and reads back every call the routes made.
 */
import type { StoredGoal } from "../../entities/character.js";
import type { PlayerSync } from "../../src/events.js";
import type { LivePlayerSummary, Surroundings, WorldMap, WorldAccess, WorldSnapshot } from "../../src/world/access.js";

export interface FakeWorldCall {
  method: string;
  args: unknown[];
}

export interface FakeOnlinePlayer {
  summary: LivePlayerSummary;
  sync: Record<string, unknown>;
  surroundings?: Surroundings;
}

export class FakeWorld implements WorldAccess {
  readonly calls: FakeWorldCall[] = [];
  readonly online = new Map<string, FakeOnlinePlayer>();
  /** Characters in the world without a connection (dropped, awaiting reconnection). */
  readonly lingering = new Set<string>();
  /** Private messages delivered, in order. */
  readonly messages: { characterId: string; from: { id?: string; name: string }; text: string }[] = [];
  tick = 42;

  /** Put a character online with a live state (defaults fill the rest). */
  setOnline(id: string, live: Partial<LivePlayerSummary> & { sync?: Record<string, unknown>; surroundings?: Surroundings } = {}) {
    const summary: LivePlayerSummary = {
      id,
      accountId: live.accountId ?? "unknown",
      name: live.name ?? "Someone",
      isAgent: live.isAgent ?? false,
      position: live.position ?? { x: 0, y: 10, z: 0 },
      combatLevel: live.combatLevel ?? 3,
      health: live.health ?? 100,
      maxHealth: live.maxHealth ?? 100,
    };
    this.online.set(id, { summary, sync: { id, position: summary.position, ...(live.sync ?? {}) }, surroundings: live.surroundings });
  }

  setOffline(id: string) {
    this.online.delete(id);
  }

  /** Calls of one method, in order. */
  callsOf(method: string): unknown[][] {
    return this.calls.filter((c) => c.method === method).map((c) => c.args);
  }

  private record(method: string, ...args: unknown[]) {
    this.calls.push({ method, args });
  }

  playersOnline(): number {
    return this.online.size;
  }

  async isOnline(characterId: string): Promise<boolean> {
    return this.online.has(characterId);
  }

  async isInWorld(characterId: string): Promise<boolean> {
    return this.online.has(characterId) || this.lingering.has(characterId);
  }

  async whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    this.record("whileOutOfWorld", characterId);
    if (await this.isInWorld(characterId)) return { ok: false };
    return { ok: true, value: await work() };
  }

  async setAgentFlag(characterId: string, isAgent: boolean): Promise<void> {
    this.record("setAgentFlag", characterId, isAgent);
    const p = this.online.get(characterId);
    if (!p) return;
    p.summary.isAgent = isAgent;
    p.sync = { ...p.sync, isAgent };
  }

  async livePlayer(characterId: string): Promise<LivePlayerSummary | undefined> {
    return this.online.get(characterId)?.summary;
  }

  async livePlayerSync(characterId: string): Promise<PlayerSync | undefined> {
    // Only the fields a test set: REST lays them over the stored record.
    return this.online.get(characterId)?.sync as PlayerSync | undefined;
  }

  async map(world?: number): Promise<(WorldMap & { world: number }) | undefined> {
    if (world !== undefined && world !== 1) return undefined;
    const players = [...this.online.values()].map(({ summary: s }) => ({
      id: s.id,
      name: s.name,
      x: s.position.x,
      z: s.position.z,
      health: s.health,
      maxHealth: s.maxHealth,
      isAgent: s.isAgent,
      online: true,
    }));
    return { world: 1, tick: 0, players, npcs: [] };
  }

  async snapshot(world?: number): Promise<(WorldSnapshot & { world: number }) | undefined> {
    if (world !== undefined && world !== 1) return undefined;
    const players = [...this.online.values()].map(({ summary: s }) => ({
      id: s.id,
      name: s.name,
      position: s.position,
      combatLevel: s.combatLevel,
      isAgent: s.isAgent,
    }));
    return {
      world: 1,
      tick: this.tick,
      serverTime: new Date().toISOString(),
      playersOnline: players.length,
      players,
      npcCount: 7,
      resourceCount: 11,
      groundItemCount: 0,
    };
  }

  async surroundings(characterId: string, radius: number): Promise<Surroundings | undefined> {
    this.record("surroundings", characterId, radius);
    const p = this.online.get(characterId);
    if (!p) return undefined;
    return p.surroundings ?? { stations: [], resources: [], npcs: [], groundItems: [] };
  }

  async applyGoal(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): Promise<boolean> {
    this.record("applyGoal", characterId, goal, goalsPaused);
    const p = this.online.get(characterId);
    if (!p) return false;
    p.sync = { ...p.sync, goal, goalsPaused };
    return true;
  }

  async deliverPrivateMessage(characterId: string, from: { id?: string; name: string }, text: string): Promise<boolean> {
    this.record("deliverPrivateMessage", characterId, from, text);
    if (!this.online.has(characterId)) return false;
    this.messages.push({ characterId, from, text });
    return true;
  }

  async disconnect(characterId: string, code: number, reason: string): Promise<void> {
    this.record("disconnect", characterId, code, reason);
    this.online.delete(characterId);
  }

  socialChanged(characterIds: string[]): void {
    this.record("socialChanged", characterIds);
  }

  async flush(characterId: string): Promise<void> {
    this.record("flush", characterId);
  }
}
