/**
 * `POST /api/voice/token`: a LiveKit join token for the voice room of the area the caller's
 * character stands in (`area-<areaId>`), made with the provider's server SDK. Without voice
 * settings the route answers 404 and nothing else changes.
 */
import { AccessToken } from "livekit-server-sdk";
import { z } from "zod";
import type { RouteModule } from "../app.js";
import { ApiError } from "../errors.js";
import { Access, defineRoute, Id, r, who, type ApiDeps } from "./context.js";

/** Voice join tokens live one hour; clients ask again when they change area. */
export const VOICE_TOKEN_TTL_SECONDS = 3600;
/** Room for positions outside every area. */
export const OUTSIDE_ROOM = "area-wilds";

/** Routes of `/api/voice/*`. */
export function voiceRoutes(deps: ApiDeps): RouteModule {
  const access = new Access(deps);
  const { config, world, content } = deps;

  return (api, router) => {
    defineRoute(
      api,
      router,
      {
        method: "post",
        path: "/api/voice/token",
        summary:
          "A voice-chat join token for the room of the area the character stands in (room `area-<areaId>`, identity = character id). " +
          "404 when voice chat is not configured.",
        tags: ["voice"],
        auth: "required",
        body: z.object({ characterId: Id.optional().openapi({ description: "Which character (default: the token's, else the oldest)" }) }).strict(),
        responses: {
          200: {
            description: "Join token",
            schema: z.object({ token: z.string(), url: z.string(), room: z.string(), identity: z.string(), expiresAt: z.string() }).openapi("VoiceToken"),
          },
          403: r.forbidden,
          404: r.notFound("Voice chat is not configured, or the character"),
        },
      },
      async ({ principal, body }) => {
        const voice = config.voice;
        if (!voice) throw new ApiError("NOT_FOUND", "voice chat is not configured");
        const p = who(principal);
        const c = body.characterId ? await access.character(p, body.characterId) : await access.defaultCharacter(p);
        const position = ((await world.isOnline(c.id)) ? (await world.livePlayer(c.id))?.position : undefined) ?? { x: c.positionX, z: c.positionZ };
        const area = content.areaAt(position.x, position.z);
        const room = area ? `area-${area.id}` : OUTSIDE_ROOM;

        const at = new AccessToken(voice.apiKey, voice.apiSecret, { identity: c.id, name: c.name, ttl: VOICE_TOKEN_TTL_SECONDS });
        at.addGrant({ roomJoin: true, room, canPublish: true, canSubscribe: true });
        const token = await at.toJwt();
        return {
          token,
          url: voice.url,
          room,
          identity: c.id,
          expiresAt: new Date(Date.now() + VOICE_TOKEN_TTL_SECONDS * 1000).toISOString(),
        };
      },
    );
  };
}
