/**
 * Interest management's selection rule (docs/interest.md "In a crowd"): of the things within a client's view,
 * which ones it tracks. Priority ids first, then nearest first up to the bound, where what the
 * client already tracks counts a little nearer and wins ties, and only a few newcomers get in per
 * tick (no churn in a crowd).
 */

/**
 * Other players a client tracks at most. RuneScape's client keeps at most 255 local players; 100
 * fills a screen at a bank (about a 10-tile square of a one-player-a-tile crowd) while keeping each
 * client's share of a tick's sync, and its bandwidth, flat however large the crowd grows.
 */
export const MAX_TRACKED_PLAYERS = 100;
/** NPCs a client tracks at most (the bundled map has at most 10 within any view). */
export const MAX_TRACKED_NPCS = 100;
/** Ground item piles a client tracks at most (a crowd dropping things at a bank). */
export const MAX_TRACKED_GROUND_ITEMS = 100;
/** Resource nodes and fires a client tracks at most: nodes are static, so generous (fires in a crowd). */
export const MAX_TRACKED_RESOURCES = 200;
/**
 * Tiles of advantage of what a client already tracks: something new takes its place only when more
 * than this much nearer, so a crowd milling around the edge of the tracked set does not churn it.
 */
export const TRACKING_MARGIN = 2;
/**
 * Things a client starts tracking per selection at most, per collection (priorities aside): a view
 * with room fills at this pace, and every newcomer is sent whole, so a client joining a crowd costs
 * a bounded share of each tick, and of its bandwidth, while its view fills over a few ticks.
 */
export const MAX_NEW_PER_TICK = 10;

/**
 * In a crowd, with its view full, what a client tracks stays while it is in view (as RuneScape's
 * client keeps its local players): at each selection at most this many of them make way for nearer
 * newcomers (priorities aside), so the view drifts toward the nearest at a bounded pace. In a crowd on
 * the move the nearest set is never the same two ticks running; replacing it as fast as it changes
 * sent most of the crowd whole, again and again (measured: 3.6 entities sent whole per client per
 * tick at 1,000 with no such limit, 0.6 with it; `loadtest/bench-interest.ts`).
 */
export const MAX_SWAPS_PER_SELECTION = 2;

/**
 * In a crowd (a collection whose candidates passed its bound, with the client's view of it full, at
 * its last selection), the selection runs again only every this many ticks, staggered over the
 * clients; in between the client keeps what it tracks as it is, and the tracked entities' changes
 * still reach it every tick. What leaves its view (gone, out of range, no longer visible) leaves at
 * once, its place left free until the turn, unless more than MAX_CROWD_VACANCIES places would be
 * free (a viewer teleported away: everything leaves); then, or when a new priority is in view, it is
 * selected at once. A collection whose view still has room at its selection is selected every tick
 * (a calm one: CALM_RESELECT_TICKS). With MAX_SWAPS_PER_SELECTION it sets how fast a full view
 * drifts toward the nearest: two newcomers every 3.6 s at a 600 ms tick.
 */
export const CROWD_RESELECT_TICKS = 6;

/**
 * Places of a crowded view (CROWD_RESELECT_TICKS) that may stand free off the client's turn, after
 * what it tracked walked out: past this many it is selected at once. A crowd on the move loses a
 * tracked player past the leave radius every few ticks; selecting each view again for each of them
 * was most of its selections (`loadtest/bench-interest.ts --scenario wander`: 560 of 890 a tick at
 * 2,000 players). One selection's newcomers (MAX_NEW_PER_TICK) fill what may stand free.
 */
export const MAX_CROWD_VACANCIES = MAX_NEW_PER_TICK;

/**
 * A collection whose candidates all fit (no more in view than the bound: away from crowds) is
 * selected every this many ticks, staggered over the clients; in between it only loses, at once,
 * what leaves the view, and is selected at once when a new priority comes into it; so something
 * that comes into view waits a tick at most. A collection that does not fit but whose view still
 * has room is selected every tick. Away from crowds, 2,000 players spread over the map spent most of
 * a tick's selections on views that changed by nothing or by one walker
 * (`loadtest/bench-interest.ts --scenario spread`).
 */
export const CALM_RESELECT_TICKS = 2;

/**
 * What a selection chooses from. `ids[i]` lies `distances[i]` whole tiles away (0 or more); only the
 * first `count` entries count (buffers are reused from one client to the next). Every candidate is
 * within view; an id appears once.
 */
export interface InterestCandidates {
  readonly ids: readonly string[];
  readonly distances: ArrayLike<number>;
  readonly count: number;
  /**
   * From this index on, what the caller knows of each candidate, so it is not looked up in the
   * rule's sets: none is a priority, those before `trackedUntil` are in `previous` and the rest are
   * not. Undefined: every candidate is looked up.
   */
  readonly knownFrom?: number;
  readonly trackedUntil?: number;
}

export interface InterestRule {
  /** How many to choose at most. */
  readonly bound: number;
  /** Ids chosen before any other candidate (trade partner, attack target, attackers…). */
  readonly priority: ReadonlySet<string>;
  /** What the client tracked until now: it wins ties, and counts `margin` tiles nearer. */
  readonly previous?: ReadonlySet<string>;
  /** Tiles of advantage of what the client tracked until now (0 by default). */
  readonly margin?: number;
  /** With `previous`, when not everything fits: at most this many it did not track come in (priorities aside). */
  readonly maxAdds?: number;
  /**
   * With `previous`, when not everything fits: at most this many of what it tracked, still a
   * candidate, make way for a nearer newcomer (priorities aside). Free room is filled up to `maxAdds`.
   */
  readonly maxSwaps?: number;
}

/**
 * What a selection knows of a candidate it chooses: `TRACKED`, the rule's `previous` holds it;
 * `PRIORITY`, one of the rule's priorities (which `previous` may hold or not); `OTHER`, neither.
 */
export const OTHER = 0;
export const TRACKED = 1;
export const PRIORITY = 2;
export type CandidateKind = typeof OTHER | typeof TRACKED | typeof PRIORITY;

/** Where a selection puts what it chooses, with each one's index among the candidates and its kind (a Set will do). */
export interface IdSink {
  add(id: string, index: number, kind: CandidateKind): unknown;
}

// Scratch buffers, reused from one selection to the next.
let kinds = new Uint8Array(256);
let tracked = new Uint32Array(64);
let untracked = new Uint32Array(64);

/**
 * Add the chosen candidates to `out` (not cleared first) and return how many: every priority
 * candidate (the nearest of them if they alone pass the bound), then the others by rank — the
 * distance, less `margin` for what the client tracked until now — taking at equal rank what it
 * tracked first, then the rest in candidate order, and (when not all fit) at most `maxAdds` it did
 * not track, of which at most `maxSwaps` take the place of something it tracked. Linear in `count`
 * (ranks are bucketed; nothing is sorted unless priorities pass the bound).
 */
export function selectInterest(c: InterestCandidates, rule: InterestRule, out: IdSink): number {
  const { ids, distances, count } = c;
  const { bound, priority, previous } = rule;
  if (bound <= 0) return 0;
  const margin = rule.margin ?? 0;
  // Each candidate's kind, looked up once unless the caller knows it: a priority, tracked until now, or not.
  if (kinds.length < count) kinds = new Uint8Array(Math.max(count, 2 * kinds.length));
  const knownFrom = c.knownFrom ?? count;
  const trackedUntil = c.trackedUntil ?? 0;
  let prio = 0;
  let held = 0;
  let far = 0;
  for (let i = 0; i < count; i++) {
    const kind = i >= knownFrom ? (i < trackedUntil ? TRACKED : OTHER) : priority.has(ids[i]!) ? PRIORITY : previous?.has(ids[i]!) ? TRACKED : OTHER;
    kinds[i] = kind;
    if (kind === PRIORITY) prio++;
    else {
      if (kind === TRACKED) held++;
      if (distances[i]! > far) far = distances[i]!;
    }
  }
  if (prio > bound) return nearestPriorities(c, rule, out);
  if (count <= bound) {
    // Everything fits: no ranking, no limit on newcomers.
    for (let i = 0; i < count; i++) out.add(ids[i]!, i, kinds[i] as CandidateKind);
    return count;
  }
  if (tracked.length <= far) [tracked, untracked] = [new Uint32Array(far + 1), new Uint32Array(far + 1)];
  tracked.fill(0, 0, far + 1);
  untracked.fill(0, 0, far + 1);
  for (let i = 0; i < count; i++) {
    const kind = kinds[i];
    if (kind === PRIORITY) out.add(ids[i]!, i, PRIORITY);
    else if (kind === TRACKED) tracked[Math.max(0, distances[i]! - margin)]!++;
    else untracked[distances[i]!]!++;
  }
  // Rank by rank, what it tracked first, until the room is full: where each kind is cut, and how
  // many of that kind are taken at its cut (everything of a lower rank is).
  let left = bound - prio;
  // Newcomers: the free room (up to maxAdds), and at most maxSwaps in place of what it tracked.
  let adds = previous ? Math.min(rule.maxAdds ?? Infinity, Math.max(0, left - held) + (rule.maxSwaps ?? Infinity)) : Infinity;
  let cutT = -1;
  let atT = 0;
  let cutU = -1;
  let atU = 0;
  let r = 0;
  for (; r <= far && left > 0; r++) {
    const t = Math.min(tracked[r]!, left);
    left -= t;
    if (t < tracked[r]! && cutT < 0) {
      cutT = r;
      atT = t;
    }
    const u = Math.min(untracked[r]!, left, adds);
    left -= u;
    adds -= u;
    if (u < untracked[r]! && cutU < 0) {
      cutU = r;
      atU = u;
    }
  }
  // A kind never cut is taken up to the last rank looked at.
  if (cutT < 0) cutT = r;
  if (cutU < 0) cutU = r;
  for (let i = 0; i < count; i++) {
    const kind = kinds[i];
    if (kind === PRIORITY) continue;
    if (kind === TRACKED) {
      const rank = Math.max(0, distances[i]! - margin);
      if (rank < cutT || (rank === cutT && atT-- > 0)) out.add(ids[i]!, i, TRACKED);
    } else {
      const rank = distances[i]!;
      if (rank < cutU || (rank === cutU && atU-- > 0)) out.add(ids[i]!, i, OTHER);
    }
  }
  return bound - left;
}

/** More priority candidates than the bound: the nearest of them (previously tracked first at a tie). */
function nearestPriorities(c: InterestCandidates, rule: InterestRule, out: IdSink): number {
  const order: number[] = [];
  for (let i = 0; i < c.count; i++) if (rule.priority.has(c.ids[i]!)) order.push(i);
  const prev = (i: number) => (rule.previous?.has(c.ids[i]!) ? 0 : 1);
  order.sort((a, b) => c.distances[a]! - c.distances[b]! || prev(a) - prev(b) || a - b);
  for (const i of order.slice(0, rule.bound)) out.add(c.ids[i]!, i, PRIORITY);
  return rule.bound;
}
