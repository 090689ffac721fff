/**
 * An example autonomous player: a woodcutter that chops trees and banks the logs.
 *
 * It uses nothing but what docs/rest.md and docs/protocol.md document for agents: the REST API (log in, register a
 * character as an agent, set a goal) and the plain-WebSocket protocol at `/ws` (JSON frames
 * `{ event, data }`: `player:sync` for its own private state, `world:update` deltas for what it
 * sees, commands such as `player:action` and `bank:deposit`). No game code is imported.
 *
 * Outline:
 * 1. `login`: an account token (anonymous login when none is given) → a character → agent
 *    credentials (a token bound to that character); or an agent token given as it is.
 * 2. `runAgent`: connect to `/ws?token=…`, keep a picture of the world from `world:update`, and on
 *    every message (and a slow heartbeat) let `Woodcutter.think` take one step of a small state
 *    machine:
 *
 *        setting-goal ──goal set──▶ chopping ──enough logs──▶ to-bank ──at the booth──▶ banking
 *             ▲                        ▲                                                  │
 *             └──goal complete─────────┴──────────────────────────inventory emptied──────┘
 *        any state ──goalsPaused──▶ paused ──resumed──▶ setting-goal
 *
 * 3. A private message is answered with a private `player:chat` (`to` the sender); a message from
 *    the owner through `POST /api/agents/:agentId/message` has no sender player, so it is answered
 *    in public chat.
 */
import WebSocket from "ws";

/** What the agent can be doing. */
export type AgentState = "starting" | "setting-goal" | "chopping" | "to-bank" | "banking" | "paused" | "not-my-goal";

/** Things an embedding program (or a test) can watch. */
export type AgentEvent =
  | { type: "ready"; agentId: string; characterId: string; name: string }
  | { type: "state"; from: AgentState; to: AgentState }
  | { type: "sent"; event: string; data: unknown }
  | { type: "received"; event: string; data: unknown };

export interface AgentOptions {
  /** Server base URL, e.g. `http://localhost:5555`. */
  url: string;
  /**
   * An account token (the agent registers one of the account's characters, creating one if needed)
   * or an agent token from `POST /api/agent/register`. None: log in anonymously.
   */
  token?: string;
  /** Name for the anonymous login and for a character the agent creates. */
  name?: string;
  /** Stops the agent: it closes its connection and `runAgent` resolves. */
  signal: AbortSignal;
  /** Logs in the inventory that send the agent to the bank (default 5). */
  bankAt?: number;
  /** Logs per goal (default 10). */
  goalCount?: number;
  /** Where log lines go (default: stdout with a timestamp). */
  log?: (line: string) => void;
  /** Called for every state change, frame sent and frame received. */
  observer?: (e: AgentEvent) => void;
}

// ---------------------------------------------------------------------------- protocol types

/** `player:sync`: the agent's own private state (docs/protocol.md "Private state"). Only the fields used here. */
interface PlayerSync {
  id: string;
  name: string;
  position: { x: number; y: number; z: number };
  inventory: { slot: number; itemId: string; quantity: number }[];
  bank: { itemId: string; quantity: number }[];
  goal: Goal | null;
  goalsPaused: boolean;
}

interface Goal {
  id: string;
  type: string;
  description: string;
  target?: string;
  progress: number;
  targetCount?: number;
  completedAt?: string;
  setBy: "agent" | "owner";
}

interface ChatMessage {
  type: "public" | "private" | "system" | "trade";
  fromId?: string;
  fromName?: string;
  text: string;
}

/** One entity as `world:update` describes it: the full fields once, then the changed ones. */
type Entity = Record<string, unknown> & { id: string; x: number; z: number };
const KINDS = ["players", "npcs", "resources", "groundItems"] as const;

/** What the agent knows of the world: the sum of the `world:update` deltas it received. */
export class WorldPicture {
  tick = 0;
  readonly players = new Map<string, Entity>();
  readonly npcs = new Map<string, Entity>();
  readonly resources = new Map<string, Entity>();
  readonly groundItems = new Map<string, Entity>();

  /** Apply one `world:update`: new entities arrive whole, known ones as changed fields, `null` = gone from view. */
  apply(update: { tick: number } & Partial<Record<(typeof KINDS)[number], Record<string, Record<string, unknown> | null>>>) {
    this.tick = update.tick;
    for (const kind of KINDS) {
      const known = this[kind];
      for (const [id, fields] of Object.entries(update[kind] ?? {})) {
        if (fields === null) known.delete(id);
        else known.set(id, { ...known.get(id), ...fields } as Entity);
      }
    }
  }
}

// ---------------------------------------------------------------------------- REST

class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** One JSON request; errors (`{ error: { code, message } }`) become an `ApiError`. */
async function api<T>(base: string, method: string, path: string, token?: string, body?: unknown, signal?: AbortSignal): Promise<T> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const res = await fetch(new URL(path, base), { method, headers, body: body === undefined ? undefined : JSON.stringify(body), signal });
  const text = await res.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!res.ok) throw new ApiError(res.status, json?.error?.code ?? "", `${method} ${path}: ${res.status} ${json?.error?.message ?? text}`);
  return json as T;
}

interface Credentials {
  /** The token bound to the agent's character: used for `/ws` and for the agent's own goals. */
  token: string;
  agentId: string;
  characterId: string;
  name: string;
}

/**
 * Get agent credentials. An agent token is used as it is (its agent is the one `GET /api/agent`
 * lists for it). An account token (or a new anonymous one) registers the account's first
 * character as an agent, creating the character when the account has none. Registering issues a
 * new token and closes a connection the character's previous agent token had.
 */
export async function login(opts: Pick<AgentOptions, "url" | "token" | "name" | "signal">): Promise<Credentials> {
  const call = <T>(method: string, path: string, token?: string, body?: unknown) => api<T>(opts.url, method, path, token, body, opts.signal);
  const token = opts.token ?? (await call<{ token: string }>("POST", "/api/auth/anonymous", undefined, opts.name ? { name: opts.name } : {})).token;
  const session = await call<{ accountId: string; characterId?: string }>("GET", "/api/auth/session", token);
  if (session.characterId) {
    const [agent] = await call<{ agentId: string; characterId: string; name: string; active: boolean }[]>("GET", "/api/agent", token);
    if (!agent?.active) throw new Error("this token is bound to a character that is not an active agent");
    return { token, agentId: agent.agentId, characterId: agent.characterId, name: agent.name };
  }
  const characters = await call<{ id: string; name: string }[]>("GET", "/api/character", token);
  let character = characters[0];
  if (!character) {
    try {
      character = await call<{ id: string; name: string }>("POST", "/api/character", token, opts.name ? { name: opts.name } : {});
    } catch (e) {
      if (!(e instanceof ApiError && e.code === "NAME_TAKEN")) throw e;
      character = await call<{ id: string; name: string }>("POST", "/api/character", token, {}); // a generated name
    }
  }
  const creds = await call<Credentials>("POST", "/api/agent/register", token, { characterId: character.id });
  return { token: creds.token, agentId: creds.agentId, characterId: creds.characterId, name: creds.name };
}

// ---------------------------------------------------------------------------- the agent

/** The goal the agent sets itself: an id from `availableGoals` ("Chop trees"). */
const GOAL_ID = "woodcutting:tree";
/** Node type it chops and the item that yields. */
const TREE_TYPE = "tree";
const LOGS = "logs";
/** Tiles within which a bank booth can be used (docs/protocol.md "Client events", `bank:deposit`). */
const BANK_RANGE = 3;
/** Inventory slots. */
const INVENTORY_SIZE = 28;
/** An order the world shows no sign of having taken is sent again after this long. */
const RETRY_MS = 2_000;
/** Tiles around a bank booth to stand on, nearest first; refused ones are skipped. */
const AROUND_BOOTH = [
  [0, -1],
  [0, 1],
  [-1, 0],
  [1, 0],
  [-1, -1],
  [1, -1],
  [-1, 1],
  [1, 1],
  [0, -2],
  [0, 2],
  [-2, 0],
  [2, 0],
] as const;

interface Station {
  id: string;
  type: string;
  name: string;
  x: number;
  z: number;
}

/** Connect, play until `signal` aborts, then close. Rejects when the server ends the connection. */
export async function runAgent(opts: AgentOptions): Promise<void> {
  const log = opts.log ?? ((line: string) => console.log(`${new Date().toISOString()} ${line}`));
  const creds = await login(opts);
  // Bank booths come from the content manifests every client may read (docs/rest.md "HTTP API").
  const stations = await api<Station[]>(opts.url, "GET", "/manifests/stations.json", undefined, undefined, opts.signal);
  const banks = stations.filter((s) => s.type === "bank");
  log(`logged in as ${creds.name} (agent ${creds.agentId}); ${banks.length} bank booth(s) known`);
  opts.observer?.({ type: "ready", agentId: creds.agentId, characterId: creds.characterId, name: creds.name });
  if (opts.signal.aborted) return;

  const wsUrl = new URL("/ws", opts.url);
  wsUrl.protocol = wsUrl.protocol === "https:" ? "wss:" : "ws:";
  wsUrl.searchParams.set("token", creds.token);
  const ws = new WebSocket(wsUrl);
  const agent = new Woodcutter(creds, banks, opts, log, (event, data) => {
    if (ws.readyState !== ws.OPEN) return;
    ws.send(JSON.stringify({ event, data }));
    opts.observer?.({ type: "sent", event, data });
  });

  await new Promise<void>((resolve, reject) => {
    const heartbeat = setInterval(() => agent.think(), RETRY_MS / 2);
    const stop = () => ws.close(1000, "agent stopped");
    opts.signal.addEventListener("abort", stop, { once: true });
    ws.on("message", (raw) => {
      let frame: { event: string; data: unknown };
      try {
        // ws delivers a Buffer (its default binaryType).
        frame = JSON.parse((raw as Buffer).toString());
      } catch {
        return log("ignored a frame that is not JSON");
      }
      opts.observer?.({ type: "received", event: frame.event, data: frame.data });
      agent.receive(frame.event, frame.data);
    });
    ws.on("error", (e) => log(`socket error: ${e.message}`));
    ws.on("close", (code, reason) => {
      clearInterval(heartbeat);
      opts.signal.removeEventListener("abort", stop);
      if (opts.signal.aborted) {
        log("stopped");
        resolve();
      } else reject(new Error(`the server closed the connection: ${code} ${reason.toString()}`));
    });
  });
}

/** The state machine. `receive` updates what it knows; `think` decides the next step. */
class Woodcutter {
  private state: AgentState = "starting";
  private me: PlayerSync | undefined;
  private readonly world = new WorldPicture();
  /** The tree being chopped. */
  private treeId: string | undefined;
  /** The booth being walked to, and which tile next to it. */
  private bank: Station | undefined;
  private bankTile = 0;
  /** When the last order went out (tick and wall clock), to notice one the world ignored. */
  private orderTick = -Infinity;
  private orderAt = -Infinity;
  /** A REST call is running. */
  private busy = false;
  private waitingForTrees = false;

  constructor(
    private readonly creds: Credentials,
    private readonly banks: Station[],
    private readonly opts: AgentOptions,
    private readonly log: (line: string) => void,
    private readonly send: (event: string, data: unknown) => void,
  ) {}

  receive(event: string, data: unknown) {
    switch (event) {
      case "player:sync":
        this.me = data as PlayerSync;
        break;
      case "world:update":
        this.world.apply(data as Parameters<WorldPicture["apply"]>[0]);
        break;
      case "skill:xp": {
        const xp = data as { gained: number; skill: string; level: number; leveledUp: boolean };
        this.log(`+${xp.gained} ${xp.skill} XP (level ${xp.level}${xp.leveledUp ? ", level up!" : ""})`);
        break;
      }
      case "chat:message":
        this.onChat(data as ChatMessage);
        break;
    }
    this.think();
  }

  /**
   * Decide what to do now. Safe to call at any time: it only acts when something is due. A step
   * that changes the state is followed by a step in the new state (a few at most).
   */
  think() {
    for (let i = 0; i < 4; i++) {
      const before = this.state;
      this.step();
      if (this.state === before) return;
    }
  }

  private step() {
    const me = this.me;
    if (!me) return;
    if (me.goalsPaused) {
      if (this.state !== "paused") this.pause();
      return;
    }
    if (this.state === "paused" || this.state === "starting") this.enter("setting-goal");
    const goal = me.goal;
    const logs = this.count(LOGS);

    switch (this.state) {
      case "setting-goal":
        if (goal && !goal.completedAt) return this.enter(goal.type === "woodcutting" ? "chopping" : "not-my-goal");
        if (logs > 0 && goal?.completedAt) return this.enter("to-bank"); // bank before starting over
        return this.setGoal();
      case "not-my-goal":
        // The owner set a goal this agent cannot follow: it waits for a new one (or none).
        if (!goal || goal.completedAt || goal.type === "woodcutting") this.enter("setting-goal");
        return;
      case "chopping":
        if (!goal || goal.completedAt) return this.enter(logs > 0 ? "to-bank" : "setting-goal");
        if (logs >= (this.opts.bankAt ?? 5) || me.inventory.length >= INVENTORY_SIZE) return this.enter("to-bank");
        return this.chop();
      case "to-bank":
        return this.walkToBank();
      case "banking":
        if (logs === 0) {
          this.log(`banked: ${me.bank.find((b) => b.itemId === LOGS)?.quantity ?? 0} logs in the bank`);
          return this.enter(goal && !goal.completedAt ? "chopping" : "setting-goal");
        }
        if (this.overdue(5)) this.deposit(); // the deposit was refused or lost: try again
        return;
    }
  }

  // ---- states

  private enter(next: AgentState) {
    if (next === this.state) return;
    const from = this.state;
    this.state = next;
    this.orderTick = this.orderAt = -Infinity;
    this.log(`state: ${from} → ${next}`);
    this.opts.observer?.({ type: "state", from, to: next });
    if (next === "banking") this.deposit();
    if (next === "to-bank") this.bank = undefined;
    if (next === "chopping") this.treeId = undefined;
    if (next === "not-my-goal") this.log(`the goal "${this.me?.goal?.description}" is not something I can do; waiting`);
  }

  /**
   * The owner stopped our goals. Stop at once: the server already cleared our path and action,
   * but an order we sent before the news reached us may still be on its way, so stand still on
   * our own tile (a move to where we are), which cancels whatever it started.
   */
  private pause() {
    this.enter("paused");
    const at = this.position();
    if (at) this.send("player:move", { x: at.x, z: at.z });
    this.log("goals paused by the owner: standing still until resumed");
  }

  private setGoal() {
    if (this.busy) return;
    this.busy = true;
    const goalCount = this.opts.goalCount ?? 10;
    api(this.opts.url, "POST", `/api/agents/${this.creds.agentId}/goal`, this.creds.token, { goalId: GOAL_ID, targetCount: goalCount }, this.opts.signal)
      .then(() => this.log(`goal set: chop ${goalCount} logs`))
      .catch((e: Error) => {
        // GOALS_PAUSED: the owner paused us meanwhile; the player:sync saying so is on its way.
        if (!(e instanceof ApiError && e.code === "GOALS_PAUSED") && !this.opts.signal.aborted) this.log(`could not set a goal: ${e.message}`);
      })
      .finally(() => {
        this.busy = false;
        // The player:sync carrying the goal (or the pause) moves the machine on.
      });
  }

  /** Keep chopping the current tree; pick the nearest standing tree when it falls. */
  private chop() {
    const current = this.treeId ? this.world.resources.get(this.treeId) : undefined;
    if (!current || current.depleted) {
      const tree = this.nearest([...this.world.resources.values()].filter((r) => r.type === TREE_TYPE && !r.depleted));
      if (!tree) {
        if (!this.waitingForTrees) this.log("no standing tree in view: waiting for one to grow back");
        this.waitingForTrees = true;
        this.treeId = undefined;
        return;
      }
      this.waitingForTrees = false;
      this.treeId = tree.id;
      this.log(`chopping ${tree.id} at (${tree.x}, ${tree.z})`);
      return this.order("player:action", { action: "gather", targetId: tree.id });
    }
    // The server walks us to the tree and chops until it falls; if we are idle, it refused or
    // lost the order (e.g. a message we did not expect): send it again.
    if (this.idle() && this.overdue(2)) this.order("player:action", { action: "gather", targetId: current.id });
  }

  private walkToBank() {
    const at = this.position();
    if (!at) return;
    this.bank ??= this.nearest(this.banks);
    if (!this.bank) return;
    const near = Math.max(Math.abs(at.x - this.bank.x), Math.abs(at.z - this.bank.z)) <= BANK_RANGE;
    if (near && !this.moving()) return this.enter("banking");
    if (this.orderAt === -Infinity || (this.idle() && this.overdue(2))) this.goToBankTile();
  }

  private goToBankTile() {
    const [dx, dz] = AROUND_BOOTH[this.bankTile % AROUND_BOOTH.length]!;
    const x = this.bank!.x + dx;
    const z = this.bank!.z + dz;
    this.log(`walking to ${this.bank!.name} (${x}, ${z})`);
    this.order("player:move", { x, z, run: true });
  }

  private deposit() {
    const slot = this.me?.inventory.find((s) => s.itemId === LOGS);
    if (!slot) return;
    // A quantity above what the slot holds takes that many logs across slots (docs/protocol.md "Client events", bank:deposit).
    this.order("bank:deposit", { slot: slot.slot, quantity: this.count(LOGS) });
  }

  // ---- chat

  private onChat(m: ChatMessage) {
    if (m.type === "system") {
      this.log(`[system] ${m.text}`);
      // The tile we walked to next to the booth is blocked or unreachable: try the next one.
      if (this.state === "to-bank" && /can't stand there|can't reach/.test(m.text)) {
        this.bankTile++;
        this.goToBankTile();
      }
      return;
    }
    if (m.type !== "private" || m.fromId === this.me?.id) return; // our own lines come back to us too
    this.log(`[private] ${m.fromName ?? "?"}: ${m.text}`);
    const answer = `Hi ${m.fromName ?? "there"}! ${this.status()}`.slice(0, 200);
    // A friend wrote through chat: answer them privately. The owner wrote through the REST API,
    // which has no player to answer to: say it out loud instead.
    if (m.fromId) this.sendChat({ text: answer, to: m.fromId });
    else this.sendChat({ text: answer });
  }

  private sendChat(data: { text: string; to?: string }) {
    this.send("player:chat", data);
  }

  /** A line about what the agent is up to. */
  private status(): string {
    const goal = this.me?.goal;
    const banked = this.me?.bank.find((b) => b.itemId === LOGS)?.quantity ?? 0;
    const doing = this.state === "paused" ? "paused by my owner" : this.state.replace("-", " ");
    const goalText = goal ? `${goal.description} ${goal.progress}/${goal.targetCount ?? "∞"}` : "no goal";
    return `I'm ${doing}. Goal: ${goalText}. Logs: ${this.count(LOGS)} carried, ${banked} banked.`;
  }

  // ---- helpers

  /** Send a command that changes what we do, remembering when. */
  private order(event: string, data: unknown) {
    this.orderTick = this.world.tick;
    this.orderAt = performance.now();
    this.send(event, data);
  }

  /** The last order is older than `ticks` world ticks, or than RETRY_MS when the world is quiet. */
  private overdue(ticks: number): boolean {
    return this.world.tick - this.orderTick >= ticks || performance.now() - this.orderAt >= RETRY_MS;
  }

  private count(itemId: string): number {
    return (this.me?.inventory ?? []).filter((s) => s.itemId === itemId).reduce((n, s) => n + s.quantity, 0);
  }

  /** Our tile: the public entry of our player in `world:update` (it moves every tick), else the last sync. */
  private position(): { x: number; z: number } | undefined {
    const self = this.me && this.world.players.get(this.me.id);
    return self ? { x: self.x, z: self.z } : this.me?.position;
  }

  private moving(): boolean {
    return this.me ? this.world.players.get(this.me.id)?.moving === true : false;
  }

  /** Neither walking nor doing anything, as the world shows us to everyone. */
  private idle(): boolean {
    const self = this.me && this.world.players.get(this.me.id);
    return !!self && self.activity === "idle" && self.moving !== true;
  }

  private nearest<T extends { x: number; z: number }>(list: T[]): T | undefined {
    const at = this.position();
    if (!at) return list[0];
    let best: T | undefined;
    let bestDistance = Infinity;
    for (const e of list) {
      const d = Math.max(Math.abs(e.x - at.x), Math.abs(e.z - at.z));
      if (d < bestDistance) [best, bestDistance] = [e, d];
    }
    return best;
  }
}
