/**
 * `tradeOnce`: a whole two-screen trade between two bots as fast as the protocol allows, reacting
 * only to events (request → respond → offers → accept on each new revision → accept on the
 * confirmation screen → completed or cancelled).
 *
 * Used by the benchmark (`loadtest/trade/bench.ts`), the soak and by the invariant and crash tests.
 */
import type { Bot, Handler } from "./bot.js";

export interface Offer {
  items: { inventorySlot: number; quantity: number }[];
  coins: number;
}

export interface TradeResult {
  tradeId?: string;
  outcome: "completed" | "cancelled" | "refused" | "timeout";
  /** Cancel reason, or the refusal's error code. */
  reason?: string;
  /** From the later of the two confirmation-screen accepts to the later `tradeCompleted`. */
  settleMs?: number;
  /** From the request to the later `tradeCompleted`. */
  totalMs?: number;
  /** The last trade event either side received (tells where a timed-out trade stalled). */
  lastEvent?: string;
}

export interface TradePlan {
  offerA: (a: Bot) => Offer;
  offerB: (b: Bot) => Offer;
  /** The target declines instead of accepting. */
  decline?: boolean;
  /** Give up (cancel) after this long. */
  timeoutMs?: number;
  /** Called with the trade id once the offer screen is open (tests inject chaos here). */
  onStarted?: (tradeId: string) => void;
}

const offered = (o: { items: { inventorySlot: number; quantity: number }[]; coins: number }, want: Offer) =>
  o.coins === want.coins &&
  o.items.length === want.items.length &&
  want.items.every((w) => o.items.some((l) => l.inventorySlot === w.inventorySlot && l.quantity === w.quantity));

/**
 * A asks B and both play a whole trade. Resolves when it completed (both got `tradeCompleted`),
 * ended (`tradeCancelled`), was refused (`tradeError` before any `tradeIncoming`), or timed out
 * (then it is cancelled). Offer-screen accepts name the revision they saw; each side accepts each
 * revision at most once, and only once its own offer is in place.
 */
export function tradeOnce(a: Bot, b: Bot, plan: TradePlan): Promise<TradeResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    let tradeId: string | undefined;
    let finished = false;
    const offs: (() => void)[] = [];
    const want = new Map<Bot, Offer>();
    const acceptedRevision = new Map<Bot, number>();
    const confirmAcceptAt = new Map<Bot, number>();
    const completedAt = new Map<Bot, number>();

    const finish = (r: TradeResult) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const off of offs) off();
      resolve({ tradeId, lastEvent, ...r });
    };
    let lastEvent = "none";
    const mine = (d: any) => tradeId !== undefined && d?.tradeId === tradeId;
    /** `bot.on(event, fn)`, first recording the event as `lastEvent` when it is (or may be) this trade's. */
    const track = (bot: Bot, event: string, fn: Handler) =>
      bot.on(event, (d) => {
        if (tradeId === undefined || d?.tradeId === tradeId) lastEvent = `${bot === a ? "A" : "B"} ${event}${event === "tradeError" ? ` ${d?.code}` : ""}`;
        fn(d);
      });

    offs.push(
      a.on("tradeError", (d) => {
        if (tradeId === undefined && d.tradeId === undefined) finish({ outcome: "refused", reason: d.code });
      }),
      track(b, "tradeIncoming", (d) => {
        if (tradeId !== undefined || d.fromPlayerId !== a.id) return;
        tradeId = d.tradeId;
        b.send("tradeRequestRespond", { tradeId, accept: !plan.decline });
      }),
    );
    for (const [me, makeOffer] of [
      [a, plan.offerA],
      [b, plan.offerB],
    ] as const) {
      offs.push(
        track(me, "tradeStarted", (d) => {
          if (!mine(d)) return;
          const o = makeOffer(me);
          want.set(me, o);
          for (const line of o.items) me.send("tradeAddItem", { tradeId, inventorySlot: line.inventorySlot, quantity: line.quantity });
          if (o.coins > 0) me.send("tradeAddItem", { tradeId, coins: o.coins });
          if (me === a) plan.onStarted?.(tradeId!);
          // An empty offer is in place at once: accept revision 0 unless something changed.
          if (o.items.length === 0 && o.coins === 0) {
            acceptedRevision.set(me, 0);
            me.send("tradeAccept", { tradeId, revision: 0 });
          }
        }),
        track(me, "tradeUpdated", (d) => {
          if (!mine(d) || d.myOffer.accepted) return;
          const w = want.get(me);
          if (!w || !offered(d.myOffer, w)) return;
          if ((acceptedRevision.get(me) ?? -1) >= d.revision) return;
          acceptedRevision.set(me, d.revision);
          me.send("tradeAccept", { tradeId, revision: d.revision });
        }),
        track(me, "tradeConfirmScreen", (d) => {
          if (!mine(d)) return;
          confirmAcceptAt.set(me, performance.now());
          me.send("tradeAccept", { tradeId, revision: d.revision });
        }),
        track(me, "tradeError", (d) => {
          // A side that can't hold the offer, or an offer that no longer fits the inventory: give up.
          if (mine(d) && (d.code === "INVENTORY_FULL" || d.code === "INVALID_ITEM" || d.code === "INVALID_QUANTITY" || d.code === "INVALID_SLOT"))
            me.send("tradeCancel", { tradeId });
        }),
        track(me, "tradeCompleted", (d) => {
          if (!mine(d)) return;
          completedAt.set(me, performance.now());
          if (completedAt.size === 2) {
            const done = Math.max(...completedAt.values());
            const lastAccept = Math.max(...confirmAcceptAt.values());
            finish({ outcome: "completed", settleMs: done - lastAccept, totalMs: done - started });
          }
        }),
        track(me, "tradeCancelled", (d) => {
          if (mine(d)) finish({ outcome: "cancelled", reason: d.reason });
        }),
      );
    }
    // Set after the handlers, which run only once events arrive (finish clears it).
    const timer = setTimeout(() => {
      if (tradeId) {
        a.send("tradeCancel", { tradeId });
        b.send("tradeCancel", { tradeId });
      }
      // A completion one side saw counts as completed (the other may be disconnected).
      finish(completedAt.size > 0 ? { outcome: "completed" } : { outcome: "timeout" });
    }, plan.timeoutMs ?? 15_000);
    a.send("tradeRequest", { targetPlayerId: b.id });
  });
}
