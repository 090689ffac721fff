/**
 * Colyseus on the shared HTTP server. Express owns HTTP; the WebSocket transport is attached with
 * `noServer` and an upgrade filter so room sockets (`/ws/<processId>/<roomId>`) go to Colyseus, the
 * exact path `/ws` goes to the plain-WebSocket adapter, and everything else is refused. Origins are
 * checked on every upgrade with the same CORS policy as HTTP.
 */
import type { IncomingMessage, Server as HttpServer } from "node:http";
import type { Duplex } from "node:stream";
import { matchMaker, createNodeMatchmakingMiddleware, type Presence } from "@colyseus/core";
import { setTransport } from "@colyseus/core/Transport";
import { WebSocketTransport } from "@colyseus/ws-transport";
import type { RequestHandler } from "express";
import type { CorsPolicy } from "../http/cors.js";
import { clientAddress } from "./address.js";

/** Largest WebSocket frame accepted from a client (bytes). Game messages are small. */
export const MAX_WS_PAYLOAD = 16 * 1024;

export type UpgradeRoute = "colyseus" | "adapter" | "forbidden" | "not_found";

/** Decide where an upgrade request goes. */
export function classifyUpgrade(req: IncomingMessage, cors: CorsPolicy): UpgradeRoute {
  const origin = req.headers.origin;
  if (origin !== undefined && !cors.allows(origin)) return "forbidden";
  const path = (req.url ?? "/").split("?")[0];
  if (path === "/ws" || path === "/ws/") return "adapter";
  if (/^\/ws\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+$/.test(path)) return "colyseus";
  return "not_found";
}

function refuse(socket: Duplex, status: 403 | 404 | 429, retryAfter?: number) {
  const text = status === 403 ? "Forbidden" : status === 404 ? "Not Found" : "Too Many Requests";
  const extra = retryAfter !== undefined ? `Retry-After: ${retryAfter}\r\n` : "";
  socket.end(`HTTP/1.1 ${status} ${text}\r\nConnection: close\r\n${extra}Content-Length: 0\r\n\r\n`);
}

/**
 * Request header through which the matchmaking middleware hands `onAuth` the client address
 * (Colyseus's own `context.ip` trusts `X-Forwarded-For`/`X-Real-IP` unconditionally). The
 * middleware always overwrites it, so a client cannot supply it.
 */
export const CLIENT_ADDRESS_HEADER = "x-realm-client-address";

export interface ColyseusOptions {
  presence?: Presence;
  publicAddress?: string;
  /** Honour the proxy's X-Forwarded-For (TRUST_PROXY). */
  trustProxy?: boolean;
  /** Seconds an address is still blocked for (0 when it is not); blocked room sockets get 429. */
  blockedFor?: (address: string | undefined) => number;
  /** Told the status of every matchmaking request Colyseus refused (metrics). */
  onRefused?: (status: number) => void;
}

export interface ColyseusHandle {
  transport: WebSocketTransport;
  matchmaking: RequestHandler;
  /** Dispose every room (each client still in one leaves, and its player is saved) and close room sockets. */
  shutdown(): Promise<void>;
}

/**
 * Prepare Colyseus for `httpServer`. Call `accept()` after rooms are defined.
 * @param onAdapterUpgrade handles upgrades for the exact path `/ws`.
 */
export async function setupColyseus(
  httpServer: HttpServer,
  cors: CorsPolicy,
  onAdapterUpgrade: (req: IncomingMessage, socket: Duplex, head: Buffer) => void,
  opts: ColyseusOptions = {},
): Promise<ColyseusHandle & { accept(): Promise<void> }> {
  const trustProxy = opts.trustProxy ?? false;
  const blockedFor = (req: IncomingMessage) => opts.blockedFor?.(clientAddress(req, trustProxy)) ?? 0;
  // Colyseus writes permissive CORS headers by default; answer only allowed origins.
  matchMaker.controller.DEFAULT_CORS_HEADERS = {} as typeof matchMaker.controller.DEFAULT_CORS_HEADERS;
  matchMaker.controller.getCorsHeaders = (headers: Headers) => cors.headersFor(headers.get("origin") ?? undefined);

  const transport = new WebSocketTransport({
    noServer: true,
    maxPayload: MAX_WS_PAYLOAD,
    pingInterval: 5_000,
    pingMaxRetries: 3,
  });
  // Room sockets (joins and reconnections) from a blocked address are refused before the upgrade.
  transport.attachToServer(httpServer, { filter: (req) => classifyUpgrade(req, cors) === "colyseus" && blockedFor(req) === 0 });
  httpServer.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const route = classifyUpgrade(req, cors);
    if (route === "adapter") onAdapterUpgrade(req, socket, head);
    else if (route === "forbidden") refuse(socket, 403);
    else if (route === "not_found") refuse(socket, 404);
    else {
      const left = blockedFor(req);
      if (left > 0) refuse(socket, 429, left);
    }
  });

  await matchMaker.setup(opts.presence, undefined, opts.publicAddress);
  setTransport(transport);
  return {
    transport,
    matchmaking: withClientAddress(createNodeMatchmakingMiddleware() as RequestHandler, opts.onRefused),
    accept: () => matchMaker.accept(),
    async shutdown() {
      try {
        await matchMaker.gracefullyShutdown();
      } catch {
        // already shutting down
      }
      transport.shutdown();
    },
  };
}

/**
 * Put the client address where `onAuth` finds it (CLIENT_ADDRESS_HEADER), replacing any sent. It
 * is Express's `req.ip` (the app's `trust proxy` setting follows TRUST_PROXY, the same rule as
 * `clientAddress`).
 */
function withClientAddress(matchmaking: RequestHandler, onRefused?: (status: number) => void): RequestHandler {
  return (req, res, next) => {
    // `req` may be the body replay of the matchmaking guard: only url, method, headers, socket, ip.
    if (onRefused && req.method === "POST" && req.url?.startsWith("/matchmake/")) res.once("finish", () => res.statusCode >= 400 && onRefused(res.statusCode));
    const address = req.ip;
    if (address) req.headers[CLIENT_ADDRESS_HEADER] = address;
    else delete req.headers[CLIENT_ADDRESS_HEADER];
    return matchmaking(req, res, next);
  };
}
