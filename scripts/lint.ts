/**
 * `npm run lint`: every code-quality check, run side by side, each printed under its own heading
 * (all of them run even when one fails), then a summary; exits 1 when any failed. The checks are the `lint:*` scripts of
 * package.json (run one alone with `npm run lint:eslint` and so on).
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";

const CHECKS: { script: string; label: string }[] = [
  { script: "lint:eslint", label: "eslint (typescript-eslint rules)" },
  { script: "lint:format", label: "prettier --check (formatting; `npm run format` fixes)" },
  { script: "lint:layers", label: "dependency-cruiser (layer rules)" },
  { script: "lint:size", label: "file size (at most 400 lines; loadtest/ 300)" },
];

const scripts = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { scripts: Record<string, string> }).scripts;

/** Run one check with its output captured (the checks run side by side; ESLint alone takes most of the time). */
function run(command: string): Promise<{ ok: boolean; seconds: number; output: string }> {
  const started = performance.now();
  // npm put node_modules/.bin on the PATH of this script, so the command runs as `npm run` would.
  const child = spawn(command, { shell: true, stdio: ["ignore", "pipe", "pipe"] });
  const chunks: Buffer[] = [];
  child.stdout.on("data", (c: Buffer) => chunks.push(c));
  child.stderr.on("data", (c: Buffer) => chunks.push(c));
  return new Promise((resolve) =>
    child.on("close", (code) => resolve({ ok: code === 0, seconds: (performance.now() - started) / 1000, output: Buffer.concat(chunks).toString() })),
  );
}

const started = performance.now();
const pending = CHECKS.map(({ script }) => {
  const command = scripts[script];
  if (!command) throw new Error(`package.json has no "${script}" script`);
  return { command, result: run(command) };
});
const results: { label: string; ok: boolean; seconds: number }[] = [];
for (const [i, { label }] of CHECKS.entries()) {
  const { command, result } = pending[i]!;
  const { ok, seconds, output } = await result;
  console.log(`\n=== lint: ${label}\n$ ${command}\n${output.trimEnd()}`);
  console.log(`=== ${ok ? "passed" : "FAILED"}: ${label} (${seconds.toFixed(1)} s)`);
  results.push({ label, ok, seconds });
}

console.log(`\nlint summary (${((performance.now() - started) / 1000).toFixed(1)} s in all):`);
for (const { label, ok, seconds } of results) console.log(`  ${ok ? "ok  " : "FAIL"}  ${label}  ${seconds.toFixed(1)} s`);
const failed = results.filter((r) => !r.ok).length;
console.log(failed ? `lint: ${failed} of ${results.length} checks failed` : `lint: all ${results.length} checks passed`);
process.exitCode = failed ? 1 : 0;
