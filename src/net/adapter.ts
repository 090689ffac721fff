/**
 * The plain-WebSocket adapter at exactly `/ws` (docs/protocol.md#plain-websocket), for agents and tools without
 * the Colyseus SDK: `ws://host:5555/ws?token=<token>` (or `Authorization: Bearer`), every frame
 * UTF-8 JSON `{ "event": "<name>", "data": {...} }` both ways. It joins the world room on the
 * client's behalf and feeds frames to the same event table as the SDK path.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { ServerError } from "@colyseus/core";
import type { WorldRoom, Session } from "../../rooms/WorldRoom.js";
import { CLOSE_CODES } from "../events.js";
import type { Logger } from "../logger.js";
import { WorldError } from "../world/errors.js";
import type { WorldRuntime } from "../world/runtime.js";
import { clientAddress } from "./address.js";
import { MAX_WS_PAYLOAD } from "./colyseus.js";

/** Frames a client may send before its join completes; more are dropped. */
const MAX_EARLY_FRAMES = 32;
/**
 * Heartbeat: every interval each connection is pinged; one that has not answered the previous
 * ping with a pong is terminated (a half-open socket would otherwise keep its player online).
 * A connection that misses a pong is gone within two intervals.
 */
export const ADAPTER_HEARTBEAT_MS = 15_000;
/**
 * Backpressure: outgoing bytes that may wait on one connection (not yet handed to the kernel).
 * A client that reads too slowly to stay under it is terminated rather than buffered without limit
 * (a close frame could not get through its full buffer anyway). World updates are a few KB a tick,
 * so 1 MiB is minutes of backlog for a slow link and seconds for a client that stopped reading.
 */
export const ADAPTER_MAX_BUFFERED_BYTES = 1024 * 1024;

export interface AdapterOptions {
  /** Honour the proxy's X-Forwarded-For when working out client addresses (TRUST_PROXY). */
  trustProxy?: boolean;
  heartbeatMs?: number;
  maxBufferedBytes?: number;
}

export interface Adapter {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  close(): void;
}

export function createAdapter(room: () => WorldRoom | undefined, runtime: WorldRuntime, logger: Logger, opts: AdapterOptions = {}): Adapter {
  const wss = new WebSocketServer({ noServer: true, maxPayload: MAX_WS_PAYLOAD, perMessageDeflate: false });
  const maxBuffered = opts.maxBufferedBytes ?? ADAPTER_MAX_BUFFERED_BYTES;
  const answered = new WeakMap<WebSocket, boolean>();
  const heartbeat = setInterval(() => {
    for (const ws of wss.clients) {
      if (answered.get(ws) === false) {
        logger.debug("adapter: no pong since the last ping; terminating");
        ws.terminate();
        continue;
      }
      answered.set(ws, false);
      ws.ping();
    }
  }, opts.heartbeatMs ?? ADAPTER_HEARTBEAT_MS);
  heartbeat.unref();

  const onConnection = async (ws: WebSocket, req: IncomingMessage) => {
    const url = new URL(req.url ?? "/ws", "http://localhost");
    const header = req.headers.authorization;
    const token = url.searchParams.get("token") ?? (header?.match(/^Bearer\s+(\S+)$/i)?.[1] || undefined);
    const address = clientAddress(req, opts.trustProxy ?? false);
    const early: string[] = [];
    let session: Session | undefined;
    let closed = false;
    answered.set(ws, true);
    ws.on("pong", () => answered.set(ws, true));
    // A listener must never throw: an exception here would escape the socket and end the process.
    ws.on("message", (data, isBinary) => {
      try {
        const text = isBinary ? "" : data.toString();
        if (session) room()?.receiveJson(session, text);
        else if (early.length < MAX_EARLY_FRAMES) early.push(text);
      } catch (e) {
        logger.error({ err: e }, "adapter: frame handling failed");
      }
    });
    ws.on("close", () => {
      closed = true;
      try {
        if (session) room()?.detachJson(session);
      } catch (e) {
        logger.error({ err: e }, "adapter: close handling failed");
      }
    });
    ws.on("error", (e) => logger.debug({ err: e }, "adapter socket error"));
    /** Refuse the join: counted (by the HTTP-style status of the reason), then closed. */
    const refuse = (status: number, code: number, reason: string) => {
      runtime.metrics?.joinRefusals.inc({ transport: "ws", code: String(status) });
      ws.close(code, reason);
    };
    try {
      if (runtime.blockedFor(undefined, address) > 0) return refuse(429, CLOSE_CODES.FLOOD, "temporarily blocked");
      const principal = await runtime.authenticate(token, address);
      if (!principal) {
        logger.debug({ address }, "adapter: invalid token; closing");
        return refuse(401, CLOSE_CODES.BAD_TOKEN, "invalid token");
      }
      if (runtime.blockedFor(principal.accountId) > 0) return refuse(429, CLOSE_CODES.FLOOD, "temporarily blocked");
      const r = room();
      if (!r) return ws.close(1013, "world not ready");
      const s = await r.attachJson(principal, url.searchParams.get("characterId") ?? undefined, {
        send: (text) => {
          if (ws.readyState !== ws.OPEN) return;
          if (ws.bufferedAmount > maxBuffered) {
            logger.warn({ buffered: ws.bufferedAmount }, "adapter: client not reading; terminating");
            ws.terminate();
            return;
          }
          ws.send(text);
        },
        close: (code, reason) => ws.close(code, reason),
        remoteAddress: address,
      });
      if (closed) {
        r.detachJson(s);
        return;
      }
      session = s;
      logger.debug({ address, accountId: principal.accountId }, "adapter: joined");
      runtime.metrics?.joins.inc({ transport: "ws" });
      for (const f of early.splice(0)) r.receiveJson(s, f);
    } catch (e) {
      if (e instanceof ServerError) return refuse(e.code, closeCodeFor(e.code), e.message.slice(0, 120));
      if (e instanceof WorldError) return refuse(e.status, closeCodeFor(e.status), e.message.slice(0, 120));
      logger.error({ err: e }, "adapter join failed");
      ws.close(1011, "internal error");
    }
  };

  return {
    handleUpgrade(req, socket, head) {
      wss.handleUpgrade(req, socket, head, (ws) => void onConnection(ws, req));
    },
    close() {
      clearInterval(heartbeat);
      for (const c of wss.clients) c.close(CLOSE_CODES.SHUTDOWN, "server shutting down");
      wss.close();
    },
  };
}

/** The close code for a refused join: 403 → 4003, 429 (blocked, rate limited) → 4029, else 4000 + status % 1000. */
function closeCodeFor(status: number): number {
  if (status === 403) return CLOSE_CODES.REVOKED;
  if (status === 429) return CLOSE_CODES.FLOOD;
  return 4000 + (status % 1000);
}
