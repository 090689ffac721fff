/**
 * The world drawn with PixiJS 8, top-down on the tile grid (docs/client.md "Layout of client/"): the map
 * from the manifests once, then the entities of the state on every change, moved smoothly between
 * ticks, with names, health bars and hit splats. +x is east (right), +z north (up).
 */
import { Application, Container, Graphics, Text } from "pixi.js";
import type { Bounds, Content, Tile } from "../content.js";
import { self, type GameState } from "../state/store.js";

/** Pixels per tile. */
export const TILE = 32;

interface Sprite {
  root: Container;
  body: Graphics;
  hp?: Graphics;
  hpShown?: number;
  from: Tile;
  to: Tile;
  since: number;
  key: string;
}

const color = (hex: string) => Number.parseInt(hex.replace("#", ""), 16);

export class Scene {
  readonly app = new Application();
  readonly #world = new Container();
  readonly #entities = new Container();
  readonly #overlay = new Container();
  readonly #sprites = new Map<string, Sprite>();
  readonly #splats = new Map<number, Text>();
  readonly #marker = new Graphics();
  readonly #map = new Graphics();
  readonly #mapLayer = new Container();
  readonly #labelLayer = new Container();
  readonly #labels: { text: Text; at: Tile }[] = [];
  /** Where and at which screen size the map was last drawn. */
  #mapAt?: { x: number; z: number; w: number; h: number };
  #state?: GameState;
  #dirty = true;
  /** Whether the last state differs from the drawn one in what the scene shows. */
  #changed = true;
  #markedAt = "";
  #camera = { x: 0, z: 0 };
  /** Milliseconds a one-tile step takes on screen (the session's measured tick). */
  stepMs = 600;

  constructor(readonly content: Content) {}

  async mount(el: HTMLElement): Promise<void> {
    // WebGL where there is a GPU, else Pixi's canvas renderer (headless browsers, old machines).
    await this.app.init({ resizeTo: el, background: 0x101810, antialias: true, preference: "webgl", autoStart: false });
    el.appendChild(this.app.canvas);
    this.#makeLabels();
    this.#mapLayer.addChild(this.#map);
    this.#world.addChild(this.#mapLayer, this.#labelLayer, this.#entities, this.#marker, this.#overlay);
    this.app.stage.addChild(this.#world);
    // Frames are drawn only while something changes (a new state, a walk between two tiles, a
    // splat), so an idle game costs nothing, and a software renderer is not kept busy.
    const loop = () => {
      if (this.#dirty || this.#animating(performance.now())) {
        this.#dirty = false;
        this.#frame();
        this.app.render();
      }
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
    new ResizeObserver(() => (this.#dirty = true)).observe(el);
  }

  /** The tile under a point of the canvas (client pixels relative to the canvas). */
  tileAt(px: number, py: number): Tile {
    const { width, height } = this.app.screen;
    return { x: Math.round((px - width / 2) / TILE + this.#camera.x), z: Math.round(-(py - height / 2) / TILE + this.#camera.z) };
  }

  /** Canvas pixels of a tile's centre (the browser tests click there). */
  screenOf(t: Tile): { x: number; y: number } {
    const { width, height } = this.app.screen;
    return { x: (t.x - this.#camera.x) * TILE + width / 2, y: -(t.z - this.#camera.z) * TILE + height / 2 };
  }

  /**
   * The map is drawn for a window around the camera only (redrawn when the camera has moved a few
   * tiles), so a big world costs what the screen shows, also on the canvas renderer.
   */
  #redrawMap(cx: number, cz: number): void {
    const c = this.content;
    const { width, height } = this.app.screen;
    const rx = Math.ceil(width / TILE / 2) + MAP_MARGIN;
    const rz = Math.ceil(height / TILE / 2) + MAP_MARGIN;
    const w: Bounds = {
      minX: Math.max(c.bounds.minX, cx - rx),
      maxX: Math.min(c.bounds.maxX, cx + rx),
      minZ: Math.max(c.bounds.minZ, cz - rz),
      maxZ: Math.min(c.bounds.maxZ, cz + rz),
    };
    this.#mapAt = { x: cx, z: cz, w: width, h: height };
    const g = this.#map.clear();
    const fillArea = (r: Bounds, fill: number, pvp = false) => {
      const b = clip(r, w);
      if (!b) return;
      g.rect(b.minX * TILE - TILE / 2, -(b.maxZ * TILE + TILE / 2), (b.maxX - b.minX + 1) * TILE, (b.maxZ - b.minZ + 1) * TILE).fill(fill);
      if (pvp) g.stroke({ width: 4, color: 0xb02020 });
    };
    fillArea(c.bounds, 0x4a6a30);
    for (const a of c.areas) fillArea(a.bounds, color(c.biomeColor(a.biome)), a.pvp);
    for (let x = w.minX; x <= w.maxX + 1; x++)
      g.moveTo(x * TILE - TILE / 2, -(w.maxZ * TILE + TILE / 2)).lineTo(x * TILE - TILE / 2, -(w.minZ * TILE - TILE / 2));
    for (let z = w.minZ; z <= w.maxZ + 1; z++)
      g.moveTo(w.minX * TILE - TILE / 2, -(z * TILE - TILE / 2)).lineTo(w.maxX * TILE + TILE / 2, -(z * TILE - TILE / 2));
    g.stroke({ width: 1, color: 0x000000, alpha: 0.08 });
    for (const bd of c.buildings) {
      if (!clip({ minX: bd.x, maxX: bd.x + bd.footprint.width - 1, minZ: bd.z, maxZ: bd.z + bd.footprint.depth - 1 }, w)) continue;
      g.rect(bd.x * TILE - TILE / 2, -((bd.z + bd.footprint.depth - 1) * TILE + TILE / 2), bd.footprint.width * TILE, bd.footprint.depth * TILE)
        .fill(0x7a5a3a)
        .stroke({ width: 2, color: 0x3a2a1a });
    }
    // Fences: a rail through each fence tile along the fence, posts at the tile edges; a gate is a
    // thin pale bar (players walk through it, NPCs do not).
    for (const f of c.fenceTiles) {
      if (!inside(f, w)) continue;
      const [cx, cy] = [f.x * TILE, -f.z * TILE];
      const [hx, hy] = f.alongX ? [TILE / 2, 0] : [0, TILE / 2];
      if (f.gate)
        g.moveTo(cx - hx, cy - hy)
          .lineTo(cx + hx, cy + hy)
          .stroke({ width: 2, color: 0xe0d0a0, alpha: 0.8 });
      else {
        g.moveTo(cx - hx, cy - hy)
          .lineTo(cx + hx, cy + hy)
          .stroke({ width: 4, color: 0x8a6a3a });
        g.circle(cx - hx, cy - hy, 3).fill(0x5a3a1a);
      }
    }
    for (const st of c.stations) {
      for (const t of st.tiles)
        if (inside(t, w)) g.rect(t.x * TILE - TILE / 2 + 2, -(t.z * TILE + TILE / 2) + 2, TILE - 4, TILE - 4).fill(STATION_COLORS[st.type] ?? 0x888888);
    }
    for (const s of c.stores) {
      if (inside(s, w))
        g.circle(s.x * TILE, -s.z * TILE, TILE / 2 - 3)
          .fill(0xe0c040)
          .stroke({ width: 2, color: 0x5a4000 });
    }
    for (const l of this.#labels) l.text.visible = inside(l.at, w);
    // One texture for the whole map window: moving the camera then moves one quad, where
    // re-rendering the shapes every frame cost most of a frame on software renderers.
    if (this.#mapLayer.isCachedAsTexture) this.#mapLayer.updateCacheTexture();
    else this.#mapLayer.cacheAsTexture(true);
  }

  /** Names of areas, buildings, stations and stores, made once and shown near the camera. */
  #makeLabels(): void {
    const c = this.content;
    const add = (text: Text, at: Tile) => {
      this.#labelLayer.addChild(text);
      this.#labels.push({ text, at });
    };
    for (const a of c.areas) {
      const t = new Text({ text: a.name, style: { fontFamily: "sans-serif", fontSize: 28, fill: 0xffffff, fontWeight: "bold" } });
      t.alpha = 0.25;
      t.anchor.set(0.5);
      const at = { x: Math.round((a.bounds.minX + a.bounds.maxX) / 2), z: Math.round((a.bounds.minZ + a.bounds.maxZ) / 2) };
      t.position.set(at.x * TILE, -at.z * TILE);
      add(t, at);
    }
    for (const bd of c.buildings) {
      const at = { x: bd.x + (bd.footprint.width - 1) / 2, z: bd.z + (bd.footprint.depth - 1) / 2 };
      add(label(bd.name, at.x * TILE, -at.z * TILE + 6, 0xfff0d0), at);
    }
    for (const st of c.stations) add(label(st.name, st.x * TILE, -st.z * TILE - TILE * 0.6, 0xffffff), st);
    for (const s of c.stores) add(label(s.name, s.x * TILE, -s.z * TILE - TILE * 0.6, 0xffe890), s);
  }

  #animating(now: number): boolean {
    if (this.#state?.splats.length) return true;
    for (const sp of this.#sprites.values()) if (now - sp.since < this.stepMs + 50) return true;
    return false;
  }

  /** The state changed: create, move or remove sprites. */
  sync(s: GameState): void {
    if (s.world !== this.#state?.world || s.destination !== this.#state?.destination || s.splats !== this.#state?.splats) this.#changed = true;
    this.#state = s;
    if (!this.#changed) return;
    this.#changed = false;
    const now = performance.now();
    const seen = new Set<string>();
    const meId = s.me?.id;
    for (const r of s.world.resources.values()) {
      const fire = r.skill === "firemaking";
      const fill = fire ? 0xff7a10 : r.skill === "woodcutting" ? 0x1f5a1a : r.skill === "mining" ? 0x8a8a90 : 0x3a7ad0;
      this.#place(`r:${r.id}`, r, `${r.type}|${r.depleted}`, now, seen, (g) => {
        if (r.skill === "woodcutting") g.circle(0, 0, TILE * 0.45).fill({ color: fill, alpha: r.depleted ? 0.3 : 1 });
        else if (fire) g.poly([-10, 10, 0, -14, 10, 10]).fill(fill);
        else g.roundRect(-12, -10, 24, 20, 6).fill({ color: fill, alpha: r.depleted ? 0.3 : 1 });
      });
    }
    for (const gi of s.world.groundItems.values()) {
      this.#place(`g:${gi.id}`, gi, gi.itemId, now, seen, (g, root) => {
        g.rect(-7, -7, 14, 14).fill(0xc89a50).stroke({ width: 1, color: 0x402000 });
        root.addChild(label(this.content.itemName(gi.itemId), 0, 8, 0xffe0a0, 10));
      });
    }
    for (const n of s.world.npcs.values()) {
      const sp = this.#place(`n:${n.id}`, n, n.npcId, now, seen, (g, root) => {
        g.circle(0, 0, TILE * 0.35).fill(this.content.npcs.get(n.npcId)?.attackable === false ? 0xd0a040 : 0xc03030);
        root.addChild(label(`${n.name} (${n.combatLevel})`, 0, -TILE * 0.9, 0xffd0d0));
      });
      if (bar(sp, n.health, n.maxHealth)) this.#dirty = true;
    }
    for (const p of s.world.players.values()) {
      const mine = p.id === meId;
      const sp = this.#place(`p:${p.id}`, p, `${p.name}|${mine}|${p.activity === "dead"}`, now, seen, (g, root) => {
        g.circle(0, 0, TILE * 0.38)
          .fill(p.activity === "dead" ? 0x555555 : mine ? 0xf0e040 : 0x40a0f0)
          .stroke({ width: 2, color: 0x101010 });
        root.addChild(label(p.name, 0, -TILE * 0.95, mine ? 0xffff80 : 0xffffff));
      });
      if (bar(sp, p.health, p.maxHealth)) this.#dirty = true;
    }
    for (const [id, sp] of this.#sprites) {
      if (!seen.has(id)) {
        sp.root.destroy({ children: true });
        this.#sprites.delete(id);
        this.#dirty = true;
      }
    }
    this.#syncSplats(s, now);
    const mark = s.destination ? `${s.destination.x},${s.destination.z}` : "";
    if (mark !== this.#markedAt) {
      this.#markedAt = mark;
      this.#dirty = true;
      this.#marker.clear();
      if (s.destination) {
        const { x, z } = s.destination;
        this.#marker
          .moveTo(x * TILE - 8, -z * TILE - 8)
          .lineTo(x * TILE + 8, -z * TILE + 8)
          .moveTo(x * TILE + 8, -z * TILE - 8)
          .lineTo(x * TILE - 8, -z * TILE + 8)
          .stroke({ width: 3, color: 0xffe000 });
      }
    }
  }

  #place(id: string, at: Tile, key: string, now: number, seen: Set<string>, draw: (g: Graphics, root: Container) => void): Sprite {
    seen.add(id);
    let sp = this.#sprites.get(id);
    if (sp && sp.key !== key) {
      sp.root.destroy({ children: true });
      this.#sprites.delete(id);
      sp = undefined;
    }
    if (!sp) {
      const root = new Container();
      const body = new Graphics();
      root.addChild(body);
      draw(body, root);
      sp = { root, body, from: { x: at.x, z: at.z }, to: { x: at.x, z: at.z }, since: now, key };
      root.position.set(at.x * TILE, -at.z * TILE);
      this.#entities.addChild(root);
      this.#sprites.set(id, sp);
      this.#dirty = true;
    } else if (sp.to.x !== at.x || sp.to.z !== at.z) {
      const cur = this.#positionOf(sp, now);
      sp.from = cur;
      sp.to = { x: at.x, z: at.z };
      sp.since = now;
      this.#dirty = true;
    }
    return sp;
  }

  #positionOf(sp: Sprite, now: number): Tile {
    const k = Math.min(1, (now - sp.since) / this.stepMs);
    return { x: sp.from.x + (sp.to.x - sp.from.x) * k, z: sp.from.z + (sp.to.z - sp.from.z) * k };
  }

  #syncSplats(s: GameState, now: number): void {
    const live = new Set(s.splats.map((p) => p.id));
    for (const [id, t] of this.#splats) {
      if (!live.has(id)) {
        t.destroy();
        this.#splats.delete(id);
      }
    }
    for (const p of s.splats) {
      if (this.#splats.has(p.id) || p.until < now) continue;
      const t = new Text({
        text: String(p.damage),
        style: { fontFamily: "sans-serif", fontSize: 16, fontWeight: "bold", fill: 0xffffff, stroke: { color: p.damage > 0 ? 0xb00000 : 0x2040c0, width: 5 } },
      });
      t.anchor.set(0.5);
      this.#overlay.addChild(t);
      this.#splats.set(p.id, t);
    }
  }

  #frame(): void {
    const s = this.#state;
    const now = performance.now();
    for (const sp of this.#sprites.values()) {
      const at = this.#positionOf(sp, now);
      sp.root.position.set(at.x * TILE, -at.z * TILE);
    }
    if (s) {
      for (const p of s.splats) {
        const t = this.#splats.get(p.id);
        const target = this.#sprites.get(`p:${p.targetId}`) ?? this.#sprites.get(`n:${p.targetId}`);
        if (!t || !target) continue;
        const left = Math.max(0, (p.until - now) / 1200);
        t.position.set(target.root.x, target.root.y - 10 - (1 - left) * 20);
        t.alpha = Math.min(1, left * 2);
      }
      const me = self(s);
      const sp = me ? this.#sprites.get(`p:${me.id}`) : undefined;
      if (sp) this.#camera = this.#positionOf(sp, now);
      else if (me) this.#camera = { x: me.x, z: me.z };
    }
    const { width, height } = this.app.screen;
    const cx = Math.round(this.#camera.x);
    const cz = Math.round(this.#camera.z);
    const m = this.#mapAt;
    if (!m || Math.abs(m.x - cx) > MAP_MARGIN / 2 || Math.abs(m.z - cz) > MAP_MARGIN / 2 || m.w !== width || m.h !== height) this.#redrawMap(cx, cz);
    this.#world.position.set(Math.round(width / 2 - this.#camera.x * TILE), Math.round(height / 2 + this.#camera.z * TILE));
  }
}

/** Tiles drawn beyond each edge of the screen; the map is redrawn after half of that. */
const MAP_MARGIN = 8;

function clip(r: Bounds, w: Bounds): Bounds | undefined {
  const b = { minX: Math.max(r.minX, w.minX), maxX: Math.min(r.maxX, w.maxX), minZ: Math.max(r.minZ, w.minZ), maxZ: Math.min(r.maxZ, w.maxZ) };
  return b.minX > b.maxX || b.minZ > b.maxZ ? undefined : b;
}

const inside = (t: Tile, w: Bounds) => t.x >= w.minX - 1 && t.x <= w.maxX + 1 && t.z >= w.minZ - 1 && t.z <= w.maxZ + 1;

const STATION_COLORS: Record<string, number> = { bank: 0xd4b020, range: 0x903020, furnace: 0xd05010, anvil: 0x505060, altar: 0xe0e0ff };

function label(text: string, x: number, y: number, fill: number, size = 11): Text {
  const t = new Text({ text, style: { fontFamily: "sans-serif", fontSize: size, fill, stroke: { color: 0x000000, width: 3 } } });
  t.anchor.set(0.5, 1);
  t.position.set(x, y);
  return t;
}

/** Draws a health bar; true when it changed. */
function bar(sp: Sprite, health: number, max: number): boolean {
  const k = max > 0 ? Math.max(0, Math.min(1, health / max)) : 0;
  if (sp.hp && sp.hpShown === k) return false;
  sp.hpShown = k;
  if (!sp.hp) {
    sp.hp = new Graphics();
    sp.root.addChild(sp.hp);
  }
  const w = TILE * 0.8;
  sp.hp
    .clear()
    .rect(-w / 2, -TILE * 0.62, w, 4)
    .fill(0xa01010)
    .rect(-w / 2, -TILE * 0.62, w * k, 4)
    .fill(0x20d020);
  return true;
}
