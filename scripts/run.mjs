/**
 * Start-script launcher, the same on every OS (no shell syntax: npm runs scripts with sh on Linux
 * and macOS but cmd.exe on Windows). Plain JavaScript so it needs nothing but Node.
 *
 *   node scripts/run.mjs <node arguments...>   e.g. `--import tsx src/main.ts`, `dist/src/main.js`
 *       Runs this Node (the npm scripts' Node 22, see docs/operations.md "Install on any OS") with the flags of
 *       package.json `config.nodeOptions` first, then the arguments.
 *   node scripts/run.mjs --dev
 *       Development: the model-bounds watcher and the server under `tsx watch`, side by side;
 *       when one stops, the other is stopped too.
 *
 * SIGINT and SIGTERM are passed on to the children (the server stops gracefully on either, and a
 * repeated signal changes nothing, so Ctrl-C reaching both is harmless). The launcher exits with
 * the server's exit code.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** package.json `config.nodeOptions`, split on white space. */
function nodeOptions() {
  const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8"));
  const value = pkg.config?.nodeOptions ?? "";
  if (typeof value !== "string") throw new Error("package.json config.nodeOptions must be a string");
  return value.split(/\s+/).filter(Boolean);
}

/** Starts `args` under this Node, in the project directory, sharing the terminal. */
function run(args) {
  return spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
}

function main(argv) {
  let children;
  if (argv[0] === "--dev") {
    const tsx = createRequire(import.meta.url).resolve("tsx/cli");
    children = [run([tsx, "scripts/model-bounds.ts", "--watch"]), run([tsx, "watch", "src/main.ts"])];
  } else if (argv.length > 0) {
    children = [run([...nodeOptions(), ...argv])];
  } else {
    console.error("usage: node scripts/run.mjs <node arguments...> | --dev");
    process.exit(2);
  }
  // The server is the last child: its exit code is the launcher's.
  const server = children[children.length - 1];

  // Once a signal has been passed on, every child is already stopping: none gets a second one
  // (tsx watch force-kills its server on a second signal).
  let signalled = false;
  for (const signal of ["SIGINT", "SIGTERM"]) {
    process.on(signal, () => {
      signalled = true;
      for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill(signal);
    });
  }
  let pending = children.length;
  for (const c of children) {
    c.on("error", (err) => {
      console.error(`run: could not start ${process.execPath}: ${err.message}`);
      for (const other of children) if (other !== c && other.exitCode === null) other.kill("SIGTERM");
      process.exit(1);
    });
    c.on("exit", (code, signal) => {
      if (c === server) process.exitCode = code ?? (signal ? 1 : 0);
      // One child ended: stop the others (the watcher without its server, or the reverse).
      if (!signalled) for (const other of children) if (other !== c && other.exitCode === null && other.signalCode === null) other.kill("SIGTERM");
      if (--pending === 0) process.exit(process.exitCode ?? 0);
    });
  }
}

main(process.argv.slice(2));
