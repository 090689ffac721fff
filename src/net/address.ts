/**
 * The client address of a WebSocket upgrade (the `/ws` adapter, the room-socket filter), by the same
 * rule as Express's `req.ip`, which the HTTP limits and matchmaking use.
 */
import type { IncomingMessage } from "node:http";

/**
 * The address a request comes from (docs/http.md#rate-limits-and-blocks). Without `trustProxy` it is the socket's
 * peer address and every forwarding header is ignored (they are set by the client and spoofable).
 * With `trustProxy` the server sits behind one proxy it trusts, and the client is the address that
 * proxy reports: the last `X-Forwarded-For` entry, the first hop counted from the server. This is
 * Express's `req.ip` with `trust proxy` = 1, which the HTTP limits use; entries further left were
 * written by the client and are never trusted. The address is returned as given: every limit and
 * block keys it through `addressKey` (`src/http/limits.ts`), which, like `clientKey` on HTTP, counts
 * an IPv4-mapped IPv6 address (`::ffff:1.2.3.4`) as its IPv4 address.
 */
export function clientAddress(req: Pick<IncomingMessage, "headers" | "socket">, trustProxy: boolean): string | undefined {
  let address = req.socket?.remoteAddress;
  if (trustProxy) {
    const header = req.headers["x-forwarded-for"];
    const list = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",").map((s) => s.trim()).filter(Boolean);
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
