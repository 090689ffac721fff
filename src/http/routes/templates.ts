/** `/api/template/*`: the character templates of the content (public). */
import { z } from "zod";
import { skillsView } from "../../services/characters.js";
import type { RouteModule } from "../app.js";
import { notFound } from "../errors.js";
import { defineRoute, Id, r, SkillsSchema, type ApiDeps } from "./context.js";

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
