/**
 * The soak's database (dropped and made again: its name must contain "soak") and its server: the
 * compiled server with production flags, its whole log kept in the run's world directory, error
 * lines counted, RSS read from /proc.
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, readFileSync } from "node:fs";
import { join } from "node:path";
import { log } from "../lib/cli.js";
import { PROD_NODE_OPTIONS, startLoadServer, type LoadServer } from "../lib/targets.js";
import { LOAD_SECRETS } from "../lib/tokens.js";
import { args } from "./options.js";

export function prepareDatabase(url: string) {
  const u = new URL(url);
  const name = decodeURIComponent(u.pathname.slice(1));
  if (!/soak/i.test(name) || !/^[A-Za-z0-9_]+$/.test(name)) throw new Error(`--db: the database is dropped, so its name must contain "soak" (got "${name}")`);
  u.pathname = "/postgres";
  for (const q of [`drop database if exists "${name}" with (force)`, `create database "${name}"`]) {
    const r = spawnSync("psql", [u.toString(), "-v", "ON_ERROR_STOP=1", "-qc", q], { encoding: "utf8", timeout: 60_000 });
    if (r.status !== 0) throw new Error(`psql ${q}: ${r.stderr}`);
  }
}

export interface ServerRun extends LoadServer {
  /** Lines matching "uncaught", "unhandled" or at pino level error/fatal (first 50). */
  bad: string[];
  badCount: number;
  rss: { t: number; rss: number }[];
}

/** A pino line at level error (50) or fatal (60), or any line naming an uncaught exception or unhandled rejection. */
export function isBadLine(line: string): boolean {
  if (/uncaught|unhandled/i.test(line)) return true;
  const m = /"level":\s*(\d+)/.exec(line);
  return m !== null && Number(m[1]) >= 50;
}

export async function startServer(world: string, databaseUrl: string): Promise<ServerRun> {
  // Filled in by the output handler during the whole run; the process fields are added once it is up.
  const run = { bad: [] as string[], badCount: 0, rss: [] } as Omit<ServerRun, keyof LoadServer>;
  // The whole server log is kept in the run's world directory, for reading after a failure.
  const logFile = createWriteStream(join(world, "server.log"));
  log(`server log: ${join(world, "server.log")}`);
  const server = await startLoadServer({
    world,
    nodeArgs: [...PROD_NODE_OPTIONS, "dist/src/main.js"],
    env: { DATABASE_URL: databaseUrl, ...LOAD_SECRETS, SAVE_INTERVAL: args["save-interval"] },
    onLine: (line) => {
      logFile.write(`${line}\n`);
      if (isBadLine(line)) {
        run.badCount++;
        if (run.bad.length < 50) run.bad.push(line.slice(0, 2_000));
      }
    },
  });
  return Object.assign(run, server);
}

export function rssOf(pid: number): number | undefined {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
