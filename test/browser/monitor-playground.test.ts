/**
 * The monitor and the playground in a real browser (docs/contributing.md "Browser tests"): Debian's chromium
 * (`/usr/bin/chromium`, installed by scripts/install-browser.sh) driven by playwright-core. Never a
 * browser download. Skips only when chromium is not installed, saying so. Screenshots go to
 * test-results/ (git-ignored).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { resolve } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import type { GameServer } from "../../src/server/server.js";
import { sdkPlayer, tokenFor, type TestPlayer } from "../helpers/clients.js";
import { startTestServer, TEST_ENV } from "../helpers/server.js";

const CHROMIUM = "/usr/bin/chromium";
const SHOTS = resolve("test-results");
/** Longest a page may take to show what a step waits for (the machine may be loaded). */
const UI_WAIT_MS = 30_000;

describe("browser: monitor and playground (chromium)", function () {
  this.timeout(180_000);
  let server: GameServer;
  let browser: Browser;
  let player: TestPlayer;

  before(async function () {
    if (!existsSync(CHROMIUM)) {
      console.log(`    skipped: ${CHROMIUM} is not installed (run scripts/install-browser.sh as root)`);
      this.skip();
    }
    mkdirSync(SHOTS, { recursive: true });
    server = await startTestServer();
    // A game client in the world room, so the monitor has a client to show.
    player = await sdkPlayer(server);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
  });
  after(async () => {
    await browser?.close();
    await player?.close();
    await server?.close();
  });

  const newPage = async (credentials?: { username: string; password: string }): Promise<Page> => {
    const context = await browser.newContext({ httpCredentials: credentials, viewport: { width: 1400, height: 900 } });
    const page = await context.newPage();
    page.setDefaultTimeout(UI_WAIT_MS);
    return page;
  };
  const bodyHas = (page: Page, text: string) => page.waitForFunction((t) => document.body.innerText.includes(t), text, { timeout: UI_WAIT_MS });

  it("the monitor at /colyseus shows the world room and its client after login", async () => {
    const page = await newPage({ username: "admin", password: TEST_ENV.ADMIN_CODE! });
    // The old address lands here too.
    await page.goto(`${server.url}/admin/monitor/`);
    assert.equal(new URL(page.url()).pathname, "/colyseus/");
    const worldRoomId = (player.room as { roomId: string }).roomId;
    await bodyHas(page, worldRoomId);
    await bodyHas(page, "world");
    await page.screenshot({ path: `${SHOTS}/monitor-rooms.png`, fullPage: true });
    await page.getByText("INSPECT").click();
    await bodyHas(page, (player.room as { sessionId: string }).sessionId);
    await page.screenshot({ path: `${SHOTS}/monitor-world-clients.png`, fullPage: true });
    await page.context().close();
  });

  it("the playground lists the rooms and joins the existing world room through /ws", async () => {
    const page = await newPage();
    await page.goto(`${server.url}/playground`);
    assert.equal(new URL(page.url()).searchParams.get("endpoint"), `${server.url}/ws`);
    await bodyHas(page, "world (1)");
    await page.screenshot({ path: `${SHOTS}/playground-rooms.png`, fullPage: true });

    // Join (not create, not joinOrCreate) the world room with a server token.
    await page.locator("#method-select:visible").selectOption("join");
    await page.locator("#room-type-select:visible").selectOption("world");
    await page.locator("button:visible", { hasText: "Auth Token" }).click();
    const account = tokenFor();
    await page.locator("input[name=token]:visible").fill(account.token);
    await page.locator("button:visible", { hasText: /^\s*Join\s*$/ }).click();
    // innerText follows the page's upper-case styling.
    await bodyHas(page, "1 ACTIVE");
    // The player:sync it received is the token's account's character.
    await bodyHas(page, account.accountId);
    await page.screenshot({ path: `${SHOTS}/playground-joined.png`, fullPage: true });
    // The server sees two players now: the test client and the playground's.
    assert.equal(server.world.playersOnline(), 2);
    await page.context().close();
  });
});
