/**
 * What a click on a tile means (docs/client.md "Layout of client/"): the options of a tile, the first one being
 * what a left click does, the whole list the right-click menu. Pure: the unit tests call it.
 */
import { tileKey, type Content, type Tile } from "../content.js";
import type { GameState } from "./store.js";

export type Intent =
  | { kind: "move"; x: number; z: number }
  | { kind: "attack"; targetId: string }
  | { kind: "talk"; targetId: string }
  | { kind: "gather"; targetId: string }
  | { kind: "pickup"; targetId: string }
  | { kind: "trade"; targetId: string }
  | { kind: "whisper"; name: string; targetId: string }
  | { kind: "friend"; name: string }
  | { kind: "ignore"; name: string }
  | { kind: "useOn"; slot: number; targetId: string }
  | { kind: "bank"; x: number; z: number }
  | { kind: "store"; storeId: string; x: number; z: number };

export interface TileOption {
  label: string;
  intent: Intent;
}

/** The options of a tile, default first; `selectedSlot` is an item picked with "Use" first. */
export function optionsAt(tile: Tile, s: GameState, c: Content, selectedSlot?: number): TileOption[] {
  const out: TileOption[] = [];
  const here = (e: { x: number; z: number }) => e.x === tile.x && e.z === tile.z;
  const selected = selectedSlot === undefined ? undefined : s.me?.inventory.find((i) => i.slot === selectedSlot);
  const selectedName = selected ? c.itemName(selected.itemId) : "";

  for (const r of s.world.resources.values()) {
    if (!here(r)) continue;
    if (r.skill === "firemaking") {
      if (selected) out.push({ label: `Use ${selectedName} on fire`, intent: { kind: "useOn", slot: selected.slot, targetId: r.id } });
    } else if (!r.depleted) {
      out.push({ label: `${gatherVerb(r.skill)} ${pretty(r.type)}`, intent: { kind: "gather", targetId: r.id } });
    }
  }
  for (const st of c.stations) {
    if (!st.tiles.some(here)) continue;
    if (selected) out.push({ label: `Use ${selectedName} on ${st.name}`, intent: { kind: "useOn", slot: selected.slot, targetId: st.id } });
    if (st.type === "bank") out.push({ label: `Bank at ${st.name}`, intent: { kind: "bank", x: st.x, z: st.z } });
  }
  for (const store of c.stores) {
    if (here(store)) out.push({ label: `Trade with ${store.name}`, intent: { kind: "store", storeId: store.id, x: store.x, z: store.z } });
  }
  for (const n of s.world.npcs.values()) {
    if (!here(n)) continue;
    const def = c.npcs.get(n.npcId);
    if (def?.attackable !== false) out.push({ label: `Attack ${n.name} (level ${n.combatLevel})`, intent: { kind: "attack", targetId: n.id } });
    out.push({ label: `Talk to ${n.name}`, intent: { kind: "talk", targetId: n.id } });
  }
  for (const p of s.world.players.values()) {
    if (!here(p) || p.id === s.me?.id) continue;
    out.push({ label: `Trade with ${p.name}`, intent: { kind: "trade", targetId: p.id } });
    if (c.areaAt(tile.x, tile.z)?.pvp) out.push({ label: `Attack ${p.name}`, intent: { kind: "attack", targetId: p.id } });
    out.push({ label: `Message ${p.name}`, intent: { kind: "whisper", name: p.name, targetId: p.id } });
    out.push({ label: `Add ${p.name} as friend`, intent: { kind: "friend", name: p.name } });
    out.push({ label: `Ignore ${p.name}`, intent: { kind: "ignore", name: p.name } });
  }
  for (const g of s.world.groundItems.values()) {
    if (here(g)) out.push({ label: `Take ${c.itemName(g.itemId)}${g.quantity > 1 ? ` (${g.quantity})` : ""}`, intent: { kind: "pickup", targetId: g.id } });
  }
  if (!c.blocked.has(tileKey(tile.x, tile.z))) out.push({ label: "Walk here", intent: { kind: "move", x: tile.x, z: tile.z } });
  return out;
}

/** A free tile next to `target` (8 neighbours, nearest to `from` first), to walk to before using it. */
export function approach(target: Tile, from: Tile, c: Content): Tile | undefined {
  const around: Tile[] = [];
  for (let r = 1; r <= 3; r++) {
    for (let dx = -r; dx <= r; dx++)
      for (let dz = -r; dz <= r; dz++) {
        if (Math.max(Math.abs(dx), Math.abs(dz)) !== r) continue;
        const t = { x: target.x + dx, z: target.z + dz };
        if (!c.blocked.has(tileKey(t.x, t.z))) around.push(t);
      }
    if (around.length) break;
  }
  const d = (t: Tile) => Math.max(Math.abs(t.x - from.x), Math.abs(t.z - from.z));
  return around.sort((a, b) => d(a) - d(b))[0];
}

function gatherVerb(skill: string): string {
  return skill === "woodcutting" ? "Chop" : skill === "mining" ? "Mine" : skill === "fishing" ? "Fish at" : "Gather";
}

/** `oak_tree` → `oak tree`. */
export function pretty(id: string): string {
  return id.replace(/_/g, " ");
}
