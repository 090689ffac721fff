/**
 * The Colyseus playground (`@colyseus/playground`) outside production, at `/playground`
 * (docs/operations.md "Playground"). It is loaded only when mounted, so production never imports it (nor
 * `@colyseus/auth`, which it imports).
 *
 * The page talks to the server named by its `endpoint` query parameter: its SDK client uses it for
 * matchmaking, and its own API calls go to `<endpoint>/playground/...`. Our matchmaking lives under
 * `/ws`, so `/playground/` without an endpoint redirects to `?endpoint=<this origin>/ws`, and the
 * playground's API answers both at `/playground` and at `/ws/playground`.
 */
import { Router, type RequestHandler } from "express";

/** Where the playground page is served. */
export const PLAYGROUND_PATH = "/playground";

/** `@colyseus/playground` loaded by `require` (CommonJS only; see `playgroundRouters`). */
function requirePlayground(): typeof import("@colyseus/playground") {
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a dynamic import would load a second @colyseus/core
  return require("@colyseus/playground") as typeof import("@colyseus/playground");
}

/** Routers to mount: the page at PLAYGROUND_PATH and its API again under the matchmaking prefix. */
export async function playgroundRouters(): Promise<{ path: string; router: Router }[]> {
  // The playground must share this process's `@colyseus/core` instance (its matchMaker and Room).
  // Where these modules run as CommonJS (the test runner's TypeScript hook), a dynamic import would
  // load the package's ES build and with it a second, unstarted core: require it there instead.
  const { playground } = typeof require === "function" ? requirePlayground() : await import("@colyseus/playground");
  const panel = playground() as unknown as RequestHandler;
  const page = Router();
  page.get("/", (req, res, next) => {
    if (req.query.endpoint !== undefined) return next();
    const endpoint = `${req.protocol}://${req.get("host") ?? "localhost"}/ws`;
    res.redirect(302, `${req.baseUrl}/?endpoint=${encodeURIComponent(endpoint)}`);
  });
  page.use(panel);
  const api = Router();
  api.use(panel);
  return [
    { path: PLAYGROUND_PATH, router: page },
    { path: `/ws${PLAYGROUND_PATH}`, router: api },
  ];
}
