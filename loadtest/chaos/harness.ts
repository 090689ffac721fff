/**
 * The chaos run (docs/chaos.md): three server processes on one PostgreSQL database and a Redis of
 * the run's own, two worlds, bots in a closed economy and a fault injector; then, with everything
 * stopped, the checks of `report.ts`. Used by `npm run chaos` (`main.ts`) and by the two-minute test
 * (test/integration/cluster/chaos.test.ts). Cleans up every process, Redis and database it started,
 * also when it fails.
 */
import { createWriteStream } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ChaosBot, type DoublePlay, type Instance } from "./bot.js";
import { characterTotals, completedAudits, createDatabase, dropDatabase, openDeaths } from "./database.js";
import { Economy } from "./economy.js";
import { FaultInjector } from "./faults.js";
import { groundTotals } from "./ground.js";
import { HealthSampler } from "./health.js";
import { ServerProcess } from "../lib/cluster.js";
import { OwnRedis } from "../lib/redis.js";
import { Rng } from "../lib/random.js";
import { LOAD_SECRETS, loadToken } from "../lib/tokens.js";
import { check, type ChaosResult } from "./report.js";

export interface ChaosOptions {
  minutes: number;
  bots: number;
  seed: number;
  /** A PostgreSQL server URL (its database is not used: the run creates its own and drops it). */
  pgUrl: string;
  tickMs?: number;
  leaseTtlSeconds?: number;
  /** Pause between two faults, from and to (ms). */
  faultGapMs?: [number, number];
  /** Progress lines (default: console.log). */
  log?: (line: string) => void;
}

/** Log lines of the servers that the report counts (docs/operations.md "Worlds"; issue 28). */
export const WATCHED_LINES = [
  "character lease lost to another process",
  "saving players did not finish in time",
  "trade outcome unknown",
  "item transaction failed",
  "player storage job failed",
  "ground pile despawned",
];

/** Run the whole chaos run and its checks. Never throws for a violation: they are in the result. */
export async function runChaos(o: ChaosOptions): Promise<ChaosResult> {
  const log = o.log ?? ((l: string) => console.log(l));
  const rng = new Rng(o.seed);
  const leaseTtlSeconds = o.leaseTtlSeconds ?? 3;
  const tickMs = o.tickMs ?? 200;
  const database = `chaos_${o.seed}_${Date.now().toString(36)}`;
  const logFile = join(tmpdir(), `${database}.log`);
  const out = createWriteStream(logFile);
  const watched = new Map<string, number>();
  const onLine = (name: string, line: string) => {
    out.write(`${name} ${line}\n`);
    for (const w of WATCHED_LINES) if (line.includes(w)) watched.set(`${name}: ${w}`, (watched.get(`${name}: ${w}`) ?? 0) + 1);
  };
  const redis = await OwnRedis.create();
  const servers: ServerProcess[] = [];
  let dbUrl: string | undefined;
  const killAll = () => {
    for (const s of servers) s.proc?.kill("SIGKILL");
    void redis.stop();
  };
  process.once("exit", killAll);
  try {
    dbUrl = await createDatabase(o.pgUrl, database);
    await redis.start();
    const env = {
      REDIS_URL: redis.url,
      DATABASE_URL: dbUrl,
      ...LOAD_SECRETS,
      TICK_MS: String(tickMs),
      // A request the bots gave up on (its target went away) holds the requester for this long.
      TRADE_REQUEST_TIMEOUT_MS: "5000",
      LEASE_TTL_SECONDS: String(leaseTtlSeconds),
      // Nothing despawns during the run (issue 28): a pile outlives the run and its drain.
      GROUND_ITEM_LIFETIME_TICKS: String(Math.ceil(((o.minutes + 15) * 60_000) / tickMs)),
      // Three processes share the machine's PostgreSQL with other users: small pools.
      DB_POOL_MAX: "12",
      JOIN_CONCURRENCY: "6",
      CREATE_CONCURRENCY: "2",
      SAVE_CONCURRENCY: "2",
    };
    for (const [name, worlds] of [
      ["p1", [1]],
      ["p2", [2]],
      ["p3", [1, 2]],
    ] as const) {
      const s = await ServerProcess.create({ name, worlds: [...worlds], env }, onLine);
      servers.push(s);
      await s.start(); // one after the other: each applies the migrations at start-up
    }
    const instances: Instance[] = servers.flatMap((s) => (s.spec.worlds ?? []).map((world) => ({ name: `${s.spec.name}/w${world}`, url: () => s.url, world })));
    log(
      `chaos: database ${database}, redis :${redis.port}, processes ${servers.map((s) => `${s.spec.name} :${s.port} worlds ${(s.spec.worlds ?? []).join(",")}`).join("; ")}`,
    );

    const tradesSeen = new Map<string, string>();
    const doublePlays: DoublePlay[] = [];
    const sink = { tradeSeen: (id: string, inst: string) => void tradesSeen.set(id, inst), doublePlay: (d: DoublePlay) => void doublePlays.push(d) };
    const bots = await createBots(o.bots, o.seed, servers[2]!.url, sink);
    const start = await characterTotals(dbUrl);
    const groundAtStart = await groundTotals(dbUrl);
    log(`chaos: ${bots.length} characters created; ${o.minutes} min of trading under faults (seed ${o.seed})`);

    const economy = new Economy(bots, instances, rng.fork(), tickMs);
    const faults = new FaultInjector({ servers, redis, pgServerUrl: o.pgUrl, database, leaseTtlSeconds }, rng.fork(), o.faultGapMs ?? [3_000, 6_000]);
    const health = new HealthSampler(servers);
    health.start();
    const t0 = Date.now();
    const until = t0 + o.minutes * 60_000;
    const progress = setInterval(() => {
      const done = economy.outcomes.get("trade:completed") ?? 0;
      log(
        `chaos: ${((Date.now() - t0) / 1000).toFixed(0)} s, ${done} trades completed, ${faults.events.length} faults, ${bots.filter((b) => b.connected).length}/${bots.length} bots in a world`,
      );
    }, 30_000);
    try {
      await Promise.all([economy.run(until), faults.run(until)]);
      log("chaos: faults over; letting the bots finish and leave");
      await economy.drain();
    } finally {
      clearInterval(progress);
      health.stop();
    }
    const cleanExits = await Promise.all(servers.map((s) => s.terminate()));
    await redis.stop();

    const end = await characterTotals(dbUrl);
    const groundAtEnd = await groundTotals(dbUrl);
    const audits = await completedAudits(dbUrl);
    return check({
      seconds: (Date.now() - t0) / 1000,
      start,
      end,
      groundAtStart,
      groundAtEnd,
      tradesSeen,
      audits,
      doublePlays,
      openDeaths: await openDeaths(dbUrl),
      outcomes: economy.outcomes,
      faults: faults.events,
      faultErrors: faults.errors,
      bots,
      watched,
      storageDown: health.summary(),
      uncleanExits: servers.filter((_, i) => !cleanExits[i]).map((s) => s.spec.name),
      logFile,
    });
  } finally {
    process.removeListener("exit", killAll);
    await Promise.all(servers.map((s) => s.kill()));
    await redis.stop();
    out.end();
    await dropDatabase(o.pgUrl, database).catch((e: unknown) => log(`chaos: could not drop database ${database}: ${(e as Error).message}`));
  }
}

/** `n` characters with the starter kit, created over REST (`POST /api/character`), each on an account of its own. */
async function createBots(n: number, seed: number, url: string, sink: ConstructorParameters<typeof ChaosBot>[3]): Promise<ChaosBot[]> {
  const bots: ChaosBot[] = [];
  for (let i = 0; i < n; i += 8) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(8, n - i) }, async (_, k) => {
        const name = `Chaos${i + k}`;
        const token = loadToken(`chaos-${seed}-${i + k}`);
        for (let attempt = 0; ; attempt++) {
          const res = await fetch(`${url}/api/character`, {
            method: "POST",
            headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
            body: JSON.stringify({ name }),
          });
          if (res.status === 201) return new ChaosBot(((await res.json()) as { id: string }).id, name, token, sink);
          if (res.status !== 503 || attempt > 10) throw new Error(`creating ${name}: ${res.status} ${await res.text()}`);
          await new Promise((r) => setTimeout(r, 1_000));
        }
      }),
    );
    bots.push(...batch);
  }
  return bots;
}
