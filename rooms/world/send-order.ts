/**
 * The order the tick's patches leave in. Colyseus writes them one client after another, from the
 * last client to join to the first (`SchemaSerializer.applyPatches`): with 2,000 clients the first
 * to join would get every patch a whole broadcast (100 ms and more) after the newest. Rotating the
 * client list before each broadcast by the golden section of its length starts each tick at another
 * client and spreads every client's place evenly over the broadcast, tick after tick
 * (README "Benchmarks": move → visible).
 */

/** 1 − 1/φ: successive rotations by this share of the length never line up (Weyl's sequence). */
const STEP = (3 - Math.sqrt(5)) / 2;

/** Rotate `clients` in place: the first `round(length × STEP)` move to the end. */
export function rotateSendOrder<T>(clients: T[]): void {
  const k = Math.round(clients.length * STEP);
  if (k === 0 || k === clients.length) return;
  const head = clients.splice(0, k);
  for (const c of head) clients.push(c);
}
