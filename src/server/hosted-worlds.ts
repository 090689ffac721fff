/**
 * The worlds this process hosts (`WORLDS`, docs/operations.md "Worlds"). Each has its own simulation (`World`:
 * players, NPCs, resources, ground items), trade service, event router, character resolver and
 * `world` room; all share the character database, the character leases (one character, one world:
 * `CharacterClaims`) and the rest of the server. `GameServer.world` is the default world's.
 */
import { matchMaker } from "@colyseus/core";
import type { CharacterRepository } from "../storage/characters/repository.js";
import { WorldRepository } from "../storage/world-state.js";
import { WorldRoom, type WorldRoomDeps } from "../../rooms/WorldRoom.js";
import { EventRouter } from "../../rooms/world/event-table.js";
import type { GameContent } from "../content/load.js";
import { CLOSE_CODES } from "../events.js";
import type { Logger } from "../logger.js";
import type { Metrics } from "../metrics.js";
import type { Storage } from "../storage/orm.js";
import { TradeService } from "../trade/service.js";
import { CharacterResolver, type CharacterFactory } from "../world/character-resolver.js";
import type { AdminCodeCheck, SocialRelations } from "../world/deps.js";
import { World } from "../world/world.js";
import { CharacterClaims, type ProcessWorlds, type RemoteRelease } from "../cluster/claims.js";
import type { LeaseStore } from "../cluster/leases.js";

/** One hosted world and what serves it. */
export interface HostedWorld {
  number: number;
  world: World;
  trades: TradeService;
  resolver: CharacterResolver;
  router: EventRouter;
}

export interface HostWorldsDeps {
  /** The world numbers to host (ascending). */
  numbers: readonly number[];
  content: GameContent;
  storage: Storage;
  characters: CharacterRepository;
  createCharacter: CharacterFactory;
  social: SocialRelations;
  logger: Logger;
  metrics: Metrics;
  leases: LeaseStore;
  /** Asks another process to let a character go (the cross-process hook; none: refused). */
  remote?: RemoteRelease;
  /** How often the leases of this process's characters are renewed (a third of the lease TTL). */
  leaseRenewMs?: number;
  saveIntervalSeconds: number;
  tickMs: number;
  /** Ticks a ground pile lives (GROUND_ITEM_LIFETIME_TICKS). */
  groundItemLifetimeTicks?: number;
  trade: { pendingTimeoutMs: number; inactivityTimeoutMs: number };
  backgroundWork: <T>(work: () => Promise<T>) => Promise<T>;
  checkAdminCode: (code: string, address: string | undefined) => Promise<AdminCodeCheck>;
  /** Private chat to a character in another world (src/cluster/world-access.ts). */
  otherWorlds: () => {
    isOnline(id: string): Promise<boolean>;
    deliverPrivateMessage(id: string, from: { id?: string; name: string }, text: string): Promise<boolean>;
  };
}

/** Build every hosted world (simulations spawned, rooms not created yet: `createRooms`). */
export function hostWorlds(d: HostWorldsDeps): LocalWorlds {
  const hosted = new Map<number, HostedWorld>();
  const claims = new CharacterClaims({
    leases: d.leases,
    worlds: () => hosted.values(),
    remote: d.remote,
    replacedCode: CLOSE_CODES.REPLACED,
    logger: d.logger,
    renewMs: d.leaseRenewMs,
  });
  for (const n of d.numbers) {
    // One world logs as before; several tag their lines with the world number.
    const logger = d.numbers.length > 1 ? d.logger.child({ world: n }) : d.logger;
    const world = new World({
      content: d.content,
      characters: d.characters,
      social: d.social,
      logger,
      saveIntervalSeconds: d.saveIntervalSeconds,
      metrics: d.metrics,
      backgroundWork: d.backgroundWork,
      checkAdminCode: d.checkAdminCode,
      otherWorlds: d.otherWorlds,
      worldNumber: n,
      leaseInDoubt: () => claims.renewNow(),
      worldStore: new WorldRepository(d.storage.orm, n),
      tickMs: d.tickMs,
      groundItemLifetimeTicks: d.groundItemLifetimeTicks,
    });
    const resolver = new CharacterResolver({
      world,
      characters: d.characters,
      createCharacter: d.createCharacter,
      claim: (characterId, join) => claims.claim(characterId, n, join),
    });
    const trades = new TradeService({
      world,
      orm: d.storage.orm,
      characters: d.characters,
      social: d.social,
      params: d.trade,
      logger,
      tickMs: d.tickMs,
      metrics: d.metrics,
    });
    hosted.set(n, { number: n, world, trades, resolver, router: new EventRouter({ world, trades }, logger) });
  }
  return new LocalWorlds(hosted, claims);
}

export class LocalWorlds implements ProcessWorlds {
  /** The default world: 1 when hosted, else the lowest (a join without a world goes there). */
  readonly default: HostedWorld;

  constructor(
    private readonly hosted: ReadonlyMap<number, HostedWorld>,
    readonly claims: CharacterClaims,
  ) {
    const first = hosted.get(1) ?? [...hosted.values()].sort((a, b) => a.number - b.number)[0];
    if (!first) throw new Error("no world to host");
    this.default = first;
  }

  get(n: number): HostedWorld | undefined {
    return this.hosted.get(n);
  }

  /** Every hosted world, ascending. */
  all(): HostedWorld[] {
    return [...this.hosted.values()].sort((a, b) => a.number - b.number);
  }

  numbers(): number[] {
    return this.all().map((h) => h.number);
  }

  /** The world the character is in (connected, or dropped and awaiting reconnection), if any here. */
  holding(characterId: string): HostedWorld | undefined {
    for (const h of this.hosted.values()) if (h.world.isInWorld(characterId)) return h;
    return undefined;
  }

  /** Connected players of every hosted world. */
  playersOnline(): number {
    let n = 0;
    for (const h of this.hosted.values()) n += h.world.playersOnline();
    return n;
  }

  /**
   * Restore each world's stored state, then create its room, with a permit carrying that world's dependencies (the room type is
   * defined once, filtered by `world`). Leases are renewed from now on.
   */
  async createRooms(roomDeps: (h: HostedWorld) => WorldRoomDeps): Promise<void> {
    for (const h of this.all()) {
      // What lay on the ground, depleted nodes and fires, as stored (docs/persistence.md "World state").
      await h.world.restore();
      await matchMaker.createRoom("world", { permit: WorldRoom.permitCreation(roomDeps(h)), world: h.number });
    }
    this.claims.start();
  }

  /** Shutdown: cancel every world's trades (bounded by each service), then stop taking new ones. */
  async cancelTrades(): Promise<void> {
    await Promise.all(this.all().map((h) => h.trades.cancelAll()));
    for (const h of this.hosted.values()) h.trades.close();
  }

  /** Shutdown: every player of every world leaves and is saved; leases stop being renewed. */
  async leaveAll(reason: string): Promise<void> {
    this.claims.stop();
    await Promise.all(this.all().map((h) => h.world.leaveAll(reason)));
  }
}
