/**
 * `/api/player/*`: the social graph (friends, friend requests, per-account ignore list) and a
 * character's deaths and NPC kill statistics. `:characterId` may be `me`.
 *
 * Every change tells the world (`socialChanged`) so chat and trade requests follow it at once.
 */
import { z } from "zod";
import type { RouteModule } from "../app.js";
import { FRIEND_REQUESTS_PAGE_MAX } from "../../services/social.js";
import { Access, CharacterBriefSchema, CharacterIdParams, CharacterRefBody, defineRoute, Id, r, requireAccountToken, who, type ApiDeps } from "./context.js";

const FriendSchema = z.object({ id: z.string(), name: z.string(), online: z.boolean(), since: z.string() }).openapi("Friend");
const FriendRequestSchema = z.object({ id: z.int(), from: CharacterBriefSchema, to: CharacterBriefSchema, createdAt: z.string() }).openapi("FriendRequest");
const IgnoredSchema = z.object({ id: z.string(), name: z.string(), since: z.string() }).openapi("IgnoredPlayer");
const RequestIdParams = CharacterIdParams.extend({ requestId: z.coerce.number().int().min(1) });

/** `{ characterId }` or `{ name }` as the service's reference. */
const ref = (b: { characterId?: string; name?: string }) => (b.characterId !== undefined ? { id: b.characterId } : { name: b.name });

/** Routes of `/api/player/*`. */
export function socialRoutes(deps: ApiDeps): RouteModule {
  const access = new Access(deps);
  const { social, world, characters } = deps;
  const changed = (ids: string[]) => {
    if (ids.length > 0) world.socialChanged([...new Set(ids)]);
  };

  return (api, router) => {
    // ---- ignore list (per account); declared before the `:characterId` routes ----------------
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/player/ignores",
        summary: "The account's ignore list",
        tags: ["social"],
        auth: "required",
        responses: { 200: { description: "Ignored players", schema: z.array(IgnoredSchema) } },
      },
      ({ principal }) => social.listIgnores(who(principal).accountId),
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/player/ignores",
        summary:
          "Ignore a player (by character id or name): their chat, trade and friend requests no longer reach the account (max 99). " +
          "Owner's token only (the list is the account's)",
        tags: ["social"],
        auth: "required",
        body: CharacterRefBody,
        responses: {
          201: { description: "Ignored", schema: CharacterBriefSchema },
          403: { description: "A character-bound (agent) token" },
          404: r.notFound("Character"),
          409: r.conflict("The ignore list is full"),
        },
      },
      async ({ principal, body }) => {
        const p = who(principal);
        requireAccountToken(p);
        const result = await social.addIgnore(p.accountId, ref(body));
        changed(result.changed);
        return result.character;
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "delete",
        path: "/api/player/ignores/:characterId",
        summary: "Stop ignoring a player (owner's token only)",
        tags: ["social"],
        auth: "required",
        params: z.object({ characterId: Id }),
        responses: { 204: { description: "Removed" }, 403: { description: "A character-bound (agent) token" }, 404: r.notFound("Ignore entry") },
      },
      async ({ principal, params }) => {
        const p = who(principal);
        requireAccountToken(p);
        const result = await social.removeIgnore(p.accountId, params.characterId);
        changed(result.changed);
        return undefined;
      },
    );

    // ---- friends --------------------------------------------------------------------------
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/player/:characterId/friends",
        summary: "A character's friends with online status",
        tags: ["social"],
        auth: "required",
        params: CharacterIdParams,
        responses: { 200: { description: "Friends", schema: z.array(FriendSchema) }, 403: r.forbidden, 404: r.notFound("Character") },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const friends = await social.listFriends(c.id);
        return Promise.all(friends.map(async (f) => ({ id: f.id, name: f.name, online: await world.isOnline(f.id), since: f.since })));
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "delete",
        path: "/api/player/:characterId/friends/:friendId",
        summary: "Remove a friend (for both sides)",
        tags: ["social"],
        auth: "required",
        params: CharacterIdParams.extend({ friendId: Id }),
        responses: { 204: { description: "Removed" }, 403: r.forbidden, 404: r.notFound("Character or friend") },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const result = await social.removeFriend(c.id, params.friendId);
        changed(result.changed);
        return undefined;
      },
    );

    // ---- friend requests ------------------------------------------------------------------
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/player/:characterId/friend-requests",
        summary:
          "Pending friend requests to (incoming) and from (outgoing) a character, oldest first, a page of each: `limit` (1–100, default 100) " +
          "after `incomingAfter` / `outgoingAfter` (request ids); `incomingNext` / `outgoingNext` are the next pages' cursors, absent at the end",
        tags: ["social"],
        auth: "required",
        params: CharacterIdParams,
        query: z.object({
          limit: z.coerce.number().int().min(1).max(FRIEND_REQUESTS_PAGE_MAX).optional(),
          incomingAfter: z.coerce.number().int().min(0).optional(),
          outgoingAfter: z.coerce.number().int().min(0).optional(),
        }),
        responses: {
          200: {
            description: "Requests",
            schema: z.object({
              incoming: z.array(FriendRequestSchema),
              outgoing: z.array(FriendRequestSchema),
              incomingNext: z.int().optional(),
              outgoingNext: z.int().optional(),
            }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params, query }) => {
        const c = await access.character(who(principal), params.characterId);
        return social.listFriendRequests(c.id, query);
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/player/:characterId/friend-requests",
        summary:
          "Send a friend request by character id or name. If they already asked you, you become friends at once (status `friends`). " +
          "A request to someone who ignores you is dropped without telling you (status `pending`).",
        tags: ["social"],
        auth: "required",
        params: CharacterIdParams,
        body: CharacterRefBody,
        responses: {
          201: {
            description: "Sent, or friends at once",
            schema: z.object({ status: z.enum(["pending", "friends"]), character: CharacterBriefSchema }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
          409: r.conflict(
            "Already friends, a friends list is full (99), or 99 requests are pending (CONFLICT); FRIEND_REQUESTS_FULL when the target has 100 incoming requests waiting",
          ),
        },
      },
      async ({ principal, params, body }) => {
        const c = await access.character(who(principal), params.characterId);
        const result = await social.sendFriendRequest(c.id, ref(body));
        changed(result.changed);
        return { status: result.status, character: result.character };
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/player/:characterId/friend-requests/:requestId/accept",
        summary: "Accept a friend request addressed to the character",
        tags: ["social"],
        auth: "required",
        params: RequestIdParams,
        responses: {
          200: { description: "Now friends", schema: z.object({ friend: CharacterBriefSchema }) },
          403: r.forbidden,
          404: r.notFound("Character or request"),
          409: r.conflict("A friends list is full (99)"),
        },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const result = await social.acceptFriendRequest(c.id, params.requestId);
        changed(result.changed);
        return { friend: result.friend };
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/player/:characterId/friend-requests/:requestId/decline",
        summary: "Decline a friend request addressed to the character, or withdraw one it sent",
        tags: ["social"],
        auth: "required",
        params: RequestIdParams,
        responses: { 204: { description: "Declined" }, 403: r.forbidden, 404: r.notFound("Character or request") },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const result = await social.declineFriendRequest(c.id, params.requestId);
        changed(result.changed);
        return undefined;
      },
    );

    // ---- deaths and kills -----------------------------------------------------------------
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/player/:characterId/deaths",
        summary: "A character's deaths, newest first (at most 100)",
        tags: ["player"],
        auth: "required",
        params: CharacterIdParams,
        responses: {
          200: {
            description: "Deaths",
            schema: z.array(
              z.object({
                id: z.string(),
                position: z.object({ x: z.number(), z: z.number() }),
                killedBy: z.string().nullable(),
                createdAt: z.string(),
                resolved: z.boolean(),
              }),
            ),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const deaths = await characters.repo.deaths(c.id);
        return deaths.map((d) => ({
          id: d.id,
          position: { x: d.positionX, z: d.positionZ },
          killedBy: d.killedBy ?? null,
          createdAt: d.createdAt.toISOString(),
          resolved: !!d.resolvedAt,
        }));
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/player/:characterId/kills",
        summary: "A character's NPC kill statistics, most killed first",
        tags: ["player"],
        auth: "required",
        params: CharacterIdParams,
        responses: {
          200: {
            description: "Kills",
            schema: z.object({
              total: z.int(),
              kills: z.array(z.object({ npcId: z.string(), name: z.string(), count: z.int(), lastKillAt: z.string() })),
            }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const kills = await characters.repo.kills(c.id);
        return {
          total: kills.reduce((n, k) => n + k.count, 0),
          kills: kills.map((k) => ({
            npcId: k.npcId,
            name: deps.content.npcs.get(k.npcId)?.name ?? k.npcId,
            count: k.count,
            lastKillAt: k.lastKillAt.toISOString(),
          })),
        };
      },
    );
  };
}
