/**
 * Cross-origin policy (docs/http.md#cors): an exact list plus
 * anchored patterns; never a reflected arbitrary origin, never `*`. Shared by Express, Colyseus's
 * matchmaking responses and the WebSocket upgrade check.
 */
import type { Config } from "../config.js";

export const CORS_ALLOW_METHODS = "GET, PUT, POST, DELETE, OPTIONS, PATCH";
export const CORS_ALLOW_HEADERS = "Content-Type, Authorization, X-Requested-With";

/** Production front-end origins and hosted-platform patterns. */
export const PRODUCTION_ORIGINS = [
  "https://realm.game", // main site
  "https://www.realm.game", // its www form
  "https://realm-client.pages.dev", // static-hosting primary origin
];
const PATTERNS: RegExp[] = [
  // any http or https localhost origin, any port
  /^https?:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d{1,5})?$/,
  // preview deployments of the static host
  /^https:\/\/[a-z0-9-]{1,63}\.realm-client\.pages\.dev$/,
  // preview deployments of the server host
  /^https:\/\/realm-server-[a-z0-9-]{1,63}\.up\.railway\.app$/,
  // social-frame integration
  /^https:\/\/(warpcast\.com|farcaster\.xyz|[a-z0-9-]{1,63}\.farcaster\.xyz)$/,
];

const originOf = (url: string | undefined): string | undefined => {
  if (!url) return undefined;
  try {
    const u = new URL(url.replace(/^ws/, "http"));
    return u.origin;
  } catch {
    return undefined;
  }
};

/** Decides whether an Origin header may use the API. */
export class CorsPolicy {
  private readonly exact: Set<string>;
  constructor(config: Config) {
    const extra = [
      config.publicApiUrl, // the server's own origin
      config.publicAppUrl,
      config.clientUrl,
      config.agentFrameworkUrl,
      config.agentFrameworkApiUrl,
      config.idp?.issuer, // identity provider origins
      config.idp?.jwksUrl,
    ]
      .map(originOf)
      .filter((o): o is string => !!o);
    this.exact = new Set([...PRODUCTION_ORIGINS, ...extra]);
  }

  allows(origin: string | undefined): boolean {
    if (!origin || origin.length > 255) return false;
    if (this.exact.has(origin)) return true;
    return PATTERNS.some((p) => p.test(origin));
  }

  /** Headers for a response to `origin` (empty for a disallowed or absent origin). */
  headersFor(origin: string | undefined): Record<string, string> {
    if (!origin || !this.allows(origin)) return {};
    return {
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Credentials": "true",
      "Access-Control-Allow-Methods": CORS_ALLOW_METHODS,
      "Access-Control-Allow-Headers": CORS_ALLOW_HEADERS,
      "Access-Control-Max-Age": "600",
    };
  }
}
