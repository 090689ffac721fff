/**
 * The order the tick's patches leave in. Colyseus writes them one client after another, from the
 * last client to join to the first (`SchemaSerializer.applyPatches`): with 2,000 clients the first
 * to join would get every patch a whole broadcast (100 ms and more) after the newest. Rotating the
 * client list before each broadcast by the golden section of its length (on average: the fraction
 * carries over) starts each tick at another client and spreads every client's place evenly over the
 * broadcast, tick after tick (docs/interest.md "The order the patches leave in").
 */

/** 1 − 1/φ: the cumulative rotations t × STEP never line up (Weyl's equidistribution). */
const STEP = (3 - Math.sqrt(5)) / 2;

export class SendOrder {
  /** The part of a client the last rotations fell short by. */
  private carry = 0;

  /**
   * Rotate `clients` in place by STEP of its length: the first ones move to the end. The elements
   * are swapped where they stand (three reversals), so nothing is allocated and Colyseus's
   * `ClientArray` keeps its session index as it is (the same clients: only their places change).
   * With `splice` and `push` each rotation took every moved client out of that index and put it
   * back (a thousand deletions and insertions a tick at 2,000, which rebuilt its table).
   */
  rotate<T>(clients: T[]): void {
    const n = clients.length;
    if (n < 2) return;
    this.carry += STEP * n;
    const k = Math.floor(this.carry) % n;
    this.carry -= Math.floor(this.carry);
    if (k === 0) return;
    reverse(clients, 0, k - 1);
    reverse(clients, k, n - 1);
    reverse(clients, 0, n - 1);
  }
}

/** Reverse `a[from..to]` (both included) in place. */
function reverse<T>(a: T[], from: number, to: number): void {
  for (let i = from, j = to; i < j; i++, j--) {
    const t = a[i]!;
    a[i] = a[j]!;
    a[j] = t;
  }
}
