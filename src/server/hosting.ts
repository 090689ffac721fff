/**
 * Start-up stage of the worlds this process hosts, inside the cluster (docs/architecture.md
 * "Start-up", docs/operations.md "Worlds"): after Colyseus and the bus are set up (the lease owner is this
 * process's Colyseus `processId`, the address of its bus requests), it
 * 1. opens the character leases (`LEASE_TTL_SECONDS`) and clears what a killed previous run left:
 *    the expired leases and those of the previous process of its world directory (never another
 *    live process's, with or without REDIS_URL), and the logins nobody plays;
 * 2. builds every hosted world (`hostWorlds`) with the cross-process release of a character
 *    (`BusRemoteRelease`) and the `ClusterWorldAccess` that reaches the other processes (`RemoteWorlds`);
 * 3. answers the other processes' requests about its characters and trade rooms (`serveWorlds`).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Principal } from "../auth/service.js";
import type { Config } from "../config.js";
import type { GameContent } from "../content/load.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { CharacterService } from "../services/characters.js";
import type { SocialService } from "../services/social.js";
import type { Storage } from "../storage/orm.js";
import type { AdminCodeCheck } from "../world/deps.js";
import type { ClusterBus } from "../cluster/bus.js";
import { LeaseStore } from "../cluster/leases.js";
import { BusRemoteRelease, RemoteWorlds, serveWorlds } from "../cluster/remote.js";
import { ClusterWorldAccess } from "../cluster/world-access.js";
import { hostWorlds, type LocalWorlds } from "./hosted-worlds.js";

export interface HostingDeps {
  config: Config;
  content: GameContent;
  storage: Storage;
  characterService: CharacterService;
  social: SocialService;
  logger: Logger;
  metrics: Metrics;
  bus: ClusterBus;
  /** This process's Colyseus id: the lease owner. */
  processId: string;
  backgroundWork: <T>(work: () => Promise<T>) => Promise<T>;
  checkAdminCode: (code: string, address: string | undefined) => Promise<AdminCodeCheck>;
  /** Is `principal` a trader of this process's trade room `roomId`? Undefined: no such room here. */
  tradeAdmits: (roomId: string, principal: Principal, requested: string | undefined) => Promise<boolean | undefined>;
}

/** The file in the world directory naming the lease owner of the process that last started there. */
export const LEASE_OWNER_FILE = "lease-owner";

export interface Hosting {
  leases: LeaseStore;
  worlds: LocalWorlds;
  worldAccess: ClusterWorldAccess;
  remote: RemoteWorlds;
  /** Stop answering broadcasts (the bus's handlers end with the bus). */
  stop(): Promise<void>;
}

/** The lease owner recorded in `worldDir` by the previous start (if any); records `owner` instead. */
function swapPreviousOwner(worldDir: string, owner: string): string | undefined {
  const file = join(worldDir, LEASE_OWNER_FILE);
  let previous: string | undefined;
  try {
    previous = readFileSync(file, "utf8").trim() || undefined;
  } catch {
    previous = undefined; // first start in this directory
  }
  mkdirSync(worldDir, { recursive: true });
  writeFileSync(file, `${owner}\n`);
  return previous === owner ? undefined : previous;
}

export async function hostClusterWorlds(d: HostingDeps): Promise<Hosting> {
  const { config, storage, logger } = d;
  const characters = d.characterService.repo;
  const leases = new LeaseStore(storage.orm, d.processId, config.leaseTtlSeconds);
  // Only expired leases go, and those of the process this world directory ran before (killed, or
  // this one could not start on it), with or without REDIS_URL: another process may share the
  // database whatever this one's settings say, and its live leases are its players'
  // (docs/cluster.md "Start-up"). A login is stale only when nobody holds its character's lease.
  await leases.clearExpired(swapPreviousOwner(config.worldDir, d.processId));
  const closed = await characters.closeStaleLogins();
  if (closed > 0) logger.info({ closed }, "closed logins left open by a stopped process");
  const remote = new RemoteWorlds(d.bus, leases, logger);
  const worlds = hostWorlds({
    numbers: config.worlds,
    content: d.content,
    storage,
    characters,
    createCharacter: (accountId, preferredName) => d.characterService.createForJoin(accountId, preferredName),
    social: d.social,
    logger,
    metrics: d.metrics,
    leases,
    remote: new BusRemoteRelease(d.bus, logger),
    leaseRenewMs: Math.floor((config.leaseTtlSeconds * 1000) / 3),
    saveIntervalSeconds: config.saveIntervalSeconds,
    tickMs: config.tickMs,
    groundItemLifetimeTicks: config.groundItemLifetimeTicks,
    trade: { pendingTimeoutMs: config.tradeRequestTimeoutMs, inactivityTimeoutMs: config.tradeInactivityTimeoutMs },
    backgroundWork: d.backgroundWork,
    checkAdminCode: d.checkAdminCode,
    // Called only once the worlds run (a chat line), after worldAccess below exists.
    otherWorlds: () => worldAccess,
  });
  const worldAccess = new ClusterWorldAccess(worlds, leases, remote);
  const unsubscribe = await serveWorlds({ bus: d.bus, worlds, tradeAdmits: d.tradeAdmits, logger });
  return { leases, worlds, worldAccess, remote, stop: unsubscribe };
}
