/**
 * The `WorldAccess` routes and services get: every world of this process, found by the character
 * (the world that holds it), and with a cluster (`RemoteWorlds`) the worlds of every other process:
 * a character not in a world here is asked of the process holding its lease, over the bus. A holder
 * that does not answer: 503 SERVER_BUSY (Retry-After) for what a route needs, "offline" for
 * `isOnline` and private messages (src/cluster/remote.ts).
 */
import type { StoredGoal } from "../../entities/character.js";
import type { PlayerSync } from "../events.js";
import type { LivePlayerSummary, Surroundings, WorldMap, WorldAccess, WorldSnapshot } from "../world/access.js";
import type { ProcessWorlds } from "./claims.js";
import type { LeaseStore } from "./leases.js";
import type { RemoteWorlds } from "./remote.js";

export class ClusterWorldAccess implements WorldAccess {
  constructor(
    private readonly worlds: ProcessWorlds,
    /** Leases: a character another process plays is not out of the world (`whileOutOfWorld`). */
    private readonly leases?: LeaseStore,
    /** Other processes' worlds (none: this process alone). */
    private readonly remote?: RemoteWorlds,
  ) {}

  /** The local access of the world holding the character, if any. */
  private holder(characterId: string) {
    return this.worlds.holding(characterId)?.world.access;
  }

  playersOnline(): number {
    return this.worlds.playersOnline();
  }

  async isOnline(characterId: string): Promise<boolean> {
    if (this.worlds.all().some((h) => h.world.isOnline(characterId))) return true;
    return (await this.remote?.quiet("world.isOnline", { characterId }, false)) ?? false;
  }

  async isInWorld(characterId: string): Promise<boolean> {
    if (this.holder(characterId)) return true;
    return (await this.remote?.ask("world.isInWorld", { characterId }, false)) ?? false;
  }

  /**
   * `work` runs with the character out of every world: inside each world's out-of-world gate in
   * turn (each refuses while the character is there and holds its joins), and not while another
   * process holds the character's lease.
   */
  async whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    const held = await this.leases?.holder(characterId);
    if (held && held.owner !== this.leases?.owner) return { ok: false };
    const gates = this.worlds.all().map((h) => h.world.access);
    const inAll = (i: number): Promise<{ ok: true; value: T } | { ok: false }> =>
      i === gates.length
        ? work().then((value) => ({ ok: true as const, value }))
        : gates[i]!.whileOutOfWorld(characterId, () => inAll(i + 1)).then((r) => (r.ok ? r.value : r));
    return inAll(0);
  }

  /** Applied in every world (after whatever each has queued for the character: a join in any of them ends with the new flag). */
  async setAgentFlag(characterId: string, isAgent: boolean): Promise<void> {
    for (const h of this.worlds.all()) h.world.access.setAgentFlag(characterId, isAgent);
    await this.remote?.ask("world.setAgentFlag", { characterId, isAgent }, undefined);
  }

  async livePlayer(characterId: string): Promise<LivePlayerSummary | undefined> {
    const local = this.holder(characterId);
    if (local) return local.livePlayer(characterId);
    return this.remote?.ask<"world.livePlayer", LivePlayerSummary | undefined>("world.livePlayer", { characterId }, undefined);
  }

  async livePlayerSync(characterId: string): Promise<PlayerSync | undefined> {
    const local = this.holder(characterId);
    if (local) return local.livePlayerSync(characterId);
    return this.remote?.ask<"world.livePlayerSync", PlayerSync | undefined>("world.livePlayerSync", { characterId }, undefined);
  }

  /** World `n`'s snapshot (the default world without a number); undefined for a world not hosted here. */
  snapshot(n?: number): Promise<(WorldSnapshot & { world: number }) | undefined> {
    const h = n === undefined ? this.worlds.default : this.worlds.get(n);
    return Promise.resolve(h ? { ...h.world.access.snapshot(), world: h.number } : undefined);
  }

  /** World `n`'s map (the default world without a number); undefined for a world not hosted here. */
  map(n?: number): Promise<(WorldMap & { world: number }) | undefined> {
    const h = n === undefined ? this.worlds.default : this.worlds.get(n);
    return Promise.resolve(h ? { ...h.world.access.map(), world: h.number } : undefined);
  }

  async surroundings(characterId: string, radius: number): Promise<Surroundings | undefined> {
    const local = this.holder(characterId);
    if (local) return local.surroundings(characterId, radius);
    return this.remote?.ask<"world.surroundings", Surroundings | undefined>("world.surroundings", { characterId, radius }, undefined);
  }

  async applyGoal(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): Promise<boolean> {
    const local = this.holder(characterId);
    if (local) return local.applyGoal(characterId, goal, goalsPaused);
    return (await this.remote?.ask("world.applyGoal", { characterId, goal, goalsPaused }, false)) ?? false;
  }

  /** Delivered where the character plays; a process that does not answer counts as offline (false). */
  async deliverPrivateMessage(characterId: string, from: { id?: string; name: string }, text: string): Promise<boolean> {
    const local = this.holder(characterId);
    if (local) return local.deliverPrivateMessage(characterId, from, text);
    return (await this.remote?.quiet("world.deliverPrivateMessage", { characterId, from, text: text.slice(0, 2_000) }, false)) ?? false;
  }

  async disconnect(characterId: string, code: number, reason: string): Promise<void> {
    const local = this.holder(characterId);
    if (local) return local.disconnect(characterId, code, reason);
    await this.remote?.ask("world.disconnect", { characterId, code, reason: reason.slice(0, 120) }, undefined);
  }

  /** The social cache is shared by every world of a process: told once here, and broadcast to the other processes. */
  socialChanged(characterIds: string[]): void {
    this.worlds.default.world.access.socialChanged(characterIds);
    this.remote?.socialChanged(characterIds);
  }

  async flush(characterId: string): Promise<void> {
    const local = this.holder(characterId);
    if (local) return local.flush(characterId);
    await this.remote?.ask("world.flush", { characterId }, undefined);
  }
}
