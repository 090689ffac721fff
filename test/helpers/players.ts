/**
 * Test players: SDK or raw-WebSocket connections that record every event they receive, with
 * `next(event, predicate)` that resolves on the first matching event (past or future) and fails
 * after a timeout — tests wait for events, never for guessed times.
 */
import { randomUUID } from "node:crypto";
import { Client, type Room } from "@colyseus/sdk";
import WebSocket from "ws";
import { signServerToken } from "../../src/auth/tokens.js";
import { frameText } from "../../src/net/adapter.js";
import { TEST_ENV } from "./server.js";
import type { GameServer } from "../../src/server/server.js";

export interface Received {
  event: string;
  data: any;
  seq: number;
}

export interface TestPlayer {
  id: string;
  accountId: string;
  token: string;
  kind: "sdk" | "json";
  room?: Room;
  ws?: WebSocket;
  received: Received[];
  send(event: string, data: unknown): void;
  /** The first event named `event` matching `pred` received after index `after` (default: any). */
  next(event: string, pred?: (data: any) => boolean, opts?: { after?: number; timeoutMs?: number }): Promise<any>;
  /** Index to pass as `after` to ignore everything received so far. */
  mark(): number;
  sync(): any;
  close(): Promise<void>;
}

export function tokenFor(accountId = `acc-${randomUUID()}`, extra: Record<string, unknown> = {}) {
  return { accountId, token: signServerToken(TEST_ENV.JWT_SECRET!, { sub: accountId, ...extra }).token };
}

function recorder() {
  const received: Received[] = [];
  const waiters: { event: string; pred: (d: any) => boolean; after: number; resolve: (d: any) => void }[] = [];
  let seq = 0;
  const push = (event: string, data: any) => {
    const r = { event, data, seq: seq++ };
    received.push(r);
    for (const w of [...waiters]) {
      if (w.event === event && r.seq >= w.after && w.pred(data)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(data);
      }
    }
  };
  const next = (event: string, pred: (d: any) => boolean = () => true, opts: { after?: number; timeoutMs?: number } = {}) => {
    const after = opts.after ?? 0;
    const found = received.find((r) => r.event === event && r.seq >= after && pred(r.data));
    if (found) return Promise.resolve(found.data);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => {
        const seen = received
          .filter((r) => r.seq >= after)
          .map((r) => `${r.event}${r.event === "tradeError" || r.event === "chat:message" ? JSON.stringify(r.data) : ""}`);
        reject(new Error(`timed out waiting for ${event}; received since: ${seen.slice(-15).join(", ")}`));
      }, opts.timeoutMs ?? 10_000);
      waiters.push({ event, pred, after, resolve: (d) => (clearTimeout(t), resolve(d)) });
    });
  };
  return { received, push, next, mark: () => seq };
}

/** Join the world with the SDK. */
export async function sdkPlayer(
  server: Pick<GameServer, "url">,
  opts: { accountId?: string; token?: string; characterId?: string; world?: number } = {},
): Promise<TestPlayer> {
  const { accountId, token } = opts.token ? { accountId: opts.accountId ?? "", token: opts.token } : tokenFor(opts.accountId);
  const rec = recorder();
  const client = new Client(`${server.url}/ws`);
  client.auth.token = token;
  const room = await client.join("world", { ...(opts.characterId ? { characterId: opts.characterId } : {}), ...(opts.world ? { world: opts.world } : {}) });
  room.onMessage("*", (type, data) => rec.push(String(type), data));
  const sync = await rec.next("player:sync");
  return {
    id: sync.id,
    accountId,
    token,
    kind: "sdk",
    room,
    received: rec.received,
    send: (e, d) => room.send(e, d),
    next: rec.next,
    mark: rec.mark,
    sync: () => [...rec.received].reverse().find((r) => r.event === "player:sync")?.data,
    close: async () => {
      await room.leave().catch(() => undefined);
    },
  };
}

/** Join the world over the plain WebSocket adapter. */
export async function jsonPlayer(
  server: Pick<GameServer, "url">,
  opts: { accountId?: string; token?: string; characterId?: string } = {},
): Promise<TestPlayer> {
  const { accountId, token } = opts.token ? { accountId: opts.accountId ?? "", token: opts.token } : tokenFor(opts.accountId);
  const rec = recorder();
  const q = new URLSearchParams({ token, ...(opts.characterId ? { characterId: opts.characterId } : {}) });
  const ws = new WebSocket(`${server.url.replace("http", "ws")}/ws?${q}`);
  ws.on("message", (d) => {
    const f = JSON.parse(frameText(d));
    rec.push(f.event, f.data);
  });
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  const sync = await rec.next("player:sync");
  return {
    id: sync.id,
    accountId,
    token,
    kind: "json",
    ws,
    received: rec.received,
    send: (event, data) => ws.send(JSON.stringify({ event, data })),
    next: rec.next,
    mark: rec.mark,
    sync: () => [...rec.received].reverse().find((r) => r.event === "player:sync")?.data,
    close: async () => {
      if (ws.readyState === ws.CLOSED) return;
      await new Promise((r) => {
        ws.once("close", r);
        ws.close();
      });
    },
  };
}
