/**
 * Crash test of the world's modifications (docs/persistence.md "World state"), black box: the real
 * server process (`src/main.ts`) with a long batched save (`SAVE_INTERVAL=300`) and a short tick.
 * A chops a tree (it depletes; its respawn made long in this world's manifests), drops its axe and
 * sees the pile; once the depleted tree was written (the `world state saved` debug line), the
 * process is killed with SIGKILL. Storage then holds the pile and no axe in A's inventory; the
 * restarted server shows A the pile, A picks the axe up — in its inventory once, off the ground,
 * and storage agrees — and the tree is still depleted.
 *
 * Storage is PostgreSQL (DATABASE_URL = TEST_DATABASE_URL) when configured, otherwise PGlite in the
 * temporary world directory, opened here only while no server process runs (PGlite is
 * single-process).
 */
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { Bot } from "../../../loadtest/trade/bot.js";
import type { Orm } from "../../../src/storage/orm.js";
import { tokenFor } from "../../helpers/clients.js";
import { useServerProcess } from "../../helpers/server-process.js";
import { TEST_DATABASE_URL } from "../../helpers/storage.js";
import { ADMIN_CODE, totals, until } from "../../helpers/trade.js";

/** A tree of the meadow, and the tile next to it where A stands. */
const TREE = { id: "meadow_tree_4", x: 10, z: 28 };
const BESIDE_TREE = { x: 10, z: 27 };
/** A free tile in town, out of view of the tree (a bot's world updates then show the tree's surroundings afresh). */
const AWAY = { x: 0, z: -20 };

type Update = { groundItems?: Record<string, { itemId?: string } | null> };

async function piles(orm: Orm) {
  return orm.em
    .fork()
    .getConnection()
    .execute<{ item_id: string; quantity: number; owner_id: string; world: number }[]>(`select item_id, quantity, owner_id, world from ground_piles`);
}

describe(`world state: chop, drop, SIGKILL, restart, pick up (${TEST_DATABASE_URL ? "postgresql" : "pglite"})`, function () {
  this.timeout(240_000);
  const t = useServerProcess({ SAVE_INTERVAL: "300", TICK_MS: "200", LOG_LEVEL: "debug" });
  const { start, withStorage } = t;

  async function stop(signal: "SIGTERM" | "SIGKILL") {
    const exit = await t.child!.stop(signal);
    if (signal === "SIGTERM") assert.equal(exit.code, 0, t.child!.output());
    else assert.equal(exit.signal, "SIGKILL");
    t.child = undefined;
  }

  /** Connect, become admin, go away and then stand beside the tree (so its surroundings come in A's world updates); tracks the axe pile A sees. */
  async function enter(url: string, token: string): Promise<{ bot: Bot; pile: () => string | undefined }> {
    const bot = await Bot.connect({ url, token });
    let pileId: string | undefined;
    bot.on("world:update", (u: Update) => {
      for (const [id, g] of Object.entries(u.groundItems ?? {})) if (g?.itemId === "bronze_axe") pileId = id;
    });
    await bot.command(`/admin ${ADMIN_CODE}`, /Admin mode enabled/);
    await bot.command(`/tp ${AWAY.x} ${AWAY.z}`, /^Teleported/);
    await bot.command(`/tp ${BESIDE_TREE.x} ${BESIDE_TREE.z}`, /^Teleported/);
    return { bot, pile: () => pileId };
  }

  const axes = (bot: Bot) => bot.inventory.filter((s) => s.itemId === "bronze_axe").length;

  it("the pile and the depleted tree survive a SIGKILL; the axe is picked up once, and storage agrees", async () => {
    // A tree that stays depleted far longer than a restart takes (50 ticks of 200 ms otherwise; a pile lives 300 ticks, 60 s, wall-clock time).
    const woodcutting = `${t.world}/manifests/gathering/woodcutting.json`;
    const nodes = JSON.parse(readFileSync(woodcutting, "utf8")) as { id: string; respawnTicks: number }[];
    nodes.find((n) => n.id === "tree")!.respawnTicks = 1_000_000;
    writeFileSync(woodcutting, JSON.stringify(nodes, null, 2));
    const { token } = tokenFor();

    // 1. Chop the tree until it depletes, drop the axe, see the pile; SIGKILL once the tree is written.
    let url = await start();
    let { bot, pile } = await enter(url, token);
    const id = bot.id;
    const before = await (TEST_DATABASE_URL ? withStorage((s) => totals(s.orm, [id])) : undefined);
    const chopped = bot.wait("player:sync", (s) => s.inventory.some((i: { itemId: string }) => i.itemId === "logs"), 60_000);
    bot.send("player:action", { action: "gather", targetId: TREE.id });
    await chopped;
    const dropped = bot.wait("player:sync", (s) => !s.inventory.some((i: { itemId: string }) => i.itemId === "bronze_axe"), 20_000);
    bot.send("inventory:use", { slot: bot.inventory.find((s) => s.itemId === "bronze_axe")!.slot, targetId: "drop" });
    await dropped;
    await until(pile, "A sees its axe on the ground", 20_000);
    await t.child!.waitFor(/"chunks":[1-9].*"msg":"world state saved"/, 30_000);
    await stop("SIGKILL");
    await bot.close().catch(() => undefined);

    // 2. Storage after the crash: the axe is on the ground, not in A's inventory.
    const crashed = await withStorage(async (s) => ({ piles: await piles(s.orm), a: await totals(s.orm, [id]) }));
    assert.deepEqual(
      crashed.piles.map((p) => ({ ...p, quantity: Number(p.quantity), world: Number(p.world) })),
      [{ item_id: "bronze_axe", quantity: 1, owner_id: id, world: 1 }],
    );
    assert.equal(crashed.a.bronze_axe, undefined, "A's stored inventory no longer holds the axe");
    const rest = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).filter(([k]) => k !== "bronze_axe" && k !== "logs"));
    if (before) assert.deepEqual(rest(crashed.a), rest(before), "nothing else changed");

    // 3. Restart on the same storage: A sees the pile and picks the axe up; the tree is still depleted.
    url = await start();
    ({ bot, pile } = await enter(url, token));
    const pileId = await until(pile, "the pile is back after the restart", 20_000);
    const picked = bot.wait("player:sync", (s) => s.inventory.some((i: { itemId: string }) => i.itemId === "bronze_axe"), 20_000);
    bot.send("player:action", { action: "pickup", targetId: pileId });
    await picked;
    assert.equal(axes(bot), 1, "the axe is in the inventory once");
    const refused = bot.wait("chat:message", (m) => m.type === "system" && /depleted/i.test(m.text), 20_000);
    bot.send("player:action", { action: "gather", targetId: TREE.id });
    await refused;
    await bot.close();
    await stop("SIGTERM");

    // 4. Storage agrees: one axe, in A's inventory; nothing on the ground.
    const after = await withStorage(async (s) => ({ piles: await piles(s.orm), a: await totals(s.orm, [id]) }));
    assert.deepEqual(after.piles, []);
    assert.equal(after.a.bronze_axe, 1);
  });
});
