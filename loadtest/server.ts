/**
 * Shared by the load scripts that run the compiled server (`bench-world.ts`, `soak.ts`): compile it
 * as `npm run build` does and read the Node.js flags production starts it with.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const ROOT = resolve(import.meta.dirname, "..");

/** Node.js flags the production start script (`npm run start:prod`) gives the server: `config.nodeOptions` in package.json. */
export const PROD_NODE_OPTIONS: string[] = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).config?.nodeOptions ?? "")
  .split(/\s+/)
  .filter(Boolean);

/** Compile the server as `npm run build` does (without the model-bounds step), so the load runs what production runs. */
export function buildDist() {
  const t0 = Date.now();
  const tsc = spawnSync(process.execPath, [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.build.json"], { cwd: ROOT, encoding: "utf8" });
  if (tsc.status !== 0) throw new Error(`tsc failed:\n${tsc.stdout}${tsc.stderr}`);
  console.log(`  compiled the server into dist/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
}
