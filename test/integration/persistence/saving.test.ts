/**
 * Persistence of the real process (`src/main.ts`), docs/persistence.md: progress is saved every
 * SAVE_INTERVAL, a SIGKILL loses at most what came after the last save, and SIGTERM saves everyone.
 *
 * Storage is PostgreSQL when TEST_DATABASE_URL is set (the test then reads rows while the server
 * runs). Otherwise it is PGlite in a temporary world directory, which only one process may open: the
 * test then reads it through a restarted server, or directly once the server is dead.
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { openStorage, type Storage } from "../../../src/storage/orm.js";
import { admin, becomeAdmin, eventually, invCount, lastSync, SdkPlayer, tokenFor } from "../../helpers/clients.js";
import { tempWorld, type Child } from "../../helpers/process.js";
import { startServerProcess } from "../../helpers/server-process.js";
import { TEST_DATABASE_URL } from "../../helpers/storage.js";
import type { PlayerSync } from "../../../src/events.js";

const TICK_MS = 50;

/** A server process on a world directory; `url` for the clients. */
interface Running {
  child: Child;
  url: string;
}

describe("world persistence (real process)", function () {
  this.timeout(180_000);
  let world: string;
  let running: Running[] = [];
  let pg: Storage | undefined;

  beforeEach(() => {
    world = tempWorld();
  });
  afterEach(async () => {
    for (const r of running) if (r.child.proc.exitCode === null && r.child.proc.signalCode === null) r.child.proc.kill("SIGKILL");
    await Promise.all(running.map((r) => r.child.exited));
    running = [];
    rmSync(world, { recursive: true, force: true });
  });
  after(async () => pg?.close());

  async function start(saveIntervalSeconds: number): Promise<Running> {
    const r = await startServerProcess(world, { TICK_MS: String(TICK_MS), SAVE_INTERVAL: String(saveIntervalSeconds) });
    running.push(r);
    return r;
  }

  /** Rows of the running (PostgreSQL) or stopped (PGlite) server's storage. */
  async function sql<T = any>(query: string, params: unknown[] = []): Promise<T[]> {
    if (TEST_DATABASE_URL) {
      pg ??= await openStorage({ url: TEST_DATABASE_URL, migrate: false, poolMax: 2 });
      return pg.orm.em.fork().getConnection().execute<T[]>(query, params);
    }
    assert.ok(
      running.every((r) => r.child.proc.exitCode !== null || r.child.proc.signalCode !== null),
      "PGlite is read only after the server died",
    );
    const s = await openStorage({ pgliteDir: join(world, "db"), migrate: false });
    try {
      return await s.orm.em.fork().getConnection().execute<T[]>(query, params);
    } finally {
      await s.close();
    }
  }

  /** Play: chop a tree near spawn (logs, woodcutting xp), then walk to `to`. */
  async function play(p: SdkPlayer, to: { x: number; z: number }) {
    const m = p.log.mark();
    p.send("player:action", { action: "gather", targetId: "lumbrook_tree_1" });
    await p.log.waitFor("skill:xp", (x) => x.skill === "woodcutting", { since: m, timeoutMs: 20_000 });
    await p.log.waitFor<PlayerSync>("player:sync", (s) => s.inventory.some((i) => i.itemId === "logs"), { since: m });
    p.send("player:move", to);
    await p.waitAt(to.x, to.z);
  }

  const progressRow = async (id: string) =>
    (
      await sql<{ position_x: number; position_z: number; woodcutting_xp: number }>(
        "select position_x, position_z, woodcutting_xp from characters where id = ?",
        [id],
      )
    )[0];
  const logsRows = async (id: string) =>
    (await sql<{ n: number }>("select coalesce(sum(quantity), 0)::int as n from inventory_items where character_id = ? and item_id = 'logs'", [id]))[0]!.n;

  it("SIGKILL mid-play keeps everything up to the last save", async () => {
    const a = await start(1);
    const account = tokenFor();
    const p = await SdkPlayer.join(a, { token: account.token, accountId: account.accountId });
    await becomeAdmin(p);
    await play(p, { x: -12, z: -4 });

    if (TEST_DATABASE_URL) {
      // Watch the batched save land.
      await eventually(
        async () => {
          const row = await progressRow(p.id);
          return row && row.position_x === -12 && row.position_z === -4 && row.woodcutting_xp === 24 && (await logsRows(p.id)) === 1;
        },
        "the batched save of position, xp and logs",
        10_000,
        100,
      );
    } else {
      // PGlite cannot be read while the server runs: let three save intervals of ticks pass.
      const t0 = p.state.tick;
      await p.waitState((s) => s.tick >= t0 + Math.ceil((3 * 1000) / TICK_MS), "three save intervals", 20_000);
    }

    a.child.proc.kill("SIGKILL");
    const exit = await a.child.exited;
    assert.equal(exit.signal, "SIGKILL");

    const b = await start(1);
    const again = await SdkPlayer.join(b, { token: account.token, accountId: account.accountId });
    assert.equal(again.id, p.id);
    const s = lastSync(again);
    assert.deepEqual({ x: s.position.x, z: s.position.z }, { x: -12, z: -4 });
    assert.equal(s.skills.woodcutting.xp, 24);
    assert.equal(invCount(again, "logs"), 1);
    assert.equal(s.admin, false, "admin is a session role, not stored");
    await again.leave();

    b.child.proc.kill("SIGTERM");
    assert.equal((await b.child.exited).code, 0);
    const logins = await sql<{ end_reason: string | null }>("select end_reason from player_logins where character_id = ? order by started_at", [p.id]);
    assert.deepEqual(
      logins.map((x) => x.end_reason),
      ["server_restart", "left"],
      "the killed process's login is closed at restart",
    );
  });

  it("SIGTERM saves every player before exiting 0", async () => {
    const c = await start(3600); // no batched save will happen during the test
    const account = tokenFor();
    const p = await SdkPlayer.join(c, { token: account.token, accountId: account.accountId });
    await becomeAdmin(p);
    await admin(p, "/tp -16 -4");
    await play(p, { x: -14, z: 3 });

    c.child.proc.kill("SIGTERM");
    const exit = await c.child.exited;
    assert.equal(exit.code, 0, c.child.output());
    assert.match(c.child.output(), /shutdown complete/);
    assert.ok(p.log.isClosed || (await p.log.waitClose().then(() => true)), "the client was disconnected");

    const row = await progressRow(p.id);
    assert.deepEqual({ x: row!.position_x, z: row!.position_z, xp: row!.woodcutting_xp }, { x: -14, z: 3, xp: 24 });
    assert.equal(await logsRows(p.id), 1);
    const logins = await sql<{ end_reason: string | null }>("select end_reason from player_logins where character_id = ?", [p.id]);
    assert.deepEqual(
      logins.map((x) => x.end_reason),
      ["server_shutdown"],
    );
  });
});
