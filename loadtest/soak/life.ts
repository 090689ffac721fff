/**
 * What the soak's bots do until the end of the run: each an action every 1–2 s (walk, fight,
 * gather, chat, hostile input, reconnect, a death run into the PvP Ashlands, a REST read), and pairs
 * of idle bots trading every 2 s (most complete, some are declined or cancelled).
 */
import type { GameContent } from "../../src/content/load.js";
import { sleep, withTimeout } from "../lib/cli.js";
import type { Bot } from "../trade/bot.js";
import { tradeOnce } from "../trade/trade-once.js";
import { ensureConnected, freeNear, learn, nearest, position, reconnect, seen, teleport, type SoakBot } from "./bots.js";
import { hostilePayload, hostileRest } from "./hostile.js";
import { pick, rng } from "./options.js";
import { countFailure, countStatus, stats } from "./stats.js";

/** Walk into the PvP Ashlands next to the bandits, fight them and the other bots there, until dead (or 90 s). */
export async function dieOnce(b: SoakBot, content: GameContent, dying: Set<SoakBot>) {
  const bandit = content.npcs.get("ash_bandit");
  const spawnAt = bandit?.spawns[0] ?? { x: 0, z: 100 };
  stats.deathRuns++;
  const before = b.deaths;
  const t = freeNear(content, { x: spawnAt.x + Math.floor(rng() * 5) - 2, z: spawnAt.z + Math.floor(rng() * 5) - 2 });
  await teleport(b, t);
  dying.add(b);
  try {
    const until = performance.now() + 90_000;
    while (b.deaths === before && performance.now() < until && b.bot.connected) {
      const others = [...dying].filter((o) => o !== b && o.bot.connected);
      const bandits = [...seen].filter(([, e]) => e.aggressive && Math.max(Math.abs(e.x - t.x), Math.abs(e.z - t.z)) <= 10);
      const target = others.length > 0 && rng() < 0.5 ? pick(others).bot.id : bandits.length > 0 ? pick(bandits)[0] : undefined;
      if (target) {
        b.bot.send("player:action", { action: "attack", targetId: target });
        stats.attacks++;
      }
      await sleep(3_000);
    }
  } finally {
    dying.delete(b);
  }
  if (b.bot.connected) await teleport(b, b.home);
}

/** One bot's life until `end`: an action every 1-2 s, weighted. */
export async function live(b: SoakBot, url: string, content: GameContent, end: number, dying: Set<SoakBot>) {
  while (performance.now() < end) {
    await sleep(1_000 + rng() * 1_000);
    if (b.busy) continue;
    if (!b.bot.connected) {
      await ensureConnected(b);
      continue;
    }
    b.busy = true;
    try {
      learn(b, content);
      const r = rng();
      const at = position(b);
      if (r < 0.45) {
        const x = b.home.x + Math.floor(rng() * 9) - 4;
        const z = b.home.z + Math.floor(rng() * 9) - 4;
        if (content.inBounds(x, z) && !content.isBlocked(x, z)) {
          b.movedAt = performance.now();
          b.bot.send("player:move", { x, z, run: rng() < 0.5 });
          stats.moves++;
        }
      } else if (r < 0.6) {
        const id = nearest(at, "npc", 8);
        if (id) {
          b.movedAt = performance.now(); // attacking walks to the target
          b.bot.send("player:action", { action: "attack", targetId: id });
          stats.attacks++;
        }
      } else if (r < 0.75) {
        const id = nearest(at, "resource", 8);
        if (id) {
          b.movedAt = performance.now();
          b.bot.send("player:action", { action: "gather", targetId: id });
          stats.gathers++;
        }
      } else if (r < 0.82) {
        b.bot.send("player:chat", { text: `soak ${b.n} says hello ${Math.floor(rng() * 1000)}` });
        stats.chats++;
      } else if (r < 0.84) {
        // Hostile input, on this bot's transport, and a bad REST body.
        const [event, data] = hostilePayload();
        if (b.bot.transport === "json" && rng() < 0.3)
          b.bot.sendRawFrame(pick(["{", "null", '{"event": 5}', "\u0000".repeat(64), Buffer.from([0xff, 0x00, 0x13])]));
        else b.bot.send(event, data);
        stats.hostile[b.bot.transport === "json" ? "ws" : "sdk"]++;
        await hostileRest(b, url);
      } else if (r < 0.85) {
        await withTimeout(reconnect(b), 40_000, "reconnect");
        await teleport(b, b.home); // back home from wherever the rejoin put it
      } else if (r < 0.854) {
        await dieOnce(b, content, dying);
      } else if (r < 0.87) {
        try {
          const res = await fetch(`${url}/api/v1/player`, { headers: { authorization: `Bearer ${b.token}` }, signal: AbortSignal.timeout(20_000) });
          await res.arrayBuffer();
          countStatus(res.status, "GET /api/v1/player");
        } catch (e) {
          countFailure(e, "GET /api/v1/player");
        }
      }
      // else: idle this turn
    } catch (e) {
      countFailure(e, `bot ${b.n}`);
    } finally {
      b.busy = false;
    }
  }
}

/** Every 2 s, pair idle bots of the same home (a few per round): most trades complete, some are declined or cancelled. */
export async function trader(bots: SoakBot[], content: GameContent, end: number) {
  const inFlight = new Set<Promise<void>>();
  const byHome = new Map<string, SoakBot[]>();
  for (const b of bots) {
    const k = `${b.home.x},${b.home.z}`;
    byHome.set(k, [...(byHome.get(k) ?? []), b]);
  }
  const groups = [...byHome.values()].filter((g) => g.length >= 2);
  while (performance.now() < end) {
    await sleep(2_000);
    const rounds = Math.max(1, Math.round(bots.length / 40));
    for (let i = 0; i < rounds; i++) {
      const g = pick(groups);
      const idle = g.filter((b) => !b.busy && b.bot.connected);
      if (idle.length < 2) continue;
      const a = idle[0]!;
      const b = idle[1]!;
      a.busy = b.busy = true;
      const p = (async () => {
        const kind = rng() < 0.7 ? "complete" : rng() < 0.5 ? "decline" : "cancel";
        try {
          await teleport(a, a.home);
          await teleport(b, freeNear(content, { x: a.home.x + 1, z: a.home.z }));
          const feathers = (x: Bot) => x.inventory.find((s) => s.itemId === "feather");
          const r = await tradeOnce(a.bot, b.bot, {
            offerA: (x) => {
              const f = feathers(x);
              return { items: f ? [{ inventorySlot: f.slot, quantity: 1 + Math.floor(rng() * Math.min(3, f.quantity)) }] : [], coins: 0 };
            },
            offerB: (x) => ({ items: [], coins: Math.min(x.coins, 1 + Math.floor(rng() * 100)) }),
            decline: kind === "decline",
            onStarted: kind === "cancel" ? (id) => setTimeout(() => a.bot.send("tradeCancel", { tradeId: id }), 200 + rng() * 800) : undefined,
            timeoutMs: 30_000,
          });
          const k = r.reason ? `${r.outcome}:${r.reason}` : r.outcome;
          stats.trades[k] = (stats.trades[k] ?? 0) + 1;
        } catch (e) {
          countFailure(e, "trade");
        } finally {
          a.busy = b.busy = false;
        }
      })();
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
    }
  }
  await Promise.all([...inFlight]);
}
