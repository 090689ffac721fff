/**
 * Builds the web client (client/ → client/dist) with Vite when it is missing or older than its
 * sources, so `npm install && npm start` serves a playable client with no other step
 * (docs/client.md "Build and serve"). `--force` builds whatever the dates say. Plain JavaScript:
 * it runs as `prestart`/`predev` before anything is compiled.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const client = path.join(root, "client");
const index = path.join(client, "dist", "index.html");

/** Newest modification time of the client's sources (everything under client/ but dist). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "dist" || entry.name === "node_modules") continue;
    const p = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(p) : statSync(p).mtimeMs);
  }
  return newest;
}

/** Whether client/dist is missing or older than a source file. */
export function clientStale() {
  return !existsSync(index) || statSync(index).mtimeMs < newestSource(client);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  if (!process.argv.includes("--force") && !clientStale()) {
    console.log("client: client/dist is up to date");
  } else {
    let vite;
    try {
      vite = await import("vite");
    } catch (e) {
      // `npm run build` must build it; before `npm start` on an install without devDependencies,
      // the server still starts, without a client to serve.
      if (process.argv.includes("--force")) throw e;
      console.warn("client: Vite is not installed (npm install without --omit=dev builds the client); starting without one");
    }
    if (vite) {
      console.log("client: building client/dist with Vite…");
      await vite.build({ configFile: path.join(client, "vite.config.ts"), logLevel: "warn" });
      console.log("client: built client/dist");
    }
  }
}
