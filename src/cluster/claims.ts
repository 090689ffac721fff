/**
 * One character, one world (docs/operations.md "Worlds"). Every join goes through `claim`: per character, one
 * at a time in this process, it
 * 1. takes the character out of every other world of this process (old connection closed with
 *    REPLACED, player saved and removed) and waits for whatever those worlds still have queued for
 *    it (a save, a settlement), so the joining world reads it from storage only after that;
 * 2. takes its lease in storage (`LeaseStore.take`, compare-and-set): a lease another process holds
 *    and still renews is asked to be released (`RemoteRelease`), refused (409 CHARACTER_ELSEWHERE)
 *    if it is not; an expired one is taken over;
 * 3. runs the join; a join that did not end with the character in the world releases the lease.
 * While the character is in a world its lease is renewed every LEASE_RENEW_MS; once it has left and
 * been saved (`playerLeft`) the lease is released. Every write of the player checks the lease's
 * epoch (docs/cluster.md "The fence"); a lease that changed hands is lost for good.
 */
import type { Logger } from "../logger.js";
import type { LeaseFence } from "../storage/fence.js";
import { WorldError } from "../world/errors.js";
import type { World } from "../world/world.js";
import { LEASE_RENEW_MS, type LeaseHolder, type LeaseStore } from "./leases.js";

/**
 * Asks the process holding a character's lease to let the character go (leave and save it), so a
 * join elsewhere can take the lease. Resolves true when the holder has released the lease. The
 * hook the cross-process release plugs into (`BusRemoteRelease`, src/cluster/remote.ts); without
 * it `REFUSE_REMOTE_RELEASE`. May throw a `WorldError` (CHARACTER_IN_COMBAT) the holder answered.
 */
export interface RemoteRelease {
  release(characterId: string, holder: LeaseHolder): Promise<boolean>;
}

/** No cross-process release: a character playing in another process is refused (409). */
export const REFUSE_REMOTE_RELEASE: RemoteRelease = { release: () => Promise.resolve(false) };

/** A world of this process, as claims see it. */
export interface ClaimedWorld {
  number: number;
  world: World;
}

/**
 * The worlds this process hosts, as the cluster sees them: what `ClusterWorldAccess` and the holder side of
 * the bus (`serveWorlds`) use. The composition root builds them (`LocalWorlds`, src/server/hosted-worlds.ts).
 */
export interface ProcessWorlds {
  /** The default world: 1 when hosted, else the lowest. */
  readonly default: ClaimedWorld;
  readonly claims: CharacterClaims;
  get(n: number): ClaimedWorld | undefined;
  /** Every hosted world, ascending. */
  all(): ClaimedWorld[];
  /** The world the character is in (connected, or dropped and awaiting reconnection), if any here. */
  holding(characterId: string): ClaimedWorld | undefined;
  /** Connected players of every hosted world. */
  playersOnline(): number;
}

export interface ClaimsDeps {
  leases: LeaseStore;
  /** This process's worlds. */
  worlds: () => Iterable<ClaimedWorld>;
  remote?: RemoteRelease;
  /** Close code of a connection replaced by a join in another world (REPLACED). */
  replacedCode: number;
  logger: Logger;
  renewMs?: number;
}

export class CharacterClaims {
  private readonly locks = new Map<string, Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  private renewing: Promise<void> | undefined;
  private readonly stopListening: (() => void)[] = [];

  constructor(private readonly d: ClaimsDeps) {}

  /**
   * From now on: a character that left a world and was saved releases its lease, and the leases of
   * every character in this process's worlds are renewed every `renewMs`.
   */
  start(): void {
    if (this.timer) return;
    for (const w of this.d.worlds()) {
      this.stopListening.push(w.world.events.on("playerLeft", (id) => void this.released(id, w).catch((e: unknown) => this.failed(e, id))));
    }
    this.timer ??= setInterval(() => this.renewNow(), this.d.renewMs ?? LEASE_RENEW_MS);
    this.timer.unref();
  }

  /** Stop renewing (shutdown; `leases.releaseAll` follows once every player is saved). */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    for (const stop of this.stopListening.splice(0)) stop();
  }

  /**
   * Run `join` (which puts the character in world `world`) with the character out of every other
   * world and its lease held by `world`; `join` gets the lease's fence (the player it builds writes
   * only under it, docs/cluster.md "The fence"). Joins of one character run one at a time.
   * @throws WorldError CHARACTER_IN_COMBAT (409: in a fight in another world of this process),
   * CHARACTER_BUSY (409: a trade of it is settling in another world of this process),
   * CHARACTER_ELSEWHERE (409: its lease is held by another process that did not release it).
   */
  claim<T>(characterId: string, world: number, join: (fence?: LeaseFence) => Promise<T>): Promise<T> {
    return this.exclusive(characterId, async () => {
      for (const other of this.d.worlds()) {
        if (other.number !== world) await this.takeOut(characterId, other, `replaced by a join in world ${world}`);
      }
      let taken = await this.d.leases.take(characterId, world);
      // No such character: nothing to lease; the join itself answers CHARACTER_NOT_FOUND.
      if (!taken.ok && "missing" in taken) return join();
      const remote = this.d.remote ?? REFUSE_REMOTE_RELEASE;
      // Released by its holder; or not (it did not answer): the lease may have expired meanwhile.
      if (!taken.ok) {
        await remote.release(characterId, taken.holder);
        taken = await this.d.leases.take(characterId, world);
      }
      if (!taken.ok) {
        if ("missing" in taken) return join();
        const { holder } = taken;
        throw new WorldError(
          "CHARACTER_ELSEWHERE",
          `this character is playing in world ${holder.world} on another server; leave there first or retry in ${holder.expiresInSeconds} s`,
        );
      }
      try {
        return await join(taken.fence);
      } finally {
        if (!this.worldOf(world)?.isInWorld(characterId)) await this.d.leases.release(characterId, world).catch((e: unknown) => this.failed(e, characterId));
      }
    });
  }

  /**
   * Another process asks for the character (its join takes the lease next, `RemoteRelease`): when
   * this process still holds the lease, the character leaves whichever world of this process has it
   * exactly as for a join in another world here (connection closed with REPLACED, saved, whatever
   * the world queued for it written), then the lease is released. True once the lease is not held
   * here (also when it was not); throws CHARACTER_IN_COMBAT as a local replacement would.
   */
  letGo(characterId: string): Promise<boolean> {
    return this.exclusive(characterId, async () => {
      const holder = await this.d.leases.holder(characterId);
      if (holder?.owner !== this.d.leases.owner) return true;
      for (const w of this.d.worlds()) await this.takeOut(characterId, w, "replaced by a join on another server");
      await this.d.leases.releaseMine(characterId);
      return true;
    });
  }

  /** The character leaves `other` (closed with REPLACED and `why`), saved, with everything `other` queued for it written. */
  private async takeOut(characterId: string, other: ClaimedWorld, why: string): Promise<void> {
    const p = other.world.player(characterId);
    // A settlement there holds its items (point 6 of docs/cluster.md "Races"): it would commit after
    // this world loaded the pre-trade rows. Refused until it ends (its fence would refuse it too).
    if (other.world.itemsHeld(characterId)) {
      throw new WorldError("CHARACTER_BUSY", `a trade of this character is settling in world ${other.number}; join again in a moment`);
    }
    if (p) {
      if (other.world.inCombat(p)) {
        throw new WorldError("CHARACTER_IN_COMBAT", `this character is in combat in world ${other.number}; join again when the fight is over`);
      }
      p.connection?.close(this.d.replacedCode, why);
      await other.world.leave(characterId, "replaced_other_world", undefined, true);
    }
    await other.world.queues.run(characterId, () => Promise.resolve());
  }

  /** A character left world `w` and was saved: its lease goes, unless it is back in `w` already. */
  private released(characterId: string, w: ClaimedWorld): Promise<void> {
    return this.exclusive(characterId, async () => {
      if (!w.world.isInWorld(characterId)) await this.d.leases.release(characterId, w.number);
    });
  }

  /**
   * Renew now, unless a renewal is running (then that one answers): on the timer, and at once when a
   * world finds leases in doubt (docs/cluster.md "The holder's own clock"), so a process that wakes
   * from a stall learns which leases it still holds without waiting for the next round.
   */
  renewNow(): void {
    if (this.renewing || !this.timer) return;
    this.renewing = this.renew()
      .catch((e: unknown) => this.d.logger.error({ err: e }, "renewing character leases failed"))
      .finally(() => (this.renewing = undefined));
  }

  /**
   * Renew the leases of every character in this process's worlds, each under the epoch its player
   * was loaded with. A lease found lost (it changed hands: taken over after it expired, e.g. this
   * process was stalled or storage unreachable for longer than the lease lasts) is never taken
   * back: the player is dropped without writing anything (`World.dropLost`, one log line).
   */
  async renew(): Promise<void> {
    const where = new Map<string, { w: ClaimedWorld; epoch: string }>();
    for (const w of this.d.worlds()) {
      for (const [id, p] of w.world.players) if (p.fence && p.fence.owner === this.d.leases.owner) where.set(id, { w, epoch: p.fence.epoch });
    }
    if (where.size === 0) return;
    const asked = Date.now();
    const renewed = await this.d.leases.renew([...where].map(([characterId, { epoch }]) => ({ characterId, epoch })));
    for (const [id, { w, epoch }] of where) {
      if (renewed.has(id)) {
        // Held for another term from when the renewal was asked for (docs/cluster.md "The holder's own clock").
        const p = w.world.player(id);
        if (p?.fence?.epoch === epoch) p.leaseValidUntil = Math.max(p.leaseValidUntil ?? 0, asked + this.d.leases.termMs);
        continue;
      }
      await this.exclusive(id, () => Promise.resolve(w.world.dropLost(id, "its lease changed hands (renewal found another holder)", epoch)));
    }
  }

  private worldOf(n: number): World | undefined {
    for (const w of this.d.worlds()) if (w.number === n) return w.world;
    return undefined;
  }

  /** Run `work` after every earlier claim, release and renewal of the same character. */
  private exclusive<T>(characterId: string, work: () => Promise<T>): Promise<T> {
    const previous = this.locks.get(characterId) ?? Promise.resolve();
    const run = previous.then(work);
    const tail = run.catch(() => undefined);
    this.locks.set(characterId, tail);
    void tail.then(() => {
      if (this.locks.get(characterId) === tail) this.locks.delete(characterId);
    });
    return run;
  }

  private failed(e: unknown, characterId: string) {
    this.d.logger.error({ err: e, characterId }, "character lease update failed");
  }
}
