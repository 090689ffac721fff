/**
 * `/api/character/*`: an account's characters (list, create from a template, read, rename,
 * delete, mark as agent) and `/api/template/*`: the character templates of the content.
 */
import { z } from "zod";
import type { Character } from "../../../entities/character.js";
import { combatLevel, levelsOf } from "../../domain/xp.js";
import type { AgentService } from "../../services/agents.js";
import { skillsView, storedSkills } from "../../services/characters.js";
import type { RouteModule } from "../app.js";
import { notFound } from "../errors.js";
import {
  Access,
  admitCreation,
  CharacterIdParams,
  CharacterName,
  defineRoute,
  Id,
  PlayerViewSchema,
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

const TemplateSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    skills: SkillsSchema,
    combatLevel: z.int(),
    maxHealth: z.int(),
    items: z.array(z.object({ itemId: z.string(), quantity: z.int() })),
    coins: z.int(),
  })
  .openapi("CharacterTemplate");

/** Routes of `/api/character/*`. */
export function characterRoutes(deps: ApiDeps, agents: AgentService): RouteModule {
  const access = new Access(deps);
  const { characters, world, social } = deps;
  const summary = (c: Character) => ({
    id: c.id,
    name: c.name,
    combatLevel: combatLevel(levelsOf(storedSkills(c))),
    isAgent: c.isAgent,
    online: world.isOnline(c.id),
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
        return list.filter((c) => !p.characterId || c.id === p.characterId).map(summary);
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
        const view = await characters.currentView(c.id, world);
        if (!view) throw notFound("character");
        return view;
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
        world.setAgentFlag(c.id, body.isAgent);
        const mapping = await agents.findByCharacter(c.id);
        if (!body.isAgent && mapping && !mapping.revokedAt) await agents.revoke(mapping.id);
        return { id: c.id, isAgent: body.isAgent, agentId: mapping?.id ?? null };
      },
    );
  };
}

/** A template as served: the full starting skill set with the derived combat level and health. */
function templateView(deps: ApiDeps, id: string) {
  const t = deps.content.templates.get(id);
  if (!t) return undefined;
  const start = deps.characters.startingState(id);
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    skills: skillsView(start.skills),
    combatLevel: start.combatLevel,
    maxHealth: start.health,
    items: t.items.map((i) => ({ itemId: i.itemId, quantity: i.quantity })),
    coins: t.coins,
  };
}

/** Routes of `/api/template/*` (public content). */
export function templateRoutes(deps: ApiDeps): RouteModule {
  const ids = [...deps.content.templates.keys()];
  return (api, router) => {
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/template",
        summary: "Character templates: starting levels, items and coins on top of the starter kit",
        tags: ["template"],
        auth: "none",
        responses: { 200: { description: "Templates", schema: z.array(TemplateSchema) } },
      },
      () => ids.map((id) => templateView(deps, id)!),
    );
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/template/:templateId",
        summary: "One character template",
        tags: ["template"],
        auth: "none",
        params: z.object({ templateId: Id }),
        responses: { 200: { description: "Template", schema: TemplateSchema }, 404: r.notFound("Template") },
      },
      ({ params }) => {
        const view = templateView(deps, params.templateId);
        if (!view) throw notFound("template");
        return view;
      },
    );
  };
}
