/**
 * The web client (client/, docs/client.md) in a real browser: two chromium contexts play through
 * the client's own UI (clicks and keys) against a real server. Screenshots of each step go to
 * test-results/client-*.png. On CI chromium is required (the suite fails without it).
 */
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { chromium, type Browser } from "playwright-core";
import type { GameServer } from "../../src/server.js";
import { startTestServer } from "../helpers/server.js";
import { buildClient, CHROMIUM, clickTile, clientTestWorld, logIn, positionOf, requireChromium, shot, until, type Gamer } from "./client-helpers.js";

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
    await until(bob, ([id, t]) => {
      const p = (window as any).realm.state().world.players.get(id);
      return p?.x === t.x && p?.z === t.z;
    }, [ann.id, target] as const);
    // And Bob walks with the keyboard: two steps west.
    const bobStart = (await positionOf(bob, bob.id))!;
    await bob.page.keyboard.press("ArrowLeft");
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
});
