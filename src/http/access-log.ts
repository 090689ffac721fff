/**
 * HTTP access log (docs/http.md "Access log"): one line per request with `pino-http`, carrying a request
 * id that is echoed in the `X-Request-Id` response header. A client-supplied `X-Request-Id` (a
 * proxy's) is kept when it is short and plain; anything else gets a fresh UUID.
 *
 * Secrets never reach the log: the request is written field by field (method, path with its query,
 * address, a few headers), with credential headers (Authorization, X-Admin-Code, Cookie) and
 * credential query parameters (`token`, `_authToken`, and any name containing token, secret,
 * password or code) replaced by "[redacted]"; response headers are not written (Set-Cookie).
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { RequestHandler } from "express";
import { pinoHttp } from "pino-http";
import type { Logger } from "../logger.js";

export const REQUEST_ID_HEADER = "X-Request-Id";
const REDACTED = "[redacted]";
/** A request id we accept from the client: what proxies generate (UUIDs, hex, base64url). */
const ACCEPTED_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Request headers worth logging; credential headers are listed so their presence shows, redacted. */
const LOGGED_HEADERS = ["host", "user-agent", "referer", "origin", "content-type", "content-length", "x-forwarded-for"];
const SECRET_HEADERS = ["authorization", "x-admin-code", "cookie", "proxy-authorization"];
const SECRET_PARAM = /token|secret|password|passwd|code|key|auth/i;

/** The request URL with the values of credential query parameters replaced. */
/**
 * Colyseus answers some matchmaking requests with its own 52x codes that describe the client's
 * request, not a server fault: 520 no such room type, 521 invalid criteria, 522 no such room id,
 * 524 reconnection seat expired, 525 authentication failed. The SDK reports the status as the
 * error's code, so they stay as Colyseus defines them; they are logged as warnings. 523 (unhandled)
 * and 526 (an exception in the application) are server faults and stay errors.
 */
const CLIENT_MATCHMAKE_STATUSES = new Set([520, 521, 522, 524, 525]);

/**
 * A 503 with `Retry-After` is a busy refusal (docs/operations.md "When the server is busy"): load shedding the
 * client is told to retry, not a fault; its cause, if any, is logged once per burst elsewhere.
 */
const isBusyRefusal = (res: ServerResponse) => res.statusCode === 503 && res.getHeader("retry-after") !== undefined;

export function redactUrl(url: string): string {
  const q = url.indexOf("?");
  if (q < 0) return url;
  const params = new URLSearchParams(url.slice(q + 1));
  let changed = false;
  for (const name of new Set(params.keys())) {
    if (!SECRET_PARAM.test(name)) continue;
    params.set(name, REDACTED);
    changed = true;
  }
  return changed ? `${url.slice(0, q)}?${params.toString()}` : url;
}

function requestView(req: IncomingMessage & { id?: unknown; originalUrl?: string; ip?: string }) {
  const headers: Record<string, string> = {};
  for (const name of LOGGED_HEADERS) {
    const v = req.headers[name];
    if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(", ") : v;
  }
  for (const name of SECRET_HEADERS) if (req.headers[name] !== undefined) headers[name] = REDACTED;
  return {
    id: req.id,
    method: req.method,
    url: redactUrl(req.originalUrl ?? req.url ?? "/"),
    remoteAddress: req.ip ?? req.socket?.remoteAddress,
    headers,
  };
}

/** Express middleware writing the access log through `logger`. Mount first. */
export function accessLog(logger: Logger): RequestHandler {
  return pinoHttp({
    logger,
    wrapSerializers: false,
    serializers: {
      req: requestView,
      res: (res: ServerResponse) => ({ statusCode: res.statusCode }),
    },
    genReqId: (req, res) => {
      const given = req.headers["x-request-id"];
      const id = typeof given === "string" && ACCEPTED_ID.test(given) ? given : randomUUID();
      res.setHeader(REQUEST_ID_HEADER, id);
      return id;
    },
    customLogLevel: (_req, res, err) =>
      CLIENT_MATCHMAKE_STATUSES.has(res.statusCode) || isBusyRefusal(res) ? "warn" : err || res.statusCode >= 500 ? "error" : "info",
    customSuccessMessage: (req, res) => `${req.method} ${res.statusCode}`,
    customErrorMessage: (req, res) => `${req.method} ${res.statusCode}`,
  }) as unknown as RequestHandler;
}
