/**
 * Colyseus matchmaking (`POST /ws/matchmake/<method>/<room>`) under the API's body rules. Colyseus
 * reads the body itself (up to 1 MB) and answers failures in its own shape; here the body is read
 * first with the API's limit, so an oversized body is 413 `PAYLOAD_TOO_LARGE` and malformed JSON is
 * 400 `INVALID_JSON` with the error body of docs/http.md#error-body. A body that passes is replayed to
 * Colyseus unchanged, so the SDK sees no difference.
 */
import { Readable } from "node:stream";
import express, { type Request, type RequestHandler } from "express";
import { ApiError } from "./errors.js";

/** Largest matchmaking body accepted (join options are a few hundred bytes). */
export const MATCHMAKE_BODY_LIMIT = 16 * 1024;

const isMatchmakeRequest = (req: Request) => req.method === "POST" && req.path.startsWith("/matchmake/");

/**
 * Middleware to mount at `/ws` in place of Colyseus's matchmaking middleware.
 * @param matchmaking Colyseus's `createNodeMatchmakingMiddleware()`
 */
export function guardedMatchmaking(matchmaking: RequestHandler, limitBytes = MATCHMAKE_BODY_LIMIT): RequestHandler[] {
  const readBody = express.raw({ type: () => true, limit: limitBytes });
  return [
    (req, res, next) => (isMatchmakeRequest(req) ? readBody(req, res, next) : next()),
    (req, res, next) => {
      if (!isMatchmakeRequest(req)) return matchmaking(req, res, next);
      const raw: Buffer = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
      if (raw.length > 0) {
        let options: unknown;
        try {
          options = JSON.parse(raw.toString("utf8"));
        } catch {
          throw new ApiError("INVALID_JSON", "request body is not valid JSON");
        }
        if (options === null || typeof options !== "object" || Array.isArray(options)) {
          throw new ApiError("INVALID_REQUEST", "matchmaking options must be a JSON object");
        }
      }
      // Colyseus reads the body from the request stream, which is consumed: hand it a request that
      // replays the same bytes (it uses the URL, method, headers and body of the request; `ip` is
      // the client address that the world's `onAuth` counts and blocks by).
      const replay = Object.assign(Readable.from(raw.length > 0 ? [raw] : []), {
        url: req.url,
        method: req.method,
        headers: req.headers,
        socket: req.socket,
        ip: req.ip,
      });
      return matchmaking(replay as unknown as Request, res, next);
    },
  ];
}
