import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { freePort, startProcess, tempWorld } from "../helpers/process.js";

describe("process lifecycle", function () {
  this.timeout(90_000);

  it("refuses to start in production with one line per missing setting", async () => {
    const child = startProcess({ NODE_ENV: "production", SKIP_MANIFESTS: "true" });
    const { code } = await child.exited;
    assert.equal(code, 1);
    const lines = child.output().split("\n").filter((l) => l.startsWith("config error:"));
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
});
