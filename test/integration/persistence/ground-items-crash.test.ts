/**
 * Crash test of the ground hand-over: the real server process (`src/main.ts`) with a long batched
 * save (`SAVE_INTERVAL=300`) and a short tick. A drops a starter bronze axe, B picks it up once the
 * privacy window (100 ticks) is over and banks it (committed at once), then the process is killed
 * with SIGKILL before any batched save. Storage must not hold the axe twice (in A's stored
 * inventory and in B's bank): the drop commits at once, before anyone can take the pile
 * (docs/persistence.md "Drops"). The totals of every item id and of coins over every character's inventory,
 * equipment and bank are what they were before; the restarted server serves what storage holds.
 *
 * Storage is PostgreSQL (DATABASE_URL = TEST_DATABASE_URL) when configured, otherwise PGlite in the
 * temporary world directory, opened here only while no server process runs (PGlite is
 * single-process).
 */
import assert from "node:assert/strict";
import { Bot } from "../../../loadtest/trade/bot.js";
import { loadContent } from "../../../src/content/load.js";
import { tokenFor } from "../../helpers/clients.js";
import { useServerProcess } from "../../helpers/server-process.js";
import { TEST_DATABASE_URL } from "../../helpers/storage.js";
import { ADMIN_CODE, totals, until, violations } from "../../helpers/trade.js";

/** Tile next to the Lumbrook bank booth (6, 7): both players stand here, in reach of the bank. */
const AT_BANK = { x: 6, z: 6 };

describe(`ground items: drop, pick up, bank, SIGKILL with SAVE_INTERVAL=300 (${TEST_DATABASE_URL ? "postgresql" : "pglite"})`, function () {
  this.timeout(240_000);
  // 100 private ticks of 20 ms: the pile is B's to take 2 s after it appears.
  const t = useServerProcess({ SAVE_INTERVAL: "300", TICK_MS: "20" });
  const { start, withStorage } = t;

  async function stop(signal: "SIGTERM" | "SIGKILL") {
    const exit = await t.child!.stop(signal);
    if (signal === "SIGTERM") assert.equal(exit.code, 0, t.child!.output());
    else assert.equal(exit.signal, "SIGKILL");
    t.child = undefined;
  }

  const slotOf = (bot: Bot, itemId: string) => bot.inventory.find((s) => s.itemId === itemId)?.slot;

  it("no item total grows: the axe is in B's bank and no longer in A's stored inventory; the restarted server agrees", async () => {
    const tokens = [tokenFor().token, tokenFor().token];

    // 1. Create both characters (starter kit) on a first process, stopped gracefully.
    let url = await start();
    let bots = await Promise.all(tokens.map((token) => Bot.connect({ url, token })));
    const [idA, idB] = bots.map((b) => b.id) as [string, string];
    await Promise.all(bots.map((b) => b.close()));
    await stop("SIGTERM");
    const before = await withStorage(async (s) => ({ all: await totals(s.orm), a: await totals(s.orm, [idA]), b: await totals(s.orm, [idB]) }));
    assert.equal(before.a.bronze_axe, 1, "A starts with the starter axe");
    assert.equal(before.b.bronze_axe, 1);

    // 2. Drop, pick up, bank, SIGKILL.
    url = await start();
    bots = await Promise.all(tokens.map((token) => Bot.connect({ url, token })));
    const [a, b] = bots as [Bot, Bot];
    for (const bot of bots) {
      await bot.command(`/admin ${ADMIN_CODE}`, /Admin mode enabled/);
      await bot.command(`/tp ${AT_BANK.x} ${AT_BANK.z}`, /^Teleported/);
    }
    // B learns of the pile from its world updates: only once it is public.
    let pileId: string | undefined;
    const offPiles = b.on("world:update", (u: { groundItems?: Record<string, { itemId?: string } | null> }) => {
      for (const [id, g] of Object.entries(u.groundItems ?? {})) if (g?.itemId === "bronze_axe") pileId = id;
    });
    const dropped = a.wait("player:sync", (s) => !s.inventory.some((i: { itemId: string }) => i.itemId === "bronze_axe"), 20_000);
    a.send("inventory:use", { slot: slotOf(a, "bronze_axe"), targetId: "drop" });
    await dropped;
    await until(() => pileId, "the axe on the ground, public to B", 30_000);
    offPiles();
    const picked = b.wait("player:sync", (s) => s.inventory.filter((i: { itemId: string }) => i.itemId === "bronze_axe").length === 2, 20_000);
    b.send("player:action", { action: "pickup", targetId: pileId });
    await picked;
    const banked = b.wait("player:sync", (s) => s.bank.some((i: { itemId: string }) => i.itemId === "bronze_axe"), 20_000);
    b.send("bank:deposit", { slot: b.inventory.filter((s) => s.itemId === "bronze_axe").at(-1)!.slot });
    await banked;
    await stop("SIGKILL");
    await Promise.all(bots.map((bot) => bot.close().catch(() => undefined)));

    // 3. Storage after the crash: nothing grew (and, both moves being committed, nothing was lost).
    const content = await loadContent(`${t.world}/manifests`);
    const after = await withStorage(async (s) => ({
      all: await totals(s.orm),
      a: await totals(s.orm, [idA]),
      b: await totals(s.orm, [idB]),
      bBank: await s.orm.em.fork().getConnection().execute(`select quantity from bank_items where character_id = ? and item_id = 'bronze_axe'`, [idB]),
      bad: await violations(s.orm, (id) => content.items.get(id)),
    }));
    for (const [itemId, n] of Object.entries(after.all))
      assert.ok(n <= (before.all[itemId] ?? 0), `${itemId}: ${n} stored after the crash, ${before.all[itemId] ?? 0} before`);
    assert.deepEqual(after.all, before.all, "every item id and coins conserved");
    assert.equal(after.a.bronze_axe, undefined, "A's stored inventory no longer holds the dropped axe");
    assert.equal(after.b.bronze_axe, 2, "B holds its own axe and the one it banked");
    assert.equal(Number(after.bBank[0]?.quantity), 1, "the banked axe is in B's stored bank");
    assert.deepEqual(after.bad, []);

    // 4. Restart on the same storage: each character is served what storage holds.
    url = await start();
    for (const [token, id] of [
      [tokens[0]!, idA],
      [tokens[1]!, idB],
    ] as const) {
      const bot = await Bot.connect({ url, token });
      const held: Record<string, number> = {};
      for (const s of bot.inventory) held[s.itemId] = (held[s.itemId] ?? 0) + s.quantity;
      for (const s of bot.state.bank ?? []) held[s.itemId] = (held[s.itemId] ?? 0) + s.quantity;
      for (const s of Object.values(bot.state.equipment ?? {}) as { itemId: string; quantity: number }[]) held[s.itemId] = (held[s.itemId] ?? 0) + s.quantity;
      if (bot.coins) held.coins = bot.coins;
      assert.deepEqual(held, id === idA ? after.a : after.b, `${bot.name} after the restart`);
      await bot.close();
    }
    await stop("SIGTERM");
  });
});
