/**
 * Interest-management micro benchmark (docs/benchmarks.md "Benchmarks"): the per-tick cost of keeping every
 * client's view in step, in one process without sockets or storage. `--players` bots are placed as
 * `bench:world`'s (`--scenario crowd`: all at the spawn; `spread`: 30 % in 4 hotspots, the rest over
 * the map) and run to a random tile within 8 tiles of their home about once a second (`wander`: as
 * `crowd`, but within 8 tiles of where they stand, so the crowd drifts apart);
 * each tick runs `World.step`, `SchemaMirror.syncAll`, the encoding of the patch for every view,
 * then `refreshView` for every client (the selection and its StateView changes, for the next
 * patch), as `WorldRoom` does. Prints the milliseconds of each part per tick (wall clock, then the
 * process's CPU time, the figure to compare on a busy machine) and the patch bytes per client per
 * tick.
 *
 *   npx tsx loadtest/bench-interest.ts [--players 1000] [--ticks 50] [--scenario crowd|wander|spread|fight] [--encoder interest|colyseus] [--profile <dir>]
 *
 * `--profile <dir>`: a CPU profile and a sampling heap profile of the measured ticks only, written
 * there (`interest-<pid>.cpuprofile`, `.heapprofile`), and the megabytes those ticks allocated. The
 * heap sampling counts what was collected since (a sample every 32 KiB): node's own `--heap-prof`
 * writes only what is still alive at exit, and covers the start-up and the joins too.
 *
 * `--scenario fight` (the combat benchmark, docs/combat.md#benchmark): the players stand in pairs
 * over the Ashlands (a PvP area) and each attacks its partner in melee from the first tick (nobody
 * uses a bow); constitution 99 keeps them alive through the run.
 *
 * A figure to compare between commits on the same machine, not a test: the real measurement is
 * `npm run bench:world`.
 */
import { parseArgs } from "node:util";
import { Encoder, StateView } from "@colyseus/schema";
import { InterestEncoder, TrackedView } from "../rooms/world/interest-encoder.js";
import { ENTITY_SCHEMAS, refreshView, SchemaMirror, type SdkVisibility } from "../rooms/world/views.js";
import { WorldState } from "../schema/world.js";
import { loadContent } from "../src/content/load.js";
import { xpForLevel } from "../src/domain/xp.js";
import { handleAction } from "../src/world/actions.js";
import type { Player } from "../src/world/player.js";
import { randomTileNear, type Tile } from "./bot.js";
import { placement } from "./fleet.js";
import { characterRecord, worldWithoutStorage } from "./lib/world.js";

const { values: args } = parseArgs({
  options: {
    players: { type: "string", default: "1000" },
    ticks: { type: "string", default: "50" },
    encoder: { type: "string", default: "interest" },
    scenario: { type: "string", default: "crowd" },
    profile: { type: "string" },
  },
});
if (!["crowd", "wander", "spread", "fight"].includes(args.scenario)) throw new Error("--scenario must be crowd, wander, spread or fight");
const drift = args.scenario === "wander";
const fight = args.scenario === "fight";
const players = Number(args.players);
const ticks = Number(args.ticks);
const WARMUP = Math.floor(ticks / 3);

Encoder.BUFFER_SIZE = 16 * 1024 * 1024;
const content = await loadContent("world/manifests");
let now = 1_000_000;
let seed = 1;
const rng = () => (seed = (seed * 16807) % 2147483647) / 2147483647;
const world = worldWithoutStorage(content, { now: () => now, rng, saveIntervalSeconds: 1e6 });
const state = new WorldState();
// `--encoder interest` (the room's, rooms/world/interest-encoder.ts) or `colyseus` (Colyseus's own, to compare).
const interest = args.encoder !== "colyseus";
const encoder = interest ? new InterestEncoder(state, undefined, ENTITY_SCHEMAS) : new Encoder(state);
const mirror = new SchemaMirror(state, world, encoder instanceof InterestEncoder ? encoder.slots : undefined);
const ROAM = 8;
const { homes, description } = fight
  ? pairsInThePvpArea(players)
  : placement(args.scenario === "spread" ? "spread" : "crowd", players, content, rng, { roam: ROAM, hotspots: 4, hotspotShare: 0.3 });

/** Two free PvP tiles side by side for every two players, over the Ashlands, away from the spawn. */
function pairsInThePvpArea(n: number): { homes: Tile[]; description: string } {
  const out: Tile[] = [];
  const b = content.worldBounds;
  for (let z = 70; z <= b.maxZ - 1 && out.length < n; z += 2) {
    for (let x = b.minX + 2; x <= b.maxX - 2 && out.length < n; x += 3) {
      const free = (t: Tile) => content.isPvp(t.x, t.z) && !content.isBlocked(t.x, t.z);
      if (free({ x, z }) && free({ x: x + 1, z })) out.push({ x, z }, { x: x + 1, z });
    }
  }
  if (out.length < n) throw new Error(`only ${out.length} PvP tiles in pairs`);
  return { homes: out.slice(0, n), description: "fight (pairs in melee over the Ashlands)" };
}
/** Entities added to views (each sent whole): the churn of the selection. */
let adds = 0;
class CountingView extends TrackedView {
  override add(...args: Parameters<TrackedView["add"]>): boolean {
    adds++;
    return super.add(...args);
  }
}
let measuring = false;
let hitsSeen = 0;
const clients: { p: Player; home: Tile; view: StateView; seen: SdkVisibility; nextMove: number }[] = [];
for (let i = 0; i < players; i++) {
  const id = `00000000-0000-4000-8000-${String(i).padStart(12, "0")}`;
  const home = homes[i]!;
  const record = characterRecord(id, { at: home });
  if (fight) (record.character as unknown as Record<string, number>).constitutionXp = xpForLevel(99);
  // Hits on this player while measured (each hit reaches its target once), to show the fight is on.
  const send = (event: string, data: unknown) => {
    if (measuring && event === "combat:hit" && (data as { targetId: string }).targetId === id) hitsSeen++;
  };
  const { player } = world.join(record, { id: `c${i}`, kind: "sdk", send, close: () => undefined }, 4009);
  mirror.upsert("players", player.id);
  clients.push({ p: player, home, view: encoder instanceof InterestEncoder ? new CountingView(encoder.slots) : new StateView(), seen: {}, nextMove: 0 });
}

if (fight)
  for (let i = 0; i + 1 < clients.length; i += 2) {
    await handleAction(world, clients[i]!.p, { action: "attack", targetId: clients[i + 1]!.p.id });
    await handleAction(world, clients[i + 1]!.p, { action: "attack", targetId: clients[i]!.p.id });
  }

/** `--profile`: the measured ticks' profiles (see the file comment). */
async function profiler(dir: string) {
  const { Session } = await import("node:inspector/promises");
  const { mkdir, writeFile } = await import("node:fs/promises");
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  await session.post("HeapProfiler.startSampling", {
    samplingInterval: 32 * 1024,
    includeObjectsCollectedByMajorGC: true,
    includeObjectsCollectedByMinorGC: true,
  });
  return async () => {
    const { profile } = await session.post("Profiler.stop");
    const { profile: heap } = await session.post("HeapProfiler.stopSampling");
    session.disconnect();
    await mkdir(dir, { recursive: true });
    await writeFile(`${dir}/interest-${process.pid}.cpuprofile`, JSON.stringify(profile));
    await writeFile(`${dir}/interest-${process.pid}.heapprofile`, JSON.stringify(heap));
    // The samples (each the bytes it stands for) are in the protocol's profile, if not in node's types.
    return (heap as unknown as { samples: { size: number }[] }).samples.reduce((sum, s) => sum + s.size, 0);
  };
}
let stopProfile: (() => Promise<number>) | undefined;

const ms = { step: 0, mirror: 0, encode: 0, views: 0 };
// CPU time of the process (user + system), the figure to compare on a loaded machine: wall time counts the preemptions.
const cpu = { step: 0, mirror: 0, encode: 0, views: 0 };
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
let bytes = 0;
for (let tick = 0; tick < ticks; tick++) {
  now += 600;
  for (const c of clients) {
    if (fight || c.nextMove > tick) continue;
    c.nextMove = tick + 1 + Math.floor(rng() * 2);
    const to = randomTileNear(drift ? { x: c.p.x, z: c.p.z } : c.home, ROAM, content, rng);
    if (to) world.movement.request(c.p, { ...to, run: true });
  }
  const measured = tick >= WARMUP;
  measuring = measured;
  if (tick === WARMUP) adds = 0;
  if (tick === WARMUP && args.profile) stopProfile = await profiler(args.profile);
  let t0 = performance.now();
  let c0 = cpuMs();
  const lap = (part: keyof typeof ms) => {
    const t = performance.now();
    const c = cpuMs();
    if (measured) {
      ms[part] += t - t0;
      cpu[part] += c - c0;
    }
    t0 = t;
    c0 = c;
  };
  world.step();
  state.tick = world.tick;
  lap("step");
  mirror.syncAll(() => clients);
  lap("mirror");
  const it = { offset: 1 };
  encoder.encode(it);
  const shared = it.offset;
  for (const c of clients) {
    const patch = encoder.encodeView(c.view, shared, it);
    if (measured) bytes += patch.length;
  }
  encoder.discardChanges();
  lap("encode");
  for (const c of clients) refreshView(world, mirror, c.view, c.seen, c.p);
  lap("views");
}
const allocated = await stopProfile?.();
const per = (v: number) => Math.round((v / (ticks - WARMUP)) * 100) / 100;
console.log(
  `${players} players, ${description}${drift ? ", drifting" : ""}, ${ticks - WARMUP} ticks measured: ms per tick: step ${per(ms.step)}, mirror ${per(ms.mirror)}, ` +
    `encode ${per(ms.encode)}, views ${per(ms.views)}; patch ${Math.round(bytes / (ticks - WARMUP) / players)} B per client per tick` +
    (fight ? `, ${per(hitsSeen)} hits per tick` : "") +
    (interest ? `, ${per(adds / players)} entities added per client per tick` : ""),
);
console.log(
  `CPU ms per tick: step ${per(cpu.step)}, mirror ${per(cpu.mirror)}, encode ${per(cpu.encode)}, views ${per(cpu.views)}, ` +
    `total ${per(cpu.step + cpu.mirror + cpu.encode + cpu.views)}`,
);
if (allocated !== undefined)
  console.log(`allocated in the measured ticks (heap sampling): ${Math.round(allocated / 1e5) / 10} MB (profiles in ${args.profile})`);
