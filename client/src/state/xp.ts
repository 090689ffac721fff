/** The XP curve (OSRS-style, levels 1 to 99) for the skills panel's progress bars. */

/** XP needed for each level; index 0 unused, index 1 is 0. */
export const XP_FOR_LEVEL: readonly number[] = (() => {
  const table = [0, 0];
  let points = 0;
  for (let level = 1; level < 99; level++) {
    points += Math.floor(level + 300 * 2 ** (level / 7));
    table.push(Math.floor(points / 4));
  }
  return table;
})();

/** Progress from the current level to the next, 0 to 1 (1 at level 99). */
export function levelProgress(level: number, xp: number): { fraction: number; toNext: number } {
  if (level >= 99) return { fraction: 1, toNext: 0 };
  const lo = XP_FOR_LEVEL[level] ?? 0;
  const hi = XP_FOR_LEVEL[level + 1] ?? lo;
  return { fraction: hi > lo ? Math.max(0, Math.min(1, (xp - lo) / (hi - lo))) : 1, toNext: Math.max(0, hi - xp) };
}
