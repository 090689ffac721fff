/**
 * The fault injector of the chaos run (docs/chaos.md "What it runs"). Every few seconds, at random:
 *
 * - `stall`: SIGSTOP a server process for longer than its lease lasts, then SIGCONT;
 * - `kill`: SIGKILL a server process, then start it again on the same port;
 * - `redis`: kill the run's redis-server and start it again (empty);
 * - `pg`: terminate every connection to the run's database (`pg_terminate_backend`).
 *
 * At most one server process is stalled or down at a time, so the bots always have somewhere to go.
 */
import { terminateConnections } from "./database.js";
import type { ServerProcess } from "../lib/cluster.js";
import type { OwnRedis } from "../lib/redis.js";
import type { Rng } from "../lib/random.js";
import { sleep } from "../lib/cli.js";

export const FAULT_KINDS = ["stall", "kill", "redis", "pg"] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];
const WEIGHTS: Record<FaultKind, number> = { stall: 3, kill: 2, redis: 1, pg: 2 };

export interface FaultTargets {
  servers: ServerProcess[];
  redis: OwnRedis;
  /** PostgreSQL server URL (any database) and the run's database name. */
  pgServerUrl: string;
  database: string;
  leaseTtlSeconds: number;
}

export interface FaultEvent {
  at: number;
  kind: FaultKind;
  target: string;
  detail?: string;
}

/** Start a server process, again while it fails (it refuses to start while Redis is down). */
async function startWithRetries(s: ServerProcess, attempts = 6): Promise<void> {
  for (let i = 1; ; i++) {
    try {
      return await s.start();
    } catch (e) {
      if (i >= attempts) throw e;
      await sleep(2_000);
    }
  }
}

export class FaultInjector {
  readonly events: FaultEvent[] = [];
  /** Faults that went wrong in the injector itself (a restart that failed...). */
  readonly errors: string[] = [];
  private serverFault: Promise<void> | undefined;
  private redisFault: Promise<void> | undefined;
  private readonly tasks = new Set<Promise<void>>();

  constructor(
    private readonly t: FaultTargets,
    private readonly rng: Rng,
    private readonly gapMs: [number, number],
  ) {}

  count(kind: FaultKind): number {
    return this.events.filter((e) => e.kind === kind).length;
  }

  /** Inject faults until `untilMs`, then undo every one still in force (resume, restart) and wait for that. */
  async run(untilMs: number): Promise<void> {
    for (;;) {
      await sleep(this.rng.int(this.gapMs[0], this.gapMs[1]));
      if (Date.now() >= untilMs) break;
      const kinds = FAULT_KINDS.filter((k) => ((k === "stall" || k === "kill") && !this.serverFault) || (k === "redis" && !this.redisFault) || k === "pg");
      // Weighted toward the process faults, which the duplications came from.
      const kind = this.rng.pick(kinds.flatMap((k) => Array<FaultKind>(WEIGHTS[k]).fill(k)))!;
      this.track(this.inject(kind));
    }
    await Promise.all([...this.tasks]);
    await this.restore();
  }

  private track(p: Promise<void>) {
    const t = p.catch((e: unknown) => void this.errors.push((e as Error).message.split("\n")[0]!)).finally(() => this.tasks.delete(t));
    this.tasks.add(t);
  }

  private inject(kind: FaultKind): Promise<void> {
    if (kind === "pg") {
      return terminateConnections(this.t.pgServerUrl, this.t.database).then((n) => this.note(kind, "postgresql", `${n} connections`));
    }
    if (kind === "redis") {
      const f = (this.redisFault = (async () => {
        this.note(kind, "redis");
        await this.t.redis.stop();
        await sleep(this.rng.int(500, 3_000));
        await this.t.redis.start();
      })().finally(() => (this.redisFault = undefined)));
      return f;
    }
    const s = this.rng.pick(this.t.servers.filter((x) => x.running))!;
    const f = (this.serverFault = (async () => {
      if (kind === "stall") {
        const ms = this.t.leaseTtlSeconds * 1000 + this.rng.int(2_000, 5_000);
        this.note(kind, s.spec.name, `${ms} ms`);
        s.pause();
        await sleep(ms);
        s.resume();
      } else {
        this.note(kind, s.spec.name);
        await s.kill();
        await sleep(this.rng.int(500, 2_000));
        await startWithRetries(s);
      }
    })().finally(() => (this.serverFault = undefined)));
    return f;
  }

  private note(kind: FaultKind, target: string, detail?: string) {
    this.events.push({ at: Date.now(), kind, target, detail });
  }

  /** Everything up again: every process resumed or started, Redis running. */
  async restore(): Promise<void> {
    if (!this.t.redis.running) await this.t.redis.start();
    for (const s of this.t.servers) {
      s.resume();
      if (!s.running) await startWithRetries(s);
    }
  }
}
