/**
 * The `WorldPort` routes and services get: every world of this process, found by the character
 * (the world that holds it). Asynchronous, so that a lookup in another process (the integrator's
 * cross-process bus) plugs in here without changing a caller.
 */
import type { StoredGoal } from "../../entities/character.js";
import type { PlayerSync } from "../events.js";
import type { LivePlayerSummary, Surroundings, WorldPort, WorldSnapshot } from "../world/port.js";
import type { LeaseStore } from "./leases.js";
import type { LocalWorlds } from "./worlds.js";

export class WorldsPort implements WorldPort {
  constructor(
    private readonly worlds: LocalWorlds,
    /** Leases: a character another process plays is not out of the world (`whileOutOfWorld`). */
    private readonly leases?: LeaseStore,
  ) {}

  /** The live port of the world holding the character, if any. */
  private holder(characterId: string) {
    return this.worlds.holding(characterId)?.world.port;
  }

  playersOnline(): number {
    return this.worlds.playersOnline();
  }

  isOnline(characterId: string): Promise<boolean> {
    return Promise.resolve(this.worlds.all().some((h) => h.world.isOnline(characterId)));
  }

  isInWorld(characterId: string): Promise<boolean> {
    return Promise.resolve(this.holder(characterId) !== undefined);
  }

  /**
   * `work` runs with the character out of every world: inside each world's out-of-world gate in
   * turn (each refuses while the character is there and holds its joins), and not while another
   * process holds the character's lease.
   */
  async whileOutOfWorld<T>(characterId: string, work: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> {
    const held = await this.leases?.holder(characterId);
    if (held && held.owner !== this.leases?.owner) return { ok: false };
    const gates = this.worlds.all().map((h) => h.world.port);
    const inAll = (i: number): Promise<{ ok: true; value: T } | { ok: false }> =>
      i === gates.length
        ? work().then((value) => ({ ok: true as const, value }))
        : gates[i]!.whileOutOfWorld(characterId, () => inAll(i + 1)).then((r) => (r.ok ? r.value : r));
    return inAll(0);
  }

  /** Applied in every world (after whatever each has queued for the character: a join in any of them ends with the new flag). */
  setAgentFlag(characterId: string, isAgent: boolean): Promise<void> {
    for (const h of this.worlds.all()) h.world.port.setAgentFlag(characterId, isAgent);
    return Promise.resolve();
  }

  livePlayer(characterId: string): Promise<LivePlayerSummary | undefined> {
    return Promise.resolve(this.holder(characterId)?.livePlayer(characterId));
  }

  livePlayerSync(characterId: string): Promise<PlayerSync | undefined> {
    return Promise.resolve(this.holder(characterId)?.livePlayerSync(characterId));
  }

  /** World `n`'s snapshot (the default world without a number); undefined for a world not hosted here. */
  snapshot(n?: number): Promise<(WorldSnapshot & { world: number }) | undefined> {
    const h = n === undefined ? this.worlds.default : this.worlds.get(n);
    return Promise.resolve(h ? { ...h.world.port.snapshot(), world: h.number } : undefined);
  }

  surroundings(characterId: string, radius: number): Promise<Surroundings | undefined> {
    return Promise.resolve(this.holder(characterId)?.surroundings(characterId, radius));
  }

  applyGoal(characterId: string, goal: StoredGoal | null, goalsPaused: boolean): Promise<boolean> {
    return Promise.resolve(this.holder(characterId)?.applyGoal(characterId, goal, goalsPaused) ?? false);
  }

  deliverPrivateMessage(characterId: string, from: { id?: string; name: string }, text: string): Promise<boolean> {
    return Promise.resolve(this.holder(characterId)?.deliverPrivateMessage(characterId, from, text) ?? false);
  }

  disconnect(characterId: string, code: number, reason: string): Promise<void> {
    this.holder(characterId)?.disconnect(characterId, code, reason);
    return Promise.resolve();
  }

  /** The social cache is shared by every world: told once. */
  socialChanged(characterIds: string[]): void {
    this.worlds.default.world.port.socialChanged(characterIds);
  }

  async flush(characterId: string): Promise<void> {
    await this.holder(characterId)?.flush(characterId);
  }
}
