/**
 * `CharacterResolver`: which character a join plays and the record it is built from, read in the
 * character's storage queue (docs/protocol.md#joining). The rooms call it from their join paths.
 */
import type { Principal } from "../auth/service.js";
import type { CharacterRecord, CharacterStore } from "./ports/character-store.js";
import type { LeaseFence } from "./ports/lease-fence.js";
import { WorldError } from "./errors.js";
import type { GroundItem } from "./objects.js";
import type { World } from "./world.js";

/**
 * Creates a character for an account that joins without one (starter kit and defaults), named
 * after `preferredName` when that is a valid free name.
 */
export type CharacterFactory = (accountId: string, preferredName: string | undefined) => Promise<{ id: string }>;

export interface CharacterResolverDeps {
  world: World;
  characters: CharacterStore;
  createCharacter: CharacterFactory;
  /**
   * Runs the join of a character with the character out of every other world and its lease held by
   * this world (src/cluster/claims.ts), giving it the lease's fence; without it the join runs as it
   * is (one world, no leases, nothing to fence).
   */
  claim?: <T>(characterId: string, join: (fence?: LeaseFence) => Promise<T>) => Promise<T>;
}

export class CharacterResolver {
  private readonly world: World;
  private readonly characters: CharacterStore;

  constructor(private readonly deps: CharacterResolverDeps) {
    this.world = deps.world;
    this.characters = deps.characters;
  }

  /**
   * Which character a join plays — the one its token is bound to, the one requested (it must belong
   * to the account), the account's first, or a new one with the starter kit — and its record, read
   * inside the character's storage queue after every write already queued for it (a leave's save, a
   * death, a settlement), so a player is never built from rows read before those landed. An open
   * death lock is recovered there first. `enter` (the join) runs in the same queue job with the
   * record: nothing queued after the read (a save, an agent flag change, a rename) can come between
   * the read and the join. The record says whether a death lock is open, so a join without one
   * opens no recovery transaction.
   * @throws WorldError CHARACTER_NOT_FOUND (404), CHARACTER_FORBIDDEN (403: another account's, or the
   * token is bound to another character), CHARACTER_BUSY (409: an out-of-world change of the
   * character is queued or running).
   */
  async resolveCharacter<T = CharacterRecord>(
    principal: Principal,
    requested: string | undefined,
    enter: (record: CharacterRecord) => T = (record) => record as T,
  ): Promise<T> {
    let id = principal.characterId ?? requested;
    if (principal.characterId && requested && requested !== principal.characterId) {
      throw new WorldError("CHARACTER_FORBIDDEN", "this token is bound to another character");
    }
    if (!id) {
      id = (await this.characters.firstOfAccount(principal.accountId)) ?? (await this.deps.createCharacter(principal.accountId, principal.name)).id;
    }
    const characterId = id;
    // Refused at once rather than queued behind the change (which may take a while).
    this.world.assertMayJoin(characterId);
    // Refusals come back as values: a thrown one would be logged as a failed storage job.
    const join = (fence?: LeaseFence) =>
      this.world.queues.run(characterId, async (): Promise<{ value: T } | WorldError> => {
        const record = await this.characters.load(characterId);
        if (!record) return new WorldError("CHARACTER_NOT_FOUND", "no such character");
        if (record.character.accountId !== principal.accountId) return new WorldError("CHARACTER_FORBIDDEN", "that character belongs to another account");
        try {
          // The recovery (a transaction with the open lock row locked) runs only when the load saw an
          // open death lock: almost every join has none and pays nothing for it. Nothing can open one
          // after that read and before this join has entered: a lock is opened only by a death
          // (`recordDeath`), which runs in the character's storage queue — this job is in it, after
          // every job queued before it — and, in a cluster, under the character's lease, which
          // `claim` took before this job ran (taking it waits for a death transaction of the former
          // holder that already checked the lease, and refuses every later one: docs/cluster.md
          // "The fence"). A lock the world closes meanwhile (`resolveDeath`) makes the recovery
          // restore nothing, as before.
          // The player is built under the lease just taken: every write of it checks that lease.
          const entered = (record.openDeath ? await this.recoverDeath(characterId, fence) : undefined) ?? record;
          return { value: enter({ ...entered, ...(fence ? { fence } : {}) }) };
        } catch (e) {
          if (e instanceof WorldError) return e;
          throw e;
        }
      });
    const entered = await (this.deps.claim ? this.deps.claim(characterId, join) : join());
    if (entered instanceof WorldError) throw entered;
    return entered.value;
  }

  /**
   * A death lock left open (the process ended, or could not resolve it, before the dropped items
   * went on the ground) gives those items to the bank. Only for a character that is not live in
   * this world — a live one's death is still being resolved by the world. What the bank can't hold
   * (past the stack cap) is put on the ground where the player died, owned by it. Runs inside the
   * character's storage queue (`resolveCharacter`). Returns the reloaded record when something was
   * restored.
   */
  private async recoverDeath(characterId: string, fence?: LeaseFence): Promise<CharacterRecord | undefined> {
    if (this.world.player(characterId)) return undefined;
    const { ground, worldState } = this.world;
    // What the bank could not hold (past the stack cap) goes where the player died, as it would have:
    // its piles are stored in the recovery's transaction, and go on the ground once it committed.
    const piles: GroundItem[] = [];
    const recovered = await this.characters.recoverOpenDeath(characterId, fence, (r) => {
      piles.push(...r.overflow.map((o) => ground.newPile(o.itemId, o.quantity, r.at.x, r.at.z, characterId)));
      return worldState.putStep(piles);
    });
    ground.place(...piles);
    if (recovered.restored === 0) return undefined;
    return (await this.characters.load(characterId)) ?? undefined;
  }
}
