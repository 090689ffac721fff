/**
 * A cluster of server processes for the chaos run (docs/chaos.md) and bench-cluster-seat.ts:
 * processes that can be stopped, resumed, killed and started again on the same port, the world
 * room each hosts (from the matchmaker's listings in Redis), and seat reservations through any of
 * them. The cluster tests use `worldRoomOf` and `matchmake` too (test/helpers/cluster.ts).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { rmSync } from "node:fs";
import { Redis } from "ioredis";
import { alive, exited, freePort, loadServerEnv, readyLine, ROOT, tempWorld } from "./processes.js";

/** What a server process of a cluster is told (the rest of its settings are the load settings, see `ServerProcess.start`). */
export interface ServerSpec {
  /** Its name in reports: p1, p2, p3. */
  name: string;
  /** The worlds it hosts (WORLDS; unset: the server's default). */
  worlds?: number[];
  env: Record<string, string | undefined>;
}

/**
 * One server process slot of a cluster (the real `src/main.ts` under tsx, on a shared Redis and
 * database as the spec's settings say): a fixed port and public address, started again after a
 * kill with a fresh world directory. Its output goes to `onLine` (the chaos run's log checks read it).
 */
export class ServerProcess {
  proc: ChildProcess | undefined;
  /** Colyseus process id of the current incarnation (from its `process id` line). */
  processId = "";
  /** Its Prometheus listener (METRICS_PORT=0 picks a port; read from its `metrics listening` line). */
  metricsUrl: string | undefined;
  stopped = false;
  private world = "";

  private constructor(
    readonly spec: ServerSpec,
    readonly port: number,
    private readonly onLine: (name: string, line: string) => void,
  ) {}

  static async create(spec: ServerSpec, onLine: (name: string, line: string) => void): Promise<ServerProcess> {
    return new ServerProcess(spec, await freePort(), onLine);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return alive(this.proc);
  }

  /** Start (again) and resolve once it listens. */
  async start(): Promise<void> {
    this.world = tempWorld("cluster-world-");
    const proc = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: ROOT,
      env: loadServerEnv(this.port, this.world, {
        LOG_LEVEL: "info",
        PUBLIC_WS_URL: `ws://127.0.0.1:${this.port}/ws`,
        WORLDS: this.spec.worlds?.join(","),
        METRICS_PORT: "0",
        ...this.spec.env,
      }),
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = proc;
    this.stopped = false;
    this.metricsUrl = undefined;
    const idLine = readyLine(
      proc,
      (l) => {
        if (l.includes('"msg":"metrics listening"')) this.metricsUrl = (JSON.parse(l) as { url: string }).url;
        this.onLine(this.spec.name, l);
      },
      /"msg":"process id"/,
      180_000,
    );
    const listening = readyLine(proc, () => undefined, /"msg":"listening"/, 180_000);
    // Awaited below; when the process exits early, the first line's error is the one reported.
    listening.catch(() => undefined);
    try {
      this.processId = (JSON.parse(await idLine) as { processId: string }).processId;
      await listening;
    } catch (e) {
      proc.kill("SIGKILL");
      await exited(proc);
      throw e;
    }
  }

  /** SIGSTOP (a stall: a long GC pause or a paused VM). */
  pause(): void {
    if (alive(this.proc) && !this.stopped) {
      this.proc.kill("SIGSTOP");
      this.stopped = true;
    }
  }

  /** SIGCONT after `pause`. */
  resume(): void {
    if (alive(this.proc) && this.stopped) this.proc.kill("SIGCONT");
    this.stopped = false;
  }

  /** SIGKILL and wait for the exit; the world directory goes. */
  async kill(): Promise<void> {
    const p = this.proc;
    if (alive(p)) {
      p.kill("SIGKILL");
      await exited(p);
    }
    this.stopped = false;
    rmSync(this.world, { recursive: true, force: true });
  }

  /** Graceful stop (SIGTERM: the server saves everyone); SIGKILL after `ms`. Resolves with whether it exited by itself. */
  async terminate(ms = 60_000): Promise<boolean> {
    const p = this.proc;
    if (!alive(p)) return true;
    this.resume();
    p.kill("SIGTERM");
    const clean = await Promise.race([exited(p).then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
    if (!clean) await this.kill();
    rmSync(this.world, { recursive: true, force: true });
    return clean;
  }
}

/** The world room's id in a process, from the room listings in Redis (what every matchmaker reads). */
export async function worldRoomOf(redisUrl: string, processId: string): Promise<string | undefined> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    const all = await redis.hgetall("roomcaches");
    for (const raw of Object.values(all)) {
      const room = JSON.parse(raw) as { name: string; roomId: string; processId: string };
      if (room.name === "world" && room.processId === processId) return room.roomId;
    }
    return undefined;
  } finally {
    redis.disconnect();
  }
}

/** A seat reservation as the matchmaker answers it. */
export interface Seat {
  name: string;
  sessionId: string;
  roomId: string;
  processId: string;
  publicAddress?: string;
}

/** `POST <base>/ws/matchmake/<verb>/<target>` with a bearer token; the status and JSON body. */
export async function matchmake(base: string, verb: string, target: string, token: string, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}/ws/matchmake/${verb}/${target}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, ...headers },
    body: "{}",
  });
  return { status: res.status, body: (await res.json().catch(() => undefined)) as Seat & { code?: unknown; error?: string } };
}
