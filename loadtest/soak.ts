/**
 * Soak run (`npm run soak`), outside CI: the compiled server (`dist/`, as `npm run build` makes it)
 * on PostgreSQL, driven for a long time by bots that mix everything players do, then checked.
 *
 *   npm run soak -- [--bots 300] [--minutes 10] [--db postgres://…/soak] [--json out.json]
 *                   [--save-interval 10] [--seed 1]
 *
 * The database named by `--db` (default postgres://postgres@127.0.0.1:5432/soak) is DROPPED and
 * created again; its name must contain "soak" so a real or shared database is never touched.
 *
 * Bots (loadtest/trade/bot.ts, half on the plain WebSocket, half on the Colyseus SDK, which may
 * only `join` the world room) walk, chat, fight and gather near non-aggressive NPCs, trade in
 * pairs (most complete, some are declined or cancelled), walk into the PvP Ashlands to die there
 * (bandits and other dying bots kill them: real deaths), drop and come back (SDK reconnection with
 * the reconnection token, fresh SDK joins, new plain sockets), and now and then send hostile
 * payloads on both transports and bad REST bodies.
 *
 * Checks (each PASS/FAIL; the process exits 1 on any FAIL): no 5xx seen by any bot; the server did
 * not crash and exits 0 on SIGTERM; no "uncaught"/"unhandled" or error-level line in its output;
 * every trade a bot saw completed has exactly one audit row, with outcome completed; no stored
 * quantity below 1 or above its stack cap, no negative coins; storage equal to each bot's last
 * `player:sync` (see `storageMatchesSync`); RSS growth under 10 % over the second half of the run.
 * The parts are in loadtest/soak/.
 */
import { rmSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { loadContent } from "../src/content/load.js";
import { openStorage } from "../src/storage/orm.js";
import { log, sleep, withTimeout } from "./lib/cli.js";
import { tempWorld } from "./lib/processes.js";
import { machine, writeJson } from "./lib/report.js";
import { buildDist } from "./lib/targets.js";
import { connectBot, ensureConnected, freeNear, type SoakBot } from "./soak/bots.js";
import { checkStacks, checkTradesAudited, memoryCheck, storageMatchesSync, type Check, type Sql } from "./soak/checks.js";
import { live, trader } from "./soak/life.js";
import { args, BOTS, MINUTES, RUN_MS } from "./soak/options.js";
import { prepareDatabase, rssOf, startServer } from "./soak/server.js";
import { completedTrades, countFailure, isFailure, stats } from "./soak/stats.js";

async function main() {
  const started = Date.now();
  log(
    `soak: ${BOTS} bots for ${MINUTES} min against the compiled server on ${args.db!.replace(/:[^:@/]*@/, ":***@")} (${cpus().length} cores, ${Math.round(totalmem() / 2 ** 30)} GB, Node ${process.version})`,
  );
  prepareDatabase(args.db!);
  if (!args["skip-build"]) buildDist();
  const world = tempWorld("soak-world-");
  const content = await loadContent(join(world, "manifests"));
  const server = await startServer(world, args.db!);
  process.on("exit", () => server.proc.exitCode === null && server.proc.signalCode === null && server.proc.kill("SIGKILL"));
  let crashed: string | undefined;
  let stopping = false;
  void server.exited.then(({ code, signal }) => {
    if (!stopping) crashed = `server exited during the run: code ${code}, signal ${signal}\n${server.tail.slice(-20).join("\n")}`;
  });
  const budget = setTimeout(
    () => {
      console.error("soak exceeded its time budget; killing the server");
      server.proc.kill("SIGKILL");
      process.exit(2);
    },
    RUN_MS * 2 + 20 * 60_000,
  );
  budget.unref();

  // Homes: free tiles next to non-aggressive NPC spawns, 6 bots to a home.
  const spawns = [...content.npcs.values()].filter((d) => !d.aggressive && d.spawns.length > 0).flatMap((d) => d.spawns.map((s) => ({ x: s.x, z: s.z })));
  const safe = spawns.filter(
    (s) => ![...content.npcs.values()].some((d) => d.aggressive && d.spawns.some((a) => Math.max(Math.abs(a.x - s.x), Math.abs(a.z - s.z)) < 25)),
  );
  const homes = Array.from({ length: Math.ceil(BOTS / 6) }, (_, i) =>
    freeNear(content, { x: safe[i % safe.length]!.x + 2, z: safe[i % safe.length]!.z + 2 + Math.floor(i / safe.length) * 3 }),
  );

  const t0 = performance.now();
  const rssTimer = setInterval(() => {
    const rss = rssOf(server.proc.pid!);
    if (rss !== undefined) server.rss.push({ t: performance.now() - t0, rss });
  }, 5_000);

  const bots: SoakBot[] = [];
  const queue = Array.from({ length: BOTS }, (_, n) => n);
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      for (let n = queue.shift(); n !== undefined; n = queue.shift()) {
        try {
          bots.push(await connectBot(n, homes[Math.floor(n / 6)]!, server.url));
        } catch (e) {
          countFailure(e, `join bot ${n}`);
        }
      }
    }),
  );
  log(`${bots.length}/${BOTS} bots joined in ${((performance.now() - t0) / 1000).toFixed(0)} s; running until minute ${MINUTES} of the run`);
  if (bots.length < BOTS * 0.9) throw new Error(`too many bots failed to join: ${stats.joinFailures.slice(0, 5).join("; ")}`);

  const end = t0 + RUN_MS;
  const dying = new Set<SoakBot>();
  const progress = setInterval(() => {
    const last = server.rss.at(-1);
    log(
      `  ${((performance.now() - t0) / 60_000).toFixed(1)} min: rss ${last ? (last.rss / 1048576).toFixed(0) : "?"} MB, connected ${bots.filter((b) => b.bot.connected).length}, ` +
        `moves ${stats.moves}, trades ${JSON.stringify(stats.trades)}, deaths ${stats.deaths}/${stats.deathRuns}, reconnects ${JSON.stringify(stats.reconnects)}, http ${JSON.stringify(stats.http)}`,
    );
  }, 30_000);
  await Promise.all([...bots.map((b) => live(b, server.url, content, end, dying)), trader(bots, content, end)]);
  clearInterval(progress);
  clearInterval(rssTimer);

  // Quiesce: everyone connected, nothing sent for a few seconds, then the clean shutdown.
  if (!crashed) await Promise.all(bots.map((b) => ensureConnected(b)));
  await sleep(5_000);
  log(`stopping: SIGTERM to the server (${bots.filter((b) => b.bot.connected).length}/${bots.length} bots connected)`);
  stopping = true;
  for (const b of bots) b.bot.stopReconnecting();
  server.proc.kill("SIGTERM");
  const exit = await Promise.race([server.exited, sleep(30_000).then(() => undefined)]);
  if (!exit) server.proc.kill("SIGKILL");
  // A socket the server already dropped may never report its close: bound the wait.
  await Promise.all(bots.map((b) => withTimeout(b.bot.close(), 5_000, "close").catch(() => undefined)));

  const checks: Check[] = [];
  const fivexx = Object.entries(stats.http).filter(([s]) => isFailure(Number(s)));
  checks.push({
    name: "no 5xx (524, an expired reconnection seat, is a refusal)",
    pass: fivexx.length === 0,
    detail: `HTTP statuses seen by bots: ${JSON.stringify(stats.http)}`,
    failures: stats.fivexx.slice(0, 20),
  });
  checks.push({
    name: "no crash; clean shutdown exits 0",
    pass: !crashed && exit?.code === 0,
    detail: crashed ? "crashed" : exit ? `exit code ${exit.code}, signal ${exit.signal}` : "did not exit within 30 s of SIGTERM",
    failures: crashed ? [crashed] : exit?.code === 0 ? [] : server.tail.slice(-20),
  });
  checks.push({
    name: "no uncaught/unhandled or error-level log line",
    pass: server.badCount === 0,
    detail: `${server.badCount} such lines`,
    failures: server.bad.slice(0, 20),
  });
  const storage = await openStorage({ url: args.db!, migrate: false, poolMax: 2 });
  try {
    const sql: Sql = (q, params = []) => storage.orm.em.fork().getConnection().execute(q, params) as never;
    checks.push(await checkTradesAudited(sql));
    checks.push(await checkStacks(sql, content));
    checks.push(await storageMatchesSync(sql, bots, content));
  } finally {
    await storage.close();
  }
  const mem = memoryCheck(server.rss, RUN_MS);
  checks.push(mem);

  console.log("\nsoak summary");
  console.log(
    `  bots ${bots.length} (${bots.filter((b) => b.bot.transport === "json").length} plain WebSocket, ${bots.filter((b) => b.bot.transport === "sdk").length} SDK), ${MINUTES} min, wall ${((Date.now() - started) / 60_000).toFixed(1)} min`,
  );
  console.log(`  moves ${stats.moves}, attacks ${stats.attacks}, gathers ${stats.gathers}, chats ${stats.chats}`);
  console.log(`  trades ${JSON.stringify(stats.trades)} (completed ids seen: ${completedTrades.size})`);
  console.log(
    `  deaths ${stats.deaths} (death runs ${stats.deathRuns}), reconnects ${JSON.stringify(stats.reconnects)}, hostile ${JSON.stringify(stats.hostile)}`,
  );
  if (stats.joinFailures.length) console.log(`  connection/action failures (first ${stats.joinFailures.length}): ${stats.joinFailures.slice(0, 5).join("; ")}`);
  console.log("");
  for (const c of checks) {
    console.log(`  ${c.pass ? "PASS" : "FAIL"}  ${c.name.padEnd(60)} ${c.detail}`);
    if (!c.pass) for (const f of c.failures ?? []) console.log(`          ${f}`);
  }
  const pass = checks.every((c) => c.pass);
  console.log(`\n  ${pass ? "PASS" : "FAIL"}: ${checks.filter((c) => c.pass).length}/${checks.length} checks passed`);
  if (args.json)
    writeJson(args.json, {
      date: new Date().toISOString(),
      machine: machine(args.db),
      bots: BOTS,
      joined: bots.length,
      minutes: MINUTES,
      saveIntervalSeconds: Number(args["save-interval"]),
      stats,
      completedTrades: completedTrades.size,
      rss: server.rss.map((s) => ({ t: Math.round(s.t), mb: Math.round((s.rss / 1048576) * 10) / 10 })),
      checks,
      pass,
    });
  // A failed run keeps its world directory (server.log) for reading.
  if (pass) rmSync(world, { recursive: true, force: true });
  else log(`kept ${world} (server.log) for reading`);
  return pass;
}

let finished = false;
// Never end silently with code 0 because a wait lost its last handle.
process.on("exit", (code) => {
  if (!finished && code === 0) {
    console.error("soak: the event loop emptied before the checks ran");
    process.exitCode = 2;
  }
});
main().then(
  (pass) => {
    finished = true;
    process.exit(pass ? 0 : 1);
  },
  (e) => {
    console.error(e);
    process.exit(2);
  },
);
