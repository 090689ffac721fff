/**
 * `/api/character/*`: an account's characters (list, create from a template, read, rename,
 * delete, mark as agent), and `/api/characters/*`: a character's skills and position.
 */
import { z } from "zod";
import type { Character } from "../../../entities/character.js";
import { combatLevel, levelsOf } from "../../domain/xp.js";
import type { AgentService } from "../../services/agents.js";
import { storedSkills } from "../../services/characters.js";
import type { RouteModule } from "../app.js";
import {
  Access,
  admitCreation,
  CharacterIdParams,
  CharacterName,
  defineRoute,
  Id,
  PlayerViewSchema,
  PositionSchema,
  r,
  requireAccountToken,
  SkillsSchema,
  who,
  type ApiDeps,
} from "./context.js";

const CharacterSummarySchema = z
  .object({
    id: z.string(),
    name: z.string(),
    combatLevel: z.int(),
    isAgent: z.boolean(),
    online: z.boolean(),
    createdAt: z.string(),
    lastSeenAt: z.string().nullable(),
  })
  .openapi("CharacterSummary");

/** Routes of `/api/character/*`. */
export function characterRoutes(deps: ApiDeps, agents: AgentService): RouteModule {
  const access = new Access(deps);
  const { characters, world, social } = deps;
  const summary = async (c: Character) => ({
    id: c.id,
    name: c.name,
    combatLevel: combatLevel(levelsOf(storedSkills(c))),
    isAgent: c.isAgent,
    online: await world.isOnline(c.id),
    createdAt: c.createdAt.toISOString(),
    lastSeenAt: c.lastSeenAt ? c.lastSeenAt.toISOString() : null,
  });

  return (api, router) => {
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/character",
        summary: "The account's characters (an agent token sees only its own)",
        tags: ["character"],
        auth: "required",
        responses: { 200: { description: "Characters, oldest first", schema: z.array(CharacterSummarySchema) } },
      },
      async ({ principal }) => {
        const p = who(principal);
        const list = await characters.listByAccount(p.accountId);
        return Promise.all(list.filter((c) => !p.characterId || c.id === p.characterId).map(summary));
      },
    );

    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/character",
        summary: "Create a character: starter kit plus an optional template's levels, items and coins (at most 10 per account)",
        tags: ["character"],
        auth: "required",
        body: z
          .object({
            name: CharacterName.optional(),
            templateId: Id.optional().openapi({ description: "A template id from GET /api/template" }),
          })
          .strict(),
        responses: {
          201: { description: "Created", schema: PlayerViewSchema },
          403: { description: "Agent tokens cannot create characters" },
          409: r.conflict("NAME_TAKEN, or CONFLICT when the account already has 10 characters"),
          503: r.busy,
        },
      },
      async ({ principal, body }) => {
        const p = who(principal);
        requireAccountToken(p);
        const record = await admitCreation(deps, () => characters.createCharacter(p.accountId, { name: body.name, templateId: body.templateId }));
        return characters.toPlayerView(record, false);
      },
    );

    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/character/:characterId",
        summary: "One of the account's characters, in full (live when online)",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        responses: { 200: { description: "Character", schema: PlayerViewSchema }, 403: r.forbidden, 404: r.notFound("Character") },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        return access.view(c.id);
      },
    );

    defineRoute(
      api,
      router,
      {
        method: "patch",
        path: "/api/character/:characterId",
        summary: "Rename a character (it must be offline)",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        body: z.object({ name: CharacterName }).strict(),
        responses: {
          200: { description: "Renamed", schema: PlayerViewSchema },
          403: r.forbidden,
          404: r.notFound("Character"),
          409: r.conflict("NAME_TAKEN, or CONFLICT while the character is in the world"),
        },
      },
      async ({ principal, params, body }) => {
        const c = await access.character(who(principal), params.characterId);
        await access.rename(c, body.name);
        return characters.currentView(c.id, world);
      },
    );

    defineRoute(
      api,
      router,
      {
        method: "delete",
        path: "/api/character/:characterId",
        summary: "Delete a character with its items, friends and agent mapping (owner's token only; it must be offline)",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        responses: {
          204: { description: "Deleted" },
          403: r.forbidden,
          404: r.notFound("Character"),
          409: r.conflict("The character is in the world"),
        },
      },
      async ({ principal, params }) => {
        const p = who(principal);
        requireAccountToken(p);
        const c = await access.character(p, params.characterId);
        const friends = await access.outOfWorld(c.id, "delete", async () => {
          const friends = await social.friendIds(c.id);
          await characters.remove(c.id);
          return friends;
        });
        const changed = [c.id, ...friends];
        social.invalidate(changed);
        world.socialChanged(changed);
        return undefined;
      },
    );

    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/character/:characterId/agent",
        summary:
          "Mark a character as an AI agent (or unmark it with isAgent false, which also revokes its agent token). " +
          "Credentials come from POST /api/agent/register.",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        body: z.object({ isAgent: z.boolean().default(true) }).strict(),
        responses: {
          200: {
            description: "Flag set",
            schema: z.object({ id: z.string(), isAgent: z.boolean(), agentId: z.string().nullable() }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params, body }) => {
        const p = who(principal);
        requireAccountToken(p);
        const c = await access.character(p, params.characterId);
        await characters.setAgentFlag(c.id, body.isAgent);
        await world.setAgentFlag(c.id, body.isAgent);
        const mapping = await agents.findByCharacter(c.id);
        if (!body.isAgent && mapping && !mapping.revokedAt) await agents.revoke(mapping.id);
        return { id: c.id, isAgent: body.isAgent, agentId: mapping?.id ?? null };
      },
    );
  };
}

/** Routes of `/api/characters/*`: a character's skills and position. */
export function characterStateRoutes(deps: ApiDeps): RouteModule {
  const access = new Access(deps);
  const { world, content } = deps;

  return (api, router) => {
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/characters/:characterId/skills",
        summary: "Skill levels and XP (live when online)",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        responses: {
          200: {
            description: "Skills",
            schema: z.object({
              characterId: z.string(),
              online: z.boolean(),
              combatLevel: z.int(),
              totalLevel: z.int(),
              skills: SkillsSchema,
            }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const view = await access.view(c.id);
        return {
          characterId: c.id,
          online: view.online,
          combatLevel: view.combatLevel,
          totalLevel: Object.values(view.skills).reduce((n, s) => n + s.level, 0),
          skills: view.skills,
        };
      },
    );
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/characters/:characterId/position",
        summary: "Position, area and online status (live when online)",
        tags: ["character"],
        auth: "required",
        params: CharacterIdParams,
        responses: {
          200: {
            description: "Position",
            schema: z.object({
              characterId: z.string(),
              online: z.boolean(),
              position: PositionSchema,
              area: z.object({ id: z.string(), name: z.string(), safeZone: z.boolean(), pvp: z.boolean() }).nullable(),
            }),
          },
          403: r.forbidden,
          404: r.notFound("Character"),
        },
      },
      async ({ principal, params }) => {
        const c = await access.character(who(principal), params.characterId);
        const live = (await world.isOnline(c.id)) ? await world.livePlayer(c.id) : undefined;
        const position = live?.position ?? { x: c.positionX, y: c.positionY, z: c.positionZ };
        const area = content.areaAt(position.x, position.z);
        return {
          characterId: c.id,
          online: live !== undefined,
          position,
          area: area ? { id: area.id, name: area.name, safeZone: area.safeZone, pvp: area.pvp } : null,
        };
      },
    );
  };
}
