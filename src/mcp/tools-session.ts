/**
 * Tools that act on nothing in the world (docs/agents.md#tools): `observe` (what the player sees,
 * sized for a model: `observe.ts`) and `poll` (how a long action ended, by its handle).
 */
import { z } from "zod";
import { MAX_OBSERVE_CHARS, observationJson, observationText, observe } from "./observe.js";
import { refused, tool, WAIT_FIELDS, type ToolDef } from "./tools.js";

const observeTool = tool({
  name: "observe",
  title: "Observe",
  description:
    "What you see: yourself, then players, NPCs, resources, ground items and stations with ids, distances and the tools that act on them (trade partner and attackers first, then nearest), and what was said or refused since the last observe.",
  input: z.object({
    format: z.enum(["text", "json"]).optional().describe("text (default) or json"),
    perKind: z.int().min(1).max(50).optional().describe("most entries of each kind (default 8)"),
    maxChars: z.int().min(200).max(MAX_OBSERVE_CHARS).optional().describe(`most characters (default ${MAX_OBSERVE_CHARS})`),
  }),
  acts: false,
  run: (ctx, a) => {
    const o = observe(ctx.session, ctx.content, { perKind: a.perKind, recentSince: ctx.memo.observedSeq });
    ctx.memo.observedSeq = ctx.session.mark();
    const text = a.format === "json" ? observationJson(o, a.maxChars) : observationText(o, a.maxChars);
    return Promise.resolve({ outcome: "completed", observation: text });
  },
});

const poll = tool({
  name: "poll",
  title: "Poll an action",
  description: "How a long action (a handle from an in_progress answer) ended, waiting up to `wait` ms for it.",
  input: z.object({ handle: z.string().min(1).max(64), wait: WAIT_FIELDS.wait }),
  acts: false,
  run: async (ctx, a) => {
    const job = ctx.jobs.get(a.handle);
    if (!job) return refused("NO_SUCH_HANDLE", "no action with that handle (handles of the last 32 actions are kept)");
    const r = await job.wait(a.wait ?? 15_000);
    return r ?? { outcome: "in_progress", handle: job.id, detail: `${job.tool} is still running` };
  },
});

/** `observe` and `poll`, first in tools/list. */
export const SESSION_TOOLS: ToolDef[] = [observeTool, poll];
