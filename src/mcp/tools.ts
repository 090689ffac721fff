/**
 * The MCP tools' shared shape (docs/agents.md#tools): each tool has an input schema built from the
 * event table's zod schemas (`CLIENT_EVENTS` fields, picked as they are), the client event it sends
 * and the fields it passes on unchanged (a test checks them against the AsyncAPI document and the
 * event table), and a handler that runs it as a job (`outcome.ts`) and says how it ended.
 */
import { z } from "zod";
import type { GameContent } from "../content/load.js";
import type { ClientEventName } from "../events.js";
import type { AgentService } from "../services/agents.js";
import type { SocialService } from "../services/social.js";
import type { Check, Jobs, Outcome, OutcomeKind } from "./outcome.js";
import type { GameSession } from "./session.js";

/** What a tool works with: the session's player, its jobs, the content, and the services REST uses. */
export interface ToolContext {
  session: GameSession;
  jobs: Jobs;
  content: GameContent;
  tickMs: number;
  /** The account playing, and the character when the token is bound to one (an agent token). */
  accountId: string;
  boundCharacterId?: string;
  agents?: AgentService;
  social?: SocialService;
  /** Tell the worlds a character's social graph changed (chat and trade follow it at once). */
  socialChanged?: (ids: string[]) => void;
  /** The log position of the previous observe (its `recent` lines start there). */
  memo: { observedSeq: number };
}

/** One tool. */
export interface ToolDef {
  name: string;
  title: string;
  description: string;
  input: z.ZodObject;
  /** The client event the tool sends, and the input fields it passes on unchanged. */
  event?: ClientEventName;
  passes?: readonly string[];
  /** Acts in the world: refused with GOALS_PAUSED while the owner has paused the agent. */
  acts: boolean;
  run(ctx: ToolContext, args: Record<string, unknown>): Promise<Outcome>;
}

/** A tool, typed by its input schema. */
export function tool<S extends z.ZodObject>(
  def: Omit<ToolDef, "input" | "run"> & { input: S; run(ctx: ToolContext, args: z.output<S>): Promise<Outcome> },
): ToolDef {
  return def as unknown as ToolDef;
}

/** Fields every long action takes: how long to wait for its end now, and its whole bound. */
export const WAIT_FIELDS = {
  wait: z.int().min(0).max(30_000).optional().describe("ms to wait for the end before answering with a handle to poll (default 15000)"),
  timeout: z.int().min(1_000).max(600_000).optional().describe("ms after which the action ends timed_out (default 120000)"),
};
const DEFAULT_WAIT_MS = 15_000;
const DEFAULT_TIMEOUT_MS = 120_000;
/** Bound of an action that ends at once (use, bank, store, chat). */
export const INSTANT_MS = 5_000;

/** Send an event and wait for how it ended (or answer with the job's handle). */
export async function act(
  ctx: ToolContext,
  name: string,
  send: () => void,
  check: Check,
  o: { wait?: number; timeout?: number; replaces?: boolean; refusalOutcomes?: Record<string, OutcomeKind>; recheck?: boolean } = {},
): Promise<Outcome> {
  const timeoutMs = o.timeout ?? (o.replaces ? DEFAULT_TIMEOUT_MS : INSTANT_MS);
  const job = ctx.jobs.start(name, check, {
    timeoutMs,
    replaces: o.replaces ?? false,
    refusalOutcomes: o.refusalOutcomes,
    recheckMs: o.recheck ? Math.max(ctx.tickMs, 25) : undefined,
  });
  send();
  job.evaluate();
  const r = await job.wait(Math.min(o.wait ?? DEFAULT_WAIT_MS, timeoutMs + 50));
  return r ?? { outcome: "in_progress", handle: job.id, detail: `${name} is still running: poll this handle, or observe` };
}

/** Refused before anything was sent. */
export const refused = (code: string, detail: string): Outcome => ({ outcome: "refused", code, detail });

/** How many of an item the last `player:sync` shows in the inventory. */
export function held(s: GameSession, itemId: string): number {
  return (s.me?.inventory ?? []).filter((i) => i.itemId === itemId).reduce((n, i) => n + i.quantity, 0);
}

/** The inventory slot holding an item (the first), if any. */
export function slotOf(s: GameSession, test: (itemId: string) => boolean): number | undefined {
  return s.me?.inventory.find((i) => test(i.itemId))?.slot;
}

/** System lines without a code (what happened) since the job began. */
export function notices(events: { event: string; data: Record<string, unknown> }[]): string[] {
  return events.filter((e) => e.event === "chat:message" && e.data.type === "system" && !e.data.code).map((e) => String(e.data.text));
}

/** An action that ends at once: done at the first `player:sync` or notice after it was sent. */
export const instantCheck: Check = ({ events }) => {
  const said = notices(events);
  if (said.length || events.some((e) => e.event === "player:sync")) return { outcome: "completed", ...(said.length ? { messages: said } : {}) };
  return undefined;
};
