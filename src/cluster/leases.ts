/**
 * Character leases in storage (table `character_leases`, docs/operations.md "Worlds"): a character plays in at
 * most one world at a time, across every process sharing the database. The world that plays it
 * holds its lease — this process (`owner`) and the world number — until `expires_at`, renews it
 * while the character is there and deletes it when the character has left and been saved. A lease
 * whose holder stopped renewing (a killed process) expires and is simply taken over, so a killed
 * process frees its characters within `LEASE_TTL_SECONDS`. Each grant that changes hands draws a
 * new `epoch` (sequence `character_lease_epochs`): the fencing token every write of the character
 * checks in its own transaction (src/storage/fence.ts, docs/cluster.md "The fence"), so a holder
 * that lost its lease (stalled past it) can never write again.
 *
 * Every change is one statement compared and set by PostgreSQL against its own clock: two joins
 * racing for the same character (in any processes) cannot both take it.
 */
import { batchedInFlight, uniqueRounds } from "../storage/batches.js";
import type { LeaseFence } from "../storage/fence.js";
import { executeNative } from "../storage/native.js";
import type { Orm } from "../storage/orm.js";

/** How long a lease lasts without renewal by default (`LEASE_TTL_SECONDS`): a killed process frees its characters within this. */
export const LEASE_TTL_SECONDS = 30;
/** How often the leases of the characters in this process's worlds are renewed by default: a third of the TTL. */
export const LEASE_RENEW_MS = 10_000;

/** Who holds a character's lease. */
export interface LeaseHolder {
  /** The process (its `owner` id, see `LeaseStore`). */
  owner: string;
  world: number;
  /** Seconds until the lease expires unless renewed (0 when it has). */
  expiresInSeconds: number;
}

/** Taken (under `fence`); or held by `holder`; or `missing`: no such character (nothing to lease: the join finds it gone). */
export type TakeResult = { ok: true; fence: LeaseFence } | { ok: false; holder: LeaseHolder } | { ok: false; missing: true };

type HolderRow = { owner: string; world: number; left: string | number };

/** A lease asked for: of `characterId`, for `world` of this process. */
type LeaseAsk = { characterId: string; world: number };
/** No such character (`grantAll`). */
const MISSING = Symbol("missing");

/**
 * Grant the leases of these characters (an array each of ids and worlds) to this process (`owner`,
 * term in seconds) where nobody holds one, it has expired, or this process holds it; a grant that
 * changes hands draws a new epoch. Characters that do not exist get none. Rows are taken in id order
 * (as `renew` and the batched save's fence lock them: no deadlock between them). Returns the granted
 * ids with their epochs.
 */
const TAKE_SQL = `insert into character_leases (character_id, owner, world, expires_at, epoch)
  select v.id, ?::text, v.world, now() + make_interval(secs => ?), nextval('character_lease_epochs')
  from unnest(?::text[], ?::int[]) as v(id, world) where exists (select 1 from characters c where c.id = v.id) order by v.id
  on conflict (character_id) do update set owner = excluded.owner, world = excluded.world, expires_at = excluded.expires_at,
    epoch = case when character_leases.owner = excluded.owner and character_leases.world = excluded.world then character_leases.epoch else excluded.epoch end
  where character_leases.expires_at <= now() or character_leases.owner = excluded.owner
  returning character_id, epoch`;

export class LeaseStore {
  /**
   * @param owner this process's id, unique per start: its Colyseus `processId`, the address of its
   * bus requests (a restart never takes over its predecessor's leases early: they expire)
   */
  constructor(
    private readonly orm: Orm,
    readonly owner: string,
    readonly ttlSeconds = LEASE_TTL_SECONDS,
  ) {}

  /**
   * How long after a grant or renewal was asked for the lease is surely still held: its length less
   * a tenth (at most 1 s) for the clocks of this process and of PostgreSQL, which stamps
   * `expires_at` with its own `now()`, to differ by.
   */
  get termMs(): number {
    return this.ttlSeconds * 1000 - Math.min(1000, this.ttlSeconds * 100);
  }

  /** `grantAll` of one ask, batched with the concurrent ones (src/storage/batches.ts). */
  private readonly grant = batchedInFlight((asks: readonly LeaseAsk[]) => this.grantAll(asks));

  private sql<T>(query: string, params: unknown[]): Promise<T[]> {
    return this.orm.em.fork().getConnection().execute<T[]>(query, params);
  }

  /**
   * Take the character's lease for `world` of this process: granted when nobody holds it, it has
   * expired, or this process holds it (in any of its worlds: the caller has made sure the character
   * left that world, see `CharacterClaims`). Otherwise the current holder. A grant that changes
   * hands (another owner, another world, or no lease before) gets a new epoch; a lease this world
   * already holds keeps its epoch (docs/cluster.md "The fence").
   */
  async take(characterId: string, world: number): Promise<TakeResult> {
    for (let attempt = 0; attempt < 3; attempt++) {
      // Before the statement is sent (it may wait for a batch in flight): the term is counted from here.
      const asked = Date.now();
      const epoch = await this.grant({ characterId, world });
      if (epoch === MISSING) return { ok: false, missing: true };
      if (epoch !== undefined) return { ok: true, fence: { owner: this.owner, epoch, validUntil: asked + this.termMs } };
      const holder = await this.holder(characterId);
      if (holder) return { ok: false, holder };
      if (!(await this.sql(`select 1 from characters where id = ?`, [characterId])).length) return { ok: false, missing: true };
      // Released between the two statements: try again.
    }
    throw new Error(`character lease of ${characterId}: no stable answer`);
  }

  /**
   * Grant these leases where `TAKE_SQL` may (at each position the new epoch, undefined when held by
   * another, MISSING when no such character), in one statement per round of distinct characters.
   * A character deleted between the statement's check and its insert fails the statement (the
   * foreign key): each of its leases is then asked alone.
   */
  private async grantAll(asks: readonly LeaseAsk[]): Promise<(string | typeof MISSING | undefined)[]> {
    const granted: (string | typeof MISSING | undefined)[] = [];
    for (const round of uniqueRounds(asks, (a) => a.characterId)) {
      const part = round.map((i) => asks[i]!);
      let rows: { character_id: string; epoch: string | number }[];
      try {
        rows = await executeNative(this.orm.em, TAKE_SQL, [this.owner, this.ttlSeconds, part.map((a) => a.characterId), part.map((a) => a.world)]);
      } catch (e) {
        if (!isForeignKeyViolation(e)) throw e;
        if (part.length === 1) {
          granted[round[0]!] = MISSING;
          continue;
        }
        for (const i of round) granted[i] = (await this.grantAll([asks[i]!]))[0];
        continue;
      }
      const epochs = new Map(rows.map((r) => [r.character_id, String(r.epoch)]));
      for (const i of round) granted[i] = epochs.get(asks[i]!.characterId);
    }
    return granted;
  }

  /** The current holder of a valid lease, or undefined (none, or expired). */
  async holder(characterId: string): Promise<LeaseHolder | undefined> {
    const [row] = await this.sql<HolderRow>(
      `select owner, world, extract(epoch from expires_at - now()) as left from character_leases where character_id = ? and expires_at > now()`,
      [characterId],
    );
    return row ? { owner: row.owner, world: Number(row.world), expiresInSeconds: Math.max(0, Math.ceil(Number(row.left))) } : undefined;
  }

  /**
   * Renew the leases of these characters that this process still holds under the epoch each was
   * loaded under (expired or not: an expired lease nobody took over is still ours); returns the ids
   * renewed. A lease that changed hands is never taken back: the player loaded under it is lost.
   * Rows are locked in id order (as the batched save's fence takes them: no deadlock between them).
   */
  async renew(leases: readonly { characterId: string; epoch: string }[]): Promise<Set<string>> {
    const renewed = new Set<string>();
    // Bounded statements: a few hundred ids each.
    for (let i = 0; i < leases.length; i += 500) {
      const part = leases.slice(i, i + 500);
      const rows = await this.sql<{ character_id: string }>(
        `update character_leases set expires_at = now() + make_interval(secs => ?)
         where character_id in (
           select l.character_id from character_leases l join (values ${part.map(() => "(?, ?::bigint)").join(", ")}) as v(id, epoch)
             on l.character_id = v.id and l.epoch = v.epoch
           where l.owner = ? order by l.character_id for update of l)
         returning character_id`,
        [this.ttlSeconds, ...part.flatMap((l) => [l.characterId, l.epoch]), this.owner],
      );
      for (const r of rows) renewed.add(r.character_id);
    }
    return renewed;
  }

  /** Release the lease if `world` of this process still holds it. */
  async release(characterId: string, world: number): Promise<void> {
    await this.sql(`delete from character_leases where character_id = ? and owner = ? and world = ?`, [characterId, this.owner, world]);
  }

  /** Release the lease if this process holds it, in whichever world. */
  async releaseMine(characterId: string): Promise<void> {
    await this.sql(`delete from character_leases where character_id = ? and owner = ?`, [characterId, this.owner]);
  }

  /**
   * Delete the leases that have expired, and those of `previousOwner` (the process that ran before
   * this one on its world directory, killed: its characters need not wait LEASE_TTL_SECONDS), at
   * start-up, with or without REDIS_URL: a lease another live process renews is never touched,
   * whatever this process believes about its database (docs/cluster.md "Start-up"). Were the
   * previous owner alive after all (two processes on one world directory), its writes are refused
   * by the fence: nothing is duplicated.
   */
  async clearExpired(previousOwner?: string): Promise<number> {
    const rows = await this.sql<{ character_id: string }>(`delete from character_leases where expires_at <= now() or owner = ? returning character_id`, [
      previousOwner ?? null,
    ]);
    return rows.length;
  }

  /** Release every lease of this process (shutdown, after every player is saved). */
  async releaseAll(): Promise<void> {
    await this.sql(`delete from character_leases where owner = ?`, [this.owner]);
  }
}

/** PostgreSQL's foreign_key_violation (23503), as the driver or MikroORM reports it. */
function isForeignKeyViolation(e: unknown): boolean {
  const err = e as { code?: unknown; name?: unknown; cause?: { code?: unknown } } | undefined;
  return err?.code === "23503" || err?.cause?.code === "23503" || err?.name === "ForeignKeyConstraintViolationException";
}
