/**
 * Temporary blocks by key (`ip:<address>` or `account:<id>`), shared by the HTTP rate limits and the
 * WebSocket flood guard, and the key of a client address. Neither HTTP nor socket code (only the
 * pure key function of express-rate-limit, so both paths key an address alike): every layer that
 * blocks or checks a block uses it; `src/http/limits.ts` re-exports it.
 */
import { ipKeyGenerator } from "express-rate-limit";

/** Temporary blocks by key (`ip:<addr>` or `account:<id>`). */
export class Blocklist {
  private readonly until = new Map<string, number>();
  /** @param onBlock told of every block imposed (metrics), with the key's kind (`ip`, `account`). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly onBlock?: (scope: string) => void,
  ) {}

  block(key: string, seconds: number): void {
    this.until.set(key, this.now() + seconds * 1000);
    this.onBlock?.(key.slice(0, key.indexOf(":")));
    if (this.until.size > 100_000) this.sweep();
  }

  /** Seconds left on the block, or 0 when not blocked. */
  retryAfter(key: string): number {
    const t = this.until.get(key);
    if (t === undefined) return 0;
    const left = t - this.now();
    if (left <= 0) {
      this.until.delete(key);
      return 0;
    }
    return Math.ceil(left / 1000);
  }

  private sweep() {
    const now = this.now();
    for (const [k, t] of this.until) if (t <= now) this.until.delete(k);
  }
}

/**
 * The block and rate-limit key of a raw client address: `ip:` and the address as the HTTP limits key
 * `req.ip` (IPv6 grouped by /56, an IPv4-mapped IPv6 address as its IPv4 address).
 */
export const addressKey = (address: string | undefined): string => `ip:${ipKeyGenerator(address ?? "unknown")}`;
