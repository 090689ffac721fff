/**
 * The client address of an HTTP request or WebSocket upgrade, one rule for every path that counts
 * or blocks by address (HTTP limits, matchmaking `onAuth`, the `/ws` adapter, the flood block).
 */
import type { IncomingMessage } from "node:http";

/**
 * The address a request comes from (CONTRACT.md section 3). Without `trustProxy` it is the socket's
 * peer address and every forwarding header is ignored (they are set by the client and spoofable).
 * With `trustProxy` the server sits behind one proxy it trusts, and the client is the address that
 * proxy reports: the last `X-Forwarded-For` entry, the first hop counted from the server. This is
 * Express's `req.ip` with `trust proxy` = 1, which the HTTP limits use, so the keys agree; entries
 * further left were written by the client and are never trusted. An IPv4-mapped IPv6 address
 * (`::ffff:1.2.3.4`, what a dual-stack listener reports) is returned as plain IPv4.
 */
export function clientAddress(req: Pick<IncomingMessage, "headers" | "socket">, trustProxy: boolean): string | undefined {
  let address = req.socket?.remoteAddress;
  if (trustProxy) {
    const header = req.headers["x-forwarded-for"];
    const list = (Array.isArray(header) ? header.join(",") : (header ?? "")).split(",").map((s) => s.trim()).filter(Boolean);
    if (list.length > 0) address = list[list.length - 1];
  }
  return address ? normaliseAddress(address) : undefined;
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; anything else unchanged. */
export function normaliseAddress(address: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return m ? m[1]! : address;
}
