/**
 * The web client (client/, docs/client.md) in a real browser: two chromium contexts play through
 * the client's own UI (clicks and keys) against a real server. Screenshots of each step go to
 * test-results/client-*.png. On CI chromium is required (the suite fails without it).
 */
import assert from "node:assert/strict";
import { readFileSync, rmSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import type { GameServer } from "../../src/server/server.js";
import { startTestServer, TEST_ENV } from "../helpers/server.js";
import {
  buildClient,
  CHROMIUM,
  clickTile,
  clientTestWorld,
  logIn,
  OGRE,
  positionOf,
  requireChromium,
  walkTo,
  shot,
  SHOTS,
  until,
  type Gamer,
} from "./client-helpers.js";

describe("browser: the web client (chromium)", function () {
  this.timeout(240_000);
  let server: GameServer;
  let browser: Browser;
  let world: string;
  let ann: Gamer;
  let bob: Gamer;

  before(async function () {
    requireChromium(this);
    const dist = buildClient();
    world = clientTestWorld();
    server = await startTestServer({ CLIENT_DIST: dist, WORLD: world, TICK_MS: "100", DISABLE_RATE_LIMIT: "true" });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
  });
  afterEach(async function () {
    if (this.currentTest?.state !== "failed") return;
    for (const g of [ann, bob]) if (g) await shot(g, `failed-${g.name.slice(0, 3)}`).catch(() => undefined);
  });
  after(async () => {
    await browser?.close();
    await server?.close();
    if (world) rmSync(world, { recursive: true, force: true });
  });

  it("two players log in, see each other walk, and chat", async () => {
    const suffix = String(Date.now() % 100000);
    ann = await logIn(browser, server.url, `Ann${suffix}`);
    bob = await logIn(browser, server.url, `Bob${suffix}`);
    await until(ann, (id) => (window as any).realm.state().world.players.has(id), bob.id);
    await until(bob, (id) => (window as any).realm.state().world.players.has(id), ann.id);
    await shot(ann, "01-logged-in");

    // Ann clicks a tile three east of where she stands; Bob's client sees her get there.
    const start = (await positionOf(ann, ann.id))!;
    const target = { x: start.x + 3, z: start.z + 1 };
    await clickTile(ann, target.x, target.z);
    await until(
      bob,
      ([id, t]) => {
        const p = (window as any).realm.state().world.players.get(id);
        return p?.x === t.x && p?.z === t.z;
      },
      [ann.id, target] as const,
    );
    // And Bob walks with the keyboard: two steps west.
    const bobStart = (await positionOf(bob, bob.id))!;
    // One step, seen landed, then the next (a second press within the first step's tick steps from
    // where the client last saw the player).
    await bob.page.keyboard.press("ArrowLeft");
    await until(bob, ([id, x]) => (window as any).realm.state().world.players.get(id)?.x === x, [bob.id, bobStart.x - 1] as const);
    await bob.page.keyboard.press("ArrowLeft");
    await until(ann, ([id, x]) => (window as any).realm.state().world.players.get(id)?.x === x, [bob.id, bobStart.x - 2] as const);
    await shot(bob, "02-walked");

    // Ann chats: Enter, type, Enter; Bob reads the line in his chat box.
    await ann.page.keyboard.press("Enter");
    await ann.page.keyboard.type("hello from the browser");
    await ann.page.keyboard.press("Enter");
    await bob.page.waitForFunction((t) => document.querySelector("#chat-log")!.textContent!.includes(t), `${ann.name}: hello from the browser`);
    await shot(bob, "03-chat");
    assert.ok((await ann.page.textContent("#chat-log"))!.includes("hello from the browser"));
  });

  it("both trade through both screens and each sees the other's inventory change", async () => {
    // Bob walks next to Ann (trades need 2 tiles at most).
    const a = (await positionOf(ann, ann.id))!;
    await clickTile(bob, a.x - 1, a.z);
    await until(
      bob,
      ([id, t]) => {
        const p = (window as any).realm.state().world.players.get(id);
        return p?.x === t.x && p?.z === t.z && !p.moving;
      },
      [bob.id, { x: a.x - 1, z: a.z }] as const,
    );
    // Ann clicks Bob: a menu, "Trade with Bob".
    await clickTile(ann, a.x - 1, a.z);
    await ann.page.click(`#menu li:has-text("Trade with ${bob.name}")`);
    await bob.page.click(`[data-trade-request] button:has-text("Accept")`);
    await ann.page.waitForSelector("#trade:not([hidden])");
    await bob.page.waitForSelector("#trade:not([hidden])");
    // Ann offers her axe (a click on the inventory slot); Bob offers 10 coins.
    await ann.page.click('#inventory [data-item="bronze_axe"]');
    await bob.page.waitForSelector('#trade [data-side="theirs"] [data-offer-item="bronze_axe"]');
    await bob.page.fill("#trade-coins", "10");
    await bob.page.click('#trade button:has-text("Offer coins")');
    await ann.page.waitForSelector('#trade [data-side="theirs"] [data-offer-item="coins"]');
    await shot(ann, "04-trade-offer");
    await ann.page.click("#trade-accept");
    await bob.page.waitForSelector('#trade [data-side="theirs"] .accepted');
    await bob.page.click("#trade-accept");
    // The confirmation screen, with the wealth-transfer line, on both sides.
    await ann.page.waitForSelector("#trade-wealth");
    await bob.page.waitForSelector("#trade-wealth");
    await shot(bob, "05-trade-confirm");
    assert.match((await bob.page.textContent("#trade-wealth"))!, /You gain/);
    await ann.page.click("#trade-accept");
    await bob.page.click("#trade-accept");
    await ann.page.waitForSelector("#trade", { state: "hidden" });
    // Ann's inventory: no axe, 35 coins; Bob's: two axes, 15 coins.
    await ann.page.waitForFunction(() => document.querySelector("#coins")?.textContent === "Coins: 35");
    assert.equal(await ann.page.locator('#inventory [data-item="bronze_axe"]').count(), 0);
    await bob.page.waitForFunction(() => document.querySelector("#coins")?.textContent === "Coins: 15");
    assert.equal(await bob.page.locator('#inventory [data-item="bronze_axe"]').count(), 2);
    await shot(ann, "06-trade-done-ann");
    await shot(bob, "06-trade-done-bob");
  });

  it("one chops a tree and sees the XP", async () => {
    const tree = await bob.page.evaluate(() => {
      const me = (window as any).realm.state().world.players.get((window as any).realm.state().me.id);
      const trees = [...(window as any).realm.state().world.resources.values()].filter(
        (r: any) => r.skill === "woodcutting" && r.type === "tree" && !r.depleted,
      );
      trees.sort((a: any, b: any) => Math.max(Math.abs(a.x - me.x), Math.abs(a.z - me.z)) - Math.max(Math.abs(b.x - me.x), Math.abs(b.z - me.z)));
      return trees[0] as { id: string; x: number; z: number };
    });
    assert.ok(tree, "a tree in view");
    await clickTile(bob, tree.x, tree.z);
    await bob.page.waitForSelector('.toast:has-text("Woodcutting XP")');
    await shot(bob, "07-chopped");
    await bob.page.keyboard.press("k");
    const xp = Number((await bob.page.textContent('[data-skill="woodcutting"] .skill-xp'))!.replace(/\D/g, ""));
    assert.ok(xp > 0, `woodcutting XP ${xp}`);
    await bob.page.waitForSelector('#inventory [data-item="logs"]', { state: "attached" });
  });

  it("one banks logs and trades with a store, and reads a refusal", async () => {
    const stations = JSON.parse(readFileSync("world/manifests/stations.json", "utf8")) as { type: string; x: number; z: number }[];
    const booth = stations.find((st) => st.type === "bank")!;
    const store = (JSON.parse(readFileSync("world/manifests/stores.json", "utf8")) as { x: number; z: number }[])[0]!;
    const near = (t: { x: number; z: number }) =>
      until(
        bob,
        ([id, t]) => {
          const p = (window as any).realm.state().world.players.get(id);
          return p && !p.moving && Math.max(Math.abs(p.x - t.x), Math.abs(p.z - t.z)) <= 3;
        },
        [bob.id, t] as const,
      );
    // A click on the booth walks next to it and opens the bank; a click on the logs deposits them.
    await walkTo(bob, booth.x, booth.z - 3);
    await clickTile(bob, booth.x, booth.z);
    await near(booth);
    await bob.page.click('#inventory [data-item="logs"]');
    await bob.page.waitForSelector('#tab-bank [data-bank-item="logs"]');
    await shot(bob, "08-bank");
    await bob.page.click('#tab-bank [data-bank-item="logs"] button:has-text("1")');
    await bob.page.waitForSelector('#inventory [data-item="logs"]');
    // The store: buying an axe with 15 coins is refused, readably; selling shrimp pays.
    await clickTile(bob, store.x, store.z);
    await near(store);
    await bob.page.click('#tab-store [data-store-item="bronze_axe"] button');
    await bob.page.waitForSelector('#chat-log [data-code="NOT_ENOUGH_COINS"]');
    assert.match((await bob.page.textContent('#chat-log [data-code="NOT_ENOUGH_COINS"]'))!, /coins/i);
    await bob.page.click('#inventory [data-item="shrimp"]');
    await bob.page.waitForFunction(() => Number(document.querySelector("#coins")?.textContent?.replace(/\D/g, "")) > 15, undefined, { polling: 100 });
    await shot(bob, "09-store");
  });

  it("one dies to an NPC and respawns in town", async () => {
    // Ann walks east out of town toward the test ogre, clicking tiles on screen.
    await walkTo(ann, OGRE.x - 5, OGRE.z);
    await ann.page.waitForFunction(() => document.querySelector("#chat-log")!.textContent!.includes("you are dead"), undefined, { polling: 100 });
    await shot(ann, "10-dead");
    // Respawned at the spawn with full health.
    await until(
      ann,
      (id) => {
        const p = (window as any).realm.state().world.players.get(id);
        return p && p.activity !== "dead" && Math.abs(p.x) < 10 && Math.abs(p.z) < 10 && p.health === p.maxHealth;
      },
      ann.id,
    );
    await shot(ann, "11-respawned");
  });

  it("the admin world map shows every player and NPC of the world", async () => {
    const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
    const page = await context.newPage();
    await page.goto(`${server.url}/admin.html`);
    await page.fill("#admin-code", "wrong");
    await page.click('#admin-bar button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#admin-status")?.textContent?.includes("error"));
    await page.fill("#admin-code", TEST_ENV.ADMIN_CODE!);
    await page.click('#admin-bar button[type="submit"]');
    await page.waitForFunction(() => document.querySelector("#admin-status")?.getAttribute("data-players") === "2");
    assert.match((await page.textContent("#admin-status"))!, /2 players · \d+ NPCs alive/);
    await page.screenshot({ path: `${SHOTS}/client-12-admin-map.png` });
    await context.close();
  });
});
