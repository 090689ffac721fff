/**
 * Seeded randomness for the load scripts and the chaos run (mulberry32), so a run places bots and
 * makes its choices the same way from the same seed.
 */

/** A small seeded generator: numbers in [0, 1). */
export function seededRng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A shuffled copy of `list`. */
export function shuffle<T>(list: readonly T[], rng: () => number): T[] {
  const a = [...list];
  for (let i = a.length - 1; i > 0; i--) {
    const j = Math.floor(rng() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/** `seededRng` with the choices a run makes. */
export class Rng {
  /** A number in [0, 1). */
  readonly next: () => number;

  constructor(seed: number) {
    this.next = seededRng(seed);
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** A random element (undefined for an empty list). */
  pick<T>(xs: readonly T[]): T | undefined {
    return xs.length === 0 ? undefined : xs[Math.floor(this.next() * xs.length)];
  }

  /** A shuffled copy. */
  shuffle<T>(xs: readonly T[]): T[] {
    return shuffle(xs, this.next);
  }

  /** A new source seeded from this one (one per bot, so bots do not share a sequence). */
  fork(): Rng {
    return new Rng(Math.floor(this.next() * 2 ** 32));
  }
}
