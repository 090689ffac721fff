import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { freePort, startProcess, tempWorld } from "../../helpers/process.js";

/** Lines of output that start with `prefix`. */
const linesStarting = (out: string, prefix: string) => out.split("\n").filter((l) => l.startsWith(prefix));
/** Position of the first output line matching `re` (-1 when none). */
const lineIndex = (out: string, re: RegExp) => out.split("\n").findIndex((l) => re.test(l));

describe("process lifecycle", function () {
  this.timeout(90_000);

  it("the compiled build (npm run build, npm run start:prod) starts without tsx, serves /health with the package version and stops with exit 0", async function () {
    this.timeout(240_000);
    // The build's own configuration, into a scratch directory inside the project (so the compiled
    // modules resolve node_modules and package.json as dist/ does).
    const out = "dist-test";
    rmSync(out, { recursive: true, force: true });
    const tsc = spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.build.json", "--outDir", out], { encoding: "utf8" });
    assert.equal(tsc.status, 0, `${tsc.stdout}${tsc.stderr}`);
    const world = tempWorld();
    const port = await freePort();
    const child = startProcess(
      { PORT: String(port), WORLD: world, NODE_ENV: "development", SKIP_MANIFESTS: "true", LOG_LEVEL: "info" },
      `${out}/src/main.js`,
      [],
    );
    try {
      await child.waitFor(/"msg":"listening"/);
      const health = await (await fetch(`http://127.0.0.1:${port}/health`)).json();
      assert.equal(health.version, JSON.parse(readFileSync("package.json", "utf8")).version);
      child.proc.kill("SIGTERM");
      const { code } = await child.exited;
      assert.equal(code, 0, child.output());
    } finally {
      child.proc.kill("SIGKILL");
      rmSync(world, { recursive: true, force: true });
      rmSync(out, { recursive: true, force: true });
    }
  });

  it("refuses to start in production with one line per missing setting", async () => {
    const child = startProcess({ NODE_ENV: "production", SKIP_MANIFESTS: "true" });
    const { code } = await child.exited;
    assert.equal(code, 1);
    const lines = child
      .output()
      .split("\n")
      .filter((l) => l.startsWith("config error:"));
    assert.equal(lines.length, 3, child.output());
    assert.ok(lines.some((l) => l.includes("DATABASE_URL")));
    assert.ok(lines.some((l) => l.includes("JWT_SECRET")));
    assert.ok(lines.some((l) => l.includes("ADMIN_CODE")));
  });

  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    it(`starts, serves /health, and exits 0 within 10 s on ${signal}`, async () => {
      const world = tempWorld();
      const port = await freePort();
      const child = startProcess({
        PORT: String(port),
        WORLD: world,
        NODE_ENV: "development",
        SKIP_MANIFESTS: "true",
        LOG_LEVEL: "info",
      });
      try {
        await child.waitFor(/"msg":"listening"/);
        const r = await fetch(`http://127.0.0.1:${port}/health`);
        assert.equal(r.status, 200);
        const t0 = Date.now();
        child.proc.kill(signal);
        const { code } = await child.exited;
        assert.equal(code, 0, child.output());
        assert.ok(Date.now() - t0 < 10_000);
        assert.match(child.output(), /shutdown complete/);
      } finally {
        child.proc.kill("SIGKILL");
        rmSync(world, { recursive: true, force: true });
      }
    });
  }

  it("a signal during start-up waits for the start, then stops cleanly with exit 0", async () => {
    const world = tempWorld();
    const port = await freePort();
    const child = startProcess({ PORT: String(port), WORLD: world, NODE_ENV: "development", SKIP_MANIFESTS: "true", LOG_LEVEL: "info" });
    try {
      // After this line the process opens a fresh embedded database (seconds of work): the signal
      // lands while storage is starting.
      await child.waitFor(/stage 2\/6 manifests ready/);
      child.proc.kill("SIGTERM");
      const { code } = await child.exited;
      const out = child.output();
      assert.equal(code, 0, out);
      const stopping = lineIndex(out, /"msg":"stopping"/);
      assert.ok(stopping >= 0, out);
      assert.ok(stopping < lineIndex(out, /stage 3\/6/), `the signal arrived after storage started:\n${out}`);
      assert.match(out, /"duringStartup":true/);
      assert.ok(lineIndex(out, /shutdown complete/) > lineIndex(out, /"msg":"listening"/), out);
    } finally {
      child.proc.kill("SIGKILL");
      rmSync(world, { recursive: true, force: true });
    }
  });

  it("an uncaught exception is logged, the server stops gracefully, and the exit code is 1", async () => {
    const world = tempWorld();
    const port = await freePort();
    const child = startProcess(
      { PORT: String(port), WORLD: world, NODE_ENV: "development", SKIP_MANIFESTS: "true", LOG_LEVEL: "info" },
      "test/fixtures/crash-after-start.ts",
    );
    try {
      const { code } = await child.exited;
      const out = child.output();
      assert.equal(code, 1, out);
      assert.match(out, /"msg":"uncaught exception; shutting down"/);
      assert.match(out, /simulated crash in a callback/);
      assert.match(out, /shutdown complete/);
    } finally {
      child.proc.kill("SIGKILL");
      rmSync(world, { recursive: true, force: true });
    }
  });

  it("a start-up failure prints one readable stderr line and exits 1 (port in use)", async () => {
    const world = tempWorld();
    const blocker: Server = createServer();
    await new Promise<void>((r) => blocker.listen(0, "0.0.0.0", r));
    const port = (blocker.address() as { port: number }).port;
    const child = startProcess({ PORT: String(port), WORLD: world, NODE_ENV: "development", SKIP_MANIFESTS: "true", LOG_LEVEL: "silent" });
    try {
      const { code } = await child.exited;
      const out = child.output();
      assert.equal(code, 1, out);
      const lines = linesStarting(out, "start-up error:");
      assert.equal(lines.length, 1, out);
      assert.match(lines[0]!, /EADDRINUSE/);
      assert.doesNotMatch(out, /^\s+at /m, "no stack trace");
    } finally {
      child.proc.kill("SIGKILL");
      blocker.close();
      rmSync(world, { recursive: true, force: true });
    }
  });

  it("broken game content fails start-up with readable lines naming the file", async () => {
    const world = tempWorld();
    writeFileSync(join(world, "manifests", "npcs.json"), "{ not json");
    // Not SKIP_MANIFESTS: that loads leniently and would start without the broken file.
    const child = startProcess({ PORT: String(await freePort()), WORLD: world, NODE_ENV: "development", LOG_LEVEL: "silent" });
    try {
      const { code } = await child.exited;
      const out = child.output();
      assert.equal(code, 1, out);
      const lines = linesStarting(out, "start-up error:");
      assert.ok(lines.length >= 1, out);
      assert.ok(
        lines.some((l) => l.includes("npcs.json")),
        out,
      );
      assert.doesNotMatch(out, /^\s+at /m, "no stack trace");
    } finally {
      child.proc.kill("SIGKILL");
      rmSync(world, { recursive: true, force: true });
    }
  });
});
