/**
 * The plain-WebSocket adapter at exactly `/ws` (docs/protocol.md#plain-websocket), for agents and tools without
 * the Colyseus SDK: `ws://host:5555/ws?token=<token>` (or `Authorization: Bearer`), every frame
 * UTF-8 JSON `{ "event": "<name>", "data": {...} }` both ways. It joins the world on the client's
 * behalf and feeds frames to the same event table as the SDK path. Each world room registers itself
 * here (`serve`, by world number) when it is created; `/ws?world=N` joins world N (without it the
 * default world: 1 if hosted, else the lowest), a world another process hosts is refused with 4016
 * WORLD_ELSEWHERE and its address, a world not hosted anywhere with 4014 UNKNOWN_WORLD naming the
 * worlds available here, a full one with 4015 WORLD_FULL. Before any world room
 * exists a join is answered 1013.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer, type RawData, type WebSocket } from "ws";
import { ServerError } from "@colyseus/core";
import { bearerToken } from "../auth/tokens.js";
import type { Principal } from "../auth/service.js";
import { CLOSE_CODES } from "../events.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { Admission } from "./admission.js";
import { WorldError } from "../world/errors.js";
import { clientAddress } from "../auth/address.js";
import { MAX_WS_PAYLOAD } from "./colyseus.js";
import type { SocketGate } from "./socket-gate.js";

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

/**
 * The text of a received frame. `ws` hands over a Buffer (its default binaryType); the array and
 * ArrayBuffer shapes of its `RawData` type come from other binaryType settings.
 */
export function frameText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString();
  return (Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data)).toString();
}

export interface AdapterOptions {
  /** Honour the proxy's X-Forwarded-For when working out client addresses (TRUST_PROXY). */
  trustProxy?: boolean;
  heartbeatMs?: number;
  maxBufferedBytes?: number;
}

/** The socket of one plain-WebSocket client, as the world sees it. */
export interface JsonSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
  remoteAddress?: string;
}

/** A joined plain-WebSocket client: where its frames go, and how it leaves. */
export interface JsonClientLink {
  receive(text: string): void;
  detach(): void;
}

/** Where plain-WebSocket clients join: the world room implements it and registers with `serve`. */
export interface JsonWorld {
  /**
   * Join `principal`'s character (docs/protocol.md#joining). Rejects with a `ServerError` whose
   * status becomes the close code (`closeCodeFor`) when the join is refused.
   */
  attachJson(principal: Principal, characterId: string | undefined, socket: JsonSocket): Promise<JsonClientLink>;
  /** Has the world as many players as it takes? */
  isFull(): boolean;
}

export interface AdapterDeps {
  /** Authentication and blocks of every WebSocket path. */
  gate: Pick<SocketGate, "authenticate" | "blockedFor">;
  logger: Logger;
  metrics?: Metrics;
  /** Admission control of joins: a refused join closes with 4503 `SERVER_BUSY: …` (src/net/admission.ts). */
  admission?: Admission;
  /** Where world `n`, not hosted here, is (the `/ws` URL of the process hosting it), if anywhere: the client is closed with 4016 WORLD_ELSEWHERE and that URL. */
  locateWorld?: (n: number) => Promise<string | undefined>;
}

/** Which world and character a join asks for (`/ws?world=&characterId=`). */
export interface JoinWhere {
  /** The world number as asked (a string, as in the query); the default world when absent. */
  world?: string | null;
  characterId?: string;
  /** The transport label of the join metrics (`mcp` for `connect`). */
  transport?: string;
}

/** A refused join: the HTTP-style status, the close code a socket gets and its reason (docs/protocol.md#close-codes). */
export class JoinRefused extends Error {
  constructor(
    readonly status: number,
    readonly closeCode: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

export interface Adapter {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /**
   * Join as a plain-WebSocket client without a socket, in process (the MCP server, src/mcp): the
   * same checks, world choice, admission and world room as `/ws`, after the caller authenticated
   * `principal`. Frames go through the returned link exactly as a socket's would.
   * @throws JoinRefused
   */
  connect(principal: Principal, where: JoinWhere, socket: JsonSocket): Promise<JsonClientLink>;
  /** World `n` to join from now on (its room, once created); returns the undo. */
  serve(n: number, world: JsonWorld): () => void;
  close(): void;
}

export function createAdapter(deps: AdapterDeps, opts: AdapterOptions = {}): Adapter {
  const { gate, logger, metrics } = deps;
  const worlds = new Map<number, JsonWorld>();
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
    const token = url.searchParams.get("token") ?? bearerToken(req.headers.authorization);
    const address = clientAddress(req, opts.trustProxy ?? false);
    const early: string[] = [];
    let link: JsonClientLink | undefined;
    let closed = false;
    answered.set(ws, true);
    ws.on("pong", () => answered.set(ws, true));
    // A listener must never throw: an exception here would escape the socket and end the process.
    ws.on("message", (data, isBinary) => {
      try {
        const text = isBinary ? "" : frameText(data);
        if (link) link.receive(text);
        else if (early.length < MAX_EARLY_FRAMES) early.push(text);
      } catch (e) {
        logger.error({ err: e }, "adapter: frame handling failed");
      }
    });
    ws.on("close", () => {
      closed = true;
      try {
        link?.detach();
      } catch (e) {
        logger.error({ err: e }, "adapter: close handling failed");
      }
    });
    ws.on("error", (e) => logger.debug({ err: e }, "adapter socket error"));
    // The token check is stage 1 of the join (a new arrival), the attach stage 2 (docs/operations.md "When the server is busy").
    try {
      if (gate.blockedFor(undefined, address) > 0) throw refused(429, CLOSE_CODES.FLOOD, "temporarily blocked");
      const principal = await admit(() => gate.authenticate(token, address), false);
      if (!principal) {
        logger.debug({ address }, "adapter: invalid token; closing");
        throw refused(401, CLOSE_CODES.BAD_TOKEN, "invalid token");
      }
      const socket: JsonSocket = {
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
      };
      const joined = await join(
        principal,
        { world: url.searchParams.get("world"), characterId: url.searchParams.get("characterId") ?? undefined },
        socket,
        "ws",
      );
      if (closed) {
        joined.detach();
        return;
      }
      link = joined;
      logger.debug({ address, accountId: principal.accountId }, "adapter: joined");
      for (const f of early.splice(0)) joined.receive(f);
    } catch (e) {
      const r = e instanceof JoinRefused ? e : refusalOf(e, refused);
      if (r) return ws.close(r.closeCode, r.reason);
      logger.error({ err: e }, "adapter join failed");
      ws.close(1011, "internal error");
    }
  };

  /** Refuse a join: counted (by the HTTP-style status of the reason), then thrown. */
  const refusedAs = (transport: string) => (status: number, code: number, reason: string) => {
    metrics?.joinRefusals.inc({ transport, code: String(status) });
    return new JoinRefused(status, code, reason);
  };
  const refused = refusedAs("ws");
  const admit = <T>(work: () => Promise<T>, admitted: boolean) => (deps.admission ? deps.admission.join(work, { admitted }) : work());

  /**
   * Everything of a join after the token: the account's block, the world asked for (or the default),
   * its room, admission, then the world room's `attachJson`. The `/ws` sockets and the in-process
   * clients (`connect`: the MCP server) share it, so both are refused alike.
   */
  const join = async (principal: Principal, where: JoinWhere, socket: JsonSocket, transport: string): Promise<JsonClientLink> => {
    const refuse = refusedAs(transport);
    try {
      if (gate.blockedFor(principal.accountId) > 0) throw refuse(429, CLOSE_CODES.FLOOD, "temporarily blocked");
      if (worlds.size === 0) throw new JoinRefused(503, 1013, "world not ready");
      const picked = pickWorld(where.world ?? null, worlds);
      if (typeof picked === "string") {
        const asked = where.world ?? "";
        const elsewhere = /^[1-9]\d{0,5}$/.test(asked) ? await deps.locateWorld?.(Number(asked)).catch(() => undefined) : undefined;
        if (elsewhere) throw refuse(421, CLOSE_CODES.WORLD_ELSEWHERE, `WORLD_ELSEWHERE: world ${asked} is at ${elsewhere}`.slice(0, 123));
        throw refuse(404, CLOSE_CODES.UNKNOWN_WORLD, picked);
      }
      const w = picked.world;
      if (w.isFull()) throw refuse(503, CLOSE_CODES.WORLD_FULL, `WORLD_FULL: world ${picked.n} is full; try another world`);
      const joined = await admit(() => w.attachJson(principal, where.characterId, socket), true);
      metrics?.joins.inc({ transport });
      return joined;
    } catch (e) {
      if (e instanceof JoinRefused) throw e;
      throw refusalOf(e, refuse) ?? e;
    }
  };

  return {
    handleUpgrade(req, socket, head) {
      wss.handleUpgrade(req, socket, head, (ws) => void onConnection(ws, req));
    },
    connect(principal, where, socket) {
      return join(principal, where, socket, where.transport ?? "mcp");
    },
    serve(n, next) {
      worlds.set(n, next);
      return () => {
        if (worlds.get(n) === next) worlds.delete(n);
      };
    },
    close() {
      clearInterval(heartbeat);
      for (const c of wss.clients) c.close(CLOSE_CODES.SHUTDOWN, "server shutting down");
      wss.close();
    },
  };
}

/** A refusal of the join (a `ServerError` or `WorldError` with its status), counted; undefined for anything else. */
function refusalOf(e: unknown, refuse: (status: number, code: number, reason: string) => JoinRefused): JoinRefused | undefined {
  if (e instanceof ServerError) return refuse(e.code, closeCodeFor(e.code), e.message.slice(0, 120));
  if (e instanceof WorldError) return refuse(e.status, closeCodeFor(e.status), e.message.slice(0, 120));
  return undefined;
}

/** The close code for a refused join: 403 → 4003, 429 (blocked, rate limited) → 4029, else 4000 + status % 1000 (503 busy → 4503). */
function closeCodeFor(status: number): number {
  if (status === 403) return CLOSE_CODES.REVOKED;
  if (status === 429) return CLOSE_CODES.FLOOD;
  return 4000 + (status % 1000);
}

/**
 * The world a `/ws?world=N` join goes to: N when hosted here; without `world`, world 1 if hosted,
 * else the lowest. Otherwise the close reason (UNKNOWN_WORLD), naming the worlds available.
 */
function pickWorld(asked: string | null, worlds: ReadonlyMap<number, JsonWorld>): { n: number; world: JsonWorld } | string {
  const hosted = [...worlds.keys()].sort((a, b) => a - b);
  const n = asked === null || asked === "" ? (worlds.has(1) ? 1 : hosted[0]!) : /^[1-9]\d{0,5}$/.test(asked) ? Number(asked) : undefined;
  const world = n === undefined ? undefined : worlds.get(n);
  if (n !== undefined && world) return { n, world };
  const what = n === undefined ? "world must be a world number" : `no world ${n} here`;
  return `UNKNOWN_WORLD: ${what}; worlds: ${hosted.join(",")}`.slice(0, 120);
}
