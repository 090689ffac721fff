/**
 * The tick grid (`TICK_PHASE=auto`, docs/operations.md "Scaling: several processes and machines"): world `w`
 * ticks at the wall-clock times `t` with `t ≡ phase(w) (mod TICK_MS)` on `Date.now()`, which every
 * process of a machine shares. The phases of worlds 1, 2, 3, 4, 5… are 0, 1/2, 1/4, 3/4, 1/8… of
 * the tick (the van der Corput sequence), so any number of worlds is spread evenly over the tick
 * and two processes on one machine never tick at the same moment. Pure: times are given.
 */

/** The van der Corput (base 2) value of `n ≥ 0`: its binary digits mirrored after the point (6 = 110₂ → 0.011₂ = 3/8). */
export function vanDerCorput(n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new RangeError(`vanDerCorput: ${n} is not a non-negative integer`);
  let value = 0;
  for (let digit = 0.5; n > 0; digit /= 2, n = Math.floor(n / 2)) if (n % 2 === 1) value += digit;
  return value;
}

/** World `world`'s phase in whole milliseconds, in `[0, tickMs)`: `floor(vanDerCorput(world − 1) × tickMs)`. */
export function tickPhaseMs(world: number, tickMs: number): number {
  if (!Number.isSafeInteger(world) || world < 1) throw new RangeError(`tickPhaseMs: world ${world} is not a positive integer`);
  return Math.floor(vanDerCorput(world - 1) * tickMs);
}

/** The first grid time from `t` on: the smallest `g ≥ t` with `g ≡ phaseMs (mod tickMs)`. */
export function slotAtOrAfter(t: number, tickMs: number, phaseMs: number): number {
  return t + ((((phaseMs - t) % tickMs) + tickMs) % tickMs);
}

/** When the tick after the one of `slot` runs, and how many grid slots it leaves out. */
export interface NextTick {
  /** The next tick's slot (a grid time). */
  next: number;
  /** Slots between `slot` and `next` that get no tick: the tick of `slot` (or the process) ran past them. */
  skipped: number;
}

/**
 * The slot of the tick after the one of `slot`, `now` being the time when that tick has ended: the
 * first grid time after `slot` that is not past yet, so a tick that overran its slot makes the next
 * one take the next free slot instead of a burst of catch-up ticks. A timer that fired a little
 * early (`now` just before `slot`) still leads to `slot + tickMs`. A clock set back by more than a
 * tick (NTP step) re-anchors on the new time, skipping nothing; one set forward counts the slots it
 * jumped over as skipped.
 */
export function nextTick(slot: number, now: number, tickMs: number, phaseMs: number): NextTick {
  if (now < slot - tickMs) return { next: slotAtOrAfter(now, tickMs, phaseMs), skipped: 0 };
  const next = Math.max(slot + tickMs, slotAtOrAfter(now, tickMs, phaseMs));
  return { next, skipped: Math.round((next - slot) / tickMs) - 1 };
}
