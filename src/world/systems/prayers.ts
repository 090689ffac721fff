/**
 * Prayers in the world (docs/combat.md#prayers): switching them on and off, the drain of every
 * praying player each tick, the altar's recharge, and what combat reads of them (boosts and the
 * protection, which others see in the player's public view).
 */
import type { GameContent } from "../../content/load.js";
import type { Station } from "../../content/world-schemas.js";
import type { AttackMode, BoostedSkill } from "../../domain/combat.js";
import {
  activatePrayer,
  deactivatePrayer,
  drainPrayer,
  prayerBoosts,
  prayersOff,
  protectionOf,
  rechargePrayer,
  type PrayerDef,
  type PrayerState,
} from "../../domain/prayer.js";
import type { WorldClock } from "../clock.js";
import { system } from "../messages.js";
import { refuse } from "../refusals.js";
import type { Player } from "../player.js";

/** Tiles (Chebyshev) from an altar's tile within which a player can pray at it. */
export const ALTAR_RANGE = 2;
/** Longest gap between two ticks that drains prayer points (a stalled loop drains no more). */
const MAX_DRAIN_MS = 5_000;

const byContent = new WeakMap<GameContent, ReadonlyMap<string, PrayerDef>>();

/** The content's prayers by id. */
export function prayersOf(content: GameContent): ReadonlyMap<string, PrayerDef> {
  let m = byContent.get(content);
  if (!m) byContent.set(content, (m = new Map(content.prayers.map((p) => [p.id, p]))));
  return m;
}

/** The boosts of a player's active prayers, percent per skill. */
export function boostsOf(p: Player, content: GameContent): Partial<Record<BoostedSkill, number>> | undefined {
  return p.prayer.active.length === 0 ? undefined : prayerBoosts(p.prayer.active, prayersOf(content));
}

/** The attack style a player's active prayers protect it from. */
export function protectionOfPlayer(p: Player, content: GameContent): AttackMode | undefined {
  return p.prayer.active.length === 0 ? undefined : protectionOf(p.prayer.active, prayersOf(content));
}

export interface PrayersDeps {
  players: ReadonlyMap<string, Player>;
  content: GameContent;
  clock: WorldClock;
}

export class Prayers {
  private lastTickAt: number | undefined;

  constructor(private readonly d: PrayersDeps) {}

  /** A player just loaded: prayers the content no longer has are dropped. */
  restore(p: Player): void {
    const known = prayersOf(this.d.content);
    if (p.prayer.active.some((id) => !known.has(id))) p.prayer = { points: p.prayer.points, active: p.prayer.active.filter((id) => known.has(id)) };
    p.protection = protectionOfPlayer(p, this.d.content) ?? "";
  }

  /** `player:action { action: "pray" }`: switch a prayer on, or recharge at an altar (`targetId` a station). */
  pray(p: Player, targetId: string): void {
    const altar = this.d.content.stations.find((s) => s.id === targetId && s.type === "altar");
    if (altar) return this.recharge(p, altar);
    const r = activatePrayer(p.prayer, prayersOf(this.d.content), targetId, p.skills.prayer.level);
    if (!r.ok) return refuse(p, r.error.code, r.error.message);
    this.set(p, r.value);
  }

  /** `player:action { action: "unpray" }`: switch a prayer off. */
  unpray(p: Player, prayerId: string): void {
    const r = deactivatePrayer(p.prayer, prayersOf(this.d.content), prayerId);
    if (!r.ok) return refuse(p, r.error.code, r.error.message);
    this.set(p, r.value);
  }

  /** Every prayer off (a death). */
  switchOff(p: Player): void {
    this.set(p, prayersOff(p.prayer), false);
  }

  /** Drain every praying player by the time since the last tick; at zero its prayers switch off. */
  tick(): void {
    const now = this.d.clock.now();
    const elapsed = this.lastTickAt === undefined ? 0 : Math.min(MAX_DRAIN_MS, Math.max(0, now - this.lastTickAt));
    this.lastTickAt = now;
    if (elapsed === 0) return;
    const prayers = prayersOf(this.d.content);
    for (const p of this.d.players.values()) {
      if (p.prayer.active.length === 0 || p.dead) continue;
      const shown = p.prayerView().points;
      const r = drainPrayer(p.prayer, prayers, elapsed);
      p.prayer = r.state;
      p.safety.progressChanged();
      if (r.emptied) {
        p.protection = "";
        system(p, "You have run out of prayer points; recharge them at an altar.");
        p.sync();
      } else if (p.prayerView().points !== shown) p.sync();
    }
  }

  private recharge(p: Player, altar: Station): void {
    const tiles = this.d.content.stationTiles.get(altar.id) ?? [altar];
    if (!tiles.some((t) => Math.max(Math.abs(t.x - p.x), Math.abs(t.z - p.z)) <= ALTAR_RANGE)) {
      return refuse(p, "TOO_FAR", `You need to be at the ${altar.name.toLowerCase()} to pray there.`);
    }
    this.set(p, rechargePrayer(p.prayer, p.skills.prayer.level), false);
    system(p, "You recharge your prayer points.");
    p.sync();
  }

  private set(p: Player, next: PrayerState, sync = true): void {
    if (next === p.prayer) return;
    p.prayer = next;
    p.protection = protectionOfPlayer(p, this.d.content) ?? "";
    p.safety.progressChanged();
    if (sync) p.sync();
  }
}
