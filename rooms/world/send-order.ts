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
   * Rotate `clients` in place by STEP of its length: the first ones move to the end (with `splice`
   * and `push`, which Colyseus's `ClientArray` keeps its session index through).
   */
  rotate<T>(clients: T[]): void {
    const n = clients.length;
    if (n < 2) return;
    this.carry += STEP * n;
    const k = Math.floor(this.carry) % n;
    this.carry -= Math.floor(this.carry);
    if (k === 0) return;
    const head = clients.splice(0, k);
    for (const c of head) clients.push(c);
  }
}
