/**
 * The coordinator's side of the bot processes, for load scripts that drive `bot-worker.ts`
 * (`bench-world.ts`, `bench-scale.ts`): a worker process spoken to over IPC, bot specs shared between workers, join
 * reports merged, characters made up front over REST, and where bots live on the map (safe homes
 * out of reach of aggressive NPCs, hotspots). `bench-world.ts` and `bench-scale.ts` both use them.
 */
import { fork, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import type { GameContent } from "../src/content/load.js";
import type { Tile } from "./bot.js";
import type { BotSpec, Command, JoinReport, WorkerMessage } from "./bot-worker.js";
import { ROOT } from "./lib/processes.js";
import { shuffle } from "./lib/random.js";
import { pct, round1 } from "./lib/report.js";

/** One bot process (`bot-worker.ts`); `children` learns it at once so the script can kill it on exit. */
export class BotWorker {
  readonly proc: ChildProcess;
  private waiting: { type: WorkerMessage["type"]; resolve: (m: WorkerMessage) => void }[] = [];
  constructor(children: Set<ChildProcess>) {
    this.proc = fork(join(ROOT, "loadtest/bot-worker.ts"), [], { cwd: ROOT, execArgv: ["--import", "tsx"], stdio: ["ignore", "inherit", "inherit", "ipc"] });
    children.add(this.proc);
    this.proc.on("message", (m: WorkerMessage) => {
      const i = this.waiting.findIndex((w) => w.type === m.type);
      if (i >= 0) this.waiting.splice(i, 1)[0]!.resolve(m);
    });
  }
  send(c: Command) {
    this.proc.send(c);
  }
  /** Send a command and wait for the first answer of `type` (answers of one type come in order). */
  ask<T extends WorkerMessage["type"]>(c: Command, type: T, timeoutMs: number): Promise<Extract<WorkerMessage, { type: T }>> {
    return new Promise((res, rej) => {
      const t = setTimeout(() => rej(new Error(`worker did not answer ${c.cmd} within ${timeoutMs} ms`)), timeoutMs);
      this.waiting.push({
        type,
        resolve: (m) => {
          clearTimeout(t);
          res(m as Extract<WorkerMessage, { type: T }>);
        },
      });
      this.send(c);
    });
  }
  async stop() {
    await this.ask({ cmd: "stop" }, "stopped", 30_000).catch(() => this.proc.kill("SIGKILL"));
  }
}

/** Split specs over workers: a probe pair stays in one worker, the other bots go round-robin. */
export function share(list: BotSpec[], workers: number): BotSpec[][] {
  const out = Array.from({ length: workers }, () => [] as BotSpec[]);
  let i = 0;
  for (const s of list) out[s.pair !== undefined ? s.pair % workers : i++ % workers]!.push(s);
  return out;
}

export interface JoinSummary {
  attempted: number;
  joined: number;
  kinds: JoinReport["kinds"];
  /** Outcomes by finer kind (`joined`, `503`, `mm-524`, `timeout`…). */
  outcomes: Record<string, number>;
  /** From the first join request to the last successful join (s). */
  allSeconds: number;
  p50Ms: number;
  p99Ms: number;
  placeFailed: number;
  errors: string[];
  /** Busy refusals retried (`--burst-retry`), and the bots that joined after at least one. */
  retries: number;
  joinedAfterRetry: number;
}

export function mergeJoins(reports: JoinReport[], attempted: number): JoinSummary {
  const kinds: JoinReport["kinds"] = { joined: 0, busy: 0, refused: 0, failed: 0 };
  const outcomes: Record<string, number> = {};
  for (const r of reports) {
    for (const k of Object.keys(kinds) as (keyof typeof kinds)[]) kinds[k] += r.kinds[k];
    for (const [k, v] of Object.entries(r.outcomes)) outcomes[k] = (outcomes[k] ?? 0) + v;
  }
  const lat = reports.flatMap((r) => r.latencies).sort((a, b) => a - b);
  const starts = reports.filter((r) => r.firstStart > 0).map((r) => r.firstStart);
  const first = starts.length ? Math.min(...starts) : 0;
  const last = Math.max(0, ...reports.map((r) => r.lastJoined));
  return {
    attempted,
    joined: kinds.joined,
    kinds,
    outcomes,
    allSeconds: kinds.joined ? round1((last - first) / 1000) : NaN,
    p50Ms: Math.round(pct(lat, 50)),
    p99Ms: Math.round(pct(lat, 99)),
    placeFailed: reports.reduce((n, r) => n + r.placeFailed, 0),
    errors: reports.flatMap((r) => r.errors).slice(0, 8),
    retries: reports.reduce((n, r) => n + r.retries, 0),
    joinedAfterRetry: reports.reduce((n, r) => n + r.joinedAfterRetry, 0),
  };
}

/** Make one character per token over REST (`POST /api/character`), `concurrency` at a time; not timed as joins. */
export async function prepareCharacters(url: string, tokens: string[], concurrency: number): Promise<{ ms: number; failed: number; errors: string[] }> {
  const t0 = Date.now();
  const queue = [...tokens];
  let failed = 0;
  const errors: string[] = [];
  const one = async () => {
    for (let token = queue.shift(); token; token = queue.shift()) {
      const r = await fetch(`${url}/api/character`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{}",
        signal: AbortSignal.timeout(60_000),
      }).then(
        async (res) => ({ ok: res.status === 201, text: res.status === 201 ? "" : `${res.status} ${(await res.text()).slice(0, 160)}` }),
        (e) => ({ ok: false, text: String((e as Error).message) }),
      );
      if (!r.ok) {
        failed++;
        if (errors.length < 3) errors.push(r.text);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, one));
  return { ms: Date.now() - t0, failed, errors };
}

// ------------------------------------------------------------------ placement

/** Tiles where a bot can wander `roam` tiles around without meeting an aggressive NPC or a wall (3 tiles apart). */
export function safeHomes(content: GameContent, roam: number, keep: (t: Tile) => boolean = () => true): Tile[] {
  const b = content.worldBounds;
  const danger = [...content.npcs.values()]
    .filter((d) => d.aggressive)
    .flatMap((d) => d.spawns.map((s) => ({ ...s, r: d.wanderRadius + d.aggroRadius + roam + 6 })));
  const out: Tile[] = [];
  for (let x = b.minX + roam; x <= b.maxX - roam; x += 3)
    for (let z = b.minZ + roam; z <= b.maxZ - roam; z += 3) {
      const t = { x, z };
      if (content.isBlocked(x, z) || !keep(t)) continue;
      if (danger.some((d) => Math.max(Math.abs(d.x - x), Math.abs(d.z - z)) <= d.r)) continue;
      out.push(t);
    }
  return out;
}

const dist = (a: Tile, b: Tile) => Math.max(Math.abs(a.x - b.x), Math.abs(a.z - b.z));

/** Places players gather: the two banks, then points in the wilds (each moved to the nearest safe home). */
const HOTSPOT_ANCHORS: Tile[] = [
  { x: 6, z: 7 },
  { x: 38, z: 5 },
  { x: -60, z: 20 },
  { x: 40, z: -60 },
  { x: -40, z: -60 },
  { x: 80, z: 30 },
  { x: -90, z: -20 },
  { x: 0, z: 45 },
];

/** The first `count` hotspots, each on the safe home nearest its anchor. */
export function hotspots(homes: Tile[], count: number): Tile[] {
  return HOTSPOT_ANCHORS.slice(0, count).map((a) => homes.reduce((best, t) => (dist(t, a) < dist(best, a) ? t : best), homes[0]!));
}

export interface Placement {
  /** Home of the i-th bot; every prefix keeps about the hotspot share. */
  homes: Tile[];
  /** The hotspots (none in a crowd). */
  hot: Tile[];
  /** Where probe pair p stands. */
  pairSpot: (p: number) => Tile;
  description: string;
}

/**
 * Homes for up to `max` bots of one world. Crowd: everyone at the spawn. Spread: `share` of them in
 * `count` hotspots, the rest over every safe home of the map; probe pairs alternately in a hotspot
 * and out in the open.
 */
export function placement(
  scenario: "crowd" | "spread",
  max: number,
  content: GameContent,
  rng: () => number,
  o: { roam: number; hotspots: number; hotspotShare: number },
): Placement {
  const spawn = content.spawn;
  if (scenario === "crowd")
    return { homes: Array.from({ length: max }, () => spawn), hot: [], pairSpot: () => spawn, description: `everyone at the spawn (${spawn.x}, ${spawn.z})` };
  const all = safeHomes(content, o.roam);
  const hot = o.hotspots ? hotspots(all, o.hotspots) : [];
  const inHot = hot.length ? Math.round(max * o.hotspotShare) : 0;
  const wide = shuffle(all, rng);
  const homes = shuffle(
    Array.from({ length: max }, (_, i) => (i < inHot ? hot[i % hot.length]! : wide[(i - inHot) % wide.length]!)),
    rng,
  );
  const open = shuffle(all, rng);
  return {
    homes,
    hot,
    pairSpot: (p) => (p % 2 === 0 && hot.length ? hot[(p / 2) % hot.length]! : open[p % open.length]!),
    description: `${Math.round(o.hotspotShare * 100)} % of the bots in ${hot.length} hotspots (${hot.map((t) => `${t.x},${t.z}`).join("; ")}), the rest over ${all.length} homes across the map`,
  };
}
