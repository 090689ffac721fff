/**
 * A benchmark worker process: hosts a share of the bots and answers the coordinator
 * (`bench-world.ts`) over IPC. Commands: `join` (connect bots), `go` (start wandering), `report`
 * (send counters since the last report, per group), `stop` (leave and exit).
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { loadContent } from "../src/content/load.js";
import { seededRng, WanderBot, type BotStats, type Tile } from "./bot.js";

export interface JoinCommand {
  cmd: "join";
  url: string;
  jwtSecret: string;
  adminCode: string;
  bots: { n: number; home: Tile; group: string }[];
  roam: number;
  moveEveryMs: number;
  chatChance: number;
  concurrency: number;
  manifests: string;
}
export type Command = JoinCommand | { cmd: "go" } | { cmd: "report" } | { cmd: "stop" };

export interface GroupReport {
  bots: number;
  connected: number;
  bytes: number;
  frames: number;
  moves: number;
  chats: number;
  lost: number;
  latencies: number[];
}
export type WorkerMessage =
  | { type: "joined"; ok: number; failed: number; errors: string[] }
  | { type: "report"; elapsedMs: number; cpuMs: number; groups: Record<string, GroupReport>; loopDelayP99Ms: number }
  | { type: "stopped" };

const bots: { bot: WanderBot; group: string }[] = [];
let since = performance.now();
let cpuSince = process.cpuUsage();
const eld = monitorEventLoopDelay({ resolution: 10 });
eld.enable();

const send = (m: WorkerMessage) => process.send?.(m);

async function join(c: JoinCommand) {
  const content = await loadContent(c.manifests);
  const errors: string[] = [];
  let ok = 0;
  const queue = [...c.bots];
  const runOne = async () => {
    for (let spec = queue.shift(); spec; spec = queue.shift()) {
      const bot = new WanderBot({
        url: c.url,
        jwtSecret: c.jwtSecret,
        adminCode: c.adminCode,
        home: spec.home,
        roam: c.roam,
        moveEveryMs: c.moveEveryMs,
        chatChance: c.chatChance,
        content,
        rng: seededRng(spec.n + 1),
        timeoutMs: 30_000,
      });
      try {
        await bot.connect();
        bots.push({ bot, group: spec.group });
        ok++;
      } catch (e) {
        if (errors.length < 5) errors.push((e as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, c.concurrency) }, runOne));
  send({ type: "joined", ok, failed: c.bots.length - ok, errors });
}

function report() {
  const groups: Record<string, GroupReport> = {};
  for (const { bot, group } of bots) {
    const g = (groups[group] ??= { bots: 0, connected: 0, bytes: 0, frames: 0, moves: 0, chats: 0, lost: 0, latencies: [] });
    const s: BotStats = bot.takeStats();
    g.bots++;
    if (bot.closedCode === undefined) g.connected++;
    g.bytes += s.bytes;
    g.frames += s.frames;
    g.moves += s.moves;
    g.chats += s.chats;
    g.lost += s.lost;
    for (const l of s.latencies) g.latencies.push(Math.round(l * 10) / 10);
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
  else if (c.cmd === "go") for (const { bot } of bots) bot.start();
  else if (c.cmd === "report") report();
  else if (c.cmd === "stop") {
    void Promise.all(bots.map(({ bot }) => bot.leave())).finally(() => {
      send({ type: "stopped" });
      process.exit(0);
    });
  }
});
// The coordinator going away ends the worker too.
process.on("disconnect", () => process.exit(0));
