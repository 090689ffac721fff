/**
 * Process primitives shared by the load scripts, the chaos run and the tests that start servers:
 * the checkout's root, a free port, a fresh world directory, the settings every load server starts
 * with, and reading a child's output line by line.
 */
import type { ChildProcess } from "node:child_process";
import { cpSync, mkdtempSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** The checkout (package.json, src/, world/). */
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

/** A fresh world directory (under the system's temporary directory) holding a copy of the bundled manifests and nothing else. */
export function tempWorld(prefix = "world-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  cpSync(join(ROOT, "world/manifests"), join(dir, "manifests"), { recursive: true });
  return dir;
}

/**
 * The settings every server a load script starts runs with: development mode on `port`, `world`'s
 * manifests as they are (SKIP_MANIFESTS), rate limits off and the per-address socket cap lifted
 * (every bot connects from 127.0.0.1, so per-address limits would measure nothing), no Colyseus
 * playground (a development tool: production has none, and it sends every join a message more), log level warn;
 * nothing from this process's environment but PATH and HOME. `extra` settings win; undefined ones
 * are left out.
 */
export function loadServerEnv(port: number, world: string, extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: "development",
    PORT: String(port),
    WORLD: world,
    SKIP_MANIFESTS: "true",
    DISABLE_RATE_LIMIT: "true",
    MAX_SOCKETS_PER_ADDRESS: "100000",
    PLAYGROUND: "false",
    LOG_LEVEL: "warn",
  };
  for (const [k, v] of Object.entries(extra)) if (v !== undefined) env[k] = v;
  return env;
}

export const alive = (p: ChildProcess | undefined): p is ChildProcess => !!p && p.exitCode === null && p.signalCode === null;

/** Resolves once `proc` has exited (at once if it has). */
export function exited(proc: ChildProcess): Promise<void> {
  if (!alive(proc)) return Promise.resolve();
  return new Promise((r) => proc.once("exit", () => r()));
}

/** Every line of `proc`'s stdout and stderr (without its newline) to `onLine`. */
export function eachLine(proc: ChildProcess, onLine: (line: string) => void): void {
  let buf = "";
  const onData = (d: Buffer) => {
    buf += d.toString();
    let i: number;
    while ((i = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      onLine(line);
    }
  };
  proc.stdout?.on("data", onData);
  proc.stderr?.on("data", onData);
}

/** Every line of `proc`'s output to `onLine`; resolves with the first line matching `ready` (rejects on exit or after `ms`, with the last lines). */
export function readyLine(proc: ChildProcess, onLine: (l: string) => void, ready: RegExp, ms: number): Promise<string> {
  return new Promise((ok, fail) => {
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
    eachLine(proc, (line) => {
      onLine(line);
      tail.push(line);
      if (tail.length > 30) tail.shift();
      if (ready.test(line)) finish(undefined, line);
    });
    proc.once("exit", (code, signal) => finish(new Error(`exited (${code ?? signal}) before it was ready:\n${tail.join("\n")}`)));
  });
}

/**
 * The child processes a script started (servers, bot processes): all SIGKILLed when the script
 * exits or is interrupted (exit code 130), so nothing is left running after a failed run.
 */
export function childrenKilledOnExit(): { children: Set<ChildProcess>; killAll: () => void } {
  const children = new Set<ChildProcess>();
  const killAll = () => {
    for (const c of children) if (alive(c)) c.kill("SIGKILL");
  };
  process.on("exit", killAll);
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.on(sig, () => {
      killAll();
      process.exit(130);
    });
  return { children, killAll };
}
