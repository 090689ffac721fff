/**
 * HTTP error vocabulary (docs/http.md#error-body). Handlers throw `ApiError`; the error middleware
 * renders `{ error: { code, message, details? } }` and hides everything unknown behind a bare 500.
 */
import type { ErrorRequestHandler, RequestHandler } from "express";
import type { Logger } from "../logger.js";
import { ServerBusyError, STORAGE_RETRY_AFTER_S } from "../net/admission.js";
import { isStorageUnavailable, storageFailureLog } from "../storage/unavailable.js";

export const ERROR_CODES = {
  INVALID_JSON: 400,
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  NAME_TAKEN: 409,
  CONFLICT: 409,
  GOALS_PAUSED: 409,
  FRIEND_REQUESTS_FULL: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  UNAVAILABLE: 503,
  SERVER_BUSY: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_CODES;

/** One offending field of a validation failure. */
export interface ErrorDetail {
  field: string;
  message: string;
}

/** A typed error with a stable code and a message safe to show to the caller. */
export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetail[],
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.status = ERROR_CODES[code];
  }
}

export const notFound = (what = "resource") => new ApiError("NOT_FOUND", `${what} not found`);
export const forbidden = (msg = "you may not act on this resource") => new ApiError("FORBIDDEN", msg);
export const unauthorized = (msg = "missing or invalid authentication token") => new ApiError("UNAUTHORIZED", msg);
/** 503 `SERVER_BUSY` with `Retry-After` (docs/operations.md "When the server is busy"). */
export const serverBusy = (e: ServerBusyError) => new ApiError("SERVER_BUSY", e.message, undefined, { "Retry-After": String(e.retryAfterSeconds) });

/** The JSON error body; `code` is an `ErrorCode` or another documented code (matchmaking's refusals). */
export function errorBody(code: string, message: string, details?: ErrorDetail[]) {
  return { error: details ? { code, message, details } : { code, message } };
}

/** Final 404 for unknown routes. */
export const notFoundHandler: RequestHandler = (req, _res, next) => {
  next(new ApiError("NOT_FOUND", `no route for ${req.method} ${req.path}`));
};

/** A property of a thrown value of unknown shape (body-parser's and http-errors' `type`, `status`, `expose`). */
function prop(err: unknown, key: string): unknown {
  return typeof err === "object" && err !== null ? (err as Record<string, unknown>)[key] : undefined;
}

/** Turns typed errors into the error body; logs and hides everything else. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, _next) => {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    let apiError: ApiError;
    const type = prop(err, "type");
    const status = prop(err, "status");
    if (err instanceof ApiError) apiError = err;
    else if (type === "entity.parse.failed") apiError = new ApiError("INVALID_JSON", "request body is not valid JSON");
    else if (type === "entity.too.large") apiError = new ApiError("PAYLOAD_TOO_LARGE", "request body is too large");
    else if (type === "encoding.unsupported" || type === "charset.unsupported") apiError = new ApiError("INVALID_REQUEST", "unsupported body encoding");
    // The router decodes path parameters and throws a URIError (status 400, not exposed) for
    // percent-encoding that does not decode, e.g. /api/character/%ff: the client's mistake.
    else if (err instanceof URIError) apiError = new ApiError("INVALID_REQUEST", "the URL has invalid percent-encoding");
    // A full admission queue, or storage that cannot serve now: a refusal to retry, never a 500.
    else if (err instanceof ServerBusyError) apiError = serverBusy(err);
    else if (isStorageUnavailable(err)) {
      storageFailureLog(logger).failure(err, { method: req.method, path: req.path });
      apiError = serverBusy(new ServerBusyError("storage", STORAGE_RETRY_AFTER_S, "request"));
    } else if (typeof status === "number" && status >= 400 && status < 500 && prop(err, "expose")) {
      apiError = new ApiError("INVALID_REQUEST", "invalid request");
    } else {
      logger.error({ err, method: req.method, path: req.path }, "unhandled error in HTTP handler");
      apiError = new ApiError("INTERNAL", "internal server error");
    }
    if (apiError.headers) res.set(apiError.headers);
    res.status(apiError.status).json(errorBody(apiError.code, apiError.message, apiError.details));
  };
}
