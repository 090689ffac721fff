/**
 * Prints one bot token per line (see tokens.ts), for a load test run by someone who does not hold
 * the server's secret, or from another machine:
 *
 *   npm run loadtest:tokens -- --count 100 [--prefix loadtest] [--hours 6] > tokens.txt
 *   npm run loadtest -- --numClients 100 --tokens tokens.txt
 *
 * JWT_SECRET (and the rest of the configuration) is read with the server's own rules
 * (src/config.ts): run it with the server's environment. In development without JWT_SECRET the
 * development secret is used, as the server does.
 */
import { parseArgs } from "node:util";
import { ConfigError, loadConfig } from "../../src/config.js";
import { botTokens } from "./tokens.js";

async function main(): Promise<number> {
  let values: { count?: string; prefix?: string; hours?: string };
  try {
    ({ values } = parseArgs({
      options: { count: { type: "string", default: "10" }, prefix: { type: "string", default: "loadtest" }, hours: { type: "string", default: "6" } },
    }));
  } catch (err) {
    console.error(`loadtest:tokens: ${(err as Error).message}`);
    return 2;
  }
  const count = Number(values.count);
  const hours = Number(values.hours);
  if (!Number.isInteger(count) || count < 1 || count > 100_000) {
    console.error("loadtest:tokens: --count must be an integer from 1 to 100000");
    return 2;
  }
  if (!(hours > 0 && hours <= 24 * 30)) {
    console.error("loadtest:tokens: --hours must be more than 0 and at most 720");
    return 2;
  }
  if (!/^[a-z0-9_-]{1,40}$/i.test(values.prefix!)) {
    console.error("loadtest:tokens: --prefix must be 1 to 40 letters, digits, _ or -");
    return 2;
  }
  let secret: string;
  try {
    secret = loadConfig().jwtSecret;
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const p of err.problems) console.error(`loadtest:tokens: config error: ${p}`);
    return 1;
  }
  process.stdout.write(botTokens(secret, count, { prefix: values.prefix, ttlSeconds: Math.round(hours * 3600) }).join("\n") + "\n");
  return 0;
}

process.exitCode = await main();
