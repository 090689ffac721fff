/**
 * What every REST route module shares: its dependencies, the route helper that turns service
 * errors into HTTP errors, the access checks, and the OpenAPI schemas of common bodies.
 *
 * Access rules (docs/http.md#access-rules and issue 6):
 * - a token acts only on its own account's characters and agents (403 FORBIDDEN);
 * - a character-bound token (an agent's) acts only on that character, and never on account-level
 *   operations (creating or deleting characters, issuing or revoking agent tokens, resuming goals);
 * - unknown ids are 404 NOT_FOUND.
 */
import type { Router } from "express";
import { z } from "zod";
import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import type { Character } from "../../../entities/character.js";
import type { AuthService, Principal } from "../../auth/service.js";
import type { Config } from "../../config.js";
import type { GameContent } from "../../content/load.js";
import {
  GoalSchema as ProtocolGoal,
  PositionSchema as ProtocolPosition,
  SkillsSchema as ProtocolSkills,
  StoredPlayerSyncSchema,
} from "../../protocol/player.js";
import { nameProblem, normalizeName, type CharacterService, type PlayerView } from "../../services/characters.js";
import type { Admission } from "../../net/admission.js";
import { ServiceError, SERVICE_ERROR } from "../../services/errors.js";
import type { SocialService } from "../../services/social.js";
import type { Storage } from "../../storage/orm.js";
import type { WorldAccess } from "../../world/access.js";
import type { ApiBuilder, NoFields, RouteHandler, RouteSpec } from "../api.js";
import { ApiError, forbidden, notFound, unauthorized } from "../errors.js";

extendZodWithOpenApi(z);

/** Dependencies of the REST route modules. */
export interface ApiDeps {
  storage: Storage;
  content: GameContent;
  auth: AuthService;
  world: WorldAccess;
  characters: CharacterService;
  social: SocialService;
  config: Config;
  /** Admission control: character creations run through its creation gate (503 SERVER_BUSY when full). */
  admission?: Admission;
}

/**
 * Run a character creation through the creation gate (docs/operations.md "When the server is busy").
 * @throws ServerBusyError (503 `SERVER_BUSY` with `Retry-After`) when the gate is full or storage failed
 */
export function admitCreation<T>(deps: ApiDeps, work: () => Promise<T>): Promise<T> {
  return deps.admission ? deps.admission.create(work) : work();
}

/** Map a service error onto the HTTP error vocabulary; anything else passes through. */
function toApiError(e: unknown): unknown {
  if (!(e instanceof ServiceError)) return e;
  switch (e.code) {
    case SERVICE_ERROR.INVALID:
      return new ApiError("INVALID_REQUEST", e.message, [{ field: e.field ? `body.${e.field}` : "body", message: e.message }]);
    case SERVICE_ERROR.NOT_FOUND:
      return new ApiError("NOT_FOUND", e.message);
    case SERVICE_ERROR.FORBIDDEN:
      return new ApiError("FORBIDDEN", e.message);
    case SERVICE_ERROR.NAME_TAKEN:
      return new ApiError("NAME_TAKEN", e.message);
    case SERVICE_ERROR.GOALS_PAUSED:
      return new ApiError("GOALS_PAUSED", e.message);
    case SERVICE_ERROR.FRIEND_REQUESTS_FULL:
      return new ApiError("FRIEND_REQUESTS_FULL", e.message);
    default:
      return new ApiError("CONFLICT", e.message);
  }
}

/** `api.route` with service errors mapped. */
export function defineRoute<
  P extends z.ZodType = z.ZodObject<NoFields>,
  Q extends z.ZodType = z.ZodObject<NoFields>,
  B extends z.ZodType = z.ZodType<undefined>,
>(api: ApiBuilder, router: Router, spec: RouteSpec<P, Q, B>, handler: RouteHandler<z.output<P>, z.output<Q>, z.output<B>>): void {
  api.route(router, spec, async (ctx) => {
    try {
      return await handler(ctx);
    } catch (e) {
      throw toApiError(e);
    }
  });
}

/** The principal of a route declared `auth: "required"`. */
export function who(principal: Principal | undefined): Principal {
  if (!principal) throw unauthorized();
  return principal;
}

/** Refuse character-bound (agent) tokens for account-level operations. */
export function requireAccountToken(principal: Principal): void {
  if (principal.characterId) throw forbidden("an agent token cannot do this; use the owning account's token");
}

/**
 * Access checks over characters. `me` as a character id means the token's bound character, or
 * else the account's oldest character.
 */
export class Access {
  constructor(private readonly deps: ApiDeps) {}

  /**
   * The character a request names, which the principal may act on.
   * @throws 404 when it does not exist (or `me` resolves to nothing), 403 when it belongs to
   * another account or the token is bound to a different character.
   */
  async character(principal: Principal, characterId: string): Promise<Character> {
    if (characterId === "me") return this.defaultCharacter(principal);
    const c = await this.deps.characters.find(characterId);
    if (!c) throw notFound("character");
    if (c.accountId !== principal.accountId) throw forbidden("this character belongs to another account");
    if (principal.characterId && principal.characterId !== c.id) throw forbidden("this token is bound to another character");
    return c;
  }

  /** The token's bound character, or the account's oldest. @throws 404 when it has none. */
  async defaultCharacter(principal: Principal): Promise<Character> {
    if (principal.characterId) return this.character(principal, principal.characterId);
    const [first] = await this.deps.characters.listByAccount(principal.accountId);
    if (!first) throw notFound("character");
    return first;
  }

  /** The character's full view, live when online. @throws 404 when it no longer exists. */
  async view(characterId: string): Promise<PlayerView> {
    const view = await this.deps.characters.currentView(characterId, this.deps.world);
    if (!view) throw notFound("character");
    return view;
  }

  /**
   * Run a change that needs the character out of the world (renaming, deleting): 409 CONFLICT when
   * it is in the world, connected or still lingering after a dropped connection; while the change
   * runs, no join of the character can complete.
   */
  async outOfWorld<T>(characterId: string, action: string, work: () => Promise<T>): Promise<T> {
    const r = await this.deps.world.whileOutOfWorld(characterId, work);
    if (!r.ok) throw new ApiError("CONFLICT", `log the character out of the world before you ${action} it`);
    return r.value;
  }

  /**
   * Rename a character the request already loaded. The name it already has changes nothing (and
   * is allowed in the world); another name needs the character out of the world (`outOfWorld`).
   * @throws 409 CONFLICT while it is in the world, 409 NAME_TAKEN for a taken name.
   */
  async rename(character: Character, name: string): Promise<void> {
    if (character.name === name) return;
    await this.outOfWorld(character.id, "rename", () => this.deps.characters.rename(character.id, name));
  }
}

// ---- shared schemas ---------------------------------------------------------------------------

/** Any opaque id in a path (character ids are UUIDs; `me` where documented). */
export const Id = z.string().min(1).max(128);
export const CharacterIdParams = z.object({ characterId: Id.openapi({ description: "A character id, or `me`" }) });

/** Character name rules (docs/rest.md#rules-that-hold-everywhere), the same check the service makes. */
export const CharacterName = z
  .string()
  .max(64)
  .transform(normalizeName)
  .superRefine((name, ctx) => {
    const problem = nameProblem(name);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  })
  .openapi({ description: "3 to 12 letters, digits, spaces, _ or -; unique regardless of case", example: "Ash Wyn" });

/** Target of a social action: a character id or a character name. */
export const CharacterRefBody = z
  .object({
    characterId: Id.optional(),
    name: z.string().trim().min(1).max(12).optional(),
  })
  .strict()
  .refine((b) => (b.characterId === undefined) !== (b.name === undefined), { message: "give exactly one of characterId or name" })
  .openapi("CharacterRef");

// Shared with the WebSocket protocol (src/protocol/player.ts), named here for the OpenAPI document
// (`meta` ids: those schemas were built before zod had `openapi`).
const Position = ProtocolPosition;
export const SkillsSchema = ProtocolSkills.meta({ id: "Skills" });
export const GoalSchema = ProtocolGoal.meta({ id: "Goal" });
export const AvailableGoalSchema = z.object({ id: z.string(), type: z.string(), description: z.string() }).openapi("AvailableGoal");

/** The stored part of `player:sync` (docs/protocol.md#private-state) plus `online`. */
export const PlayerViewSchema = StoredPlayerSyncSchema.extend({ skills: SkillsSchema, goal: GoalSchema.nullable(), online: z.boolean() }).openapi("Player");

export const PositionSchema = Position;
export const CharacterBriefSchema = z.object({ id: z.string(), name: z.string() }).openapi("CharacterBrief");

/** Response documentation helpers. */
export const r = {
  notFound: (what: string) => ({ description: `${what} not found` }),
  forbidden: { description: "The token may not act on this resource" },
  conflict: (why: string) => ({ description: why }),
  busy: { description: "SERVER_BUSY: too many creations at once, or storage unavailable; retry after Retry-After seconds" },
};
