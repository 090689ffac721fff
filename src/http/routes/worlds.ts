/** `GET /api/v1/worlds` (public): every world, its population and where a client connects to it (docs/operations.md "Worlds"). */
import { z } from "zod";
import { listWorlds, worldWsUrl } from "../../cluster/routing.js";
import type { Config } from "../../config.js";
import type { RouteModule } from "../app.js";
import { defineRoute } from "./context.js";

const WorldListingSchema = z
  .object({
    world: z.int().openapi({ description: "World number: the `world` join option (SDK) or `/ws?world=N`" }),
    players: z.int().openapi({ description: "Players online (both transports), as the world last published it (every few ticks)" }),
    maxPlayers: z.int(),
    full: z.boolean().openapi({ description: "A join is refused (503 WORLD_FULL, /ws close 4015) until someone leaves" }),
    wsUrl: z
      .string()
      .openapi({ description: "Plain WebSocket URL of the world, `/ws?world=N` at the public address (PUBLIC_WS_URL) of the process hosting it" }),
    sdkEndpoint: z.string().openapi({ description: 'Colyseus SDK endpoint; join with `client.join("world", { world: N })`' }),
  })
  .openapi("WorldListing");

const WorldsResponseSchema = z.object({ worlds: z.array(WorldListingSchema) }).openapi("WorldsResponse");

/** The route module: built from the room listings (`matchMaker.query`), so it lists every process's worlds once listings are shared. */
export function worldsRoutes(config: Pick<Config, "publicWsUrl" | "publicApiUrl">): RouteModule {
  const sdkEndpoint = `${config.publicApiUrl.replace(/\/+$/, "")}/ws`;
  return (api, router) => {
    defineRoute(
      api,
      router,
      {
        method: "get",
        path: "/api/v1/worlds",
        summary: "Every world: number, players online, capacity, whether full, and where to connect (public)",
        tags: ["world"],
        auth: "none",
        responses: { 200: { description: "Worlds, ascending", schema: WorldsResponseSchema } },
      },
      async () => ({
        worlds: (await listWorlds()).map((w) => ({
          world: w.world,
          players: w.players,
          maxPlayers: w.maxPlayers,
          full: w.full,
          wsUrl: worldWsUrl(w, config.publicWsUrl),
          sdkEndpoint,
        })),
      }),
    );
  };
}
