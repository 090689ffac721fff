/** Admission control of world joins (src/net/admission.ts): the seats reserved and not yet taken. */

/**
 * Seats reserved by matchmaking in this process whose client has not entered the world yet: stage 1
 * refuses new joins while `limit` are outstanding, so the backlog of reserved seats stays small enough
 * for each client to enter before its reservation expires (in a burst, an unbounded backlog left
 * thousands of seats to expire unused: the client got Colyseus's 524 instead of a refusal it can
 * retry). A seat leaves when its client enters (the world room's `onJoin`) or when its reservation
 * expires (`ttlMs`: SEAT_RESERVATION_SECONDS). An account counts one seat at most: its newest
 * (joining again replaces the seat it waits for), so one client that reserves seats in a loop and
 * never connects cannot fill the ledger and keep everyone else out. A replaced seat is refused when
 * its client comes (`superseded`, the world room's `onJoin`: 409 `SEAT_REPLACED`), so an account
 * holds one pending seat at most in Colyseus too (docs/rooms.md#seats-and-full-worlds).
 */
export class SeatLedger {
  /** Session id → when its reservation expires and whose it is; one lifetime for all, so the map is in expiry order. */
  private readonly seats = new Map<string, { expires: number; account: string; world: number }>();
  /** Session ids of seats replaced by their account's newer one, until their reservation would have expired (in expiry order). */
  private readonly replaced = new Map<string, number>();
  /** Account → the session id of its counted seat. */
  private readonly byAccount = new Map<string, string>();
  /** Moving average of the time between two clients entering, in ms (a guess until measured), and the last entry. */
  private avgEntryGapMs = 100;
  private lastEntry: number | undefined;
  constructor(
    readonly limit: number,
    private readonly ttlMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Seats reserved and not yet entered nor expired. */
  get pending(): number {
    const t = this.now();
    for (const [id, seat] of this.seats) {
      if (seat.expires > t) break;
      this.drop(id);
    }
    return this.seats.size;
  }

  full(): boolean {
    return this.pending >= this.limit;
  }

  /** Seats of world `world` reserved and not yet entered nor expired (GET /api/v1/worlds, WORLD_FULL). */
  pendingIn(world: number): number {
    let n = 0;
    if (this.pending === 0) return 0;
    for (const seat of this.seats.values()) if (seat.world === world) n++;
    return n;
  }

  /**
   * A seat of `account` in world `world` reserved under `sessionId`; it replaces the account's seat
   * counted until now, whose client will be refused (`superseded`).
   */
  reserve(sessionId: string, account: string, world = 1): void {
    const previous = this.byAccount.get(account);
    if (previous !== undefined) {
      const seat = this.seats.get(previous);
      if (seat) this.replaced.set(previous, seat.expires);
      this.drop(previous);
    }
    this.seats.delete(sessionId);
    this.seats.set(sessionId, { expires: this.now() + this.ttlMs, account, world });
    this.byAccount.set(account, sessionId);
  }

  /** True when the seat reserved under `sessionId` was replaced by a newer one of its account. */
  superseded(sessionId: string): boolean {
    const t = this.now();
    for (const [id, expires] of this.replaced) {
      if (expires > t) break;
      this.replaced.delete(id);
    }
    return this.replaced.has(sessionId);
  }

  /**
   * Seconds until `ahead` more clients have entered, at the rate they have been entering (a moving
   * average): what a refused world join is told to wait at least (`Admission.admitMatchmaking`).
   */
  secondsFor(ahead: number): number {
    return (ahead * this.avgEntryGapMs) / 1000;
  }

  /** Its client entered the world (the world room's `onJoin`). */
  entered(sessionId: string): void {
    if (!this.seats.has(sessionId)) return;
    const t = this.now();
    // A pause with nobody entering (no backlog) is not the rate of a backlog: count at most 1 s of it.
    if (this.lastEntry !== undefined) this.avgEntryGapMs += 0.1 * (Math.min(t - this.lastEntry, 1000) - this.avgEntryGapMs);
    this.lastEntry = t;
    this.drop(sessionId);
  }

  /** The seat no longer counts (entered, expired, or replaced by the account's newer one). */
  private drop(sessionId: string): void {
    const seat = this.seats.get(sessionId);
    if (!seat) return;
    this.seats.delete(sessionId);
    if (this.byAccount.get(seat.account) === sessionId) this.byAccount.delete(seat.account);
  }
}
