/**
 * Redis for the load scripts, the chaos run and the tests: whether a server answers, emptying a
 * logical database, the server's pid (to sample its CPU), and a redis-server of a run's own.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Redis } from "ioredis";
import { alive, exited, freePort, readyLine } from "./processes.js";

/** True when the Redis at `url` answers PING within 2 s. */
export async function redisAnswers(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000, retryStrategy: () => null });
  r.on("error", () => undefined);
  try {
    await r.connect();
    return (await r.ping()) === "PONG";
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** Empty the logical database of `url`. */
export async function flushDb(url: string): Promise<void> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    await r.flushdb();
  } finally {
    r.disconnect();
  }
}

/** Pid of the Redis server (INFO server), to sample its CPU. */
export async function redisServerPid(url: string): Promise<number | undefined> {
  const r = new Redis(url, { maxRetriesPerRequest: 1, lazyConnect: true });
  r.on("error", () => undefined);
  try {
    await r.connect();
    const pid = Number(/process_id:(\d+)/.exec(await r.info("server"))?.[1]);
    return pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  } finally {
    r.disconnect();
  }
}

/** A redis-server of a run's own on a free port, without persistence: killed and started again on the same port. */
export class OwnRedis {
  private proc: ChildProcess | undefined;
  private constructor(readonly port: number) {}

  static async create(): Promise<OwnRedis> {
    return new OwnRedis(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}/0`;
  }

  get running(): boolean {
    return alive(this.proc);
  }

  /** Start the server; resolves once it says it accepts connections. */
  async start(): Promise<void> {
    const proc = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = proc;
    await readyLine(proc, () => undefined, /Ready to accept connections/, 30_000);
  }

  /** SIGKILL (what a crash looks like to the clients); resolves once it exited. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!alive(p)) return;
    p.kill("SIGKILL");
    await exited(p);
  }
}
