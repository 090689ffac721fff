/**
 * `npm run client:measure -- [url]`: the web client's bundle size (gzip, from client/dist) and,
 * against a running server (default http://127.0.0.1:5555), the first paint of `/` in Debian's
 * chromium (docs/client.md "Measurements"): first paint and first contentful paint of the login
 * screen, then the time from the guest login click until the game canvas shows the world.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { chromium } from "playwright-core";

const dist = "client/dist";
const url = process.argv[2] ?? "http://127.0.0.1:5555";

function sizes(): { file: string; raw: number; gzip: number }[] {
  const out: { file: string; raw: number; gzip: number }[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(js|css|html)$/.test(name)) {
        const body = readFileSync(p);
        out.push({ file: p.slice(dist.length + 1), raw: body.length, gzip: gzipSync(body, { level: 9 }).length });
      }
    }
  };
  walk(dist);
  return out.sort((a, b) => b.gzip - a.gzip);
}

const kb = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const files = sizes();
const total = files.reduce((s, f) => ({ raw: s.raw + f.raw, gzip: s.gzip + f.gzip }), { raw: 0, gzip: 0 });
console.log(`bundle: ${files.length} files, ${kb(total.raw)} raw, ${kb(total.gzip)} gzip`);
for (const f of files.slice(0, 5)) console.log(`  ${f.file}: ${kb(f.raw)} raw, ${kb(f.gzip)} gzip`);

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu"] });
try {
  const page = await (await browser.newContext({ viewport: { width: 1400, height: 900 } })).newPage();
  await page.goto(url, { waitUntil: "load" });
  const paint = await page.evaluate(() => {
    const p = Object.fromEntries(performance.getEntriesByType("paint").map((e) => [e.name, Math.round(e.startTime)]));
    const nav = performance.getEntriesByType("navigation")[0] as PerformanceNavigationTiming;
    return { ...p, domContentLoaded: Math.round(nav.domContentLoadedEventEnd), load: Math.round(nav.loadEventEnd), transferred: nav.transferSize };
  });
  console.log(`login screen: ${JSON.stringify(paint)} (ms since navigation start)`);
  const t0 = Date.now();
  await page.click("#login-guest");
  await page.waitForSelector("#character-step:not([hidden])");
  await page.click("#character-create button[type=submit]");
  await page.waitForFunction(() => {
    const r = (window as unknown as { realm?: { state(): { me?: { id: string }; world: { players: Map<string, unknown> } } } }).realm;
    const s = r?.state();
    return !!s?.me && s.world.players.has(s.me.id);
  });
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  console.log(`guest login to the world drawn: ${Date.now() - t0} ms`);
} finally {
  await browser.close();
}
