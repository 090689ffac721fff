/**
 * The chaos run's processes (docs/chaos.md): server processes (`src/main.ts` under tsx, the way the
 * cluster tests start them) that can be stopped, resumed, killed and started again on the same port,
 * and a redis-server of the run's own. Nothing here imports test/.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "../..");

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const s = createServer();
    s.once("error", fail);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => ok(port));
    });
  });
}

const alive = (p: ChildProcess | undefined): p is ChildProcess => !!p && p.exitCode === null && p.signalCode === null;

/** Resolves once `proc` has exited (at once if it has). */
function exited(proc: ChildProcess): Promise<void> {
  if (!alive(proc)) return Promise.resolve();
  return new Promise((r) => proc.once("exit", () => r()));
}

/** Every line of `proc`'s output to `onLine`; resolves with the first line matching `ready` (rejects on exit or after `ms`). */
function watch(proc: ChildProcess, onLine: (l: string) => void, ready: RegExp, ms: number): Promise<string> {
  return new Promise((ok, fail) => {
    let buf = "";
    let done = false;
    const tail: string[] = [];
    const timer = setTimeout(() => finish(new Error(`not ready after ${ms / 1000} s:\n${tail.join("\n")}`)), ms);
    const finish = (e?: Error, line?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (e) fail(e);
      else ok(line!);
    };
    const onData = (d: Buffer) => {
      buf += d.toString();
      let i: number;
      while ((i = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        onLine(line);
        tail.push(line);
        if (tail.length > 30) tail.shift();
        if (ready.test(line)) finish(undefined, line);
      }
    };
    proc.stdout!.on("data", onData);
    proc.stderr!.on("data", onData);
    proc.once("exit", (code, signal) => finish(new Error(`exited (${code ?? signal}) before it was ready:\n${tail.join("\n")}`)));
  });
}

/** What a server process of the run is told (the rest of its settings are the run's, see `ServerProcess.start`). */
export interface ServerSpec {
  /** 1-based name in the report: p1, p2, p3. */
  name: string;
  worlds: number[];
  env: Record<string, string>;
}

/**
 * One server process slot: a fixed port and public address, started again after a kill with a
 * fresh world directory. Its output goes to `onLine` (the log checks read it).
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
    this.world = mkdtempSync(join(tmpdir(), "chaos-world-"));
    cpSync(join(ROOT, "world/manifests"), join(this.world, "manifests"), { recursive: true });
    const proc = spawn(process.execPath, ["--import", "tsx", "src/main.ts"], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH,
        HOME: process.env.HOME,
        NODE_ENV: "development",
        PORT: String(this.port),
        WORLD: this.world,
        SKIP_MANIFESTS: "true",
        DISABLE_RATE_LIMIT: "true",
        MAX_SOCKETS_PER_ADDRESS: "100000",
        LOG_LEVEL: "info",
        PUBLIC_WS_URL: `ws://127.0.0.1:${this.port}/ws`,
        WORLDS: this.spec.worlds.join(","),
        METRICS_PORT: "0",
        ...this.spec.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = proc;
    this.stopped = false;
    this.metricsUrl = undefined;
    const idLine = watch(
      proc,
      (l) => {
        if (l.includes('"msg":"metrics listening"')) this.metricsUrl = (JSON.parse(l) as { url: string }).url;
        this.onLine(this.spec.name, l);
      },
      /"msg":"process id"/,
      180_000,
    );
    const listening = watch(proc, () => undefined, /"msg":"listening"/, 180_000);
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

/** A redis-server of the run's own, without persistence: killed and started again on the same port. */
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

  async start(): Promise<void> {
    const proc = spawn("redis-server", ["--port", String(this.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    this.proc = proc;
    await watch(proc, () => undefined, /Ready to accept connections/, 30_000);
  }

  /** SIGKILL (what a crash looks like to the clients); resolves once it exited. */
  async stop(): Promise<void> {
    const p = this.proc;
    if (!alive(p)) return;
    p.kill("SIGKILL");
    await exited(p);
  }
}
