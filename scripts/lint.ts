/**
 * `npm run lint`: every code-quality check, each under its own heading, all of them run even when
 * one fails, then a summary; exits 1 when any failed. The checks are the `lint:*` scripts of
 * package.json (run one alone with `npm run lint:eslint` and so on).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const CHECKS: { script: string; label: string }[] = [
  { script: "lint:eslint", label: "eslint (typescript-eslint rules)" },
  { script: "lint:format", label: "prettier --check (formatting; `npm run format` fixes)" },
  { script: "lint:layers", label: "dependency-cruiser (layer rules)" },
  { script: "lint:size", label: "file size (at most 400 lines)" },
];

const scripts = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> }).scripts;
const results: { label: string; ok: boolean; seconds: number }[] = [];
for (const { script, label } of CHECKS) {
  const command = scripts[script];
  if (!command) throw new Error(`package.json has no "${script}" script`);
  console.log(`\n=== lint: ${label}\n$ ${command}`);
  const started = performance.now();
  // npm put node_modules/.bin on the PATH of this script, so the command runs as `npm run` would.
  const run = spawnSync(command, { shell: true, stdio: "inherit" });
  const seconds = (performance.now() - started) / 1000;
  const ok = run.status === 0;
  results.push({ label, ok, seconds });
  console.log(`=== ${ok ? "passed" : "FAILED"}: ${label} (${seconds.toFixed(1)} s)`);
}

console.log("\nlint summary:");
for (const { label, ok, seconds } of results) console.log(`  ${ok ? "ok  " : "FAIL"}  ${label}  ${seconds.toFixed(1)} s`);
const failed = results.filter((r) => !r.ok).length;
console.log(failed ? `lint: ${failed} of ${results.length} checks failed` : `lint: all ${results.length} checks passed`);
process.exitCode = failed ? 1 : 0;
