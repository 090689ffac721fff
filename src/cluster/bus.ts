/**
 * A small cross-process bus on Colyseus's `Presence` (publish/subscribe): `LocalPresence` in one
 * process, `RedisPresence` across processes and machines (docs/rooms.md "Processes and worlds").
 *
 * - Broadcasts: `publish(topic, msg)` reaches every `subscribe(topic, schema, handler)` of every
 *   process, this one included (friend online/offline, a block imposed somewhere).
 * - Request-reply addressed to one process (its Colyseus `processId`): `request(processId, method,
 *   payload, timeoutMs)` and `handle(method, schema, fn)` (an agent route reaching the process that
 *   hosts the character, a lease release).
 *
 * Nothing from the wire is trusted: envelopes and payloads are checked with zod on the receiving
 * side (a handler sees only what its schema accepts), and a failure is a typed `BusError`.
 * Channels are `<namespace>:…`, so clusters sharing one Redis (test runs, two games) do not hear
 * each other.
 */
import { randomUUID } from "node:crypto";
import type { Presence } from "@colyseus/core";
import { z } from "zod";
import type { Logger } from "../logger.js";

/** Why a bus call failed. */
export type BusErrorCode =
  /** No reply within the timeout: the process is gone, busy, or unreachable. */
  | "TIMEOUT"
  /** The target process has no handler for the method. */
  | "NO_HANDLER"
  /** The payload did not pass the handler's schema (rejected by the receiver). */
  | "BAD_PAYLOAD"
  /** The handler threw; `remoteCode` carries its `code` when it had one. */
  | "REMOTE_ERROR"
  /** The message could not be sent (Redis down). */
  | "UNAVAILABLE"
  /** The bus was closed before the reply came. */
  | "CLOSED";

export class BusError extends Error {
  constructor(
    readonly code: BusErrorCode,
    message: string,
    readonly remoteCode?: string,
  ) {
    super(message);
    this.name = "BusError";
  }
}

/** Default time a request waits for its reply. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 3_000;

const name = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9_.:/-]+$/);
const requestEnvelope = z.object({ id: z.string().min(1).max(100), from: name, method: name, payload: z.unknown() });
const replyEnvelope = z.union([
  z.object({ id: z.string().min(1).max(100), ok: z.literal(true), result: z.unknown() }),
  z.object({
    id: z.string().min(1).max(100),
    ok: z.literal(false),
    code: z.string().max(100),
    remoteCode: z.string().max(100).optional(),
    message: z.string().max(1_000),
  }),
]);
const broadcastEnvelope = z.object({ from: name, msg: z.unknown() });

export interface BusOptions {
  presence: Presence;
  /** This process's id (Colyseus `matchMaker.processId`): requests addressed to it come here. */
  processId: string;
  /** Channel prefix shared by the processes of one cluster. */
  namespace?: string;
  logger?: Logger;
}

type Handler = { schema: z.ZodType; fn: (payload: unknown, from: string) => unknown };
type Pending = { resolve: (v: unknown) => void; reject: (e: BusError) => void; timer: NodeJS.Timeout };

export class ClusterBus {
  readonly processId: string;
  private readonly ns: string;
  private readonly handlers = new Map<string, Handler>();
  private readonly pending = new Map<string, Pending>();
  /** Every presence subscription this bus holds, to end on close. */
  private readonly subscriptions = new Set<{ channel: string; cb: (data: unknown) => void }>();
  private closed = false;

  constructor(private readonly opts: BusOptions) {
    this.processId = opts.processId;
    this.ns = opts.namespace ?? "realm";
  }

  /** Listen for requests and replies addressed to this process. */
  async start(): Promise<void> {
    await this.listen(this.requestChannel(this.processId), (data) => void this.onRequest(data));
    await this.listen(this.replyChannel(this.processId), (data) => this.onReply(data));
  }

  /** Send `msg` to every subscriber of `topic` in every process (this one included). */
  async publish(topic: string, msg: unknown): Promise<void> {
    this.assertOpen();
    await this.send(this.topicChannel(topic), { from: this.processId, msg });
  }

  /**
   * Call `handler` with every message on `topic` that passes `schema` (others are logged and
   * dropped), and with the id of the process that sent it. Returns the unsubscribe function.
   */
  async subscribe<T>(topic: string, schema: z.ZodType<T>, handler: (msg: T, from: string) => void | Promise<void>): Promise<() => Promise<void>> {
    this.assertOpen();
    const channel = this.topicChannel(topic);
    const sub = await this.listen(channel, (data) => {
      const env = broadcastEnvelope.safeParse(data);
      const msg = env.success ? schema.safeParse(env.data.msg) : undefined;
      if (!env.success || !msg?.success) {
        this.opts.logger?.warn({ topic }, "bus: malformed broadcast dropped");
        return;
      }
      this.guard(() => handler(msg.data, env.data.from), `subscriber of ${topic}`);
    });
    return () => this.unlisten(sub);
  }

  /**
   * Answer `method` requests: `fn` receives the payload once `schema` accepted it (a payload it
   * refuses is answered BAD_PAYLOAD without calling `fn`) and the caller's process id. What `fn`
   * returns (JSON-serialisable) is the reply; what it throws is a REMOTE_ERROR (its `code` kept).
   */
  handle<I>(method: string, schema: z.ZodType<I>, fn: (payload: I, from: string) => unknown): void {
    if (this.handlers.has(method)) throw new Error(`bus: a handler for ${method} already exists`);
    this.handlers.set(method, { schema, fn: fn as Handler["fn"] });
  }

  /**
   * Ask process `processId` to run `method` with `payload`; resolves with its result, checked
   * against `result` when given. Rejects with a `BusError`: TIMEOUT (no reply within `timeoutMs`),
   * NO_HANDLER, BAD_PAYLOAD, REMOTE_ERROR, UNAVAILABLE, CLOSED.
   */
  async request<O = unknown>(processId: string, method: string, payload: unknown, opts: { timeoutMs?: number; result?: z.ZodType<O> } = {}): Promise<O> {
    this.assertOpen();
    const id = randomUUID();
    const timeoutMs = opts.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    const reply = new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new BusError("TIMEOUT", `no reply from process ${processId} to ${method} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.pending.set(id, { resolve, reject, timer });
    });
    try {
      await this.send(this.requestChannel(processId), { id, from: this.processId, method, payload });
    } catch (e) {
      const p = this.pending.get(id);
      if (p) {
        clearTimeout(p.timer);
        this.pending.delete(id);
      }
      throw e;
    }
    const value = await reply;
    if (!opts.result) return value as O;
    const checked = opts.result.safeParse(value);
    if (!checked.success) throw new BusError("BAD_PAYLOAD", `reply of ${processId} to ${method} does not match its schema`);
    return checked.data;
  }

  /** Stop: every subscription ended, every pending request rejected with CLOSED. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const [id, p] of this.pending) {
      clearTimeout(p.timer);
      p.reject(new BusError("CLOSED", "the bus was closed"));
      this.pending.delete(id);
    }
    await Promise.all([...this.subscriptions].map((s) => this.unlisten(s)));
    this.handlers.clear();
  }

  private async onRequest(data: unknown): Promise<void> {
    const env = requestEnvelope.safeParse(data);
    if (!env.success) {
      this.opts.logger?.warn("bus: malformed request dropped");
      return;
    }
    const { id, from, method, payload } = env.data;
    const answer = (reply: z.infer<typeof replyEnvelope>) =>
      this.send(this.replyChannel(from), reply).catch((e: Error) => this.opts.logger?.warn({ method, to: from, err: e.message }, "bus: reply not sent"));
    const handler = this.handlers.get(method);
    if (!handler) return answer({ id, ok: false, code: "NO_HANDLER", message: `no handler for ${method}` });
    const input = handler.schema.safeParse(payload);
    if (!input.success) return answer({ id, ok: false, code: "BAD_PAYLOAD", message: `payload of ${method} refused` });
    try {
      const result = await handler.fn(input.data, from);
      await answer({ id, ok: true, result: result === undefined ? null : result });
    } catch (e) {
      const err = e as { code?: unknown; message?: unknown };
      const remoteCode = typeof err?.code === "string" ? err.code.slice(0, 100) : undefined;
      const message = typeof err?.message === "string" ? err.message.slice(0, 1_000) : "handler failed";
      await answer({ id, ok: false, code: "REMOTE_ERROR", remoteCode, message });
    }
  }

  private onReply(data: unknown): void {
    const env = replyEnvelope.safeParse(data);
    if (!env.success) {
      this.opts.logger?.warn("bus: malformed reply dropped");
      return;
    }
    const p = this.pending.get(env.data.id);
    if (!p) return; // timed out already, or not ours
    clearTimeout(p.timer);
    this.pending.delete(env.data.id);
    if (env.data.ok) p.resolve(env.data.result);
    else {
      const code = (["NO_HANDLER", "BAD_PAYLOAD", "REMOTE_ERROR"] as const).find((c) => c === (env.data as { code: string }).code) ?? "REMOTE_ERROR";
      p.reject(new BusError(code, env.data.message, env.data.remoteCode));
    }
  }

  /** Publish on a channel; a presence failure (Redis down) is UNAVAILABLE. */
  private async send(channel: string, data: unknown): Promise<void> {
    try {
      // LocalPresence delivers synchronously and by reference: hand it a copy, as Redis would.
      await this.opts.presence.publish(channel, JSON.parse(JSON.stringify(data)));
    } catch (e) {
      throw new BusError("UNAVAILABLE", `could not publish: ${(e as Error).message}`);
    }
  }

  private async listen(channel: string, cb: (data: unknown) => void) {
    const sub = { channel, cb: (data: unknown) => this.guard(() => cb(data), channel) };
    try {
      await this.opts.presence.subscribe(channel, sub.cb);
    } catch (e) {
      throw new BusError("UNAVAILABLE", `could not subscribe: ${(e as Error).message}`);
    }
    this.subscriptions.add(sub);
    return sub;
  }

  private async unlisten(sub: { channel: string; cb: (data: unknown) => void }): Promise<void> {
    if (!this.subscriptions.delete(sub)) return;
    try {
      await this.opts.presence.unsubscribe(sub.channel, sub.cb);
    } catch (e) {
      this.opts.logger?.warn({ channel: sub.channel, err: (e as Error).message }, "bus: unsubscribe failed");
    }
  }

  /** Run a callback; an exception or rejection is logged, never thrown into the presence. */
  private guard(fn: () => unknown, what: string): void {
    try {
      const r = fn();
      if (r instanceof Promise) r.catch((e: Error) => this.opts.logger?.error({ err: e }, `bus: ${what} failed`));
    } catch (e) {
      this.opts.logger?.error({ err: e }, `bus: ${what} failed`);
    }
  }

  private assertOpen() {
    if (this.closed) throw new BusError("CLOSED", "the bus was closed");
  }

  private topicChannel = (topic: string) => `${this.ns}:t:${topic}`;
  private requestChannel = (processId: string) => `${this.ns}:rq:${processId}`;
  private replyChannel = (processId: string) => `${this.ns}:rp:${processId}`;
}
