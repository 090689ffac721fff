/**
 * The client's picture of the game, as plain data, and the pure functions that change it from what
 * the server sends (docs/client.md "Layout of client/"). No DOM, no SDK, no renderer: the unit tests
 * (test/unit/client) drive these functions in Node.
 */
import type { ChatMessage, CombatHit, GroundItemPublic, NpcPublic, PlayerPublic, PlayerSync, ResourcePublic, SkillXp } from "../protocol.js";
import { refusalText } from "./refusals.js";
import type { TradeState } from "./trade.js";

/** Chat lines kept in memory (older ones scroll away). */
export const CHAT_LIMIT = 200;
/** How long a toast (XP gain, level up) and a hit splat stay, in milliseconds. */
export const TOAST_MS = 3000;
export const SPLAT_MS = 1200;

export interface ChatLine {
  id: string;
  kind: ChatMessage["type"];
  from?: string;
  text: string;
  code?: string;
}

export interface Toast {
  id: number;
  text: string;
  until: number;
}

export interface Splat {
  id: number;
  targetId: string;
  damage: number;
  until: number;
}

/** What the client tracks of the world: the SDK state's four collections, copied as plain objects. */
export interface WorldView {
  tick: number;
  players: ReadonlyMap<string, PlayerPublic>;
  npcs: ReadonlyMap<string, NpcPublic>;
  resources: ReadonlyMap<string, ResourcePublic>;
  groundItems: ReadonlyMap<string, GroundItemPublic>;
}

export interface GameState {
  /** The player's private state (`player:sync`), undefined before the first one. */
  me?: PlayerSync;
  world: WorldView;
  chat: ChatLine[];
  toasts: Toast[];
  splats: Splat[];
  trade: TradeState;
  /** A banner over the game (connection dropped, disconnected), or undefined. */
  banner?: string;
  /** The tile the player last asked to walk to, until it arrives or does something else. */
  destination?: { x: number; z: number };
}

export const emptyWorld = (): WorldView => ({ tick: 0, players: new Map(), npcs: new Map(), resources: new Map(), groundItems: new Map() });

export function initialState(): GameState {
  return { world: emptyWorld(), chat: [], toasts: [], splats: [], trade: { phase: "none", incoming: [] } };
}

let nextId = 1;

/** A `chat:message` added to the log; a refusal is shown with a readable text for its code. */
export function addChat(s: GameState, m: ChatMessage): GameState {
  const line: ChatLine = { id: m.id, kind: m.type, from: m.fromName, text: m.code ? refusalText(m.code, m.text) : m.text, code: m.code };
  return { ...s, chat: [...s.chat, line].slice(-CHAT_LIMIT) };
}

/** A line the client writes itself (trade errors, connection news), shown like a system line. */
export function addSystemLine(s: GameState, text: string, code?: string): GameState {
  return addChat(s, { id: `local-${nextId++}`, type: "system", text, code, timestamp: new Date().toISOString() });
}

/** `skill:xp`: the skill's XP and level in `me`, and a toast ("+25 Woodcutting XP", a level up). */
export function applyXp(s: GameState, xp: SkillXp, now: number): GameState {
  const name = xp.skill.charAt(0).toUpperCase() + xp.skill.slice(1);
  const text = xp.leveledUp ? `${name} level ${xp.level}! (+${xp.gained} XP)` : `+${xp.gained} ${name} XP`;
  const toasts = [...s.toasts.filter((t) => t.until > now), { id: nextId++, text, until: now + TOAST_MS }];
  if (!s.me) return { ...s, toasts };
  const skills = { ...s.me.skills, [xp.skill]: { level: xp.level, xp: xp.xp } } as PlayerSync["skills"];
  return { ...s, toasts, me: { ...s.me, skills } };
}

/** `combat:hit`: a splat over the target (0 is a miss). */
export function applyHit(s: GameState, hit: CombatHit, now: number): GameState {
  const splats = [...s.splats.filter((p) => p.until > now), { id: nextId++, targetId: hit.targetId, damage: hit.damage, until: now + SPLAT_MS }];
  return { ...s, splats };
}

/** `player:sync`: the whole private state replaces the previous one. */
export function applySync(s: GameState, me: PlayerSync): GameState {
  return { ...s, me };
}

/**
 * A new copy of the world view. The destination marker goes once the player stands on it or
 * stopped moving elsewhere.
 */
export function applyWorld(s: GameState, world: WorldView): GameState {
  let destination = s.destination;
  const self = s.me ? world.players.get(s.me.id) : undefined;
  if (
    destination &&
    self &&
    ((self.x === destination.x && self.z === destination.z) || (!self.moving && s.world.tick !== world.tick && self.activity !== "walking"))
  ) {
    destination = undefined;
  }
  return { ...s, world, destination };
}

/** Drop toasts and splats whose time is over (called by the render loop). */
export function expire(s: GameState, now: number): GameState {
  if (s.toasts.every((t) => t.until > now) && s.splats.every((p) => p.until > now)) return s;
  return { ...s, toasts: s.toasts.filter((t) => t.until > now), splats: s.splats.filter((p) => p.until > now) };
}

/** The player's own public entry (position, health, activity), if in view. */
export function self(s: GameState): PlayerPublic | undefined {
  return s.me ? s.world.players.get(s.me.id) : undefined;
}

/** A minimal observable holder of the state: `set` replaces it and tells every listener. */
export class Store {
  #state: GameState = initialState();
  readonly #listeners = new Set<(s: GameState) => void>();

  get state(): GameState {
    return this.#state;
  }

  /** Apply a change; listeners run only when the state object changed. */
  update(change: (s: GameState) => GameState): void {
    const next = change(this.#state);
    if (next === this.#state) return;
    this.#state = next;
    for (const l of this.#listeners) l(next);
  }

  subscribe(listener: (s: GameState) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
}
