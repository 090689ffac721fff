/**
 * Interest management's selection rule (README "In a crowd"): of the things within a client's view,
 * which ones it tracks. Priority ids first, then nearest first up to the bound; at the cut-off
 * distance what the client already tracks stays before anything new (no churn in a crowd).
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
 * What a selection chooses from. `ids[i]` lies `distances[i]` whole tiles away (0 or more); only the
 * first `count` entries count (buffers are reused from one client to the next). Every candidate is
 * within view; an id appears once.
 */
export interface InterestCandidates {
  readonly ids: readonly string[];
  readonly distances: ArrayLike<number>;
  readonly count: number;
}

export interface InterestRule {
  /** How many to choose at most. */
  readonly bound: number;
  /** Ids chosen before any other candidate (trade partner, attack target, attackers…). */
  readonly priority: ReadonlySet<string>;
  /** What the client tracked until now: preferred at the cut-off distance. */
  readonly previous?: ReadonlySet<string>;
}

let histogram = new Uint32Array(64);

/**
 * Add the chosen candidates to `out` (not cleared first) and return how many: every priority
 * candidate (the nearest of them if they alone pass the bound), then the others nearest first; of
 * those at the cut-off distance, the previously tracked ones first, then the rest in candidate order.
 * Linear in `count` (distances are bucketed, nothing is sorted unless priorities pass the bound).
 */
export function selectInterest(c: InterestCandidates, rule: InterestRule, out: Set<string>): number {
  const { ids, distances, count } = c;
  const { bound, priority, previous } = rule;
  if (bound <= 0) return 0;
  let chosen = 0;
  let others = 0;
  let far = 0;
  for (let i = 0; i < count; i++) {
    if (priority.has(ids[i]!)) chosen++;
    else {
      others++;
      if (distances[i]! > far) far = distances[i]!;
    }
  }
  if (chosen > bound) return nearestPriorities(c, rule, out);
  for (let i = 0; i < count && chosen > 0; i++) if (priority.has(ids[i]!)) out.add(ids[i]!);
  const room = bound - chosen;
  if (others <= room) {
    for (let i = 0; i < count; i++) if (!priority.has(ids[i]!)) out.add(ids[i]!);
    return chosen + others;
  }
  // Count the others by distance, and find the cut-off: all nearer are taken, `left` of those at it.
  if (histogram.length <= far) histogram = new Uint32Array(far + 1);
  histogram.fill(0, 0, far + 1);
  for (let i = 0; i < count; i++) if (!priority.has(ids[i]!)) histogram[distances[i]!]!++;
  let cut = 0;
  let left = room;
  while (histogram[cut]! <= left) left -= histogram[cut++]!;
  for (let i = 0; i < count; i++) {
    const id = ids[i]!;
    if (distances[i]! < cut && !priority.has(id)) out.add(id);
  }
  // At the cut-off: first what the client already tracks, then the rest in order.
  for (let pass = 0; pass < 2 && left > 0; pass++)
    for (let i = 0; i < count && left > 0; i++) {
      const id = ids[i]!;
      if (distances[i] !== cut || priority.has(id) || (previous?.has(id) ?? false) !== (pass === 0)) continue;
      out.add(id);
      left--;
    }
  return bound;
}

/** More priority candidates than the bound: the nearest of them (previously tracked first at a tie). */
function nearestPriorities(c: InterestCandidates, rule: InterestRule, out: Set<string>): number {
  const order: number[] = [];
  for (let i = 0; i < c.count; i++) if (rule.priority.has(c.ids[i]!)) order.push(i);
  const prev = (i: number) => (rule.previous?.has(c.ids[i]!) ? 0 : 1);
  order.sort((a, b) => c.distances[a]! - c.distances[b]! || prev(a) - prev(b) || a - b);
  for (const i of order.slice(0, rule.bound)) out.add(c.ids[i]!);
  return rule.bound;
}
