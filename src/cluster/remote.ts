/**
 * Worlds in other processes, over the cluster bus (docs/operations.md "Worlds", docs/rooms.md "Processes and worlds").
 *
 * - The holder side (`serveWorlds`): the process holding a character's lease answers requests about
 *   it from its own worlds — `character.release` (let it go for a join elsewhere), the `world.*`
 *   methods of `WorldAccess` (isOnline, livePlayer, applyGoal, deliverPrivateMessage, …),
 *   `trade.admits` (may this principal watch a trade room of this process) — and applies the
 *   `world.socialChanged` broadcast. Every payload is checked with zod before it is used.
 * - The asking side: `RemoteWorlds` finds the holder of a character (its lease: the owner is the
 *   holder's Colyseus process id) and asks it; `BusRemoteRelease` is the `RemoteRelease` of
 *   `CharacterClaims`. A holder that does not answer within `REMOTE_TIMEOUT_MS` (dead, busy, Redis
 *   down) is a `ServerBusyError` (REST 503 SERVER_BUSY with Retry-After) for calls a route needs,
 *   "offline" for presence checks (isOnline, private chat), and a refused join (409
 *   CHARACTER_ELSEWHERE with the seconds the lease has left) for a release.
 */
import { matchMaker } from "@colyseus/core";
import { z } from "zod";
import type { Principal } from "../auth/service.js";
import type { Logger } from "../logger.js";
import { ServerBusyError } from "../net/admission.js";
import { WorldError } from "../world/errors.js";
import { BusError, type ClusterBus } from "./bus.js";
import type { ProcessWorlds, RemoteRelease } from "./claims.js";
import type { LeaseHolder, LeaseStore } from "./leases.js";

/** How long a request to another process waits for its answer. */
export const REMOTE_TIMEOUT_MS = 3_000;
/** Retry-After of a REST call refused because the holder did not answer. */
export const REMOTE_RETRY_AFTER_S = 5;
/** Broadcast topic: social relations of these characters changed (every process refreshes its cache). */
export const SOCIAL_TOPIC = "world.socialChanged";

const id = z.string().min(1).max(100);
const who = z.object({ characterId: id });
const goal = z.object({
  id: z.string().max(200),
  type: z.string().max(200),
  description: z.string().max(2_000),
  target: z.string().max(200).optional(),
  progress: z.number(),
  targetCount: z.number().optional(),
  startedAt: z.string().max(100),
  setBy: z.enum(["agent", "owner"]).optional(),
  completedAt: z.string().max(100).optional(),
});

/** The methods of the holder side and their payloads. */
export const REMOTE_SCHEMAS = {
  "character.release": who,
  "world.isOnline": who,
  "world.isInWorld": who,
  "world.livePlayer": who,
  "world.livePlayerSync": who,
  "world.surroundings": who.extend({ radius: z.number().int().min(0).max(1_000) }),
  "world.applyGoal": who.extend({ goal: goal.nullable(), goalsPaused: z.boolean() }),
  "world.deliverPrivateMessage": who.extend({ from: z.object({ id: id.optional(), name: z.string().min(1).max(100) }), text: z.string().min(1).max(2_000) }),
  "world.disconnect": who.extend({ code: z.number().int().min(1000).max(4999), reason: z.string().max(120) }),
  "world.setAgentFlag": who.extend({ isAgent: z.boolean() }),
  "world.flush": who,
  "trade.admits": z.object({ roomId: id, accountId: id, characterId: id.optional(), requested: id.optional() }),
} as const;
export type RemoteMethod = keyof typeof REMOTE_SCHEMAS;
type Payload<M extends RemoteMethod> = z.infer<(typeof REMOTE_SCHEMAS)[M]>;

/** What the holder side needs of this process. */
export interface ServeWorldsDeps {
  bus: ClusterBus;
  worlds: ProcessWorlds;
  /** Is this principal one of the two traders of local trade room `roomId`? Undefined: no such room here. */
  tradeAdmits: (roomId: string, principal: Principal, requested: string | undefined) => Promise<boolean | undefined>;
  logger: Logger;
}

/** Answer the requests of other processes about the characters in this process's worlds. Returns the unsubscribe of the broadcast. */
export async function serveWorlds(d: ServeWorldsDeps): Promise<() => Promise<void>> {
  const { bus, worlds } = d;
  const local = (characterId: string) => worlds.holding(characterId)?.world.access;
  const on = <M extends RemoteMethod>(method: M, fn: (p: Payload<M>) => unknown) =>
    bus.handle(method, REMOTE_SCHEMAS[method] as unknown as z.ZodType<Payload<M>>, fn);
  on("character.release", (p) => worlds.claims.letGo(p.characterId));
  on("world.isOnline", (p) => worlds.all().some((h) => h.world.isOnline(p.characterId)));
  on("world.isInWorld", (p) => local(p.characterId) !== undefined);
  on("world.livePlayer", (p) => local(p.characterId)?.livePlayer(p.characterId) ?? null);
  on("world.livePlayerSync", (p) => local(p.characterId)?.livePlayerSync(p.characterId) ?? null);
  on("world.surroundings", (p) => local(p.characterId)?.surroundings(p.characterId, p.radius) ?? null);
  on("world.applyGoal", (p) => local(p.characterId)?.applyGoal(p.characterId, p.goal, p.goalsPaused) ?? false);
  on("world.deliverPrivateMessage", (p) => local(p.characterId)?.deliverPrivateMessage(p.characterId, p.from, p.text) ?? false);
  on("world.disconnect", (p) => local(p.characterId)?.disconnect(p.characterId, p.code, p.reason));
  on("world.setAgentFlag", (p) => {
    for (const h of worlds.all()) h.world.access.setAgentFlag(p.characterId, p.isAgent);
  });
  on("world.flush", async (p) => {
    await local(p.characterId)?.flush(p.characterId);
  });
  on("trade.admits", async (p) => {
    const principal: Principal = { accountId: p.accountId, characterId: p.characterId, roles: [], anonymous: false, via: "server" };
    // null: no such trade room here (gone meanwhile): the asker lets Colyseus answer "not found".
    return (await d.tradeAdmits(p.roomId, principal, p.requested)) ?? null;
  });
  // Told by another process (this one applied it already when it published).
  return bus.subscribe(SOCIAL_TOPIC, z.object({ characterIds: z.array(id).max(10_000) }), (msg, from) => {
    if (from !== bus.processId) worlds.default.world.access.socialChanged(msg.characterIds);
  });
}

/** A holder that could not be asked: its error for a route (503 SERVER_BUSY, Retry-After). */
function unreachable(e: unknown): Error {
  if (e instanceof BusError && e.code === "REMOTE_ERROR") return e;
  return new ServerBusyError("unreachable", REMOTE_RETRY_AFTER_S, "request to another server");
}

/** How long presence (`quiet`: private messages, online flags) trusts a holder it looked up. */
export const PRESENCE_TTL_MS = 2_000;
/** Characters whose holder presence remembers at most (then it starts over). */
const PRESENCE_MAX = 10_000;

/** The asking side: calls about characters whose lease another process holds. */
export class RemoteWorlds {
  /**
   * Holders presence looked up (`quiet`), trusted for PRESENCE_TTL_MS: a stream of private messages
   * to one character costs one lease lookup per window, not one per message. A holder that does not
   * answer, or a character it no longer has, is forgotten at once.
   */
  private readonly presence = new Map<string, { owner: string | undefined; at: number }>();

  constructor(
    private readonly bus: ClusterBus,
    private readonly leases: LeaseStore,
    private readonly logger: Logger,
    private readonly timeoutMs = REMOTE_TIMEOUT_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The process holding the character's lease when it is another one. */
  async holderOf(characterId: string): Promise<string | undefined> {
    const holder = await this.leases.holder(characterId);
    return holder && holder.owner !== this.leases.owner ? holder.owner : undefined;
  }

  /**
   * Ask the holder of the character; `none` when no other process holds it. A holder that does not
   * answer is a `ServerBusyError` (503 SERVER_BUSY for REST).
   */
  async ask<M extends RemoteMethod, T>(method: M, payload: Payload<M>, none: T): Promise<T> {
    return this.askOwner(await this.holderOf(payload.characterId as string), method, payload, none);
  }

  private async askOwner<M extends RemoteMethod, T>(owner: string | undefined, method: M, payload: Payload<M>, none: T): Promise<T> {
    if (!owner) return none;
    try {
      const result = await this.bus.request(owner, method, payload, { timeoutMs: this.timeoutMs });
      return (result ?? none) as T;
    } catch (e) {
      this.logger.warn({ method, to: owner, err: (e as Error).message }, "cluster: the holder of a character did not answer");
      throw unreachable(e);
    }
  }

  /** As `ask`, but a holder that does not answer counts as `none` (presence: offline, not delivered). */
  async quiet<M extends RemoteMethod, T>(method: M, payload: Payload<M>, none: T): Promise<T> {
    const characterId = payload.characterId as string;
    try {
      const owner = await this.presenceHolder(characterId);
      const answer = await this.askOwner(owner, method, payload, none);
      // The holder no longer has it (it left, or moved): look again next time. "No holder" is kept for the window.
      if (owner !== undefined && (answer === none || answer === false)) this.presence.delete(characterId);
      return answer;
    } catch {
      this.presence.delete(characterId);
      return none;
    }
  }

  /** The holder of a character for presence: remembered for PRESENCE_TTL_MS (see `presence`). */
  private async presenceHolder(characterId: string): Promise<string | undefined> {
    const hit = this.presence.get(characterId);
    if (hit && this.now() - hit.at < PRESENCE_TTL_MS) return hit.owner;
    const at = this.now();
    const owner = await this.holderOf(characterId);
    if (this.presence.size >= PRESENCE_MAX) this.presence.clear();
    this.presence.set(characterId, { owner, at });
    return owner;
  }

  /** Tell every other process that social relations changed. */
  socialChanged(characterIds: string[]): void {
    this.bus.publish(SOCIAL_TOPIC, { characterIds }).catch((e: Error) => this.logger.warn({ err: e.message }, "cluster: social change not broadcast"));
  }

  /**
   * May `principal` join trade room `roomId` of another process? Asked of the process hosting it
   * (from the room listing); undefined when the room is not another process's trade room or that
   * process did not answer (the room's own onJoin check then decides: the same 403).
   */
  async tradeAdmits(roomId: string, principal: Principal, requested: unknown): Promise<boolean | undefined> {
    const [listing] = await matchMaker.query({ roomId });
    if (!listing || listing.name !== "trade" || listing.processId === this.bus.processId) return undefined;
    const payload = {
      roomId,
      accountId: principal.accountId,
      characterId: principal.characterId,
      requested: typeof requested === "string" && requested.length <= 100 ? requested : undefined,
    };
    try {
      const admitted = await this.bus.request(listing.processId, "trade.admits", payload, { timeoutMs: this.timeoutMs, result: z.boolean().nullable() });
      return admitted ?? undefined;
    } catch {
      return undefined;
    }
  }
}

/** `RemoteRelease` over the bus: asks the lease holder to let the character go (`character.release`). */
export class BusRemoteRelease implements RemoteRelease {
  constructor(
    private readonly bus: ClusterBus,
    private readonly logger: Logger,
    private readonly timeoutMs = REMOTE_TIMEOUT_MS,
  ) {}

  async release(characterId: string, holder: LeaseHolder): Promise<boolean> {
    try {
      return await this.bus.request(holder.owner, "character.release", { characterId }, { timeoutMs: this.timeoutMs, result: z.boolean() });
    } catch (e) {
      // In a fight, or its trade settling there (docs/cluster.md "Races"): the holder's answer, as a local one.
      if (e instanceof BusError && (e.remoteCode === "CHARACTER_IN_COMBAT" || e.remoteCode === "CHARACTER_BUSY")) throw new WorldError(e.remoteCode, e.message);
      this.logger.warn({ characterId, holder: holder.owner, err: (e as Error).message }, "cluster: the holder of a character did not let it go");
      return false;
    }
  }
}
