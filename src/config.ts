/**
 * The one place that reads `process.env`. Parses it once into a frozen, typed object and fails
 * fast with one line per problem. Everything else receives a `Config`.
 */
import { randomBytes } from "node:crypto";
import { z } from "zod";
import { parseBuildEnv, type BuildEnv } from "./settings/build-env.js";
import {
  bool,
  ConfigError,
  deepFreeze,
  int,
  manifestsDirOf,
  optionalString,
  optionalUrl,
  parseEach,
  publicAddressOf,
  world,
  worldList,
} from "./settings/parse.js";

export { ConfigError, publicAddressOf, type BuildEnv };

/** Secrets refused in every environment (well-known defaults and examples, the development secret of earlier versions). */
const KNOWN_WEAK_SECRETS = new Set([
  "secret",
  "changeme",
  "change-me",
  "jwt_secret",
  "your-secret-key",
  "your_jwt_secret",
  "development-secret",
  "dev-secret-do-not-use-in-production-000000",
]);

/** Admin codes that must never be used in production (defaults, examples, the test suite's code). */
const KNOWN_WEAK_ADMIN_CODES = new Set([
  "dev",
  "admin",
  "password",
  "changeme",
  "change-me",
  "secret",
  "admin_code",
  "admin-code",
  "test-admin-code",
  "your-admin-code",
  "change-me-admin-code",
]);

/** Shortest ADMIN_CODE accepted in production (it grants admin rights; guessable codes are brute-forced). */
export const MIN_PRODUCTION_ADMIN_CODE_LENGTH = 16;

/**
 * The admin code of a development server without ADMIN_CODE. Well known, so it is accepted only
 * from a loopback address (docs/http.md "Authentication"); refused as a setting in production.
 */
export const DEV_ADMIN_CODE = "dev";

const envSchema = z.object({
  PORT: int(5555, 0, 65535),
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  WORLD: world,
  DATABASE_URL: optionalString,
  TEST_DATABASE_URL: optionalString,
  USE_LOCAL_POSTGRES: bool.default(false),
  JWT_SECRET: optionalString,
  ADMIN_CODE: optionalString,
  PUBLIC_IDP_APP_ID: optionalString,
  IDP_APP_SECRET: optionalString,
  IDP_JWKS_URL: optionalUrl,
  IDP_ISSUER: optionalString,
  PUBLIC_CDN_URL: optionalUrl,
  PRODUCTION_CDN_URL: optionalUrl,
  PUBLIC_API_URL: optionalUrl,
  PUBLIC_WS_URL: optionalUrl,
  PUBLIC_APP_URL: optionalUrl,
  CLIENT_URL: optionalUrl,
  AGENT_FRAMEWORK_URL: optionalUrl,
  AGENT_FRAMEWORK_API_URL: optionalUrl,
  VOICE_API_KEY: optionalString,
  VOICE_API_SECRET: optionalString,
  VOICE_URL: optionalUrl,
  SAVE_INTERVAL: int(60, 1, 3600),
  DISABLE_RATE_LIMIT: bool.default(false),
  PLAYGROUND: bool.default(true),
  SKIP_MANIFESTS: bool.default(false),
  CI: bool.default(false),
  TRUST_PROXY: bool.default(false),
  RATE_LIMIT_BLOCK_SECONDS: int(60, 1, 86400),
  TICK_MS: int(600, 10, 10_000),
  TICK_PHASE: optionalString.pipe(z.enum(["auto", "off"], "must be auto or off").default("auto")),
  MAX_SOCKETS_PER_ADDRESS: int(10, 1, 100_000),
  MATCHMAKE_PER_MINUTE: int(120, 1, 1_000_000),
  MATCHMAKE_PER_ACCOUNT_PER_MINUTE: int(20, 1, 1_000_000),
  WORLDS: worldList,
  WORLD_MAX_PLAYERS: int(5_000, 1, 100_000),
  LISTEN_BACKLOG: int(4096, 1, 65_535),
  SEAT_RESERVATION_SECONDS: int(30, 1, 600),
  REDIS_URL: optionalUrl,
  LEASE_TTL_SECONDS: int(30, 2, 3600),
  TRADE_REQUEST_TIMEOUT_MS: int(30_000, 100, 3_600_000),
  GROUND_ITEM_LIFETIME_TICKS: int(300, 100, 100_000_000),
  TRADE_INACTIVITY_TIMEOUT_MS: int(300_000, 100, 86_400_000),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  CLIENT_DIST: optionalString,
  METRICS_PORT: optionalString.pipe(z.string().regex(/^\d+$/, "must be an integer").transform(Number).pipe(z.number().int().min(0).max(65535)).optional()),
  METRICS_HOST: z.string().trim().min(1).default("127.0.0.1"),
  DB_POOL_MAX: int(20, 2, 1_000),
  DB_POOL_ACQUIRE_TIMEOUT_MS: int(5_000, 100, 600_000),
  SAVE_CONCURRENCY: int(4, 1, 1_000),
  JOIN_CONCURRENCY: int(12, 1, 10_000),
  JOIN_QUEUE: int(256, 0, 1_000_000),
  JOIN_QUEUE_WAIT_MS: int(10_000, 10, 600_000),
  JOIN_PENDING_SEATS: int(256, 1, 1_000_000),
  CREATE_CONCURRENCY: int(4, 1, 10_000),
  CREATE_QUEUE: int(64, 0, 1_000_000),
  CREATE_QUEUE_WAIT_MS: int(10_000, 10, 600_000),
  ADMISSION_MAX_LOOP_DELAY_MS: int(500, 0, 60_000),
});

/** The parsed, validated configuration. Frozen; never mutated after start-up. */
export interface Config {
  readonly port: number;
  readonly env: "development" | "production" | "test";
  readonly isProduction: boolean;
  /** Whether the Colyseus playground is mounted (`PLAYGROUND`; never in production, docs/operations.md "Playground"). */
  readonly playground: boolean;
  readonly ci: boolean;
  readonly worldDir: string;
  readonly manifestsDir: string;
  readonly databaseUrl?: string;
  readonly testDatabaseUrl?: string;
  readonly useLocalPostgres: boolean;
  readonly jwtSecret: string;
  /**
   * True when JWT_SECRET was not set (development and test only): `jwtSecret` is 32 random bytes
   * drawn at this start, so tokens do not survive a restart and nobody knows the secret.
   */
  readonly jwtSecretGenerated: boolean;
  readonly adminCode: string;
  /** True when ADMIN_CODE was not set (development and test only): `adminCode` is `dev`, accepted only from a loopback address. */
  readonly adminCodeLoopbackOnly: boolean;
  /** Identity-provider mode: tokens verified against `jwksUrl`, issuer and audience (the app id) always checked. */
  readonly idp?: { readonly appId: string; readonly appSecret?: string; readonly jwksUrl: string; readonly issuer: string };
  readonly cdnUrl?: string;
  readonly productionCdnUrl: string;
  readonly publicApiUrl: string;
  readonly publicWsUrl: string;
  readonly publicAppUrl?: string;
  readonly clientUrl?: string;
  readonly agentFrameworkUrl?: string;
  readonly agentFrameworkApiUrl: string;
  readonly voice?: { readonly apiKey: string; readonly apiSecret: string; readonly url: string };
  readonly saveIntervalSeconds: number;
  readonly rateLimitEnabled: boolean;
  readonly rateLimitBlockSeconds: number;
  readonly trustProxy: boolean;
  readonly skipManifests: boolean;
  readonly tickMs: number;
  /** `TICK_PHASE`: `auto` ticks each world on its phase of the wall-clock tick grid, `off` on a plain interval (docs/operations.md "Scaling: several processes and machines"). */
  readonly tickPhase: "auto" | "off";
  /** Concurrent WebSockets (SDK room sockets and `/ws` together) one client address may hold. */
  readonly maxSocketsPerAddress: number;
  /** Matchmaking requests (`POST /ws/matchmake/…`) a minute, per client address (`MATCHMAKE_PER_MINUTE`) and per account (`MATCHMAKE_PER_ACCOUNT_PER_MINUTE`). */
  readonly matchmakeLimits: { readonly perAddress: number; readonly perAccount: number };
  /** `WORLDS`: the world numbers this process hosts, ascending (docs/operations.md "Worlds"). */
  readonly worlds: readonly number[];
  /** `WORLD_MAX_PLAYERS`: connections one world room takes; a full world refuses joins (503 WORLD_FULL). */
  readonly worldMaxPlayers: number;
  /**
   * Pending connections the listening socket queues before the server accepts them (`listen`'s
   * backlog; the kernel caps it at net.core.somaxconn). Node's default, 511, overflows in a burst of joins.
   */
  readonly listenBacklog: number;
  /** Seconds a world seat reserved by matchmaking waits for the client's room socket (Colyseus's default is 15). */
  readonly seatReservationSeconds: number;
  readonly redisUrl?: string;
  /** `LEASE_TTL_SECONDS`: how long a character lease lasts without renewal (renewed every third of it); a killed process frees its characters within this (docs/operations.md "Worlds"). */
  readonly leaseTtlSeconds: number;
  /** Several processes (REDIS_URL): Redis presence and driver, rooms announced at `publicAddress` (`host[:port]/ws`). */
  readonly cluster?: { readonly redisUrl: string; readonly publicAddress: string };
  /** A pending trade request expires after this long (docs/trading.md#rules: 30 s). */
  readonly tradeRequestTimeoutMs: number;
  /** An open trade without activity is cancelled after this long (docs/trading.md#rules: 5 minutes). */
  readonly tradeInactivityTimeoutMs: number;
  /** Ticks a ground pile lives (docs/operations.md#settings; at least GROUND_ITEM_PRIVATE_TICKS). */
  readonly groundItemLifetimeTicks: number;
  readonly logLevel: string;
  readonly clientDist?: string;
  /** Port of the Prometheus metrics listener (`METRICS_PORT`); no listener when unset. */
  readonly metricsPort?: number;
  /** Address it binds (`METRICS_HOST`, loopback by default). */
  readonly metricsHost: string;
  /** PostgreSQL pool: connections (`DB_POOL_MAX`) and how long a query waits for one (`DB_POOL_ACQUIRE_TIMEOUT_MS`). */
  readonly dbPool: { readonly max: number; readonly acquireTimeoutMs: number };
  /** Batched saves running at once (`SAVE_CONCURRENCY`); joins and creations go first (src/storage/limiter.ts). */
  readonly saveConcurrency: number;
  /** Admission control of joins and character creations (src/net/admission.ts, docs/operations.md "When the server is busy"). */
  readonly admission: {
    readonly joins: { readonly concurrency: number; readonly queue: number; readonly waitMs: number };
    /** Seats reserved by matchmaking and not yet entered, at most (`JOIN_PENDING_SEATS`); a reservation lasts SEAT_RESERVATION_SECONDS. */
    readonly seats: { readonly limit: number; readonly ttlMs: number };
    readonly creations: { readonly concurrency: number; readonly queue: number; readonly waitMs: number };
    /** New joins and creations are refused while the event loop lags more than this (0: never). */
    readonly maxLoopDelayMs: number;
  };
}

/**
 * Parse an environment into a frozen Config.
 * Phases: schema parse (types and ranges), cross-field rules (production requirements), derived values.
 * @throws ConfigError listing every problem at once.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Each setting is parsed on its own so that one bad value does not hide the other problems:
  // the schema problems and the cross-field rules below are reported together.
  const { values, problems, invalid } = parseEach(envSchema, env);
  // Settings that failed to parse are undefined here; the rules below only use what parsed.
  const e = values;
  const isProduction = e.NODE_ENV === "production";

  if (isProduction) {
    if (!e.DATABASE_URL) problems.push("DATABASE_URL is required in production");
    if (!e.JWT_SECRET) problems.push("JWT_SECRET is required in production");
    else if (e.JWT_SECRET.length < 32) problems.push("JWT_SECRET must be at least 32 characters in production");
    if (!e.ADMIN_CODE) problems.push("ADMIN_CODE is required in production");
    else if (KNOWN_WEAK_ADMIN_CODES.has(e.ADMIN_CODE.toLowerCase())) problems.push("ADMIN_CODE is a known default; choose a random code");
    else if (e.ADMIN_CODE.length < MIN_PRODUCTION_ADMIN_CODE_LENGTH)
      problems.push(`ADMIN_CODE must be at least ${MIN_PRODUCTION_ADMIN_CODE_LENGTH} characters in production`);
  }
  if (e.JWT_SECRET && !isProduction && e.JWT_SECRET.length < 16) {
    problems.push("JWT_SECRET must be at least 16 characters");
  }
  // Anyone can sign tokens with a published secret, whatever the environment.
  if (e.JWT_SECRET && KNOWN_WEAK_SECRETS.has(e.JWT_SECRET.toLowerCase())) problems.push("JWT_SECRET is a known default; choose a random secret");
  if (e.PUBLIC_WS_URL && !/^wss?:\/\/.+\/ws\/?$/.test(e.PUBLIC_WS_URL)) {
    problems.push("PUBLIC_WS_URL must use ws:// or wss:// and end with /ws");
  }
  if (e.REDIS_URL && !/^rediss?:\/\//.test(e.REDIS_URL)) problems.push("REDIS_URL must use redis:// or rediss://");
  // Across processes, each process must announce where its own rooms are: a default of
  // localhost:<PORT> would send clients of other machines to themselves.
  if (e.REDIS_URL && !e.PUBLIC_WS_URL && !invalid.has("PUBLIC_WS_URL"))
    problems.push("PUBLIC_WS_URL is required with REDIS_URL: this process's own public WebSocket address (ws[s]://host[:port]/ws)");
  if (e.VOICE_URL && !e.VOICE_URL.startsWith("wss://") && !e.VOICE_URL.startsWith("ws://")) {
    problems.push("VOICE_URL must be a wss:// address");
  }
  const voiceSet = [e.VOICE_API_KEY, e.VOICE_API_SECRET, e.VOICE_URL].filter(Boolean).length;
  if (voiceSet > 0 && voiceSet < 3) {
    problems.push("VOICE_API_KEY, VOICE_API_SECRET and VOICE_URL must be set together");
  }
  if (e.PUBLIC_IDP_APP_ID) {
    // Provider tokens are only as trustworthy as the checks on them: key set, issuer and audience.
    if (!e.IDP_JWKS_URL && !invalid.has("IDP_JWKS_URL")) problems.push("IDP_JWKS_URL is required when PUBLIC_IDP_APP_ID is set");
    if (!e.IDP_ISSUER) problems.push("IDP_ISSUER is required when PUBLIC_IDP_APP_ID is set");
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const v = e as z.output<typeof envSchema>;

  const apiUrl = v.PUBLIC_API_URL ?? `http://localhost:${v.PORT}`;
  const config: Config = {
    port: v.PORT,
    env: v.NODE_ENV,
    isProduction,
    playground: !isProduction && v.PLAYGROUND,
    ci: v.CI,
    worldDir: v.WORLD,
    manifestsDir: manifestsDirOf(v.WORLD),
    databaseUrl: v.DATABASE_URL,
    testDatabaseUrl: v.TEST_DATABASE_URL,
    useLocalPostgres: v.USE_LOCAL_POSTGRES && !isProduction,
    // Production requires both (checked above); elsewhere an unset secret is random per start.
    jwtSecret: v.JWT_SECRET ?? randomBytes(32).toString("base64url"),
    jwtSecretGenerated: v.JWT_SECRET === undefined,
    adminCode: v.ADMIN_CODE ?? DEV_ADMIN_CODE,
    adminCodeLoopbackOnly: v.ADMIN_CODE === undefined,
    // Both are present whenever the app id is (checked above).
    idp: v.PUBLIC_IDP_APP_ID ? { appId: v.PUBLIC_IDP_APP_ID, appSecret: v.IDP_APP_SECRET, jwksUrl: v.IDP_JWKS_URL!, issuer: v.IDP_ISSUER! } : undefined,
    cdnUrl: v.PUBLIC_CDN_URL?.replace(/\/+$/, ""),
    productionCdnUrl: (v.PRODUCTION_CDN_URL ?? "https://cdn.realm.example").replace(/\/+$/, ""),
    publicApiUrl: apiUrl,
    publicWsUrl: v.PUBLIC_WS_URL ?? `${apiUrl.replace(/^http/, "ws")}/ws`,
    publicAppUrl: v.PUBLIC_APP_URL,
    clientUrl: v.CLIENT_URL,
    agentFrameworkUrl: v.AGENT_FRAMEWORK_URL,
    agentFrameworkApiUrl: v.AGENT_FRAMEWORK_API_URL ?? "http://localhost:4001",
    voice: v.VOICE_API_KEY && v.VOICE_API_SECRET && v.VOICE_URL ? { apiKey: v.VOICE_API_KEY, apiSecret: v.VOICE_API_SECRET, url: v.VOICE_URL } : undefined,
    saveIntervalSeconds: v.SAVE_INTERVAL,
    // DISABLE_RATE_LIMIT is a development convenience and is ignored in production (docs/operations.md#settings).
    rateLimitEnabled: isProduction ? true : !v.DISABLE_RATE_LIMIT,
    rateLimitBlockSeconds: v.RATE_LIMIT_BLOCK_SECONDS,
    trustProxy: v.TRUST_PROXY,
    skipManifests: v.SKIP_MANIFESTS,
    tickMs: v.TICK_MS,
    tickPhase: v.TICK_PHASE,
    maxSocketsPerAddress: v.MAX_SOCKETS_PER_ADDRESS,
    matchmakeLimits: { perAddress: v.MATCHMAKE_PER_MINUTE, perAccount: v.MATCHMAKE_PER_ACCOUNT_PER_MINUTE },
    worlds: v.WORLDS,
    worldMaxPlayers: v.WORLD_MAX_PLAYERS,
    listenBacklog: v.LISTEN_BACKLOG,
    seatReservationSeconds: v.SEAT_RESERVATION_SECONDS,
    redisUrl: v.REDIS_URL,
    leaseTtlSeconds: v.LEASE_TTL_SECONDS,
    cluster: v.REDIS_URL && v.PUBLIC_WS_URL ? { redisUrl: v.REDIS_URL, publicAddress: publicAddressOf(v.PUBLIC_WS_URL) } : undefined,
    tradeRequestTimeoutMs: v.TRADE_REQUEST_TIMEOUT_MS,
    tradeInactivityTimeoutMs: v.TRADE_INACTIVITY_TIMEOUT_MS,
    groundItemLifetimeTicks: v.GROUND_ITEM_LIFETIME_TICKS,
    logLevel: v.LOG_LEVEL,
    clientDist: v.CLIENT_DIST,
    metricsPort: v.METRICS_PORT,
    metricsHost: v.METRICS_HOST,
    dbPool: { max: v.DB_POOL_MAX, acquireTimeoutMs: v.DB_POOL_ACQUIRE_TIMEOUT_MS },
    saveConcurrency: v.SAVE_CONCURRENCY,
    admission: {
      joins: { concurrency: v.JOIN_CONCURRENCY, queue: v.JOIN_QUEUE, waitMs: v.JOIN_QUEUE_WAIT_MS },
      seats: { limit: v.JOIN_PENDING_SEATS, ttlMs: v.SEAT_RESERVATION_SECONDS * 1000 },
      creations: { concurrency: v.CREATE_CONCURRENCY, queue: v.CREATE_QUEUE, waitMs: v.CREATE_QUEUE_WAIT_MS },
      maxLoopDelayMs: v.ADMISSION_MAX_LOOP_DELAY_MS,
    },
  };
  return deepFreeze(config);
}

/** Warnings for insecure-but-allowed development settings, logged at start-up. */
/**
 * Parse the settings of the build steps and developer tools (`WORLD`, `SKIP_ASSETS`, `PORT_CDN`,
 * `PUBLIC_CDN_URL`, `NODE_ENV`, `CI`) with the same rules as the server's configuration.
 * @throws ConfigError listing every bad setting.
 */
export function loadBuildEnv(env: NodeJS.ProcessEnv = process.env): BuildEnv {
  return parseBuildEnv(env);
}

export function configWarnings(c: Config): string[] {
  const w: string[] = [];
  if (c.jwtSecretGenerated) w.push("JWT_SECRET not set: tokens are signed with a random secret drawn at this start (they stop working at the next start)");
  if (c.adminCodeLoopbackOnly) w.push(`ADMIN_CODE not set: the development admin code '${DEV_ADMIN_CODE}' is accepted from loopback addresses only`);
  if (!c.rateLimitEnabled) w.push("rate limiting is disabled (DISABLE_RATE_LIMIT)");
  const interactive = c.admission.joins.concurrency + c.admission.creations.concurrency;
  if (interactive + c.saveConcurrency > c.dbPool.max) {
    w.push(
      `JOIN_CONCURRENCY + CREATE_CONCURRENCY + SAVE_CONCURRENCY (${interactive + c.saveConcurrency}) exceed DB_POOL_MAX (${c.dbPool.max}): joins may wait for pool connections`,
    );
  }
  if (c.cluster && !c.databaseUrl)
    w.push("REDIS_URL without DATABASE_URL: each process has its own embedded database; a cluster shares one PostgreSQL database");
  if (c.metricsPort !== undefined && !isLoopback(c.metricsHost))
    w.push(`METRICS_HOST=${c.metricsHost}: metrics are reachable beyond this machine; keep the port firewalled`);
  return w;
}

/** True for addresses only this machine can reach. */
function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}
