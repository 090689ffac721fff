/** Recognising database errors, whichever driver raised them (PostgreSQL or PGlite). */

/** Whether `e` is a unique-constraint violation (SQLSTATE 23505, or a driver's message saying so). */
export function isUniqueViolation(e: unknown): boolean {
  return (e as { code?: string })?.code === "23505" || /unique|duplicate key/i.test(String((e as Error)?.message));
}
