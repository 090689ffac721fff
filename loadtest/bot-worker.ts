/**
 * A benchmark worker process: hosts a share of the bots (`bot.ts`) and answers the coordinator
 * (`bench-world.ts`) over IPC. Commands: `join` (join bots, then send the ones away from the spawn
 * home), `go` (start wandering and probing), `report` (counters since the last report, per group),
 * `stop` (leave and exit).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { loadContent, type GameContent } from "../src/content/load.js";
import { retryAfterOf } from "../src/net/admission.js";
import { BenchBot, randomTileNear, standingAt, type BotTarget, type JoinOutcome, type Tile } from "./bot.js";
import { seededRng } from "./lib/random.js";
import { ProbePair } from "./probe-pair.js";

export type Role = "wander" | "idle" | "observer" | "mover";

export interface BotSpec {
  n: number;
  home: Tile;
  group: string;
  role: Role;
  /** Server token (game). */
  token?: string;
  /** Probe pair number (observer and mover of a pair are in the same worker). */
  pair?: number;
}

export interface JoinCommand {
  cmd: "join";
  target: BotTarget;
  manifests: string;
  bots: BotSpec[];
  /** Concurrent joins in this worker (the burst: all of them). */
  concurrency: number;
  joinTimeoutMs: number;
  /** No join starts after this time (epoch ms): the bots left are counted as `deadline`. */
  deadline: number;
  /** Decode the state in every bot, not only in observers. */
  decodeAll: boolean;
  /**
   * A bot told to retry (503 `SERVER_BUSY`) joins again after the `retry in N s` it was given plus up
   * to as much again of random jitter, as docs/operations.md "When the server is busy" asks of clients, until the
   * deadline; otherwise that refusal is its outcome.
   */
  retryBusy?: boolean;
  /** Where new characters appear (bots whose home differs are teleported there, game only). */
  spawn: Tile;
}

export interface GoCommand {
  cmd: "go";
  roam: number;
  /** Each move within `roam` tiles of where the bot stands (reckoned, `standingAt`) instead of its home (bench:world --wander). */
  drift?: boolean;
  /** The server's tick (to reckon where a drifting bot stands). */
  tickMs?: number;
  moveEveryMs: number;
  chatChance: number;
}

export type Command = JoinCommand | GoCommand | { cmd: "report" } | { cmd: "stop" };

export interface GroupReport {
  bots: number;
  connected: number;
  bytes: number;
  frames: number;
  moves: number;
  latencies: number[];
  lost: number;
  unseen: number;
  /** Players each connected observer's state holds at the report (what one client sees). */
  seen: number[];
  /** Bots whose room closed, by close code. */
  closed: Record<string, number>;
}

export interface JoinReport {
  type: "joined";
  outcomes: Record<string, number>;
  kinds: Record<JoinOutcome["kind"], number>;
  /** Join latencies (ms) of the bots that joined. */
  latencies: number[];
  firstStart: number;
  lastEnd: number;
  lastJoined: number;
  /** Bots that joined but could not be sent home (game: /admin, /tp), or never got their id. */
  placeFailed: number;
  errors: string[];
  /** Busy refusals that were retried (`retryBusy`), and the bots that joined after at least one. */
  retries: number;
  joinedAfterRetry: number;
}

export type WorkerMessage =
  JoinReport | { type: "report"; elapsedMs: number; cpuMs: number; groups: Record<string, GroupReport>; loopDelayP99Ms: number } | { type: "stopped" };

const bots: { bot: BenchBot; spec: BotSpec }[] = [];
const pairs: { pair: ProbePair; group: string }[] = [];
let content: GameContent | undefined;
let since = performance.now();
let cpuSince = process.cpuUsage();
const eld = monitorEventLoopDelay({ resolution: 10 });
eld.enable();

const send = (m: WorkerMessage) => process.send?.(m);

async function join(c: JoinCommand) {
  content = await loadContent(c.manifests);
  const outcomes: Record<string, number> = {};
  const kinds: JoinReport["kinds"] = { joined: 0, busy: 0, refused: 0, failed: 0 };
  const errors = new Map<string, number>();
  const latencies: number[] = [];
  let firstStart = Infinity;
  let lastEnd = 0;
  let lastJoined = 0;
  let placeFailed = 0;
  let retries = 0;
  let joinedAfterRetry = 0;
  const joined: { bot: BenchBot; spec: BotSpec }[] = [];
  // A probe pair joins as one unit, its mover first: a client's first view is taken when it joins,
  // and must find the mover already in the world.
  const units: BotSpec[][] = [];
  const pairUnits = new Map<number, BotSpec[]>();
  for (const spec of c.bots) {
    if (spec.pair === undefined) units.push([spec]);
    else if (pairUnits.has(spec.pair)) pairUnits.get(spec.pair)!.push(spec);
    else {
      const u = [spec];
      pairUnits.set(spec.pair, u);
      units.push(u);
    }
  }
  for (const u of pairUnits.values()) u.sort((a, b) => (a.role === "mover" ? -1 : b.role === "mover" ? 1 : 0));
  const joinOne = async (spec: BotSpec) => {
    if (Date.now() > c.deadline) {
      outcomes.deadline = (outcomes.deadline ?? 0) + 1;
      kinds.failed++;
      return;
    }
    const bot = new BenchBot(c.target, spec.home, spec.token, c.decodeAll || spec.role === "observer");
    let o = await bot.join(c.joinTimeoutMs);
    let tries = 0;
    while (c.retryBusy && o.kind === "busy" && Date.now() < c.deadline) {
      const seconds = retryAfterOf(o.message ?? "") ?? 1;
      await sleep(seconds * 1000 * (1 + Math.random()));
      tries++;
      const again = await bot.join(c.joinTimeoutMs);
      o = { ...again, startedAt: o.startedAt };
    }
    retries += tries;
    if (tries > 0 && o.kind === "joined") joinedAfterRetry++;
    outcomes[o.detail] = (outcomes[o.detail] ?? 0) + 1;
    kinds[o.kind]++;
    firstStart = Math.min(firstStart, o.startedAt);
    lastEnd = Math.max(lastEnd, o.endedAt);
    if (o.kind === "joined") {
      latencies.push(o.endedAt - o.startedAt);
      lastJoined = Math.max(lastJoined, o.endedAt);
      joined.push({ bot, spec });
    } else if (o.message) errors.set(`${o.detail}: ${o.message}`, (errors.get(`${o.detail}: ${o.message}`) ?? 0) + 1);
  };
  const runOne = async () => {
    for (let unit = units.shift(); unit; unit = units.shift()) for (const spec of unit) await joinOne(spec);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(c.concurrency, units.length)) }, runOne));
  // Not part of the join time: learn the id, then (game) go home when home is not the spawn.
  const place = [...joined];
  const placeOne = async () => {
    for (let j = place.shift(); j; j = place.shift()) {
      try {
        if (j.spec.role === "observer" || j.spec.role === "mover") await j.bot.whenIdentified(30_000);
        if (j.spec.home.x !== c.spawn.x || j.spec.home.z !== c.spawn.z) await j.bot.goHome(30_000);
      } catch (e) {
        placeFailed++;
        const key = `place: ${(e as Error).message}`;
        errors.set(key, (errors.get(key) ?? 0) + 1);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(32, Math.max(1, joined.length)) }, placeOne));
  bots.push(...joined);
  // Probe pairs: both ends joined.
  const byPair = new Map<number, { observer?: BenchBot; mover?: BenchBot; spec?: BotSpec }>();
  for (const { bot, spec } of joined) {
    if (spec.pair === undefined) continue;
    const p = byPair.get(spec.pair) ?? {};
    if (spec.role === "observer") p.observer = bot;
    if (spec.role === "mover") p.mover = bot;
    p.spec = spec;
    byPair.set(spec.pair, p);
  }
  for (const [n, p] of byPair)
    if (p.observer && p.mover && p.spec)
      pairs.push({ pair: new ProbePair(p.observer, p.mover, p.spec.home, content, seededRng(1_000_003 + n)), group: p.spec.group });
  send({
    type: "joined",
    outcomes,
    kinds,
    latencies,
    firstStart: Number.isFinite(firstStart) ? firstStart : 0,
    lastEnd,
    lastJoined,
    placeFailed,
    retries,
    joinedAfterRetry,
    errors: [...errors].slice(0, 8).map(([k, n]) => `${n} × ${k}`),
  });
}

function go(c: GoCommand) {
  for (const { bot, spec } of bots) {
    if (spec.role !== "wander") continue;
    const rng = seededRng(spec.n + 1);
    let at: Tile | undefined;
    // Drifting: where the bot stood at its last move, and when.
    let from = spec.home;
    let movedAt = 0;
    bot.every(c.moveEveryMs, rng, () => {
      const now = Date.now();
      const centre = c.drift && at ? standingAt(from, at, now - movedAt, c.tickMs ?? 600) : spec.home;
      const to = randomTileNear(centre, c.roam, content!, rng, at);
      if (to) {
        bot.move(to);
        from = centre;
        movedAt = now;
        at = to;
      }
      if (c.chatChance > 0 && rng() < c.chatChance) bot.chat(`hello from bot ${spec.n}`);
    });
  }
  for (const { pair } of pairs) pair.start(c.moveEveryMs);
}

function report() {
  const groups: Record<string, GroupReport> = {};
  const g = (name: string) =>
    (groups[name] ??= { bots: 0, connected: 0, bytes: 0, frames: 0, moves: 0, latencies: [], lost: 0, unseen: 0, seen: [], closed: {} });
  for (const { bot, spec } of bots) {
    const r = g(spec.group);
    const c = bot.takeCounters();
    r.bots++;
    if (bot.closedCode === undefined) r.connected++;
    else r.closed[bot.closedCode] = (r.closed[bot.closedCode] ?? 0) + 1;
    r.bytes += c.bytes;
    r.frames += c.frames;
    r.moves += c.moves;
  }
  for (const { pair, group } of pairs) {
    const r = g(group);
    const l = pair.takeLatencies();
    for (const ms of l.latencies) r.latencies.push(Math.round(ms * 10) / 10);
    r.lost += l.lost;
    r.unseen += l.unseen;
    const size = pair.observer.closedCode === undefined ? pair.observer.room?.state?.players?.size : undefined;
    if (typeof size === "number") r.seen.push(size);
  }
  const now = performance.now();
  const cpu = process.cpuUsage(cpuSince);
  send({ type: "report", elapsedMs: now - since, cpuMs: (cpu.user + cpu.system) / 1000, groups, loopDelayP99Ms: Math.max(0, eld.percentile(99) / 1e6 - 10) });
  since = now;
  cpuSince = process.cpuUsage();
  eld.reset();
}

process.on("message", (c: Command) => {
  if (c.cmd === "join") void join(c);
  else if (c.cmd === "go") go(c);
  else if (c.cmd === "report") report();
  else if (c.cmd === "stop") {
    for (const { bot } of bots) bot.stop();
    void Promise.all(bots.map(({ bot }) => bot.leave())).finally(() => {
      send({ type: "stopped" });
      process.exit(0);
    });
  }
});
// The coordinator going away ends the worker too.
process.on("disconnect", () => process.exit(0));
