/**
 * The social graph: friend requests, friendships (stored once per pair) and per-account ignore
 * lists, with the rules of the game:
 *
 * - a request to someone who already asked you makes you friends at once;
 * - a request to someone whose account ignores you is silently dropped (the sender sees the same
 *   answer as for a delivered request);
 * - at most 99 friends per character, 99 ignored players per account, 99 pending outgoing requests;
 * - removing a friend removes the pair for both sides;
 * - ignoring someone drops their pending requests to the account's characters.
 *
 * Every change runs in one transaction that first locks the rows it counts (characters, or the
 * account for ignores) in id order, so caps hold under concurrent requests.
 *
 * The world asks `isIgnoring` and `areFriends` for chat and trade requests; both read through a
 * small in-memory cache that every change here (and `invalidate`) clears.
 */
import { LockMode } from "@mikro-orm/core";
import { AccountEntity } from "../../entities/account.js";
import { CharacterEntity } from "../../entities/character.js";
import { FriendRequestEntity, FriendshipEntity, IgnoreEntryEntity } from "../../entities/social.js";
import type { Em, Storage } from "../storage/orm.js";
import { conflict, invalid, missing } from "./errors.js";

export const MAX_FRIENDS = 99;
export const MAX_IGNORES = 99;
export const MAX_PENDING_REQUESTS = 99;

/** Names a character by id or by name (case-insensitive). */
export interface CharacterRef {
  id?: string;
  name?: string;
}

export interface CharacterBrief {
  id: string;
  name: string;
}

export interface FriendEntry extends CharacterBrief {
  since: string;
}

export interface FriendRequestEntry {
  id: number;
  from: CharacterBrief;
  to: CharacterBrief;
  createdAt: string;
}

/** The answer to a friend request. `pending` also when it was silently dropped. */
export interface FriendRequestOutcome {
  status: "pending" | "friends";
  character: CharacterBrief;
  /** Characters whose relations changed (for the world); empty when nothing changed. */
  changed: string[];
}

export interface IgnoreEntry extends CharacterBrief {
  since: string;
}

interface CacheEntry {
  ids: Set<string>;
  at: number;
}

export interface SocialServiceOptions {
  /** How long cached relations are trusted without an invalidation (default 60 s). */
  cacheTtlMs?: number;
  /** Entries kept per cache before it is emptied (default 10,000). */
  cacheMax?: number;
  now?: () => number;
}

type Row = Record<string, unknown>;
const iso = (v: unknown) => new Date(v as string).toISOString();

export class SocialService {
  /** target character id → characters its account ignores. */
  private readonly ignoreCache = new Map<string, CacheEntry>();
  /** character id → its friends. */
  private readonly friendCache = new Map<string, CacheEntry>();
  /**
   * Invalidations per character id: a load stores its answer only when no invalidation of its key
   * ran while it read (otherwise the answer may predate the change). Entries are dropped when no
   * load of the key is running.
   */
  private readonly generations = new Map<string, { gen: number; loading: number }>();
  private readonly ttl: number;
  private readonly cacheMax: number;
  private readonly now: () => number;

  constructor(
    private readonly storage: Storage,
    opts: SocialServiceOptions = {},
  ) {
    this.ttl = opts.cacheTtlMs ?? 60_000;
    this.cacheMax = opts.cacheMax ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  // ---- queries the world uses -------------------------------------------------------------

  /** Does the account owning `targetCharacterId` ignore `senderCharacterId`? */
  async isIgnoring(targetCharacterId: string, senderCharacterId: string): Promise<boolean> {
    const ignored = await this.cached(this.ignoreCache, targetCharacterId, () => this.loadIgnoredBy(targetCharacterId));
    return ignored.has(senderCharacterId);
  }

  /** Are the two characters friends? */
  async areFriends(a: string, b: string): Promise<boolean> {
    if (a === b) return false;
    const friends = await this.cached(this.friendCache, a, () => this.loadFriendIds(a));
    return friends.has(b);
  }

  /** Ids of a character's friends (cached). */
  async friendIds(characterId: string): Promise<string[]> {
    return [...(await this.cached(this.friendCache, characterId, () => this.loadFriendIds(characterId)))];
  }

  /** Forget cached relations of these characters (after a change, a deletion, or from the world). */
  invalidate(characterIds: Iterable<string>): void {
    for (const id of characterIds) {
      this.ignoreCache.delete(id);
      this.friendCache.delete(id);
      const g = this.generations.get(id);
      if (g) g.gen++;
    }
  }

  // ---- lookups -----------------------------------------------------------------------------

  /** Find a character by id or case-insensitive name. @throws NOT_FOUND, INVALID (neither given). */
  async resolve(ref: CharacterRef, em: Em = this.em()): Promise<CharacterBrief & { accountId: string }> {
    let rows: Row[];
    if (ref.id !== undefined) {
      rows = await em.getConnection().execute("select id, name, account_id from characters where id = ?", [ref.id], "all", em.getTransactionContext());
    } else if (ref.name !== undefined) {
      rows = await em
        .getConnection()
        .execute("select id, name, account_id from characters where lower(name) = lower(?)", [ref.name.trim()], "all", em.getTransactionContext());
    } else {
      throw invalid("give a character id or name", "characterId");
    }
    const r = rows[0];
    if (!r) throw missing("character");
    return { id: r.id as string, name: r.name as string, accountId: r.account_id as string };
  }

  // ---- friends ------------------------------------------------------------------------------

  /** A character's friends, by name. */
  async listFriends(characterId: string): Promise<FriendEntry[]> {
    const rows: Row[] = await this.em()
      .getConnection()
      .execute(
        `select c.id, c.name, f.created_at from friendships f
           join characters c on c.id = case when f.character_a = ? then f.character_b else f.character_a end
          where f.character_a = ? or f.character_b = ?
          order by lower(c.name)`,
        [characterId, characterId, characterId],
      );
    return rows.map((r) => ({ id: r.id as string, name: r.name as string, since: iso(r.created_at) }));
  }

  /**
   * Ask `target` to be friends with `fromId`.
   * @throws NOT_FOUND (target), INVALID (oneself), CONFLICT (already friends, a list is full, too
   * many pending requests).
   */
  async sendFriendRequest(fromId: string, target: CharacterRef): Promise<FriendRequestOutcome> {
    return this.afterCommit(async (em) => {
      const to = await this.resolve(target, em);
      if (to.id === fromId) throw invalid("you cannot befriend yourself", target.id !== undefined ? "characterId" : "name");
      const brief = { id: to.id, name: to.name };
      await lockCharacters(em, [fromId, to.id]);
      if (await this.pairExists(em, fromId, to.id)) throw conflict(`${to.name} is already your friend`);
      if (await this.ignores(em, to.id, fromId)) return { status: "pending", character: brief, changed: [] };

      const reverse = await em.findOne(FriendRequestEntity, { fromCharacter: to.id, toCharacter: fromId });
      if (reverse) {
        await this.assertRoomForFriend(em, fromId, to.id);
        em.remove(reverse);
        await em.flush();
        await this.insertPair(em, fromId, to.id);
        return { status: "friends", character: brief, changed: [fromId, to.id] };
      }

      const already = await em.findOne(FriendRequestEntity, { fromCharacter: fromId, toCharacter: to.id });
      if (already) return { status: "pending", character: brief, changed: [] };
      if ((await this.countFriends(em, fromId)) >= MAX_FRIENDS) throw conflict(`your friends list is full (${MAX_FRIENDS})`);
      if ((await em.count(FriendRequestEntity, { fromCharacter: fromId })) >= MAX_PENDING_REQUESTS) {
        throw conflict(`you have ${MAX_PENDING_REQUESTS} pending friend requests; wait for answers first`);
      }
      em.create(FriendRequestEntity, { fromCharacter: fromId, toCharacter: to.id, createdAt: new Date() });
      await em.flush();
      return { status: "pending", character: brief, changed: [fromId, to.id] };
    });
  }

  /** Pending requests to and from a character, oldest first. */
  async listFriendRequests(characterId: string): Promise<{ incoming: FriendRequestEntry[]; outgoing: FriendRequestEntry[] }> {
    const rows: Row[] = await this.em()
      .getConnection()
      .execute(
        `select r.id, r.created_at, r.from_character, cf.name as from_name, r.to_character, ct.name as to_name
           from friend_requests r
           join characters cf on cf.id = r.from_character
           join characters ct on ct.id = r.to_character
          where r.from_character = ? or r.to_character = ?
          order by r.created_at, r.id`,
        [characterId, characterId],
      );
    const entries = rows.map((r) => ({
      id: Number(r.id),
      from: { id: r.from_character as string, name: r.from_name as string },
      to: { id: r.to_character as string, name: r.to_name as string },
      createdAt: iso(r.created_at),
    }));
    return { incoming: entries.filter((e) => e.to.id === characterId), outgoing: entries.filter((e) => e.from.id === characterId) };
  }

  /**
   * Accept a request addressed to `characterId`.
   * @throws NOT_FOUND (no such request to this character), CONFLICT (a friends list is full).
   */
  async acceptFriendRequest(characterId: string, requestId: number): Promise<{ friend: CharacterBrief; changed: string[] }> {
    return this.afterCommit(async (em) => {
      const request = await em.findOne(FriendRequestEntity, { id: requestId, toCharacter: characterId });
      if (!request) throw missing("friend request");
      const fromId = request.fromCharacter as unknown as string;
      await lockCharacters(em, [characterId, fromId]);
      await this.assertRoomForFriend(em, characterId, fromId);
      await em.nativeDelete(FriendRequestEntity, {
        $or: [
          { fromCharacter: fromId, toCharacter: characterId },
          { fromCharacter: characterId, toCharacter: fromId },
        ],
      });
      await this.insertPair(em, characterId, fromId);
      const friend = await this.resolve({ id: fromId }, em);
      return { friend: { id: friend.id, name: friend.name }, changed: [characterId, fromId] };
    });
  }

  /**
   * Decline a request addressed to `characterId`, or withdraw one it sent.
   * @throws NOT_FOUND.
   */
  async declineFriendRequest(characterId: string, requestId: number): Promise<{ changed: string[] }> {
    const em = this.em();
    const request = await em.findOne(FriendRequestEntity, {
      id: requestId,
      $or: [{ toCharacter: characterId }, { fromCharacter: characterId }],
    });
    if (!request) throw missing("friend request");
    const changed = [request.fromCharacter as unknown as string, request.toCharacter as unknown as string];
    await em.nativeDelete(FriendRequestEntity, { id: requestId });
    return { changed };
  }

  /** End a friendship for both sides. @throws NOT_FOUND when they are not friends. */
  async removeFriend(characterId: string, friendId: string): Promise<{ changed: string[] }> {
    const em = this.em();
    const deleted = await em.nativeDelete(FriendshipEntity, {
      $or: [
        { characterA: characterId, characterB: friendId },
        { characterA: friendId, characterB: characterId },
      ],
    });
    if (deleted === 0) throw missing("friend");
    this.invalidate([characterId, friendId]);
    return { changed: [characterId, friendId] };
  }

  // ---- ignores ------------------------------------------------------------------------------

  /** The characters an account ignores, by name. */
  async listIgnores(accountId: string): Promise<IgnoreEntry[]> {
    const rows: Row[] = await this.em()
      .getConnection()
      .execute(
        `select c.id, c.name, i.created_at from ignore_entries i join characters c on c.id = i.ignored_character_id
          where i.account_id = ? order by lower(c.name)`,
        [accountId],
      );
    return rows.map((r) => ({ id: r.id as string, name: r.name as string, since: iso(r.created_at) }));
  }

  /**
   * Add a character to an account's ignore list (idempotent) and drop its pending requests to the
   * account's characters.
   * @throws NOT_FOUND, INVALID (one of the account's own characters), CONFLICT (list full).
   */
  async addIgnore(accountId: string, target: CharacterRef): Promise<{ character: CharacterBrief; changed: string[] }> {
    return this.afterCommit(async (em) => {
      const who = await this.resolve(target, em);
      if (who.accountId === accountId) throw invalid("you cannot ignore your own character", target.id !== undefined ? "characterId" : "name");
      await em.findOne(AccountEntity, { id: accountId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
      const own = await this.accountCharacterIds(em, accountId);
      const changed = [...own, who.id];
      const existing = await em.findOne(IgnoreEntryEntity, { accountId, ignoredCharacterId: who.id });
      if (!existing) {
        if ((await em.count(IgnoreEntryEntity, { accountId })) >= MAX_IGNORES) throw conflict(`your ignore list is full (${MAX_IGNORES})`);
        em.create(IgnoreEntryEntity, { accountId, ignoredCharacterId: who.id, createdAt: new Date() });
        await em.flush();
      }
      if (own.length > 0) await em.nativeDelete(FriendRequestEntity, { fromCharacter: who.id, toCharacter: { $in: own } });
      return { character: { id: who.id, name: who.name }, changed };
    });
  }

  /** Remove a character from an account's ignore list. @throws NOT_FOUND when it is not on it. */
  async removeIgnore(accountId: string, ignoredCharacterId: string): Promise<{ changed: string[] }> {
    const em = this.em();
    const deleted = await em.nativeDelete(IgnoreEntryEntity, { accountId, ignoredCharacterId });
    if (deleted === 0) throw missing("ignored player");
    const changed = [...(await this.accountCharacterIds(em, accountId)), ignoredCharacterId];
    this.invalidate(changed);
    return { changed };
  }

  // ---- internals ----------------------------------------------------------------------------

  private em(): Em {
    return this.storage.orm.em.fork();
  }

  /** Run a change in one transaction, then forget the cached relations of what it changed. */
  private async afterCommit<T extends { changed: string[] }>(work: (em: Em) => Promise<T>): Promise<T> {
    const result = await this.em().transactional(work);
    this.invalidate(result.changed);
    return result;
  }

  private async cached(cache: Map<string, CacheEntry>, key: string, load: () => Promise<Set<string>>): Promise<Set<string>> {
    const hit = cache.get(key);
    if (hit && this.now() - hit.at < this.ttl) return hit.ids;
    let g = this.generations.get(key);
    if (!g) this.generations.set(key, (g = { gen: 0, loading: 0 }));
    const gen = g.gen;
    g.loading++;
    try {
      const ids = await load();
      if (g.gen === gen) {
        if (cache.size >= this.cacheMax) cache.clear();
        cache.set(key, { ids, at: this.now() });
      }
      return ids;
    } finally {
      if (--g.loading === 0 && this.generations.get(key) === g) this.generations.delete(key);
    }
  }

  private async loadIgnoredBy(targetCharacterId: string): Promise<Set<string>> {
    const rows: Row[] = await this.em()
      .getConnection()
      .execute(
        `select i.ignored_character_id from ignore_entries i join characters c on c.account_id = i.account_id where c.id = ?`,
        [targetCharacterId],
      );
    return new Set(rows.map((r) => r.ignored_character_id as string));
  }

  private async loadFriendIds(characterId: string): Promise<Set<string>> {
    const rows: Row[] = await this.em()
      .getConnection()
      .execute(
        `select case when character_a = ? then character_b else character_a end as id
           from friendships where character_a = ? or character_b = ?`,
        [characterId, characterId, characterId],
      );
    return new Set(rows.map((r) => r.id as string));
  }

  private async ignores(em: Em, targetCharacterId: string, senderCharacterId: string): Promise<boolean> {
    const rows: Row[] = await em
      .getConnection()
      .execute(
        `select 1 from ignore_entries i join characters c on c.account_id = i.account_id
          where c.id = ? and i.ignored_character_id = ? limit 1`,
        [targetCharacterId, senderCharacterId],
        "all",
        em.getTransactionContext(),
      );
    return rows.length > 0;
  }

  private async pairExists(em: Em, a: string, b: string): Promise<boolean> {
    const n = await em.count(FriendshipEntity, {
      $or: [
        { characterA: a, characterB: b },
        { characterA: b, characterB: a },
      ],
    });
    return n > 0;
  }

  private async countFriends(em: Em, characterId: string): Promise<number> {
    return em.count(FriendshipEntity, { $or: [{ characterA: characterId }, { characterB: characterId }] });
  }

  private async assertRoomForFriend(em: Em, characterId: string, otherId: string): Promise<void> {
    if ((await this.countFriends(em, characterId)) >= MAX_FRIENDS) throw conflict(`your friends list is full (${MAX_FRIENDS})`);
    if ((await this.countFriends(em, otherId)) >= MAX_FRIENDS) throw conflict("their friends list is full");
  }

  /** Insert the pair ordered by the database's own comparison, matching its check constraint. */
  private async insertPair(em: Em, a: string, b: string): Promise<void> {
    await em
      .getConnection()
      .execute(
        `insert into friendships (character_a, character_b, created_at) values (least(?, ?), greatest(?, ?), now())
         on conflict do nothing`,
        [a, b, a, b],
        "run",
        em.getTransactionContext(),
      );
  }

  private async accountCharacterIds(em: Em, accountId: string): Promise<string[]> {
    const rows = await em.find(CharacterEntity, { accountId }, { fields: ["id"] });
    return rows.map((r) => r.id);
  }
}

/** Lock character rows in id order (deadlock-free with every other locker that sorts). */
async function lockCharacters(em: Em, ids: string[]): Promise<void> {
  const sorted = [...new Set(ids)].sort();
  for (const id of sorted) await em.findOne(CharacterEntity, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}
