/**
 * The composition root. Starts every stage in order (docs/architecture.md#start-up) — configuration, manifests, storage,
 * HTTP (CORS, rate limiting, static), WebSocket handlers, world — logging one line per stage, and
 * returns a handle whose `close()` shuts everything down in reverse.
 */
import { createServer, type Server as HttpServer } from "node:http";
import express from "express";
import type { AddressInfo } from "node:net";
import type { Config } from "../config.js";
import { configWarnings } from "../config.js";
import { createLogger, type Logger } from "../logger.js";
import { openStorage, type Storage } from "../storage/orm.js";
import { AuthService } from "../auth/service.js";
import { createApp } from "../http/app.js";
import { CorsPolicy } from "../http/cors.js";
import { Blocklist, createLimits } from "../http/limits.js";
import { setupColyseus } from "../net/colyseus.js";
import { SocketGate } from "../net/socket-gate.js";
import type { GameContent } from "../content/load.js";
import { prepareContent } from "../content/startup.js";
import { contentApiDocs, createDataRouter, createManifestRouter } from "../http/content.js";
import { syncItemDefinitions } from "../storage/item-definitions.js";
import { matchMaker } from "@colyseus/core";
import { worldRoomType } from "../../rooms/WorldRoom.js";
import type { World } from "../world/world.js";
import { ADAPTER_MAX_BUFFERED_BYTES, createAdapter, type AdapterOptions } from "../net/adapter.js";
import { SocketCap } from "../net/socket-cap.js";
import type { TradeService } from "../trade/service.js";
import { TradeRoom, tradeRoomType } from "../../rooms/TradeRoom.js";
import type { CharacterRepository } from "../storage/characters/repository.js";
import { adminRoutes, monitorRedirect, monitorRouter, MONITOR_PATH, OLD_MONITOR_PATH } from "../http/admin.js";
import { playgroundRouters } from "../http/playground.js";
import { Metrics, serveMetrics } from "../metrics.js";
import { settlesWithin } from "../lifecycle.js";
import { poolStats } from "../storage/orm.js";
import { storageFailureLog } from "../storage/unavailable.js";
import { basename, resolve } from "node:path";
import { CharacterService } from "../services/characters.js";
import { SocialService } from "../services/social.js";
import { agentServiceFor, createApiModules } from "../http/routes/index.js";
import { Admission } from "../net/admission.js";
import { DbWorkLimiter } from "../storage/limiter.js";
import type { HostedWorld, LocalWorlds } from "./hosted-worlds.js";
import type { ClusterWorldAccess } from "../cluster/world-access.js";
import { hostClusterWorlds } from "./hosting.js";
import { locateWorld } from "../cluster/routing.js";
import { worldsRoutes } from "../http/routes/worlds.js";
import { openCluster } from "../cluster/cluster.js";
import { mcpEndpoint, type McpEndpoint } from "../mcp/http.js";
import type { ClusterBus } from "../cluster/bus.js";

/** Shutdown: how long saving every player may take (after the trades, at most 3 s). */
const SHUTDOWN_SAVE_MS = 4_500;
/** Shutdown: how long Colyseus may take to close its rooms and sockets. */
const SHUTDOWN_ROOMS_MS = 1_000;
/** Shutdown: how long closing storage may take (3 + 4.5 + 1 + 1 s stays inside the 10 s exit). */
const SHUTDOWN_STORAGE_MS = 1_000;

export interface StartOptions {
  logger?: Logger;
  /** Use this storage instead of opening one (tests share one PGlite per process). */
  storage?: Storage;
  /** Listen on this port instead of config.port (0 picks a free port). */
  port?: number;
  host?: string;
  /** Heartbeat and backpressure of the /ws adapter (tests shorten them); `maxBufferedBytes` also bounds SDK room sockets. */
  adapter?: AdapterOptions;
}

export interface GameServer {
  /** The default world (1 when hosted, else the lowest); `worlds` has every hosted world. */
  world: World;
  worlds: LocalWorlds;
  /** What routes see of every world. */
  worldAccess: ClusterWorldAccess;
  /** Authentication and blocks of every WebSocket path. */
  gate: SocketGate;
  /** Stored characters (the repository the world saves through). */
  characters: CharacterRepository;
  /** The default world's trade service. */
  trades: TradeService;
  content: GameContent;
  config: Config;
  logger: Logger;
  storage: Storage;
  httpServer: HttpServer;
  port: number;
  /** Base HTTP URL, e.g. http://127.0.0.1:5555 */
  url: string;
  metrics: Metrics;
  /** Admission control of joins and character creations (docs/operations.md "When the server is busy"). */
  admission: Admission;
  /** Database work limiter: saves (background) behind joins and creations (interactive). */
  dbWork: DbWorkLimiter;
  /** Cross-process publish/subscribe and request-reply (src/cluster/bus.ts); local presence without REDIS_URL. */
  bus: ClusterBus;
  /** Colyseus's id of this process (requests on the bus are addressed to it). */
  processId: string;
  /** URL of the Prometheus metrics page when METRICS_PORT is set. */
  metricsUrl?: string;
  /** The MCP endpoint at /mcp and its sessions (docs/agents.md). */
  mcp: McpEndpoint;
  /** Stop accepting, close rooms (which save), close storage (unless injected). Idempotent. */
  close(): Promise<void>;
}

/** Start the server. */
export async function startServer(config: Config, opts: StartOptions = {}): Promise<GameServer> {
  const logger = opts.logger ?? createLogger(config.logLevel);
  logger.info({ node: process.version, env: config.env, port: opts.port ?? config.port, world: config.worldDir }, "stage 1/6 config loaded");
  for (const w of configWarnings(config)) logger.warn(w);

  const content = await prepareContent(config, logger);

  // Stage 3: storage.
  const storage =
    opts.storage ??
    (await openStorage({
      url: config.databaseUrl,
      pgliteDir: `${config.worldDir}/db`,
      poolMax: config.dbPool.max,
      connectTimeoutMs: config.dbPool.acquireTimeoutMs,
      onConnectionReclaimed: () => storageFailureLog(logger).failure(new Error("a database connection ended while checked out; given back to the pool")),
      log: (m) => logger.debug({ orm: m }, "orm"),
    }));
  await syncItemDefinitions(storage.orm, content);
  logger.info({ kind: storage.kind }, "stage 3/6 storage connected, migrations applied");

  // Stage 4: HTTP (and, with REDIS_URL, the connection to the cluster: a start-up error when Redis does not answer).
  const cluster = await openCluster(config, logger);
  const httpServer = createServer();
  httpServer.headersTimeout = 10_000;
  httpServer.requestTimeout = 30_000;
  const cors = new CorsPolicy(config);
  const metrics = new Metrics(config.tickMs);
  const blocklist = new Blocklist(Date.now, (scope) => metrics.rateLimitBlocks.inc({ scope }));
  const limits = createLimits({
    enabled: config.rateLimitEnabled,
    blockSeconds: config.rateLimitBlockSeconds,
    blocklist,
    store: cluster.rateLimitStore,
    matchmake: config.matchmakeLimits,
  });
  const auth = new AuthService(config, storage.orm);

  const gate = new SocketGate({
    auth,
    blocklist,
    blockSeconds: config.rateLimitBlockSeconds,
    countAuthAttempt: (address) => limits.countAuthAttempt(address),
  });

  const characterService = new CharacterService(storage, content);
  const characters = characterService.repo;
  const social = new SocialService(storage);
  // Database work by priority: joins and creations (interactive) before batched saves (background).
  const dbWork = new DbWorkLimiter({ max: config.dbPool.max, background: config.saveConcurrency });
  const admission = new Admission(config.admission, { logger, db: dbWork });
  const adapter = createAdapter(
    // A world hosted by another process: the /ws client is told where it is (close 4016 WORLD_ELSEWHERE).
    { gate, logger, metrics, admission, locateWorld: (n) => locateWorld(n, config.publicWsUrl) },
    { trustProxy: config.trustProxy, ...opts.adapter },
  );

  // Stage 5 is prepared before the app so matchmaking can be mounted in its place.
  const colyseus = await setupColyseus(httpServer, cors, (req, socket, head) => adapter.handleUpgrade(req, socket, head), {
    presence: cluster.presence,
    driver: cluster.driver,
    publicAddress: cluster.publicAddress,
    trustProxy: config.trustProxy,
    blockedFor: (address) => gate.blockedFor(undefined, address),
    socketCap: new SocketCap(config.maxSocketsPerAddress),
    // One backpressure rule for both transports (docs/protocol.md "Limits").
    maxBufferedBytes: opts.adapter?.maxBufferedBytes ?? ADAPTER_MAX_BUFFERED_BYTES,
    logger,
  });
  // The bus and the shared blocks run on Colyseus's presence, under its process id.
  const bus = await cluster.start(blocklist);
  logger.info({ processId: matchMaker.processId, publicAddress: cluster.publicAddress, redis: config.cluster !== undefined }, "process id");
  const tradeRoom = (roomId: string) => {
    const room = matchMaker.getLocalRoomById(roomId);
    return room instanceof TradeRoom ? room : undefined;
  };
  const hosting = await hostClusterWorlds({
    config,
    content,
    storage,
    characterService,
    social,
    logger,
    metrics,
    bus,
    processId: matchMaker.processId,
    backgroundWork: (work) => dbWork.background(work),
    // Guessing the code in chat counts like a wrong X-Admin-Code: 10 a minute per address.
    checkAdminCode: async (code, address) => {
      if (gate.blockedFor(undefined, address) > 0) return "blocked";
      if (auth.checkAdminCode(code, address)) return "ok";
      if (address && (await limits.countAuthAttempt(address))) return "blocked";
      return "wrong";
    },
    tradeAdmits: async (roomId, principal, requested) => tradeRoom(roomId)?.admits(principal, requested),
  });
  const { leases, worlds, worldAccess } = hosting;
  const { world, trades } = worlds.default;
  // The room types, bound to what their rooms use (defined with Colyseus in stage 6); each world's
  // room gets its own world's dependencies through its creation permit (src/server/hosted-worlds.ts).
  const WorldRoomType = worldRoomType({
    gate,
    admission,
    hosts: (n) => worlds.all().some((h) => h.number === n),
    countMatchmake: (accountId) => limits.countMatchmake(accountId),
  });
  const roomDeps = (h: HostedWorld) => ({
    world: h.world,
    worldNumber: h.number,
    maxPlayers: config.worldMaxPlayers,
    gate,
    resolver: h.resolver,
    characters,
    router: h.router,
    adapter,
    admission,
    tickMs: config.tickMs,
    tickPhase: config.tickPhase,
    seatReservationSeconds: config.seatReservationSeconds,
    logger,
    metrics,
  });
  const TradeRoomType = tradeRoomType({ gate, logger });
  metrics.watch({
    world: basename(resolve(config.worldDir)),
    playersOnline: () => worlds.playersOnline(),
    rooms: async () => {
      const byType: Record<string, number> = {};
      for (const r of await matchMaker.driver.query({ processId: matchMaker.processId })) byType[r.name] = (byType[r.name] ?? 0) + 1;
      return byType;
    },
    dbPool: () => poolStats(storage),
    saveQueueDepth: () => worlds.all().reduce((n, h) => n + h.world.queues.depth, 0),
    admission: () => ({ join: admission.joins, creation: admission.creations }),
  });
  // MCP at /mcp (docs/agents.md): each session a player joined through the /ws adapter in process.
  const agents = agentServiceFor({ storage, content, world: worldAccess, characters: characterService, auth, config });
  const socialChanged = (ids: string[]) => worldAccess.socialChanged(ids);
  const mcp = mcpEndpoint({ auth, limits, cors, adapter, content, tickMs: config.tickMs, agents, social, socialChanged, logger });
  const { app } = createApp({
    config,
    logger,
    auth,
    limits,
    cors,
    storagePing: () => storage.ping(1_000),
    playersOnline: () => worlds.playersOnline(),
    matchmaking: colyseus.matchmaking,
    onMatchmakeRefused: (status) => metrics.joinRefusals.inc({ transport: "sdk", code: String(status) }),
    admission,
    matchmakingPolicy: {
      // Trade rooms are watched by id, and only by their two traders (TradeRoom.admits, checked
      // again in its onJoin), wherever the room lives: another process's trade room is asked of
      // that process over the bus. Anything else — the world, an unknown room, an invalid token, a
      // process that did not answer — goes on to Colyseus and the room's onAuth/onJoin, which answer
      // in their own shape (a stranger in a trade room: 403 there too).
      async checkJoinById(roomId, token, options) {
        if (!token) return undefined;
        const local = tradeRoom(roomId);
        if (!local && matchMaker.getLocalRoomById(roomId)) return undefined;
        const principal = await auth.authenticate(token).catch(() => undefined);
        if (!principal) return undefined;
        const admitted = local ? await local.admits(principal, options.characterId) : await hosting.remote.tradeAdmits(roomId, principal, options.characterId);
        if (admitted !== false) return undefined;
        return { code: "ROOM_JOIN_FORBIDDEN", message: "only the two traders can join a trade room" };
      },
    },
    routers: [
      { path: "/manifests", router: createManifestRouter(config.manifestsDir) },
      { path: "/", router: createDataRouter(content) },
      { path: MONITOR_PATH, router: monitorRouter(auth, limits) },
      { path: OLD_MONITOR_PATH, router: express.Router().use(monitorRedirect()) },
      { path: "/mcp", router: mcp.router },
      // The playground outside production only, unless turned off (docs/operations.md "Playground").
      ...(config.playground ? await playgroundRouters() : []),
    ],
    modules: [
      ...createApiModules({ storage, content, auth, world: worldAccess, characters: characterService, social, config, admission }),
      worldsRoutes(config),
      adminRoutes({ orm: storage.orm, auth, limits, world: worldAccess }),
      contentApiDocs,
    ],
  });
  httpServer.on("request", app);
  logger.info({ rateLimit: config.rateLimitEnabled }, "stage 4/6 HTTP ready (CORS, rate limiting, static)");

  await colyseus.accept();
  logger.info("stage 5/6 WebSocket handlers ready (/ws adapter, Colyseus rooms under /ws/)");

  // One room per hosted world, found by its `world` option (metadata.world of its listing).
  matchMaker.defineRoomType("world", WorldRoomType).filterBy(["world"]);
  matchMaker.defineRoomType("trade", TradeRoomType);
  // Each world room: created by the server with a permit no client can forge (WorldRoom.onCreate).
  // It registers with the /ws adapter as it is created.
  await worlds.createRooms(roomDeps);
  logger.info({ worlds: worlds.numbers(), npcs: world.npcs.size, resources: world.resources.size, tickMs: config.tickMs }, "stage 6/6 worlds started");

  const port = opts.port ?? config.port;
  await new Promise<void>((resolve, reject) => {
    httpServer.once("error", reject);
    httpServer.listen(port, opts.host ?? "0.0.0.0", config.listenBacklog, () => {
      httpServer.off("error", reject);
      resolve();
    });
  });
  const actualPort = (httpServer.address() as AddressInfo).port;
  logger.info({ port: actualPort }, "listening");
  let metricsServer: HttpServer | undefined;
  let metricsUrl: string | undefined;
  if (config.metricsPort !== undefined) {
    ({ server: metricsServer, url: metricsUrl } = await serveMetrics(metrics, config.metricsHost, config.metricsPort));
    logger.info({ url: metricsUrl }, "metrics listening");
  }

  let closing: Promise<void> | undefined;
  /**
   * Shutdown, each stage bounded so the whole stays inside the process's 10 s exit
   * (docs/persistence.md "Shutdown"): trades cancelled (at most 3 s: a settlement that can't finish is abandoned), then
   * every player saved and its play session closed (at most SHUTDOWN_SAVE_MS, whatever a trade room
   * still does), Colyseus stopped (1 s), storage closed (1 s).
   */
  const close = () =>
    (closing ??= (async () => {
      logger.info("shutting down: closing rooms, saving players");
      httpServer.close();
      // What room clients send from now on is not acted on: not read either, so parsing it takes
      // nothing from the shutdown save (read again to close the rooms).
      colyseus.pauseReading();
      admission.close();
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      await worlds.cancelTrades();
      adapter.close();
      await settlesWithin(mcp.close(), 500);
      // Each player of every world is saved once (with its play session closed), in parallel batches;
      // then this process's character leases go.
      const leaving = worlds.all().reduce((n, h) => n + h.world.players.size, 0);
      const savingFrom = performance.now();
      if (!(await settlesWithin(worlds.leaveAll("server_shutdown"), SHUTDOWN_SAVE_MS))) {
        logger.error({ waitedMs: SHUTDOWN_SAVE_MS, players: leaving }, "shutdown: saving players did not finish in time; closing storage anyway");
      } else {
        logger.info({ players: leaving, ms: Math.round(performance.now() - savingFrom) }, "shutdown: players saved");
        await leases.releaseAll().catch((e: unknown) => logger.error({ err: e }, "shutdown: releasing character leases failed"));
      }
      await settlesWithin(hosting.stop(), 500);
      await settlesWithin(cluster.stop(), 500);
      if (!(await settlesWithin(colyseus.shutdown(), SHUTDOWN_ROOMS_MS))) logger.error("shutdown: closing the rooms did not finish in time");
      cluster.disconnect();
      httpServer.closeAllConnections();
      // A connection still busy (a save waiting on a row lock another transaction holds) ends at its
      // lock or statement timeout; the process does not wait for it past this bound.
      if (!opts.storage && !(await settlesWithin(storage.close(), SHUTDOWN_STORAGE_MS))) logger.error("shutdown: closing storage did not finish in time");
      logger.info("shutdown complete");
    })());

  return {
    config,
    logger,
    storage,
    world,
    worlds,
    worldAccess,
    gate,
    characters,
    trades,
    content,
    httpServer,
    port: actualPort,
    url: `http://127.0.0.1:${actualPort}`,
    metrics,
    admission,
    dbWork,
    metricsUrl,
    mcp,
    bus,
    processId: matchMaker.processId,
    close,
  };
}
