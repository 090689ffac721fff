/**
 * Who is calling, by address: client addresses and the blocks keyed by them, shared by both
 * transports above this layer — HTTP (`src/http/limits.ts`) and the WebSocket paths (`src/net`: the
 * client address of an upgrade for the `/ws` adapter and the room-socket filter, by the same rule
 * as Express's `req.ip`) — and by the admin code's loopback check (`AuthService`): the key every
 * limit counts an address under, and the block list of flooding accounts and addresses.
 */
import type { IncomingMessage } from "node:http";
import { ipKeyGenerator } from "express-rate-limit";

/**
 * The address a request comes from (docs/http.md#rate-limits-and-blocks). Without `trustProxy` it is the socket's
 * peer address and every forwarding header is ignored (they are set by the client and spoofable).
 * With `trustProxy` the server sits behind one proxy it trusts, and the client is the address that
 * proxy reports: the last `X-Forwarded-For` entry, the first hop counted from the server. This is
 * Express's `req.ip` with `trust proxy` = 1, which the HTTP limits use; entries further left were
 * written by the client and are never trusted. The address is returned as given: every limit and
 * block keys it through `addressKey`, which, like `clientKey` on HTTP, counts
 * an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as its IPv4 address.
 */
export function clientAddress(req: Pick<IncomingMessage, "headers" | "socket">, trustProxy: boolean): string | undefined {
  let address = req.socket?.remoteAddress;
  if (trustProxy) {
    const header = req.headers["x-forwarded-for"];
    const list = (Array.isArray(header) ? header.join(",") : (header ?? ""))
      .split(",")
      .map((s) => s.trim())
      .filter(Boolean);
    if (list.length > 0) address = list[list.length - 1];
  }
  return address || undefined;
}

/**
 * Is `address` this machine (127.0.0.0/8, `::1`, or either written as an IPv4-mapped IPv6 address)?
 * An unknown address is not.
 */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  const a = address.toLowerCase().replace(/^::ffff:(?=\d+\.)/, "");
  return a === "::1" || a === "0:0:0:0:0:0:0:1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/** The key of a raw socket address for limits and blocks (`ip:<addr>`, IPv6 grouped by /56), as HTTP's `clientKey`. */
export const addressKey = (address: string | undefined): string => `ip:${ipKeyGenerator(address ?? "unknown")}`;

/** Temporary blocks by key (`ip:<addr>` or `account:<id>`). */
export class Blocklist {
  private readonly until = new Map<string, number>();
  /** Told of every block imposed here (`SharedBlocks`, src/cluster/shared-limits.ts, passes it on to the other processes). */
  onShare?: (key: string, ms: number) => void;
  /** @param onBlock told of every block imposed (metrics), with the key's kind (`ip`, `account`). */
  constructor(
    private readonly now: () => number = Date.now,
    private readonly onBlock?: (scope: string) => void,
  ) {}

  block(key: string, seconds: number): void {
    this.until.set(key, this.now() + seconds * 1000);
    this.onBlock?.(key.slice(0, key.indexOf(":")));
    this.onShare?.(key, seconds * 1000);
    if (this.until.size > 100_000) this.sweep();
  }

  /**
   * Record a block imposed by another process, `ms` from now: neither counted nor shared again.
   * A longer block already recorded is kept.
   */
  mirror(key: string, ms: number): void {
    const t = this.now() + ms;
    if ((this.until.get(key) ?? 0) < t) this.until.set(key, t);
    if (this.until.size > 100_000) this.sweep();
  }

  /** The blocks in force, with the milliseconds left on each. */
  active(): [key: string, ms: number][] {
    const now = this.now();
    return [...this.until].filter(([, t]) => t > now).map(([k, t]) => [k, t - now]);
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
