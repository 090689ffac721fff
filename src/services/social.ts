/**
 * The social graph: friend requests, friendships (stored once per pair) and per-account ignore
 * lists, with the rules of the game:
 *
 * - a request to someone who already asked you makes you friends at once;
 * - a request to someone whose account ignores you is silently dropped (the sender sees the same
 *   answer as for a delivered request);
 * - at most 99 friends per character, 99 ignored players per account, 99 pending outgoing requests,
 *   100 pending incoming requests (a request to a full inbox is refused: FRIEND_REQUESTS_FULL);
 *   the lists of requests are paginated (docs/http.md#friend-requests);
 * - removing a friend removes the pair for both sides;
 * - ignoring someone drops their pending requests to the account's characters.
 *
 * Every change runs in one transaction that first locks the rows it counts (characters, or the
 * account for ignores) in id order, so caps hold under concurrent requests.
 *
 * The world asks `isIgnoring` and `areFriends` for chat and trade requests; both read through a
 * small in-memory cache (`RelationCache`) that every change here (and `invalidate`) clears. The
 * SQL is in src/storage/social.ts.
 */
import { FriendRequestEntity, FriendshipEntity, IgnoreEntryEntity } from "../../entities/social.js";
import type { Em, Storage } from "../storage/orm.js";
import {
  accountCharacterIds,
  characterRows,
  countFriends,
  friendRequestRows,
  friendRows,
  ignoreRows,
  ignores,
  insertPair,
  loadFriendIds,
  loadIgnoredBy,
  lockAccount,
  lockCharacters,
  pairExists,
} from "../storage/social.js";
import { conflict, invalid, missing, SERVICE_ERROR, ServiceError } from "./errors.js";
import { RelationCache } from "./relation-cache.js";

export const MAX_FRIENDS = 99;
export const MAX_IGNORES = 99;
export const MAX_PENDING_REQUESTS = 99;
/** Pending friend requests one character may receive (docs/http.md#friend-requests). */
export const MAX_INCOMING_REQUESTS = 100;
/** Requests of each list one page holds at most, and by default. */
export const FRIEND_REQUESTS_PAGE_MAX = 100;

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
  private readonly ignoreCache: RelationCache;
  /** character id → its friends. */
  private readonly friendCache: RelationCache;

  constructor(
    private readonly storage: Storage,
    opts: SocialServiceOptions = {},
  ) {
    const cache = { ttlMs: opts.cacheTtlMs ?? 60_000, max: opts.cacheMax ?? 10_000, now: opts.now ?? Date.now };
    this.ignoreCache = new RelationCache(cache);
    this.friendCache = new RelationCache(cache);
  }

  // ---- queries the world uses -------------------------------------------------------------

  /** Does the account owning `targetCharacterId` ignore `senderCharacterId`? */
  async isIgnoring(targetCharacterId: string, senderCharacterId: string): Promise<boolean> {
    const ignored = await this.ignoreCache.get(targetCharacterId, () => loadIgnoredBy(this.em(), targetCharacterId));
    return ignored.has(senderCharacterId);
  }

  /** Are the two characters friends? */
  async areFriends(a: string, b: string): Promise<boolean> {
    if (a === b) return false;
    const friends = await this.friendCache.get(a, () => loadFriendIds(this.em(), a));
    return friends.has(b);
  }

  /** Ids of a character's friends (cached). */
  async friendIds(characterId: string): Promise<string[]> {
    return [...(await this.friendCache.get(characterId, () => loadFriendIds(this.em(), characterId)))];
  }

  /** Forget cached relations of these characters (after a change, a deletion, or from the world). */
  invalidate(characterIds: Iterable<string>): void {
    for (const id of characterIds) {
      this.ignoreCache.invalidate(id);
      this.friendCache.invalidate(id);
    }
  }

  // ---- lookups -----------------------------------------------------------------------------

  /** Find a character by id or case-insensitive name. @throws NOT_FOUND, INVALID (neither given). */
  async resolve(ref: CharacterRef, em: Em = this.em()): Promise<CharacterBrief & { accountId: string }> {
    let rows: Row[];
    if (ref.id !== undefined) rows = await characterRows(em, { id: ref.id });
    else if (ref.name !== undefined) rows = await characterRows(em, { name: ref.name.trim() });
    else throw invalid("give a character id or name", "characterId");
    const r = rows[0];
    if (!r) throw missing("character");
    return { id: r.id as string, name: r.name as string, accountId: r.account_id as string };
  }

  // ---- friends ------------------------------------------------------------------------------

  /** A character's friends, by name. */
  async listFriends(characterId: string): Promise<FriendEntry[]> {
    const rows: Row[] = await friendRows(this.em(), characterId);
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
      if (await pairExists(em, fromId, to.id)) throw conflict(`${to.name} is already your friend`);
      if (await ignores(em, to.id, fromId)) return { status: "pending", character: brief, changed: [] };

      const reverse = await em.findOne(FriendRequestEntity, { fromCharacter: to.id, toCharacter: fromId });
      if (reverse) {
        await this.assertRoomForFriend(em, fromId, to.id);
        em.remove(reverse);
        await em.flush();
        await insertPair(em, fromId, to.id);
        return { status: "friends", character: brief, changed: [fromId, to.id] };
      }

      const already = await em.findOne(FriendRequestEntity, { fromCharacter: fromId, toCharacter: to.id });
      if (already) return { status: "pending", character: brief, changed: [] };
      if ((await countFriends(em, fromId)) >= MAX_FRIENDS) throw conflict(`your friends list is full (${MAX_FRIENDS})`);
      if ((await em.count(FriendRequestEntity, { fromCharacter: fromId })) >= MAX_PENDING_REQUESTS) {
        throw conflict(`you have ${MAX_PENDING_REQUESTS} pending friend requests; wait for answers first`);
      }
      // Both characters are locked: the count holds until this request is in.
      if ((await em.count(FriendRequestEntity, { toCharacter: to.id })) >= MAX_INCOMING_REQUESTS) {
        throw new ServiceError(SERVICE_ERROR.FRIEND_REQUESTS_FULL, `${to.name} has ${MAX_INCOMING_REQUESTS} friend requests waiting; try again later`);
      }
      em.create(FriendRequestEntity, { fromCharacter: fromId, toCharacter: to.id, createdAt: new Date() });
      await em.flush();
      return { status: "pending", character: brief, changed: [fromId, to.id] };
    });
  }

  /**
   * Pending requests to and from a character, oldest first (by id), one page of each list:
   * `limit` of each (1 to FRIEND_REQUESTS_PAGE_MAX), after the request ids `incomingAfter` and
   * `outgoingAfter`; `incomingNext`/`outgoingNext` are the cursors of the next pages, absent at the end.
   */
  async listFriendRequests(
    characterId: string,
    page: { limit?: number; incomingAfter?: number; outgoingAfter?: number } = {},
  ): Promise<{ incoming: FriendRequestEntry[]; outgoing: FriendRequestEntry[]; incomingNext?: number; outgoingNext?: number }> {
    const limit = Math.min(FRIEND_REQUESTS_PAGE_MAX, Math.max(1, page.limit ?? FRIEND_REQUESTS_PAGE_MAX));
    const list = async (column: "to_character" | "from_character", after: number) => {
      const rows: Row[] = await friendRequestRows(this.em(), characterId, column, after, limit + 1);
      const entries = rows.slice(0, limit).map((r) => ({
        id: Number(r.id),
        from: { id: r.from_character as string, name: r.from_name as string },
        to: { id: r.to_character as string, name: r.to_name as string },
        createdAt: iso(r.created_at),
      }));
      return { entries, next: rows.length > limit ? entries[entries.length - 1]!.id : undefined };
    };
    const [incoming, outgoing] = [await list("to_character", page.incomingAfter ?? 0), await list("from_character", page.outgoingAfter ?? 0)];
    return {
      incoming: incoming.entries,
      outgoing: outgoing.entries,
      ...(incoming.next !== undefined ? { incomingNext: incoming.next } : {}),
      ...(outgoing.next !== undefined ? { outgoingNext: outgoing.next } : {}),
    };
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
      await insertPair(em, characterId, fromId);
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
    const rows: Row[] = await ignoreRows(this.em(), accountId);
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
      await lockAccount(em, accountId);
      const own = await accountCharacterIds(em, accountId);
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
    const changed = [...(await accountCharacterIds(em, accountId)), ignoredCharacterId];
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

  private async assertRoomForFriend(em: Em, characterId: string, otherId: string): Promise<void> {
    if ((await countFriends(em, characterId)) >= MAX_FRIENDS) throw conflict(`your friends list is full (${MAX_FRIENDS})`);
    if ((await countFriends(em, otherId)) >= MAX_FRIENDS) throw conflict("their friends list is full");
  }
}
