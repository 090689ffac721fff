/**
 * The REST route families (docs/rest.md#rest-api-player-world-characters-social-graph-agents-voice) as route modules for `createApp({ modules })`:
 * `/api/v1/player`, `/api/v1/world`, `/api/character/*`, `/api/template/*`, `/api/player/*`,
 * `/api/agent/*`, `/api/agents/*`, `/api/characters/*` and `/api/voice/token`.
 */
import { AgentService } from "../../services/agents.js";
import type { RouteModule } from "../app.js";
import { agentGoalRoutes } from "./agent-goals.js";
import { agentRoutes } from "./agents.js";
import { characterRoutes, characterStateRoutes } from "./characters.js";
import type { ApiDeps } from "./context.js";
import { playerRoutes } from "./player.js";
import { socialRoutes } from "./social.js";
import { templateRoutes } from "./templates.js";
import { voiceRoutes } from "./voice.js";

/** The agent service over the REST dependencies (the REST routes' and the MCP tools' own). */
export function agentServiceFor(deps: Pick<ApiDeps, "storage" | "content" | "world" | "characters" | "auth" | "config">): AgentService {
  return new AgentService({
    storage: deps.storage,
    content: deps.content,
    world: deps.world,
    characters: deps.characters,
    sign: (claims, ttl) => deps.auth.sign(claims, ttl),
    endpoints: {
      wsUrl: deps.config.publicWsUrl,
      sdkEndpoint: `${deps.config.publicApiUrl.replace(/\/+$/, "")}/ws`,
    },
  });
}

/** Build every REST route module over the given dependencies. */
export function createApiModules(deps: ApiDeps): RouteModule[] {
  const agents = agentServiceFor(deps);
  return [
    playerRoutes(deps),
    characterRoutes(deps, agents),
    templateRoutes(deps),
    socialRoutes(deps),
    agentRoutes(deps, agents),
    agentGoalRoutes(agents),
    characterStateRoutes(deps),
    voiceRoutes(deps),
  ];
}
