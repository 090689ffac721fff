/**
 * Leases in doubt (docs/cluster.md "The holder's own clock"): a player whose lease is past the term
 * its last grant or renewal assured does not act this tick. The tick counts them here; while there
 * are any the claims are asked to renew at once, and the stretch is logged at its start and end.
 */
import type { Logger } from "../logger.js";
import type { Player } from "./player.js";

export class LeaseDoubt {
  /** Since when (epoch ms) some players' leases have been in doubt. */
  private since: number | undefined;
  private count = 0;
  private wall = 0;

  constructor(
    private readonly logger: Logger,
    /** Ask the claims to renew now (`CharacterClaims.renewNow`); none in a world without claims. */
    private readonly renewNow?: () => void,
  ) {}

  /** A new tick: counting starts again. */
  begin(): void {
    this.count = 0;
    this.wall = Date.now();
  }

  /** Is `p`'s lease in doubt (then it does not act this tick, and it is counted)? */
  holds(p: Player): boolean {
    if (p.leaseValidUntil === undefined || !p.leaseInDoubt(this.wall)) return false;
    this.count++;
    return true;
  }

  /** The tick's players are counted: renew at once while any is in doubt; log the stretch's start and end. */
  end(): void {
    if (this.count > 0) {
      this.renewNow?.();
      if (this.since === undefined) {
        this.since = this.wall;
        this.logger.warn({ players: this.count }, "character leases in doubt: those players wait for a renewal");
      }
    } else if (this.since !== undefined) {
      this.logger.warn({ ms: this.wall - this.since }, "character leases in doubt: renewed or dropped");
      this.since = undefined;
    }
  }
}
