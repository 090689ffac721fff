/**
 * Command line of the example agent (docs/rest.md "Example agent"):
 *
 *   npm run example:agent -- --url http://localhost:5555 [--token <token>] [--name Woody]
 *                            [--bank-at 5] [--goal 10]
 *
 * Without `--token` it logs in anonymously. Ctrl-C stops it.
 */
import { parseArgs } from "node:util";
import { runAgent } from "./agent.js";

const { values } = parseArgs({
  options: {
    url: { type: "string", default: "http://localhost:5555" },
    token: { type: "string" },
    name: { type: "string" },
    "bank-at": { type: "string", default: "5" },
    goal: { type: "string", default: "10" },
    help: { type: "boolean", short: "h" },
  },
});

if (values.help) {
  console.log("usage: npm run example:agent -- [--url http://localhost:5555] [--token TOKEN] [--name NAME] [--bank-at 5] [--goal 10]");
  process.exit(0);
}

const positive = (name: string, text: string) => {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) {
    console.error(`--${name} must be a whole number of at least 1, not "${text}"`);
    process.exit(2);
  }
  return n;
};

const controller = new AbortController();
process.once("SIGINT", () => controller.abort());
process.once("SIGTERM", () => controller.abort());

runAgent({
  url: values.url,
  token: values.token,
  name: values.name,
  bankAt: positive("bank-at", values["bank-at"]),
  goalCount: positive("goal", values.goal),
  signal: controller.signal,
}).catch((e: Error) => {
  if (controller.signal.aborted) return; // stopped while logging in
  console.error(`agent: ${e.message}`);
  process.exit(1);
});
