/** Admission control of world joins (src/net/admission.ts): the seats reserved and not yet taken. */

/**
 * Seats reserved by matchmaking in this process whose client has not entered the world yet: stage 1
 * refuses new joins while `limit` are outstanding, so the backlog of reserved seats stays small enough
 * for each client to enter before its reservation expires (in a burst, an unbounded backlog left
 * thousands of seats to expire unused: the client got Colyseus's 524 instead of a refusal it can
 * retry). A seat leaves when its client enters (the world room's `onJoin`) or when its reservation
 * expires (`ttlMs`: SEAT_RESERVATION_SECONDS).
 */
export class SeatLedger {
  /** Session id → when its reservation expires; all share one lifetime, so the map is in expiry order. */
  private readonly seats = new Map<string, number>();
  constructor(
    readonly limit: number,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Seats reserved and not yet entered nor expired. */
  get pending(): number {
    const t = this.now();
    for (const [id, expires] of this.seats) {
      if (expires > t) break;
      this.seats.delete(id);
    }
    return this.seats.size;
  }

  full(): boolean {
    return this.pending >= this.limit;
  }

  reserve(sessionId: string): void {
    this.seats.delete(sessionId);
    this.seats.set(sessionId, this.now() + this.ttlMs);
  }

  /** Its client entered (or the seat is gone). */
  settle(sessionId: string): void {
    this.seats.delete(sessionId);
  }
}
