/**
 * The per-address cap on concurrent WebSockets (docs/protocol.md "WebSocket protocol", MAX_SOCKETS_PER_ADDRESS).
 * One count per client address covers both transports: SDK room sockets (`/ws/<process>/<room>`)
 * and the plain adapter (`/ws`). A socket counts from its accepted upgrade until its TCP connection
 * closes. Addresses are keyed like every other limit (`addressKey`: an IPv4-mapped IPv6 address is
 * its IPv4 address, IPv6 counts per /56).
 */
import type { Duplex } from "node:stream";
import { addressKey } from "../auth/address.js";

export class SocketCap {
  private readonly counts = new Map<string, number>();

  /** @param max concurrent sockets one address may hold. */
  constructor(readonly max: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`);
  }

  /** Sockets `address` holds now. */
  count(address: string | undefined): number {
    return this.counts.get(addressKey(address)) ?? 0;
  }

  /** Would one more socket from `address` be over the cap? */
  full(address: string | undefined): boolean {
    return this.count(address) >= this.max;
  }

  /**
   * Count `socket` against `address` until it closes. Returns false, counting nothing, when the
   * address already holds `max` sockets.
   */
  acquire(address: string | undefined, socket: Duplex): boolean {
    const key = addressKey(address);
    const n = this.counts.get(key) ?? 0;
    if (n >= this.max) return false;
    this.counts.set(key, n + 1);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.counts.get(key) ?? 1) - 1;
      if (left <= 0) this.counts.delete(key);
      else this.counts.set(key, left);
    };
    socket.once("close", release);
    // A socket that is already gone never emits "close" again.
    if (socket.destroyed) release();
    return true;
  }

  /** Addresses holding at least one socket (for tests and diagnostics). */
  get addresses(): number {
    return this.counts.size;
  }
}
