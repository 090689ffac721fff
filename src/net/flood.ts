/**
 * Per-connection message rate (docs/protocol.md#limits: 60 messages per second). Messages past the limit in a
 * one-second window are dropped; a connection that floods three windows in a row is to be closed.
 */
import { FLOOD_SECONDS_BEFORE_CLOSE, MAX_MESSAGES_PER_SECOND } from "../events.js";

export class FloodMeter {
  private windowStart = -Infinity;
  private n = 0;
  /** Consecutive earlier windows that exceeded the limit. */
  private floodedRun = 0;

  constructor(
    private readonly limit = MAX_MESSAGES_PER_SECOND,
    private readonly closeAfter = FLOOD_SECONDS_BEFORE_CLOSE,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Count one message. Returns true when it is over the limit and must be dropped. */
  count(): boolean {
    const t = this.now();
    if (t - this.windowStart >= 1000) {
      const contiguous = t - this.windowStart < 2000;
      this.floodedRun = this.n > this.limit && contiguous ? this.floodedRun + 1 : 0;
      this.windowStart = t;
      this.n = 0;
    }
    this.n++;
    return this.n > this.limit;
  }

  /** The connection has flooded for `closeAfter` consecutive seconds. */
  shouldClose(): boolean {
    return this.n > this.limit && this.floodedRun >= this.closeAfter - 1;
  }
}
