/**
 * How an MCP action ends (docs/agents.md#how-actions-end): every tool that acts runs as a job that
 * watches the session's events until it can say how the action ended — `reached`, `completed`,
 * `blocked`, `refused` (with the refusal code), `interrupted` (by what), `inventory_full`,
 * `target_gone`, `cancelled` or `timed_out` — or, when the caller stops waiting first, `in_progress`
 * with a handle to poll. Every result carries the player's short status.
 */
import { randomUUID } from "node:crypto";
import type { GameSession, Logged } from "./session.js";
import { refusalOf, str } from "./session.js";

export const OUTCOMES = [
  "reached",
  "completed",
  "blocked",
  "refused",
  "interrupted",
  "inventory_full",
  "target_gone",
  "cancelled",
  "timed_out",
  "in_progress",
] as const;
export type OutcomeKind = (typeof OUTCOMES)[number];

/** How an action ended, and what else the tool says about it. */
export interface Outcome {
  outcome: OutcomeKind;
  /** The stable refusal code (docs/protocol.md "Refusal codes", docs/trading.md#error-codes, or GOALS_PAUSED, DISCONNECTED). */
  code?: string;
  /** What interrupted it. */
  by?: string;
  detail?: string;
  [key: string]: unknown;
}

/** The short status every result carries. */
export interface Status {
  health: string;
  tile: [number, number];
  activity: string;
  inHand: string | null;
  freeSlots: number;
  coins: number;
  trade: string | null;
  paused: boolean;
}

/** The player's short status. */
export function statusOf(s: GameSession): Status {
  const me = s.me;
  const self = s.self();
  const t = s.trade;
  const incoming = [...s.incoming.entries()].at(-1);
  const trade = t
    ? `${t.tradeId} with ${t.partnerName} (${t.partnerId}), ${t.screen} screen, revision ${t.revision}`
    : incoming
      ? `request ${incoming[0]} from ${incoming[1].fromPlayerName} (${incoming[1].fromPlayerId})`
      : null;
  return {
    health: `${me?.health ?? 0}/${me?.maxHealth ?? 0}`,
    tile: [s.tile().x, s.tile().z],
    activity: s.closed ? "disconnected" : str(self?.activity) || "idle",
    inHand: me?.equipment.weapon?.itemId ?? null,
    freeSlots: 28 - (me?.inventory.length ?? 0),
    coins: me?.coins ?? 0,
    trade,
    paused: me?.goalsPaused ?? false,
  };
}

/** What a job's check sees: the events since it started, and the session. */
export interface JobView {
  session: GameSession;
  events: Logged[];
  startedAt: number;
}
export type Check = (v: JobView) => Outcome | undefined;

export interface JobOptions {
  /** The whole action's bound (ms): past it the job ends `timed_out`. */
  timeoutMs: number;
  /** Does this job stop the world action of the previous one (a new move or action)? */
  replaces: boolean;
  /** A refusal code that is an outcome of its own (e.g. INVENTORY_FULL while gathering). */
  refusalOutcomes?: Record<string, OutcomeKind>;
  /** Look again this often (ms) even without an event (checks on time: a move that never starts). */
  recheckMs?: number;
}

/** One running action. */
export class Job {
  readonly id = randomUUID().slice(0, 8);
  result: Outcome | undefined;
  private readonly startSeq: number;
  private readonly startedAt: number;
  private readonly pausedAtStart: boolean;
  private readonly done: Promise<Outcome>;
  private finish!: (o: Outcome) => void;
  private readonly stopListening: () => void;
  private readonly timer: NodeJS.Timeout;
  private readonly recheck: NodeJS.Timeout | undefined;

  constructor(
    readonly tool: string,
    private readonly session: GameSession,
    private readonly check: Check,
    private readonly opts: JobOptions,
  ) {
    this.startSeq = session.mark();
    this.startedAt = performance.now();
    this.pausedAtStart = session.me?.goalsPaused ?? false;
    this.done = new Promise((resolve) => (this.finish = resolve));
    this.stopListening = session.onChange(() => this.evaluate());
    this.timer = setTimeout(() => this.end({ outcome: "timed_out", detail: `no end within ${opts.timeoutMs} ms` }), opts.timeoutMs);
    this.timer.unref();
    this.recheck = opts.recheckMs ? setInterval(() => this.evaluate(), opts.recheckMs) : undefined;
    this.recheck?.unref();
  }

  /** Look at what happened so far (call once after sending: a synchronous refusal is already logged). */
  evaluate(): void {
    if (this.result) return;
    const s = this.session;
    if (s.closed) return this.end({ outcome: "interrupted", by: "disconnected", code: "DISCONNECTED", detail: `${s.closed.code} ${s.closed.reason}` });
    const events = s.since(this.startSeq);
    for (const e of events) {
      const r = refusalOf(e);
      if (!r) continue;
      const own = this.opts.refusalOutcomes?.[r.code];
      return this.end({ outcome: own ?? "refused", code: r.code, detail: r.message });
    }
    if (!this.pausedAtStart && s.me?.goalsPaused)
      return this.end({ outcome: "interrupted", by: "goal_stop", detail: "the owner stopped the agent's goals (goal/stop)" });
    if (s.self()?.activity === "dead" || events.some((e) => e.event === "chat:message" && /^Oh dear, you are dead/.test(String(e.data.text)))) {
      return this.end({ outcome: "interrupted", by: "died" });
    }
    const r = this.check({ session: s, events, startedAt: this.startedAt });
    if (r) this.end(r);
  }

  /** End the job (first end wins). */
  end(o: Outcome): void {
    if (this.result) return;
    this.result = o;
    clearTimeout(this.timer);
    clearInterval(this.recheck);
    this.stopListening();
    this.finish(o);
  }

  /** The outcome, or undefined when it has not ended within `ms`. */
  async wait(ms: number): Promise<Outcome | undefined> {
    if (this.result) return this.result;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), ms)));
    try {
      return await Promise.race([this.done, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  get replaces(): boolean {
    return this.opts.replaces;
  }
}

/** Most jobs kept for `poll` after they end. */
const KEPT_JOBS = 32;

/** The session's jobs: the current world action, and recent ones by handle. */
export class Jobs {
  private current: Job | undefined;
  private readonly byId = new Map<string, Job>();

  constructor(private readonly session: GameSession) {}

  /** Start a job; a job that replaces the world action ends the current one (interrupted by it). */
  start(tool: string, check: Check, opts: JobOptions): Job {
    const job = new Job(tool, this.session, check, opts);
    if (opts.replaces) {
      this.current?.end({ outcome: "interrupted", by: `next command (${tool})` });
      this.current = job;
    }
    this.byId.set(job.id, job);
    if (this.byId.size > KEPT_JOBS) this.byId.delete(this.byId.keys().next().value!);
    return job;
  }

  get(id: string): Job | undefined {
    return this.byId.get(id);
  }
}
