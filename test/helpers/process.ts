/** Run the real server entry point as a child process (under the same Node as the tests). */
import { spawn, type ChildProcess } from "node:child_process";

export { freePort, tempWorld } from "../../loadtest/lib/processes.js";

export interface Child {
  proc: ChildProcess;
  output: () => string;
  /** Resolves when a line of output matches. */
  waitFor(re: RegExp, timeoutMs?: number): Promise<string>;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Send `signal`; resolves with the exit. */
  stop(signal: NodeJS.Signals): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Start `src/main.ts` (or another entry script) with the given environment (nothing else from the
 * parent leaks in but PATH and HOME). Scripts run under tsx unless other Node.js flags are given
 * (`[]` runs compiled JavaScript as production does).
 */
export function startProcess(env: NodeJS.ProcessEnv, script = "src/main.ts", nodeArgs: string[] = ["--import", "tsx"]): Child {
  const proc = spawn(process.execPath, [...nodeArgs, script], {
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const onData = (d: Buffer) => {
    out += d.toString();
    for (const w of [...waiters]) {
      const m = out.split("\n").find((l) => w.re.test(l));
      if (m) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(m);
      }
    }
  };
  proc.stdout!.on("data", onData);
  proc.stderr!.on("data", onData);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  return {
    proc,
    output: () => out,
    exited,
    stop(signal) {
      proc.kill(signal);
      return exited;
    },
    waitFor(re, timeoutMs = 60_000) {
      const found = out.split("\n").find((l) => re.test(l));
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`timed out waiting for ${re}; output:\n${out}`)), timeoutMs);
        waiters.push({
          re,
          resolve: (l) => {
            clearTimeout(t);
            resolve(l);
          },
        });
        // `exited` never rejects.
        void exited.then(() => {
          clearTimeout(t);
          reject(new Error(`process exited before ${re}; output:\n${out}`));
        });
      });
    },
  };
}
