/**
 * Command-line helpers shared by the load scripts: option checks that stop the script with exit code
 * 2 and a message naming the script, a sleep, a timestamped log line, and whether a TCP service
 * answers (a database given with `--db`).
 */
import { connect } from "node:net";

export interface Cli {
  /** Print `<script>: message` and exit with code 2. */
  fail(message: string): never;
  /** `v` as an integer from `min` to `max` (else `fail`s naming the option). */
  int(v: string | undefined, min: number, max: number, name: string): number;
  /** `v` as a number from `min` to `max` (fractions allowed). */
  num(v: string | undefined, min: number, max: number, name: string): number;
  /** One of `choices` (else `fail`s). */
  oneOf<T extends string>(v: string | undefined, choices: readonly T[], name: string): T;
}

/** The option checks of the script called `script` (as it names itself in messages, e.g. "bench:world"). */
export function cli(script: string): Cli {
  const fail = (message: string): never => {
    console.error(`${script}: ${message}`);
    process.exit(2);
  };
  return {
    fail,
    int(v, min, max, name) {
      const n = Number(v);
      if (v === undefined || v === "" || !Number.isInteger(n) || n < min || n > max) fail(`${name} must be an integer from ${min} to ${max}`);
      return n;
    },
    num(v, min, max, name) {
      const n = Number(v);
      if (v === undefined || v === "" || !(n >= min && n <= max)) fail(`${name} must be from ${min} to ${max}`);
      return n;
    },
    oneOf(v, choices, name) {
      if (!choices.includes(v as never)) fail(`${name} must be ${choices.map((c) => `"${c}"`).join(" or ")}, not ${JSON.stringify(v)}`);
      return v as (typeof choices)[number];
    },
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Reject when `p` takes longer than `ms`. */
export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(t));
}

/** A line on stdout behind the time of day (HH:MM:SS, UTC). */
export const log = (s: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${s}`);

/** Whether something accepts a TCP connection on host:port within `ms`. */
export function reachable(host: string, port: number, ms = 1_000): Promise<boolean> {
  return new Promise((res) => {
    const sock = connect({ host, port });
    const done = (ok: boolean) => {
      sock.destroy();
      res(ok);
    };
    sock.setTimeout(ms, () => done(false));
    sock.once("connect", () => done(true));
    sock.once("error", () => done(false));
  });
}

/** A `--db postgres://…` URL checked to answer (else `fail`s), with a label for the report. */
export async function postgresTarget(url: string, c: Cli): Promise<{ url: string; label: string }> {
  const u = new URL(url);
  const port = Number(u.port || 5432);
  if (!(await reachable(u.hostname, port))) c.fail(`--db: nothing answers on ${u.hostname}:${port}`);
  return { url, label: `PostgreSQL ${u.hostname}:${port}${u.pathname}` };
}
