/**
 * Colyseus on the shared HTTP server. Express owns HTTP; the WebSocket transport is attached with
 * `noServer` and an upgrade filter so room sockets (`/ws/<processId>/<roomId>`) go to Colyseus, the
 * exact path `/ws` goes to the plain-WebSocket adapter, and everything else is refused. Origins are
 * checked on every upgrade with the same CORS policy as HTTP.
 */
import type { IncomingMessage, Server as HttpServer } from "node:http";
import type { Duplex } from "node:stream";
import { matchMaker, createNodeMatchmakingMiddleware, type Presence } from "@colyseus/core";

/** Colyseus's room-listing driver (local, or Redis across processes). */
export type MatchMakerDriver = NonNullable<Parameters<typeof matchMaker.setup>[1]>;
import { setTransport } from "@colyseus/core/Transport";
import { WebSocketTransport } from "@colyseus/ws-transport";
import type { RequestHandler } from "express";
import type { WebSocket } from "ws";
import type { Logger } from "../logger.js";
import { clientAddress } from "../auth/address.js";
import type { SocketCap } from "./socket-cap.js";

/** Largest WebSocket frame accepted from a client (bytes). Game messages are small. */
export const MAX_WS_PAYLOAD = 16 * 1024;

export type UpgradeRoute = "colyseus" | "adapter" | "forbidden" | "not_found";

/**
 * The origin rule of every upgrade and of Colyseus's matchmaking answers: HTTP's CORS policy
 * (`CorsPolicy`, src/http/cors.ts, built by the composition root), of which this layer uses only these two methods.
 */
export interface OriginPolicy {
  allows(origin: string | undefined): boolean;
  /** The CORS headers to answer `origin` with (none for an origin not allowed). */
  headersFor(origin: string | undefined): Record<string, string>;
}

/** Decide where an upgrade request goes. */
export function classifyUpgrade(req: IncomingMessage, cors: OriginPolicy): UpgradeRoute {
  const origin = req.headers.origin;
  if (origin !== undefined && !cors.allows(origin)) return "forbidden";
  const path = (req.url ?? "/").split("?")[0];
  if (path === "/ws" || path === "/ws/") return "adapter";
  if (/^\/ws\/[A-Za-z0-9_-]+\/[A-Za-z0-9_-]+$/.test(path)) return "colyseus";
  return "not_found";
}

/** An upgrade socket's error only destroys it (see the 'upgrade' listener in `setupColyseus`). */
function destroyOnError(this: Duplex): void {
  this.destroy();
}

/** The path of a request without its query (which may hold a token: never log `req.url`). */
export const pathOf = (req: IncomingMessage): string => (req.url ?? "/").split("?")[0]!;

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
  /** Redis presence and driver across processes (src/cluster/cluster.ts); Colyseus's local ones when absent. */
  presence?: Presence;
  driver?: MatchMakerDriver;
  /** Where this process's rooms are reached (`host[:port]/ws`), written into seat reservations. */
  publicAddress?: string;
  /** Honour the proxy's X-Forwarded-For (TRUST_PROXY). */
  trustProxy?: boolean;
  /** Seconds an address is still blocked for (0 when it is not); blocked room sockets get 429. */
  blockedFor?: (address: string | undefined) => number;
  /** Per-address cap on concurrent sockets of both transports (MAX_SOCKETS_PER_ADDRESS). */
  socketCap?: SocketCap;
  /** Outgoing bytes that may wait on one SDK socket before it is terminated (slow consumer). */
  maxBufferedBytes?: number;
  logger?: Logger;
}

/**
 * Backpressure on SDK sockets, which `@colyseus/ws-transport` does not have (its client's `raw()`
 * hands every message to `ws.send` whatever is queued): a send while more than `maxBuffered` bytes
 * wait on the socket terminates it instead (the same rule as the `/ws` adapter,
 * docs/protocol.md "Limits"). No close frame can pass a full buffer, so the client sees 1006; the room sees the
 * leave like any dropped connection.
 */
export function limitBuffered(ws: WebSocket, maxBuffered: number, logger?: Logger): void {
  const send = ws.send.bind(ws) as (...args: unknown[]) => void;
  (ws as unknown as { send: (...args: unknown[]) => void }).send = (...args: unknown[]) => {
    if (ws.readyState !== ws.OPEN) return;
    if (ws.bufferedAmount > maxBuffered) {
      logger?.warn({ buffered: ws.bufferedAmount }, "room socket: client not reading; terminating");
      ws.terminate();
      return;
    }
    send(...args);
  };
}

/** The matchmaking answer to an address at its socket cap (Colyseus's error shape, so the SDK raises a MatchMakeError). */
export const SOCKET_CAP_ERROR = { code: 429, error: "too many connections from this address" } as const;

export interface ColyseusHandle {
  transport: WebSocketTransport;
  matchmaking: RequestHandler;
  /**
   * Stop reading from every room socket (shutdown: what clients send is not acted on any more, and
   * parsing it would take the event loop from the shutdown save); `shutdown` reads them again.
   */
  pauseReading(): void;
  /** Dispose every room (each client still in one leaves, and its player is saved) and close room sockets. */
  shutdown(): Promise<void>;
}

/**
 * Prepare Colyseus for `httpServer`. Call `accept()` after rooms are defined.
 * @param onAdapterUpgrade handles upgrades for the exact path `/ws`.
 */
export async function setupColyseus(
  httpServer: HttpServer,
  cors: OriginPolicy,
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
  const cap = opts.socketCap;
  /** Room-socket upgrades the filter refused for the cap (answered 429 by the listener below). */
  const overCap = new WeakSet<IncomingMessage>();
  const admit = (req: IncomingMessage, socket: Duplex) => !cap || cap.acquire(clientAddress(req, trustProxy), socket);
  // Room sockets (joins and reconnections) from a blocked address, or one at its socket cap, are
  // refused before the upgrade. The transport's listener runs first (it was added first) and
  // counts the socket when it takes it.
  transport.attachToServer(httpServer, {
    filter: (req) => {
      if (classifyUpgrade(req, cors) !== "colyseus" || blockedFor(req) > 0) return false;
      if (admit(req, req.socket)) return true;
      overCap.add(req);
      return false;
    },
  });
  const maxBuffered = opts.maxBufferedBytes;
  if (maxBuffered !== undefined) {
    socketServer(transport).on("connection", (ws) => limitBuffered(ws, maxBuffered, opts.logger));
  }
  const refused = (req: IncomingMessage, socket: Duplex, status: 403 | 404 | 429, why: string, retryAfter?: number) => {
    opts.logger?.debug({ path: pathOf(req), address: clientAddress(req, trustProxy), status, why }, "upgrade refused");
    refuse(socket, status, retryAfter);
  };
  httpServer.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    // Once Node hands a socket to the 'upgrade' listeners it has no 'error' listener of its own: a
    // peer that resets it (while a refusal is written, or before `ws` takes it) would raise an
    // uncaught exception and end the process. This listener runs once for every upgrade, refused or
    // not (`ws` adds its own to the sockets it takes).
    socket.on("error", destroyOnError);
    const route = classifyUpgrade(req, cors);
    if (route === "adapter") {
      if (blockedFor(req) === 0 && !admit(req, socket)) return refused(req, socket, 429, "socket cap");
      onAdapterUpgrade(req, socket, head);
    } else if (route === "forbidden") refused(req, socket, 403, "origin");
    else if (route === "not_found") refused(req, socket, 404, "path");
    else {
      const left = blockedFor(req);
      if (left > 0) refused(req, socket, 429, "blocked", left);
      else if (overCap.has(req)) refused(req, socket, 429, "socket cap");
      else opts.logger?.debug({ path: pathOf(req), address: clientAddress(req, trustProxy) }, "room socket upgrade");
    }
  });

  // Every room is created in the process that asks for it: a world room runs this process's
  // World and a trade room its TradeService (Colyseus would otherwise pick the process with the
  // fewest rooms, anywhere in the cluster).
  await matchMaker.setup(opts.presence, opts.driver, opts.publicAddress, () => Promise.resolve(matchMaker.processId));
  setTransport(transport);
  return {
    transport,
    matchmaking: withClientAddress(createNodeMatchmakingMiddleware() as RequestHandler, cap),
    accept: () => matchMaker.accept(),
    pauseReading() {
      for (const ws of socketServer(transport).clients) ws.pause();
    },
    async shutdown() {
      // Closing handshakes need the clients' close frames.
      for (const ws of socketServer(transport).clients) ws.resume();
      try {
        await matchMaker.gracefullyShutdown();
      } catch {
        // already shutting down
      }
      transport.shutdown();
    },
  };
}

/** The transport's `ws` server (not part of its typed interface): its room sockets and their arrivals. */
function socketServer(transport: WebSocketTransport): { clients: Set<WebSocket>; on(e: "connection", f: (ws: WebSocket) => void): void } {
  return (transport as unknown as { wss: ReturnType<typeof socketServer> }).wss;
}

/**
 * Put the client address where `onAuth` finds it (CLIENT_ADDRESS_HEADER), replacing any sent. It
 * is Express's `req.ip` (the app's `trust proxy` setting follows TRUST_PROXY, the same rule as
 * `clientAddress`).
 */
function withClientAddress(matchmaking: RequestHandler, cap?: SocketCap): RequestHandler {
  return (req, res, next) => {
    // `req` may be the body replay of the matchmaking guard: only url, method, headers, socket, ip.
    const address = req.ip;
    // An address at its socket cap would be refused at the room socket: say so at matchmaking.
    if (cap?.full(address) && req.method === "POST" && (req.url ?? "").startsWith("/matchmake/")) {
      res.status(SOCKET_CAP_ERROR.code).json(SOCKET_CAP_ERROR);
      return;
    }
    if (address) req.headers[CLIENT_ADDRESS_HEADER] = address;
    else delete req.headers[CLIENT_ADDRESS_HEADER];
    return matchmaking(req, res, next);
  };
}
