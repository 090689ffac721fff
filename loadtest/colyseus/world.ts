/**
 * `@colyseus/loadtest` script for the world room (docs/benchmarks.md "Load testing with @colyseus/loadtest"):
 *
 *   npm run loadtest -- --numClients 50 [--delay 100] [--endpoint http://localhost:5555/ws]
 *                       [--tokens tokens.txt | --prefix loadtest] [--moveEvery 1000] [--chat 0.05]
 *                       [--duration 60]
 *
 * Defaults: `--endpoint` http://localhost:5555/ws (the server's Colyseus endpoint), `--room world`.
 * Each client gets a bot token: line `clientId + 1` of `--tokens` (from `npm run loadtest:tokens`),
 * or, without `--tokens`, one minted here with JWT_SECRET read by the server's rules (the
 * development secret when unset outside production). Other options are loadtest's own
 * (`--help`). It needs a terminal (its screen); stop it with Ctrl-C, or give `--duration` (seconds):
 * the bots then leave and the process exits 0 by itself (a signal sent to `npm run` does not reach
 * the script, so `timeout` around npm cannot end it).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { cli } from "@colyseus/loadtest";
import type { Room } from "@colyseus/sdk";
import { ConfigError, loadConfig } from "../../src/config.js";
import { cli as cliFor } from "../lib/cli.js";
import { worldBot } from "./bot.js";
import { botToken } from "./tokens.js";

const argv = process.argv;
const given = (name: string) => argv.some((a) => a === `--${name}` || a.startsWith(`--${name}=`));
if (!given("endpoint")) argv.push("--endpoint", "http://localhost:5555/ws");
if (!given("room") && !given("roomId")) argv.push("--room", "world");

const { values } = parseArgs({
  args: argv.slice(2),
  strict: false,
  options: {
    tokens: { type: "string" },
    prefix: { type: "string", default: "loadtest" },
    moveEvery: { type: "string", default: "1000" },
    chat: { type: "string", default: "0.05" },
    duration: { type: "string" },
  },
});

const { fail } = cliFor("loadtest");

let tokenFor: (clientId: number) => string;
if (typeof values.tokens === "string") {
  const tokens = readFileSync(values.tokens, "utf8")
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  if (tokens.length === 0) fail(`no tokens in ${values.tokens}`);
  tokenFor = (clientId) =>
    tokens[clientId] ?? fail(`${values.tokens} has ${tokens.length} tokens; client ${clientId} needs one more (npm run loadtest:tokens -- --count N)`);
} else {
  let secret: string;
  try {
    secret = loadConfig().jwtSecret;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    fail(`cannot mint tokens: ${err.problems.join("; ")} (or pass --tokens)`);
  }
  const prefix = String(values.prefix);
  tokenFor = (clientId) => botToken(secret, clientId, { prefix });
}
const moveEveryMs = Number(values.moveEvery);
const chatChance = Number(values.chat);
if (!(moveEveryMs >= 100)) fail("--moveEvery must be at least 100 (ms)");
if (!(chatChance >= 0 && chatChance <= 1)) fail("--chat must be a chance from 0 to 1");
const durationS = values.duration === undefined ? undefined : Number(values.duration);
if (durationS !== undefined && !(durationS > 0)) fail("--duration must be a number of seconds above 0");

const rooms: Room[] = [];
cli(async (options) => {
  rooms.push(await worldBot(options, { tokenFor, moveEveryMs, chatChance }));
});

if (durationS !== undefined) {
  setTimeout(() => {
    // Leave properly (the server saves and frees the seat at once), then end the screen.
    void Promise.allSettled(rooms.map((r) => r.leave(true))).then(() => process.exit(0));
    setTimeout(() => process.exit(0), 5_000).unref();
  }, durationS * 1000);
}
