/**
 * `/api/v1/player` (the caller's character: read, create or update) and `/api/v1/world` (a world
 * snapshot with the areas of the content; who is where only for the caller's own characters, or
 * for an admin token: docs/http.md#world-snapshot). `/api/v1/world/areas` is served by the content router.
 */
import { z } from "zod";
import { dataResponses, WorldAreasResponseSchema } from "../content.js";
import type { RouteModule } from "../app.js";
import { notFound } from "../errors.js";
import { Access, admitCreation, CharacterName, defineRoute, Id, PlayerViewSchema, r, who, type ApiDeps } from "./context.js";

const WorldSnapshotSchema = z
  .object({
    world: z.int(),
    tick: z.int(),
    serverTime: z.string(),
    playersOnline: z.int(),
    players: z
      .array(
        z.object({
          id: z.string(),
          name: z.string(),
          position: z.object({ x: z.number(), y: z.number(), z: z.number() }),
          combatLevel: z.int(),
          isAgent: z.boolean(),
        }),
      )
      .openapi({
        description:
          "The caller's own characters connected in this world (the token's character for a character-bound token); every connected player for a server token with the admin role",
      }),
    npcCount: z.int(),
    resourceCount: z.int(),
    groundItemCount: z.int(),
    areas: WorldAreasResponseSchema,
  })
  .openapi("WorldSnapshot");

/** Routes of `/api/v1/player` and `/api/v1/world`. */
export function playerRoutes(deps: ApiDeps): RouteModule {
  const access = new Access(deps);
  const { characters, world } = deps;
  const areas = dataResponses(deps.content).areas;

  return (api, router) => {
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/v1/player",
        summary: "The caller's character: skills, health, coins, position, items, goal and online flag (live when online)",
        tags: ["player"],
        auth: "required",
        query: z.object({ characterId: Id.optional().openapi({ description: "Which of the account's characters (default: the token's, else the oldest)" }) }),
        responses: {
          200: { description: "Player", schema: PlayerViewSchema },
          403: r.forbidden,
          404: r.notFound("The account has no character, or the character"),
        },
      },
      async ({ principal, query }) => {
        const p = who(principal);
        const c = query.characterId ? await access.character(p, query.characterId) : await access.defaultCharacter(p);
        return access.view(c.id);
      },
    );

    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/v1/player",
        summary:
          "Create the caller's character (201) when the account has none, else rename the caller's character (200). " +
          "`templateId` applies only at creation; renaming needs the character offline.",
        tags: ["player"],
        auth: "required",
        body: z
          .object({
            name: CharacterName,
            templateId: Id.optional().openapi({ description: "A character template id (GET /api/template)" }),
            characterId: Id.optional().openapi({ description: "Which of the account's characters to update" }),
          })
          .strict(),
        responses: {
          201: { description: "Created", schema: PlayerViewSchema },
          200: { description: "Updated", schema: PlayerViewSchema },
          403: r.forbidden,
          404: r.notFound("Character"),
          409: r.conflict("NAME_TAKEN, or CONFLICT when renaming a character that is in the world"),
          503: r.busy,
        },
      },
      async ({ principal, body, res }) => {
        const p = who(principal);
        const boundId = body.characterId ?? p.characterId;
        const target = boundId ? await access.character(p, boundId) : (await characters.listByAccount(p.accountId))[0];

        if (!target) {
          const record = await admitCreation(deps, () => characters.createCharacter(p.accountId, { name: body.name, templateId: body.templateId }));
          res.status(201).json(characters.toPlayerView(record, false));
          return;
        }
        await access.rename(target, body.name);
        return characters.currentView(target.id, world);
      },
    );

    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/v1/world",
        summary:
          "One world's snapshot (`?world=N`, default the default world): tick, server time, players online, NPC and resource counts, areas; " +
          "`players` lists the caller's own characters only (every player for an admin token)",
        tags: ["world"],
        auth: "required",
        query: z.object({
          world: z.coerce.number().int().min(1).optional().openapi({ description: "World number (GET /api/v1/worlds); default 1, else the lowest hosted" }),
        }),
        responses: { 200: { description: "Snapshot", schema: WorldSnapshotSchema }, 404: r.notFound("World (not hosted by this server)") },
      },
      async ({ principal, query }) => {
        const snapshot = await world.snapshot(query.world);
        if (!snapshot) throw notFound("world");
        // Who is where is what interest management hides: only an admin token sees every player (docs/http.md#world-snapshot).
        const p = who(principal);
        if (deps.auth.isAdmin(p, undefined, undefined)) return { ...snapshot, areas };
        const own = new Set(p.characterId ? [p.characterId] : (await characters.listByAccount(p.accountId)).map((c) => c.id));
        return { ...snapshot, players: snapshot.players.filter((x) => own.has(x.id)), areas };
      },
    );
  };
}
