/**
 * The capacity a ladder of load steps shows (`bench-scale.ts`): the largest size that passed, the
 * first that did not, and between the two a linear estimate of the size at which the p99 meets
 * the bar (only when the p99 alone made the step fail).
 */

export interface LadderStep {
  total: number;
  pass: boolean;
  /** Move → visible p99 of the step (Infinity when a probe move was lost). */
  p99Ms: number;
  /** The step failed only because its p99 was over the bar (not joins, not too few samples). */
  overBarOnly: boolean;
}

export interface Capacity {
  /** Largest size that passed (0: none). */
  passed: number;
  /** First size that did not pass, if the ladder reached one; none: `passed` is a lower bound. */
  failedAt?: number;
  /** Linear estimate of the size at the bar, between the last size that passed and the first that did not. */
  interpolated?: number;
}

export function ladderCapacity(steps: LadderStep[], bar: number): Capacity {
  const b = steps.find((s) => !s.pass);
  const a = steps.filter((s) => s.pass && (!b || s.total < b.total)).at(-1);
  const c: Capacity = { passed: a?.total ?? 0, failedAt: b?.total };
  if (a && b && b.overBarOnly && Number.isFinite(b.p99Ms) && b.p99Ms > bar && b.p99Ms > a.p99Ms) {
    const x = (bar - a.p99Ms) / (b.p99Ms - a.p99Ms);
    c.interpolated = Math.round(a.total + Math.max(0, Math.min(1, x)) * (b.total - a.total));
  }
  return c;
}
