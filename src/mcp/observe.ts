/**
 * `observe`: the player's surroundings sized for a language model (docs/agents.md#observe). Self
 * first, then the players, NPCs, resource nodes, ground items and stations in view with ids, names,
 * distances and the tools that act on them; the trade partner, attackers and the player's own
 * target always first, then nearest first; capped by count per kind and by characters overall.
 */
import type { GameContent } from "../content/load.js";
import { statusOf } from "./outcome.js";
import { str, type GameSession, type Seen, type ViewKind } from "./session.js";

/** The largest observation in characters (text, or JSON text). */
export const MAX_OBSERVE_CHARS = 2_000;
/** Entries per kind unless asked for fewer. */
export const DEFAULT_PER_KIND = 8;
/** Stations (bank booths, ranges, furnaces, anvils, altars) are listed within this many tiles. */
const STATION_RADIUS = 24;

/** One thing in view as the observation lists it. */
export interface Observed {
  id: string;
  name: string;
  d: number;
  at: [number, number];
  info?: string;
  /** Tools that act on it. */
  can: string[];
}

export interface Observation {
  self: ReturnType<typeof statusOf> & { name: string; id: string; level: number };
  players: Observed[];
  npcs: Observed[];
  resources: Observed[];
  groundItems: Observed[];
  stations: Observed[];
  /** How many of each kind were in view but left out (the caps). */
  more: Record<string, number>;
  /** Chat lines, refusals and trade events since the previous observe (newest last). */
  recent: string[];
}

const chebyshev = (a: { x: number; z: number }, b: { x: number; z: number }) => Math.max(Math.abs(a.x - b.x), Math.abs(a.z - b.z));

/**
 * Build the observation. `recentSince`: the log position of the previous observe.
 */
export function observe(s: GameSession, content: GameContent, opts: { perKind?: number; recentSince: number }): Observation {
  const me = s.me!;
  const here = s.tile();
  const perKind = Math.max(1, Math.min(opts.perKind ?? DEFAULT_PER_KIND, 50));
  const priority = new Set<string>([...s.currentAttackers()]);
  if (s.trade) priority.add(s.trade.partnerId);
  for (const t of s.incoming.values()) priority.add(t.fromPlayerId);
  const target = s.self()?.targetId;
  if (typeof target === "string" && target) priority.add(target);
  const more: Record<string, number> = {};

  const pick = (kind: ViewKind, describe: (e: Seen) => Omit<Observed, "id" | "d" | "at">): Observed[] => {
    const all = [...s.view[kind].values()].filter((e) => e.id !== me.id);
    all.sort((a, b) => Number(priority.has(b.id)) - Number(priority.has(a.id)) || chebyshev(here, a) - chebyshev(here, b) || a.id.localeCompare(b.id));
    if (all.length > perKind) more[kind] = all.length - perKind;
    return all.slice(0, perKind).map((e) => ({ id: e.id, d: chebyshev(here, e), at: [e.x, e.z], ...describe(e) }));
  };
  const pvpHere = content.isPvp(here.x, here.z);
  const players = pick("players", (p) => {
    const tags = [`lvl ${str(p.combatLevel)}`, `hp ${str(p.health)}/${str(p.maxHealth)}`, str(p.activity)];
    if (s.trade?.partnerId === p.id) tags.push("TRADE PARTNER");
    if (s.currentAttackers().has(p.id)) tags.push("ATTACKING YOU");
    const can = ["trade_request", "chat"];
    if (pvpHere && content.isPvp(p.x, p.z)) can.push("attack");
    return { name: str(p.name), info: tags.join(", "), can };
  });
  const npcs = pick("npcs", (n) => {
    const def = content.npcs.get(str(n.npcId));
    const tags = [`lvl ${str(n.combatLevel)}`, `hp ${str(n.health)}/${str(n.maxHealth)}`];
    if (n.targetId === me.id) tags.push("ATTACKING YOU");
    const can = def?.attackable === false ? ["talk"] : ["attack", "talk"];
    return { name: str(n.name), info: tags.join(", "), can };
  });
  const resources = pick("resources", (r) => {
    const node = content.gatheringNodes.get(str(r.type));
    if (r.type === "fire") return { name: "Fire", info: "cook raw food on it", can: ["cook"] };
    const tags = [str(r.skill), `lvl ${node?.levelRequired ?? 1}`];
    if (node) tags.push(`needs ${node.tools.join("|")}`, `gives ${node.yields}`);
    if (r.depleted) tags.push("DEPLETED");
    return { name: node?.name ?? str(r.type), info: tags.join(", "), can: r.depleted ? [] : ["gather"] };
  });
  const groundItems = pick("groundItems", (g) => ({
    name: content.items.get(str(g.itemId))?.name ?? str(g.itemId),
    info: `${str(g.itemId)} x${str(g.quantity)}`,
    can: ["pickup"],
  }));
  const stationList = content.stations
    .map((st) => ({ st, d: chebyshev(here, st) }))
    .filter((x) => x.d <= STATION_RADIUS)
    .sort((a, b) => a.d - b.d);
  if (stationList.length > perKind) more.stations = stationList.length - perKind;
  const stationTools: Record<string, string[]> = {
    bank: ["bank_deposit", "bank_withdraw"],
    range: ["cook"],
    furnace: ["use_item"],
    anvil: ["use_item"],
    altar: [],
  };
  const stations: Observed[] = stationList
    .slice(0, perKind)
    .map(({ st, d }) => ({ id: st.id, name: st.name, d, at: [st.x, st.z], info: st.type, can: stationTools[st.type] ?? [] }));
  for (const store of content.stores.values()) {
    const d = chebyshev(here, store);
    if (d <= STATION_RADIUS && stations.length < perKind + 2)
      stations.push({ id: store.id, name: store.name, d, at: [store.x, store.z], info: "store", can: ["buy", "sell", "talk"] });
  }

  const recent = s
    .since(opts.recentSince)
    .filter((e) => e.event !== "player:sync" && e.event !== "skill:xp" && e.event !== "combat:hit")
    .slice(-6)
    .map((e) => line(e.event, e.data));
  return {
    self: { name: me.name, id: me.id, level: me.combatLevel, ...statusOf(s) },
    players,
    npcs,
    resources,
    groundItems,
    stations,
    more,
    recent,
  };
}

/** One logged event as a short line. */
function line(event: string, d: Record<string, unknown>): string {
  const text = (v: unknown) => str(v).slice(0, 120);
  if (event === "chat:message") {
    const who = d.type === "system" ? "system" : `${text(d.fromName)}${d.fromId ? ` (${text(d.fromId)})` : ""}`;
    return `[${text(d.type)}] ${who}: ${text(d.text)}${d.code ? ` {${text(d.code)}}` : ""}`;
  }
  if (event === "tradeIncoming") return `trade request ${text(d.tradeId)} from ${text(d.fromPlayerName)} (${text(d.fromPlayerId)})`;
  if (event === "tradeError") return `trade refused {${text(d.code)}}: ${text(d.message)}`;
  if (event === "tradeCancelled") return `trade ${text(d.tradeId)} cancelled (${text(d.reason)})`;
  return `${event} ${JSON.stringify(d).slice(0, 120)}`;
}

/** The observation as compact text, at most `maxChars` characters (lines past it are left out and counted). */
export function observationText(o: Observation, maxChars = MAX_OBSERVE_CHARS): string {
  const s = o.self;
  const head = [
    `You: ${s.name} (${s.id}) lvl ${s.level} at (${s.tile[0]}, ${s.tile[1]}) hp ${s.health} ${s.activity}; in hand ${s.inHand ?? "nothing"}; ${s.freeSlots} free slots; ${s.coins} coins` +
      `${s.trade ? `; trade: ${s.trade}` : ""}${s.paused ? "; GOALS PAUSED: act only after resume" : ""}`,
  ];
  const sections: [string, Observed[]][] = [
    ["Players", o.players],
    ["NPCs", o.npcs],
    ["Resources", o.resources],
    ["Ground items", o.groundItems],
    ["Stations", o.stations],
  ];
  const body: string[] = [];
  for (const [title, list] of sections) {
    if (list.length === 0) continue;
    body.push(`${title}:`);
    for (const e of list)
      body.push(`- ${e.id} ${e.name} d${e.d} (${e.at[0]}, ${e.at[1]})${e.info ? ` ${e.info}` : ""}${e.can.length ? ` -> ${e.can.join(", ")}` : ""}`);
  }
  const moreText = Object.entries(o.more).map(([k, n]) => `${n} more ${k}`);
  if (o.recent.length) body.push("Recent:", ...o.recent.map((r) => `- ${r}`));
  const out = [...head];
  let used = head[0]!.length;
  let dropped = 0;
  for (const l of body) {
    if (used + l.length + 1 > maxChars - 60) {
      dropped++;
      continue;
    }
    out.push(l);
    used += l.length + 1;
  }
  if (moreText.length || dropped) out.push(`(${[...moreText, ...(dropped ? [`${dropped} lines cut`] : [])].join(", ")})`);
  return out.join("\n").slice(0, maxChars);
}

/** The observation as JSON text within `maxChars`: the farthest entries go first until it fits. */
export function observationJson(o: Observation, maxChars = MAX_OBSERVE_CHARS): string {
  const copy: Observation = {
    ...o,
    players: [...o.players],
    npcs: [...o.npcs],
    resources: [...o.resources],
    groundItems: [...o.groundItems],
    stations: [...o.stations],
    more: { ...o.more },
    recent: [...o.recent],
  };
  const lists = ["recent", "stations", "groundItems", "resources", "npcs", "players"] as const;
  let text = JSON.stringify(copy);
  while (text.length > maxChars) {
    const longest = lists.filter((k) => copy[k].length > 0).sort((a, b) => copy[b].length - copy[a].length)[0];
    if (!longest) break;
    (copy[longest] as unknown[]).pop();
    if (longest !== "recent") copy.more[longest] = (copy.more[longest] ?? 0) + 1;
    text = JSON.stringify(copy);
  }
  return text.slice(0, maxChars);
}
