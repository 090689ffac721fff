/**
 * The admin world map (docs/client.md "Admin world map"): every player and NPC of one world, live,
 * from `GET /api/admin/world-map?world=N` (admin code in `X-Admin-Code`), polled once a second and
 * drawn on a 2D canvas over the areas of the manifests. Meant for watching a load test: thousands
 * of dots cost one path each.
 */
import { loadContent, type Content } from "./content.js";
import { byId } from "./ui/context.js";

interface WorldMap {
  world: number;
  tick: number;
  players: { id: string; name: string; x: number; z: number; health: number; maxHealth: number; isAgent: boolean; online: boolean }[];
  npcs: { id: string; npcId: string; name: string; x: number; z: number; health: number; maxHealth: number; alive: boolean }[];
}

const canvas = byId<HTMLCanvasElement>("map");
const status = byId("admin-status");
let latest: WorldMap | undefined;
let timer: ReturnType<typeof setTimeout> | undefined;

async function poll(code: string, world: number): Promise<void> {
  try {
    const r = await fetch(`/api/admin/world-map?world=${world}`, { headers: { "x-admin-code": code } });
    const body = (await r.json()) as WorldMap & { error?: { message: string } };
    if (!r.ok) throw new Error(body.error?.message ?? `HTTP ${r.status}`);
    latest = body;
    const alive = body.npcs.filter((n) => n.alive).length;
    status.textContent = `world ${body.world} · tick ${body.tick} · ${body.players.length} players · ${alive} NPCs alive`;
    status.dataset.players = String(body.players.length);
  } catch (e) {
    status.textContent = `error: ${(e as Error).message}`;
  }
  timer = setTimeout(() => void poll(code, world), 1000);
}

function draw(content: Content): void {
  const w = (canvas.width = canvas.clientWidth * devicePixelRatio);
  const h = (canvas.height = canvas.clientHeight * devicePixelRatio);
  const g = canvas.getContext("2d")!;
  const b = content.bounds;
  const scale = Math.min(w / (b.maxX - b.minX + 1), h / (b.maxZ - b.minZ + 1));
  const px = (x: number) => (x - b.minX) * scale;
  const pz = (z: number) => (b.maxZ - z) * scale;
  g.fillStyle = "#0c120c";
  g.fillRect(0, 0, w, h);
  for (const a of content.areas) {
    g.fillStyle = content.biomeColor(a.biome);
    g.fillRect(px(a.bounds.minX), pz(a.bounds.maxZ), (a.bounds.maxX - a.bounds.minX + 1) * scale, (a.bounds.maxZ - a.bounds.minZ + 1) * scale);
    g.fillStyle = "#ffffff60";
    g.font = `${12 * devicePixelRatio}px sans-serif`;
    g.fillText(a.name, px(a.bounds.minX) + 4, pz(a.bounds.maxZ) + 14 * devicePixelRatio);
  }
  g.fillStyle = "#5a3a1a";
  for (const bd of content.buildings) g.fillRect(px(bd.x), pz(bd.z + bd.footprint.depth - 1), bd.footprint.width * scale, bd.footprint.depth * scale);
  g.fillStyle = "#c8a060";
  for (const f of content.fenceTiles) if (!f.gate) g.fillRect(px(f.x), pz(f.z), scale, scale);
  const m = latest;
  if (m) {
    const r = Math.max(3, scale * 0.5);
    g.fillStyle = "#e03030";
    g.beginPath();
    for (const n of m.npcs) if (n.alive) g.rect(px(n.x) - r / 2, pz(n.z) - r / 2, r, r);
    g.fill();
    g.fillStyle = "#40c0ff";
    g.beginPath();
    for (const p of m.players) {
      g.moveTo(px(p.x) + r, pz(p.z));
      g.arc(px(p.x), pz(p.z), r, 0, Math.PI * 2);
    }
    g.fill();
    if (m.players.length <= 50) {
      g.fillStyle = "#ffffff";
      g.font = `${11 * devicePixelRatio}px sans-serif`;
      for (const p of m.players) g.fillText(p.name, px(p.x) + r + 2, pz(p.z) - r);
    }
  }
  requestAnimationFrame(() => draw(content));
}

void loadContent(window.location.origin).then((content) => {
  const code = byId<HTMLInputElement>("admin-code");
  code.value = sessionStorage.getItem("realm-admin-code") ?? "";
  byId("admin-bar").addEventListener("submit", (e) => {
    e.preventDefault();
    sessionStorage.setItem("realm-admin-code", code.value);
    if (timer) clearTimeout(timer);
    void poll(code.value, Number(byId<HTMLInputElement>("admin-world").value) || 1);
  });
  draw(content);
});
