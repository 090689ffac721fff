/** The soak's checks after the clean shutdown: trades audited, stacks within their caps, storage equal to each bot's last sync, memory flat. */
import type { GameContent } from "../../src/content/load.js";
import { MAX_STACK } from "../../src/domain/types.js";
import type { SoakBot } from "./bots.js";
import { MEMORY_LIMIT } from "./options.js";
import { completedTrades } from "./stats.js";

export interface Check {
  name: string;
  pass: boolean;
  detail: string;
  failures?: string[];
}

export type Sql = <T = any>(q: string, params?: unknown[]) => Promise<T[]>;

export async function checkTradesAudited(sql: Sql): Promise<Check> {
  const ids = [...completedTrades];
  const rows = await sql<{ id: string; outcome: string }>(`select id, outcome from trade_audits`);
  const byId = new Map<string, string[]>();
  for (const r of rows) byId.set(r.id, [...(byId.get(r.id) ?? []), r.outcome]);
  const bad = ids
    .filter((id) => (byId.get(id) ?? []).length !== 1 || byId.get(id)![0] !== "completed")
    .map((id) => `${id}: ${JSON.stringify(byId.get(id) ?? [])}`);
  const [{ n }] = await sql<{ n: number }>(`select count(*)::int n from trade_audits where outcome = 'completed'`);
  return {
    name: "every completed trade audited",
    pass: bad.length === 0,
    detail: `${ids.length} completed trades seen by bots, ${n} completed audit rows, ${bad.length} without exactly one completed audit`,
    failures: bad.slice(0, 20),
  };
}

export async function checkStacks(sql: Sql, content: GameContent): Promise<Check> {
  const bad: string[] = [];
  const stackable = (id: string) => content.items.get(id)?.stackable;
  for (const [table, slotCol, stacksAnything] of [
    ["inventory_items", "slot", false],
    ["equipment_items", "slot_type", false],
    ["bank_items", "item_id", true],
  ] as const) {
    const rows = await sql<{ character_id: string; s: string; item_id: string; quantity: number }>(
      `select character_id, ${slotCol}::text s, item_id, quantity from ${table}`,
    );
    for (const r of rows) {
      const cap = stacksAnything || stackable(r.item_id) ? MAX_STACK : 1;
      if (!(r.quantity >= 1 && r.quantity <= cap)) bad.push(`${table} ${r.character_id} ${r.s}: ${r.quantity} × ${r.item_id} (cap ${cap})`);
      if (!content.items.has(r.item_id)) bad.push(`${table} ${r.character_id} ${r.s}: unknown item ${r.item_id}`);
    }
  }
  for (const r of await sql<{ id: string; coins: number }>(`select id, coins from characters where coins < 0 or coins > ${MAX_STACK}`))
    bad.push(`characters ${r.id}: coins ${r.coins}`);
  const [{ n }] = await sql<{ n: number }>(
    `select (select count(*) from inventory_items) + (select count(*) from equipment_items) + (select count(*) from bank_items) n`,
  );
  return {
    name: "no stack above its cap, no quantity < 1, no negative coins",
    pass: bad.length === 0,
    detail: `${n} stored stacks checked, ${bad.length} bad`,
    failures: bad.slice(0, 20),
  };
}

/**
 * Storage after the clean shutdown against each bot's last `player:sync`:
 * - items (inventory slot by slot, equipment slot by slot, bank item by item) and coins: EQUAL;
 * - XP of every skill: stored ≥ synced (XP only grows; the last hit may land after the last sync);
 * - position: equal to the synced tile when the bot sent no move, attack, gather or teleport
 *   after its last sync; otherwise (movement is not synced) only a free tile inside the world.
 */
export async function storageMatchesSync(sql: Sql, bots: SoakBot[], content: GameContent): Promise<Check> {
  const bad: string[] = [];
  const chars = new Map((await sql<any>(`select * from characters`)).map((r) => [r.id, r]));
  const group = async (table: string) => {
    const m = new Map<string, any[]>();
    for (const r of await sql<any>(`select * from ${table}`)) m.set(r.character_id, [...(m.get(r.character_id) ?? []), r]);
    return m;
  };
  const inv = await group("inventory_items");
  const eq = await group("equipment_items");
  const bank = await group("bank_items");
  let positionsExact = 0;
  for (const b of bots) {
    const s = b.bot.state;
    const id = b.bot.id;
    const row = chars.get(id);
    if (!s || !row) {
      bad.push(`bot ${b.n} (${id || "no id"}): ${!s ? "never synced" : "no stored character"}`);
      continue;
    }
    const who = `bot ${b.n} ${id}`;
    if (Number(row.coins) !== s.coins) bad.push(`${who}: coins stored ${row.coins}, synced ${s.coins}`);
    const key = (xs: string[]) => xs.sort().join(" | ");
    const invStored = key((inv.get(id) ?? []).map((r) => `${r.slot}:${r.item_id}×${r.quantity}`));
    const invSynced = key((s.inventory ?? []).map((r: any) => `${r.slot}:${r.itemId}×${r.quantity}`));
    if (invStored !== invSynced) bad.push(`${who}: inventory stored [${invStored}] synced [${invSynced}]`);
    const eqStored = key((eq.get(id) ?? []).map((r) => `${r.slot_type}:${r.item_id}×${r.quantity}`));
    const eqSynced = key(
      Object.entries(s.equipment ?? {})
        .filter(([, v]) => v)
        .map(([k, v]: [string, any]) => `${k}:${v.itemId}×${v.quantity ?? 1}`),
    );
    if (eqStored !== eqSynced) bad.push(`${who}: equipment stored [${eqStored}] synced [${eqSynced}]`);
    const bankStored = key((bank.get(id) ?? []).map((r) => `${r.item_id}×${r.quantity}`));
    const bankSynced = key((s.bank ?? []).map((r: any) => `${r.itemId}×${r.quantity}`));
    if (bankStored !== bankSynced) bad.push(`${who}: bank stored [${bankStored}] synced [${bankSynced}]`);
    for (const [skill, v] of Object.entries(s.skills ?? {}) as [string, { xp: number }][]) {
      const stored = Number(row[`${skill}_xp`]);
      if (!(stored >= v.xp)) bad.push(`${who}: ${skill} xp stored ${stored} < synced ${v.xp}`);
    }
    const x = Math.round(Number(row.position_x));
    const z = Math.round(Number(row.position_z));
    if (b.movedAt < b.syncedAt) {
      positionsExact++;
      if (x !== Math.round(s.position.x) || z !== Math.round(s.position.z))
        bad.push(`${who}: position stored ${x},${z}, synced ${s.position.x},${s.position.z} (no move since)`);
    } else if (!content.inBounds(x, z)) bad.push(`${who}: stored position ${x},${z} outside the world`);
  }
  return {
    name: "storage equals each bot's last player:sync",
    pass: bad.length === 0,
    detail: `${bots.length} bots: items, equipment, bank and coins equal, XP ≥ synced; position exact for ${positionsExact} that had not moved since their last sync; ${bad.length} mismatches`,
    failures: bad.slice(0, 20),
  };
}

/**
 * RSS after warm-up: the first half of the run is warm-up; the mean RSS over the first tenth of
 * the run after it (minute 5-6 of 10) is compared with the mean over the last tenth (minute 9-10).
 * A least-squares slope over the whole second half is reported beside it.
 */
export function memoryCheck(samples: { t: number; rss: number }[], runMs: number): Check & { growth: number; slopePerMinute: number } {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const a = samples.filter((s) => s.t >= runMs / 2 && s.t < runMs / 2 + runMs / 10).map((s) => s.rss);
  const b = samples.filter((s) => s.t >= runMs - runMs / 10 && s.t <= runMs).map((s) => s.rss);
  const half = samples.filter((s) => s.t >= runMs / 2 && s.t <= runMs);
  if (a.length === 0 || b.length === 0)
    return { name: "memory flat after warm-up", pass: false, detail: "not enough RSS samples", growth: NaN, slopePerMinute: NaN };
  const growth = mean(b) / mean(a) - 1;
  const mt = mean(half.map((s) => s.t));
  const mr = mean(half.map((s) => s.rss));
  const slope =
    half.reduce((n, s) => n + (s.t - mt) * (s.rss - mr), 0) /
    Math.max(
      1,
      half.reduce((n, s) => n + (s.t - mt) ** 2, 0),
    );
  const slopePerMinute = (slope * 60_000) / mr;
  const mb = (x: number) => `${(x / 1048576).toFixed(1)} MB`;
  const min = (x: number) => (x / 60_000).toFixed(1);
  return {
    name: "memory flat after warm-up (RSS growth < 10 %)",
    pass: growth < MEMORY_LIMIT,
    detail: `mean RSS min ${min(runMs / 2)}-${min(runMs / 2 + runMs / 10)} ${mb(mean(a))} → min ${min(runMs - runMs / 10)}-${min(runMs)} ${mb(mean(b))}: ${(growth * 100).toFixed(1)} % (linear fit over the second half ${(slopePerMinute * 100).toFixed(2)} %/min); peak ${mb(Math.max(...samples.map((s) => s.rss)))}`,
    growth,
    slopePerMinute,
  };
}
