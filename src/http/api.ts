/**
 * Declarative REST routes: one definition gives the Express handler, zod validation of params,
 * query and body (400 INVALID_REQUEST with one detail per field), authentication, and the entry in
 * the OpenAPI document served at /api/openapi.json.
 */
import type { NextFunction, Request, RequestHandler, Response, Router } from "express";
import { z } from "zod";
import { OpenAPIRegistry, OpenApiGeneratorV31, extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { ApiError, type ErrorDetail } from "./errors.js";
import type { Principal } from "../auth/service.js";

extendZodWithOpenApi(z);

/** The shape of an object schema without fields (the default params and query): `{}`. */
export type NoFields = Record<never, never>;

type Method = "get" | "post" | "put" | "patch" | "delete";
type AuthMode = "none" | "optional" | "required";

export interface RouteSpec<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType> {
  method: Method;
  /** Express-style path, e.g. `/api/characters/:characterId/skills`. */
  path: string;
  summary: string;
  tags: string[];
  auth: AuthMode;
  /** Also accepts `X-Admin-Code` (documented only; `authorize` or the handler checks it). */
  adminCode?: boolean;
  /** Runs after authentication and before validation: throws (e.g. 403) when the caller may not use the route at all. */
  authorize?: (principal: Principal | undefined, req: Request) => void | Promise<void>;
  params?: P;
  query?: Q;
  body?: B;
  /** Response schemas by status code. */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
}

/** What a handler receives: validated input and the principal. */
export interface RouteContext<P, Q, B> {
  params: P;
  query: Q;
  body: B;
  principal: Principal | undefined;
  req: Request;
  res: Response;
}

/**
 * A handler returns (or resolves to) the body to send as JSON with the first 2xx status, or sends
 * the response itself.
 */
export type RouteHandler<P, Q, B> = (ctx: RouteContext<P, Q, B>) => unknown;

/** Resolves the principal of a request. Installed by the app factory. */
export type Authenticator = (req: Request, mode: AuthMode) => Promise<Principal | undefined>;

const errorSchema = z
  .object({
    error: z.object({
      code: z.string(),
      message: z.string(),
      details: z.array(z.object({ field: z.string(), message: z.string() })).optional(),
    }),
  })
  .openapi("Error");

/** Whether a request has a non-empty body (a declared length above 0, or a chunked one). */
function carriesBody(req: Request): boolean {
  return req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? 0) > 0;
}

function toDetails(where: string, error: z.ZodError): ErrorDetail[] {
  return error.issues.map((i) => ({
    field: [where, ...i.path.map(String)].join("."),
    message: i.message,
  }));
}

/** Builds routes on a router and records them in a registry. */
export class ApiBuilder {
  readonly registry = new OpenAPIRegistry();
  constructor(private readonly authenticate: Authenticator) {
    this.registry.registerComponent("securitySchemes", "bearer", { type: "http", scheme: "bearer", bearerFormat: "JWT" });
  }

  /** Define one route on `router`. */
  route<P extends z.ZodType = z.ZodObject<NoFields>, Q extends z.ZodType = z.ZodObject<NoFields>, B extends z.ZodType = z.ZodType<undefined>>(
    router: Router,
    spec: RouteSpec<P, Q, B>,
    handler: RouteHandler<z.output<P>, z.output<Q>, z.output<B>>,
  ): void {
    this.register(spec);
    const successStatus = Number(Object.keys(spec.responses).find((s) => Number(s) < 300) ?? 200);
    const h: RequestHandler = async (req: Request, res: Response, next: NextFunction) => {
      try {
        const details: ErrorDetail[] = [];
        const parse = <T extends z.ZodType | undefined>(schema: T, value: unknown, where: string) => {
          if (!schema) return value;
          const r = schema.safeParse(value);
          if (!r.success) {
            details.push(...toDetails(where, r.error));
            return undefined;
          }
          return r.data;
        };
        const principal = await this.authenticate(req, spec.auth);
        await spec.authorize?.(principal, req);
        const params = parse(spec.params, req.params, "params");
        const query = parse(spec.query, req.query, "query");
        // A body the JSON parser did not read (another content type) is refused, never taken as `{}`.
        const unread = spec.body !== undefined && req.body === undefined && carriesBody(req);
        if (unread) details.push({ field: "body", message: "must be JSON (Content-Type: application/json)" });
        const body = unread ? undefined : parse(spec.body, spec.body ? (req.body ?? {}) : undefined, "body");
        if (details.length > 0) throw new ApiError("INVALID_REQUEST", "request validation failed", details);
        const result = await handler({ params, query, body, principal, req, res } as RouteContext<z.output<P>, z.output<Q>, z.output<B>>);
        if (!res.headersSent) {
          if (result === undefined) res.status(successStatus === 200 ? 204 : successStatus).end();
          else res.status(successStatus).json(result);
        }
      } catch (e) {
        next(e);
      }
    };
    router[spec.method](spec.path, h);
  }

  private register(spec: RouteSpec<z.ZodType, z.ZodType, z.ZodType>) {
    const responses: Record<string, unknown> = {};
    for (const [status, r] of Object.entries(spec.responses)) {
      responses[status] = r.schema
        ? { description: r.description, content: { [r.contentType ?? "application/json"]: { schema: r.schema } } }
        : { description: r.description };
    }
    const errors: Record<number, string> = { 429: "Rate limited", 500: "Internal error" };
    if (spec.params || spec.query || spec.body) errors[400] = "Invalid request";
    if (spec.auth === "required") errors[401] = "Missing or invalid token";
    for (const [status, description] of Object.entries(errors)) {
      if (!responses[status]) responses[status] = { description, content: { "application/json": { schema: errorSchema } } };
    }
    this.registry.registerPath({
      method: spec.method,
      path: spec.path.replace(/:(\w+)/g, "{$1}"),
      summary: spec.summary,
      tags: spec.tags,
      security: spec.auth === "none" ? [] : [{ bearer: [] }],
      request: {
        params: spec.params as z.ZodObject | undefined,
        query: spec.query as z.ZodObject | undefined,
        body: spec.body ? { content: { "application/json": { schema: spec.body } } } : undefined,
        headers: spec.adminCode ? z.object({ "x-admin-code": z.string().optional() }) : undefined,
      },
      responses: responses as never,
    });
  }

  /** Record a route that is served outside the builder (static files, scripts). */
  document(spec: Omit<RouteSpec<z.ZodType, z.ZodType, z.ZodType>, "auth"> & { auth?: AuthMode }) {
    this.register({ auth: "none", ...spec });
  }

  /** The OpenAPI 3.1 document. */
  openApiDocument(version: string) {
    return new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
      openapi: "3.1.0",
      info: {
        title: "Game server API",
        version,
        description: "REST API of the authoritative game server. Errors use { error: { code, message, details? } }.",
      },
    });
  }
}
