/**
 * Prometheus metrics (docs/operations.md "Metrics"). One registry per server, built here and handed to the
 * parts that count by construction; each of them adds one line where the thing happens. Values
 * that already live somewhere (players online, rooms, database pool, save queue) are read when
 * Prometheus scrapes, through `watch`, instead of being copied on every change.
 *
 * The registry is served on its own listener (`METRICS_PORT`, loopback by default, `METRICS_HOST`),
 * never on the game's public port.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import { CLIENT_EVENTS, SERVER_EVENTS } from "./events.js";

/** Every metric name the server exports besides prom-client's process defaults (the dashboard uses these). */
export const METRIC_NAMES = [
  "realm_players_online",
  "realm_rooms",
  "realm_tick_duration_seconds",
  "realm_tick_cpu_seconds",
  "realm_tick_overruns_total",
  "realm_tick_slots_skipped_total",
  "realm_messages_in_total",
  "realm_messages_out_total",
  "realm_flood_drops_total",
  "realm_rate_limit_blocks_total",
  "realm_joins_total",
  "realm_join_refusals_total",
  "realm_trades_total",
  "realm_trade_settlement_seconds",
  "realm_db_pool_size",
  "realm_db_pool_in_use",
  "realm_db_pool_waiting",
  "realm_save_queue_depth",
  "realm_save_failures_total",
  "realm_admission_in_flight",
  "realm_admission_waiting",
] as const;

/** Live values read at scrape time. Each is optional: a missing source leaves its gauge empty. */
export interface MetricSources {
  /** Name of the world (the `world` label). */
  world?: string;
  playersOnline?: () => number;
  /** Rooms by type (`world`, `trade`). */
  rooms?: () => Promise<Record<string, number>> | Record<string, number>;
  /** The database pool; `inUse` and `waiting` are left out where they mean nothing (PGlite). */
  dbPool?: () => Promise<{ size: number; inUse?: number; waiting?: number } | undefined>;
  saveQueueDepth?: () => number;
  /** Admission gates by name (`join`, `creation`): requests served and waiting (src/net/admission.ts). */
  admission?: () => Record<string, { inFlight: number; waiting: number }>;
}

/** When a tick began: the wall clock and the process's CPU time (`Metrics.tick` takes it at the tick's end). */
export interface TickStart {
  wall: number;
  cpu: NodeJS.CpuUsage;
}
export const tickStart = (): TickStart => ({ wall: performance.now(), cpu: process.cpuUsage() });

/**
 * Messages by event, counted in plain numbers and added to their prom-client counter when it is read
 * (its `collect`, at each scrape). prom-client's `inc` with a label hashes the labels and makes objects
 * on every call (a `labels()` child's too): once per message in and out, that showed in profiles.
 * Names outside `known` count under `other` (bounded labels).
 */
class EventCounts {
  private readonly slots = new Map<string, number>();
  private readonly names: string[];
  private readonly counts: Float64Array;

  constructor(known: readonly string[], other: string) {
    this.names = [...known, other];
    known.forEach((name, i) => this.slots.set(name, i));
    this.counts = new Float64Array(this.names.length);
  }

  add(event: string): void {
    this.counts[this.slots.get(event) ?? this.names.length - 1]++;
  }

  /** Add what was counted since the last read to `counter`; an event never counted gets no series, as before. */
  flush(counter: Counter<"event">): void {
    for (let i = 0; i < this.names.length; i++) {
      const n = this.counts[i];
      if (n === 0) continue;
      counter.inc({ event: this.names[i] }, n);
      this.counts[i] = 0;
    }
  }
}

export class Metrics {
  readonly registry = new Registry();
  private sources: MetricSources = {};

  /** Tick duration; observe through `tick()`. */
  readonly tickSeconds: Histogram;
  /** CPU time the process used during a tick (wall time minus waiting for a core); observe through `tick()`. */
  readonly tickCpuSeconds: Histogram;
  readonly tickOverruns: Counter;
  /** Tick slots left out because the tick before ran past them (`TICK_PHASE=auto`, rooms/world/ticker.ts). */
  readonly tickSlotsSkipped: Counter;
  private readonly messagesIn = new EventCounts(Object.keys(CLIENT_EVENTS), "unknown");
  private readonly messagesOut = new EventCounts(SERVER_EVENTS, "other");
  readonly floodDrops: Counter;
  readonly rateLimitBlocks: Counter<"scope">;
  readonly joins: Counter<"transport">;
  readonly joinRefusals: Counter<"transport" | "code">;
  readonly trades: Counter<"outcome">;
  readonly settlementSeconds: Histogram<"result">;
  readonly saveFailures: Counter;
  /** Ground piles that lived out their lifetime (their items are gone from the game). */
  readonly groundPilesDespawned: Counter;

  /** @param tickMs the tick length; a tick that takes longer counts as an overrun. */
  constructor(private readonly tickMs: number) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    const self = this;

    new Gauge({
      name: "realm_players_online",
      help: "Players connected to the world (dropped players waiting to reconnect are not counted)",
      labelNames: ["world"],
      registers,
      collect() {
        const s = self.sources;
        if (s.playersOnline) this.set({ world: s.world ?? "world" }, s.playersOnline());
      },
    });
    new Gauge({
      name: "realm_rooms",
      help: "Colyseus rooms of this process by type",
      labelNames: ["type"],
      registers,
      async collect() {
        const rooms = await self.sources.rooms?.();
        this.reset();
        for (const [type, n] of Object.entries(rooms ?? {})) this.set({ type }, n);
      },
    });
    // Fine around the tick's budget (TICK_MS 600: half a tick is 0.3, a whole one 0.6), so a p99 read
    // from the buckets tells those apart; the benchmarks read their tick figures from these two.
    const tickBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5, 0.6, 0.8, 1, 1.5, 2.5];
    this.tickSeconds = new Histogram({
      name: "realm_tick_duration_seconds",
      help: "Time one world tick took (simulation, schema sync and patches)",
      buckets: tickBuckets,
      registers,
    });
    this.tickCpuSeconds = new Histogram({
      name: "realm_tick_cpu_seconds",
      help: "CPU time the server process used during one world tick (on a busy machine, less than its duration: the rest was waiting for a core)",
      buckets: tickBuckets,
      registers,
    });
    this.tickOverruns = new Counter({ name: "realm_tick_overruns_total", help: "Ticks that took longer than TICK_MS", registers });
    this.tickSlotsSkipped = new Counter({
      name: "realm_tick_slots_skipped_total",
      help: "Slots of the tick grid that got no tick because the tick before (or the process) ran past them (TICK_PHASE=auto)",
      registers,
    });
    new Counter({
      name: "realm_messages_in_total",
      help: "Messages received from clients by event (both transports); names not in the protocol count as 'unknown'",
      labelNames: ["event"],
      registers,
      collect() {
        self.messagesIn.flush(this);
      },
    });
    new Counter({
      name: "realm_messages_out_total",
      help: "Messages sent to clients by event",
      labelNames: ["event"],
      registers,
      collect() {
        self.messagesOut.flush(this);
      },
    });
    this.floodDrops = new Counter({ name: "realm_flood_drops_total", help: "Client messages dropped for exceeding the per-connection rate", registers });
    this.rateLimitBlocks = new Counter({
      name: "realm_rate_limit_blocks_total",
      help: "Temporary blocks imposed (REST or authentication limit, message flood), by what was blocked: ip or account",
      labelNames: ["scope"],
      registers,
    });
    this.joins = new Counter({
      name: "realm_joins_total",
      help: "Players that joined the world, by transport (sdk, ws)",
      labelNames: ["transport"],
      registers,
    });
    this.joinRefusals = new Counter({
      name: "realm_join_refusals_total",
      help: "Refused joins and reconnections by transport and HTTP-style status code",
      labelNames: ["transport", "code"],
      registers,
    });
    this.trades = new Counter({
      name: "realm_trades_total",
      help: "Ended trades and trade requests by outcome: completed, or the cancel reason",
      labelNames: ["outcome"],
      registers,
    });
    this.settlementSeconds = new Histogram({
      name: "realm_trade_settlement_seconds",
      help: "Duration of the settlement transaction by result (ok or the failure code)",
      labelNames: ["result"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    });
    const pool = async () => self.sources.dbPool?.().catch(() => undefined);
    type Pool = NonNullable<Awaited<ReturnType<typeof pool>>>;
    const poolGauges: [name: string, help: string, read: (p: Pool) => number | undefined][] = [
      ["realm_db_pool_size", "Connections the database pool may open (1 on embedded PGlite)", (p) => p.size],
      ["realm_db_pool_in_use", "Database connections checked out of the pool (PostgreSQL only)", (p) => p.inUse],
      ["realm_db_pool_waiting", "Queries waiting for a free database connection (PostgreSQL only)", (p) => p.waiting],
    ];
    for (const [name, help, read] of poolGauges)
      new Gauge({
        name,
        help,
        registers,
        async collect() {
          const p = await pool();
          const v = p && read(p);
          if (v !== undefined) this.set(v);
        },
      });
    new Gauge({
      name: "realm_save_queue_depth",
      help: "Storage jobs (saves, item transactions, deaths, settlements) queued or running in the per-player queues",
      registers,
      collect() {
        const depth = self.sources.saveQueueDepth?.();
        if (depth !== undefined) this.set(depth);
      },
    });
    this.saveFailures = new Counter({
      name: "realm_save_failures_total",
      help: "Storage jobs of the per-player queues that failed (a failed batched progress save counts each of its players)",
      registers,
    });
    this.groundPilesDespawned = new Counter({
      name: "realm_ground_piles_despawned_total",
      help: "Ground piles that lived out GROUND_ITEM_LIFETIME_TICKS and vanished with their items",
      registers,
    });
    const gates: [name: string, help: string, read: (g: { inFlight: number; waiting: number }) => number][] = [
      ["realm_admission_in_flight", "Joins and character creations holding an admission slot, by gate (join, creation)", (g) => g.inFlight],
      ["realm_admission_waiting", "Joins and character creations waiting for an admission slot, by gate", (g) => g.waiting],
    ];
    for (const [name, help, read] of gates)
      new Gauge({
        name,
        help,
        labelNames: ["gate"],
        registers,
        collect() {
          for (const [gate, g] of Object.entries(self.sources.admission?.() ?? {})) this.set({ gate }, read(g));
        },
      });
  }

  /** Set the live sources read at scrape time. */
  watch(sources: MetricSources): void {
    this.sources = { ...this.sources, ...sources };
  }

  /** Record one tick that began at `started` (`tickStart()`) and ends now: its duration and the CPU time it used. */
  tick(started: TickStart): void {
    const seconds = (performance.now() - started.wall) / 1000;
    const cpu = process.cpuUsage(started.cpu);
    this.tickSeconds.observe(seconds);
    this.tickCpuSeconds.observe((cpu.user + cpu.system) / 1e6);
    if (seconds * 1000 > this.tickMs) this.tickOverruns.inc();
  }

  /** One message from a client (bounded labels: unknown names count as "unknown"). No allocation: see `EventCounts`. */
  messageIn(event: string): void {
    this.messagesIn.add(event);
  }

  /** One message to a client (names not in the protocol count as "other"). */
  messageOut(event: string): void {
    this.messagesOut.add(event);
  }

  /** The Prometheus text exposition. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}

/**
 * Serve `GET /metrics` on its own listener. Everything else is 404.
 * @returns the listening server and the URL of the metrics page.
 */
export async function serveMetrics(metrics: Metrics, host: string, port: number): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET" || path !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    metrics.text().then(
      (body) => res.writeHead(200, { "content-type": metrics.registry.contentType, "cache-control": "no-store" }).end(body),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics collection failed\n"),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const shownHost = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return { server, url: `http://${shownHost}:${addr.port}/metrics` };
}
