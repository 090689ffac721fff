/**
 * Driving the web client (client/) in Debian's chromium for the browser tests: log in through the
 * login screen, click tiles of the canvas, read what the client shows. Every action goes through
 * the page's own UI (mouse and keys); `window.realm` is read only, to find where a tile is drawn
 * and what the client holds.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Browser, Page } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const SHOTS = resolve("test-results");
/** Longest a page may take to show what a step waits for (the machine may be loaded). */
export const UI_WAIT_MS = 45_000;

/**
 * Chromium must be there: on CI (CI=true) its absence fails the run instead of skipping
 * (docs/contributing.md "Tests"); elsewhere the suite skips, saying so.
 */
export function requireChromium(ctx: Mocha.Context): void {
  if (existsSync(CHROMIUM)) return;
  if (process.env.CI === "true") throw new Error(`${CHROMIUM} is missing on CI: run scripts/install-browser.sh as root`);
  console.log(`    skipped: ${CHROMIUM} is not installed (run scripts/install-browser.sh as root)`);
  ctx.skip();
}

/** Builds client/dist when it is missing or older than its sources (the same step as `npm start`). */
export function buildClient(): string {
  execFileSync(process.execPath, ["scripts/client-build.mjs"], { stdio: "inherit" });
  return resolve("client/dist");
}

/** An NPC of the test world: aggressive, hits hard and fast, standing on the coast just east of town. */
export const OGRE = { id: "test_ogre", x: 31, z: 1 };

/**
 * A temporary world: the bundled manifests plus one test NPC (`OGRE`) that kills a starter
 * character in a few hits, so the death test is quick and does not hang on luck.
 */
export function clientTestWorld(): string {
  const dir = mkdtempSync(join(tmpdir(), "client-world-"));
  cpSync("world/manifests", join(dir, "manifests"), { recursive: true });
  const file = join(dir, "manifests", "npcs.json");
  const npcs = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>[];
  const chicken = npcs.find((n) => n.id === "chicken")!;
  npcs.push({
    ...chicken,
    id: OGRE.id,
    name: "Test ogre",
    examine: "Made for the browser tests.",
    combatLevel: 90,
    stats: { attack: 99, strength: 99, defense: 99, constitution: 99 },
    maxHit: 400,
    attackSpeed: 1,
    aggressive: true,
    aggroRadius: 6,
    wanderRadius: 0,
    spawns: [{ x: OGRE.x, z: OGRE.z }],
  });
  writeFileSync(file, JSON.stringify(npcs, null, 2));
  return dir;
}

export interface Gamer {
  page: Page;
  name: string;
  id: string;
}

/** A new browser context that logs in as a guest and creates a character named `name`. */
export async function logIn(browser: Browser, url: string, name: string): Promise<Gamer> {
  const context = await browser.newContext({ viewport: { width: 1700, height: 1000 } });
  const page = await context.newPage();
  page.setDefaultTimeout(UI_WAIT_MS);
  page.on("pageerror", (e) => console.log(`    [${name} page error] ${e.message}`));
  await page.goto(url);
  await page.fill("#login-name", name);
  await page.click("#login-guest");
  await page.waitForSelector("#character-step:not([hidden])");
  await page.fill("#character-name", name);
  await page.click("#character-create button[type=submit]");
  await page.waitForSelector("#game:not([hidden])");
  const id = await page.waitForFunction(() => (window as any).realm?.state().me?.id as string | undefined).then((h) => h.jsonValue() as Promise<string>);
  // The own player is drawn once the first patch has it.
  await page.waitForFunction((me) => (window as any).realm.state().world.players.has(me), id);
  return { page, name, id };
}

/** Clicks the middle of a tile of the game canvas (left, or right for the menu). */
export async function clickTile(g: Gamer, x: number, z: number, button: "left" | "right" = "left"): Promise<void> {
  const p = await g.page.evaluate(([x, z]) => (window as any).realm.screenOf(x, z) as { x: number; y: number }, [x, z] as const);
  await g.page.mouse.click(p.x, p.y, { button });
}

/** Waits until `fn` (run in the page with `arg`) is true of the client's state. */
export async function until<A>(g: Gamer, fn: (arg: A) => boolean, arg: A): Promise<void> {
  await g.page.waitForFunction(fn as never, arg, { timeout: UI_WAIT_MS, polling: 100 });
}

/** Where the client shows a player (by id), or undefined when out of view. */
export function positionOf(g: Gamer, id: string): Promise<{ x: number; z: number } | undefined> {
  return g.page.evaluate((id) => {
    const p = (window as any).realm.state().world.players.get(id);
    return p ? { x: p.x, z: p.z } : undefined;
  }, id);
}

/** A screenshot into test-results/. */
export async function shot(g: Gamer, name: string): Promise<void> {
  mkdirSync(SHOTS, { recursive: true });
  await g.page.screenshot({ path: join(SHOTS, `client-${name}.png`) });
}

/** Walks `g` to a tile by clicks on tiles at most 8 apart (each on screen), waiting for each. */
export async function walkTo(g: Gamer, x: number, z: number): Promise<void> {
  for (let hop = 0; hop < 30; hop++) {
    const at = (await positionOf(g, g.id))!;
    const step = { x: at.x + Math.max(-8, Math.min(8, x - at.x)), z: at.z + Math.max(-8, Math.min(8, z - at.z)) };
    // Around a building: the nearest free tile beside the step.
    for (const dx of [0, 1, -1, 2, -2, 3, -3, 4, -4, 5, -5, 6, -6]) {
      if (!(await g.page.evaluate(([x, z]) => (window as any).realm.blocked(x, z) as boolean, [step.x + dx, step.z] as const))) {
        step.x += dx;
        break;
      }
    }
    await clickTile(g, step.x, step.z);
    const arrived = await g.page
      .waitForFunction(
        ([id, t]) => {
          const p = (window as any).realm.state().world.players.get(id);
          return p?.x === t.x && p?.z === t.z;
        },
        [g.id, step] as const,
        { timeout: 15_000, polling: 100 },
      )
      .then(() => true)
      .catch(() => false);
    if (!arrived) return;
    if (step.x === x && step.z === z) return;
  }
}
